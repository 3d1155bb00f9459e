"""Estimates of the size of a search tree (thesis §6.2.2, §6.3.2–6.3.3).

- Knuth's random probe: descend at random; the product of the branching
  factors met is an unbiased estimate of the number of leaves (0 after a dead
  end), and its first d factors of the number of nodes at depth d.
- Chen's heuristic sampling: one representative per stratum, strata being
  (depth, open choices) as in the thesis; a representative expands all its
  children and a child joins its stratum's weight, replacing the stratum's
  representative with probability w / (w + W). The sum of the leaves' weights
  estimates the number of leaves, with lower variance than Knuth where the
  stratifier groups alike subtrees.
- Bound pruning (Table 6.3): a probe computes the bound of every node on its
  path down to depth `prune_depth`; the first depth where it reaches the
  threshold zeroes the probe's estimates below it.

Every estimate comes with a 95% confidence interval from the spread of the
independent probes (mean ± 1.96 s/√n), as the thesis's tables give them.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from ..candidate import Candidate
from ..descent import Probe, knuth, knuth_probe
from ..orders import choice_order
from .tree import children


@dataclass(frozen=True)
class Estimate:
    value: float
    half_width: float  # of the 95% confidence interval
    samples: int
    method: str = ""

    @classmethod
    def of(cls, xs, method: str = "") -> Estimate:
        xs = list(xs)
        if not xs:
            return cls(float("nan"), float("nan"), 0, method)
        mean = statistics.fmean(xs)
        sd = statistics.stdev(xs) if len(xs) > 1 else float("inf")
        return cls(mean, 1.96 * sd / math.sqrt(len(xs)), len(xs), method)

    def to_dict(self) -> dict:
        return {"value": self.value, "ci95": self.half_width, "samples": self.samples,
                "method": self.method}

    def __str__(self) -> str:
        if self.value >= 1e4:
            return f"{self.value:.2e} ± {self.half_width:.1e}"
        return f"{self.value:.1f} ± {self.half_width:.1f}"


def chen_probe(root: Candidate, rng: random.Random, order="thesis") -> float:
    """One heuristic-sampling estimate of the number of leaves."""
    order = choice_order(order).rollout
    queue = {(0, root.open_count()): (root, 1.0)}
    total = 0.0
    while queue:
        key = min(queue)  # strata strictly deepen along the tree
        node, w = queue.pop(key)
        if node.is_fixed:
            total += w
            continue
        for _, kid in children(node, order.next(node))[0]:
            k2 = (key[0] + 1, kid.open_count())
            if k2 in queue:
                rep, w2 = queue[k2]
                queue[k2] = (kid if rng.random() < w / (w + w2) else rep, w + w2)
            else:
                queue[k2] = (kid, w)
    return total


def chen(root: Candidate, probes: int, seed: int = 0, order="thesis") -> Estimate:
    rng = random.Random(seed)
    return Estimate.of((chen_probe(root, rng, order) for _ in range(probes)), "chen")


def space_size(probes: list[Probe], prune_depth: float = -1) -> Estimate:
    return Estimate.of((p.leaves(prune_depth) for p in probes), "knuth")


def mean_depth(probes: list[Probe]) -> Estimate:
    return Estimate.of((len(p.factors) for p in probes if p.fixed), "knuth")


def nodes_at(probes: list[Probe], depth: int, prune: bool = False) -> Estimate:
    return Estimate.of((p.nodes_at(depth, prune) for p in probes), "knuth")


def count_nodes(root: Candidate, depth: int, order="thesis", bound_fn=None,
                threshold: float = math.inf) -> tuple[int, int]:
    """Exhaustive: nodes at `depth` (fixed candidates above it do not count),
    and those left when nodes with bound ≥ threshold are cut with their
    subtrees (thesis Table 6.3, right)."""
    order = choice_order(order).rollout
    total = kept = 0
    stack = [(root, 0, bound_fn is not None and bound_fn(root) >= threshold)]
    while stack:
        cand, d, cut = stack.pop()
        if d == depth:
            total += 1
            kept += not cut
            continue
        if cand.is_fixed:
            continue
        for _, kid in children(cand, order.next(cand))[0]:
            stack.append((kid, d + 1, cut or (bound_fn is not None and bound_fn(kid) >= threshold)))
    return total, kept


__all__ = ["Estimate", "Probe", "chen", "chen_probe", "count_nodes", "knuth", "knuth_probe",
           "mean_depth", "nodes_at", "space_size"]
