"""Random descents through a decision space (thesis §4.5.2, §6.1.2, §6.2.2):
the one walk from a candidate down to a fixed candidate that tests, audits,
size estimates, the CLI and the search's Monte-Carlo rollouts all take.

A descent asks its choice order (`workbench.orders`) for the next open
choice and takes a value:
- uniformly at random — without `backtrack` a dead end ends the descent
  (what the thesis's dead-end probability and Knuth's estimate count);
  with it, the value is dropped and another tried (tests that need fixed
  candidates, rollouts before the first measurement);
- with `bound_fn` and a finite `best_ns`, by eq. 6.2: each child with
  probability ∝ max(T − b, 0), so branches that cannot beat the best are
  never taken (cause "model" when none can); with `backtrack`, a node none
  of whose children can sends the descent back to its parent's other
  children, up to `MODEL_BACKTRACKS` times (below a tight best, as a
  search cut at a recipe's time, nearly every plain descent ended so).

Knuth's estimate of the number of fixed candidates is the product of the
branching factors met on the way (0 after a dead end).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from .candidate import Candidate
from .errors import DeadEnd
from .orders import choice_order


def weighted_pick(items, weights, rng: random.Random):
    """Eq. 6.2: pick with probability ∝ weight; None when all weights are 0."""
    total = sum(weights)
    if total <= 0:
        return None
    x = rng.random() * total
    for item, w in zip(items, weights):
        x -= w
        if x < 0 and w > 0:
            return item
    return next(i for i, w in zip(reversed(items), reversed(weights)) if w > 0)


def model_weights(bounds, best_ns: float) -> list:
    """max(T − b, 0) per child; all 1 while nothing was measured."""
    if not math.isfinite(best_ns):
        return [1.0] * len(bounds)
    return [max(best_ns - b, 0.0) for b in bounds]


# how often a weighted descent may go back up past a node whose children are
# all bounded at or above the best (each sibling it then takes was bounded
# already; going down again bounds the new node's children)
MODEL_BACKTRACKS = 64


@dataclass
class Descent:
    candidate: Candidate | None  # the fixed candidate, None when the descent stopped
    depth: int  # decisions taken
    factors: list = field(default_factory=list)  # remaining values of each choice met
    dead_end: DeadEnd | None = None  # what stopped a uniform descent
    cause: str | None = None  # why it stopped: "constraints" or "model"
    retries: int = 0  # values that ran into a dead end on the way
    path: tuple = ()  # with keep_path: the candidates from the start down
    bound_ns: float = 0.0  # with bound_fn: the bound of the last candidate reached

    @property
    def log10_estimate(self) -> float:
        """log10 of the product of branching factors (Knuth)."""
        return _log10_product(self.factors)


def _log10_product(factors) -> float:
    return sum(math.log10(f) for f in factors)


def descend(start: Candidate, rng: random.Random, *, order="thesis", backtrack: bool = False,
            keep_path: bool = False, bound_fn=None, best_ns: float = math.inf,
            start_bound: float = 0.0, valid_only: bool = False) -> Descent:
    """One random descent from `start` (see the module docstring).
    `valid_only`: the thesis's way (Telamon drops the children that fail
    before picking): every value is applied, the pick is uniform among the
    valid children, the branching factor counts only those, and a dead end
    is a choice none of whose values is valid."""
    order = choice_order(order).rollout
    weighted = bound_fn is not None and math.isfinite(best_ns)
    cand, b, retries = start, start_bound, 0
    factors: list = []
    path = [start]
    # weighted, with backtrack: (node, its bound, its children not yet
    # taken with their bounds, len(factors), len(path)) of each node above
    above: list = []
    ups = 0

    def stop(cause, dead_end=None) -> Descent:
        return Descent(None, len(factors) - 1, factors, dead_end, cause, retries,
                       tuple(path) if keep_path else (), b)
    while not cand.is_fixed:
        ch = order.next(cand, rng=rng)
        values = list(ch.values)
        factors.append(len(values))
        if valid_only and not weighted:
            kids, last = _children(cand, ch)
            retries += len(values) - len(kids)
            factors[-1] = len(kids)
            if not kids:
                return stop("constraints", last)
            cand = rng.choice(kids)
        elif not weighted:
            while True:
                v = values.pop(rng.randrange(len(values)))
                try:
                    cand = cand.apply(ch.name, ch.objects, v)
                    break
                except DeadEnd as e:
                    retries += 1
                    if not backtrack or not values:
                        return stop("constraints", e)
        else:
            kids, _ = _children(cand, ch)
            retries += len(values) - len(kids)
            live = [(k, bk) for k in kids if (bk := max(bound_fn(k), b)) < best_ns]
            while not live:  # nothing here can (or no child at all): back up, or stop
                if not backtrack or not above or ups >= MODEL_BACKTRACKS:
                    return stop("model" if kids else "constraints")
                ups += 1
                retries += 1
                cand, b, live, nf, np_ = above.pop()
                del factors[nf:], path[np_:]
            i = weighted_pick(range(len(live)), model_weights([x[1] for x in live], best_ns),
                              rng)
            if backtrack:
                above.append((cand, b, live[:i] + live[i + 1:], len(factors), len(path)))
            cand, b = live[i]
        if keep_path:
            path.append(cand)
    return Descent(cand, len(factors), factors, None, None, retries,
                   tuple(path) if keep_path else (), b)


def _children(cand: Candidate, ch) -> tuple[list, DeadEnd | None]:
    """The valid children of an open choice, and the last dead end met."""
    kids, last = [], None
    for v in ch.values:
        try:
            kids.append(cand.apply(ch.name, ch.objects, v))
        except DeadEnd as e:
            last = e
    return kids, last


def random_fixed(start: Candidate, rng: random.Random, *, order="thesis",
                 attempts: int = 50) -> Candidate:
    """A random fixed candidate below `start` (descents with backtracking,
    restarted on failure)."""
    last = None
    for _ in range(attempts):
        d = descend(start, rng, order=order, backtrack=True)
        if d.candidate is not None:
            return d.candidate
        last = d.dead_end
    raise last


def least_bound_fixed(start: Candidate, rng: random.Random, bound_fn, *,
                      order="thesis") -> Candidate | None:
    """The fixed candidate a person reaches who always takes the value whose
    child has the least bound (`bound_fn`: candidate → ns; ties at random),
    in `order`; None when a choice on the way has no live value. Finish
    from here starts from it: on matmul 256 and 1024 its bound (after 16
    climb moves) was 2–39× the start's, where a random witness's was
    5–9,000× (4 seeds each, `h200` and `cpu_reference`, 4–8 s either way)."""
    order = choice_order(order).rollout
    cand = start
    while not cand.is_fixed:
        ch = order.next(cand, rng=rng)
        kids, _ = _children(cand, ch)
        if not kids:
            return None
        cand = min(((bound_fn(k), rng.random(), k) for k in kids), key=lambda x: x[:2])[2]
    return cand


@dataclass
class Probe:
    """One Knuth probe: a uniform descent without backtracking."""

    factors: list = field(default_factory=list)  # branching factor at each depth
    reached: int = 0  # depth of the last node reached
    fixed: bool = False  # ended at a fixed candidate (not a dead end)
    pruned_at: float = math.inf  # first depth whose node's bound ≥ threshold

    def leaves(self, prune_depth: float = -1) -> float:
        if not self.fixed or self.pruned_at <= prune_depth:
            return 0.0
        return math.prod(self.factors)

    def nodes_at(self, d: int, prune: bool = False) -> float:
        if self.reached < d or (prune and self.pruned_at <= d):
            return 0.0
        return math.prod(self.factors[:d])


def knuth_probe(root: Candidate, rng: random.Random, order="thesis", bound_fn=None,
                threshold: float = math.inf, prune_depth: int = 0,
                valid_only: bool = False) -> Probe:
    """One Knuth probe; with `bound_fn`, the bound of each node at depth ≤
    prune_depth is compared with `threshold` (thesis Table 6.3);
    `valid_only`: branching over valid children only (see `descend`)."""
    d = descend(root, rng, order=order, keep_path=bound_fn is not None, valid_only=valid_only)
    p = Probe(d.factors, d.depth, d.candidate is not None)
    if bound_fn is not None:
        for depth, cand in enumerate(d.path[:prune_depth + 1]):
            if bound_fn(cand) >= threshold:
                p.pruned_at = depth
                break
    return p


def knuth(root: Candidate, probes: int, seed: int = 0, order="thesis", bound_fn=None,
          threshold: float = math.inf, prune_depth: int = 0,
          valid_only: bool = False) -> list[Probe]:
    rng = random.Random(seed)
    return [knuth_probe(root, rng, order, bound_fn, threshold, prune_depth, valid_only)
            for _ in range(probes)]


def _log10_mean(probes) -> float | None:
    """log10 of the mean over all probes of the product of their branching
    factors (a dead end counts 0): Knuth's estimate."""
    logs = [_log10_product(p.factors) for p in probes if p.fixed]
    if not logs:
        return None
    top = max(logs)
    return top + math.log10(sum(10 ** (e - top) for e in logs) / len(probes))


def space_stats(root: Candidate, descents: int, seed: int, order="thesis") -> dict:
    """Dead ends, mean depth and Knuth's estimate of the number of fixed
    candidates (thesis Tables 4.3 and 6.1), counted both ways from
    `descents` probes each: the first random pick fails (`dead_end_*`), and
    the thesis's way — a dead end only when every value of a choice fails,
    branching over valid children only (`thesis_*`)."""
    probes = knuth(root, descents, seed, order)
    ok = [p for p in probes if p.fixed]
    valid = knuth(root, descents, seed, order, valid_only=True)
    vok = [p for p in valid if p.fixed]
    return {"descents": descents, "dead_ends": len(probes) - len(ok),
            "dead_end_probability": (len(probes) - len(ok)) / descents if descents else 0.0,
            "mean_depth": sum(p.reached for p in ok) / len(ok) if ok else 0.0,
            "log10_space_size": _log10_mean(probes),
            "thesis_dead_ends": len(valid) - len(vok),
            "thesis_dead_end_probability": ((len(valid) - len(vok)) / descents
                                            if descents else 0.0),
            "thesis_log10_space_size": _log10_mean(valid)}


__all__ = ["Descent", "Probe", "descend", "knuth", "knuth_probe", "least_bound_fixed",
           "model_weights", "random_fixed", "space_stats", "weighted_pick"]
