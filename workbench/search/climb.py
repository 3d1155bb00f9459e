"""Climbing the bound: a local search over fixed candidates, led by the model.

A Monte-Carlo rollout ends at one fixed candidate of some 10^20, most of them
far from any fast one (40 uniform descents of matmul 1024 on `nvidia_h200`:
the best bounded at 7.2 ms, the median at 579 ms, where a register-tiled
recipe is bounded at 37.5 µs). The bound of a fixed candidate costs a few
milliseconds; a GPU measurement costs seconds. So before a leaf is measured,
`climb` improves it on the bound alone, as a tuner's cost model does, except
that this model is a proven lower bound rather than a fitted one:

- a *move* takes one decision of the leaf below `start` and gives its choice
  another value of its domain, keeps every other decision of the leaf that
  still applies (decisions commute; one that conflicts with the new value, or
  names objects only the old value's lowering created, is let go), and
  finishes the candidate by a uniform descent;
- the new leaf replaces the old when its bound is no higher (equal bounds
  move too, so plateaus are crossed).

Decisions of `start` are never changed: the leaf stays below a search node, or
below what a person forced. Deterministic for a given `rng` state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..candidate import Candidate, Decision
from ..descent import descend
from ..errors import DeadEnd, InvalidDecision, WorkbenchError


@dataclass
class Climb:
    """The leaf a climb ended at, and how it got there."""
    candidate: Candidate
    bound_ns: float
    start_ns: float  # the bound of the leaf it started from
    steps: int = 0  # moves tried
    failed: int = 0  # moves that reached no fixed candidate
    improved: list = field(default_factory=list)  # (step, bound_ns) at each lower bound

    def to_dict(self) -> dict:
        return {"start_ns": self.start_ns, "bound_ns": self.bound_ns, "steps": self.steps,
                "failed": self.failed, "improved": [list(x) for x in self.improved]}


def keep_applicable(cand: Candidate, decisions) -> Candidate:
    """`cand` with as many of `decisions` (in trail order) as still apply: one
    that would dead-end, is outside its domain now, or names objects that do
    not exist by its turn is let go. All at once when they all apply (one
    fixpoint); else each half in turn, so a few misfits among n decisions
    cost O(misfits · log n) fixpoints rather than n."""
    decisions = list(decisions)
    if not decisions:
        return cand
    if len(decisions) == 1:
        d = decisions[0]
        if (d.choice, d.objects) not in cand.problem.index:
            return cand
    try:
        return cand.decide_all(decisions)
    except (DeadEnd, InvalidDecision):
        if len(decisions) == 1:
            return cand
    half = len(decisions) // 2
    return keep_applicable(keep_applicable(cand, decisions[:half]), decisions[half:])


def _other_value(cand: Candidate, d: Decision, rng: random.Random) -> Candidate | None:
    """`cand` with `d`'s choice given a value `d` did not take; None when it has
    no other live one."""
    if (d.choice, d.objects) not in cand.problem.index:
        return None
    others = sorted(v for v in cand.domain(d.choice, d.objects) if v not in d.values)
    rng.shuffle(others)
    for v in others:
        try:
            return cand.apply(d.choice, d.objects, v)
        except DeadEnd:
            continue
    return None


def climb_move(start: Candidate, leaf: Candidate, rng: random.Random, *,
               order="thesis") -> Candidate | None:
    """One move of the climb (module docstring): a fixed candidate below
    `start` that differs from `leaf` in one decision's value at least, or
    None when the move reached none."""
    rest = list(leaf.trail[len(start.trail):])
    if not rest:
        return None
    d = rest.pop(rng.randrange(len(rest)))
    changed = _other_value(start, d, rng)  # first, so kept decisions yield to it
    cand = keep_applicable(changed if changed is not None else start, rest)
    if changed is None:  # its objects come from a lowering below start
        cand = _other_value(cand, d, rng)
        if cand is None:
            return None
    if cand.is_fixed:
        return cand
    return descend(cand, rng, order=order, backtrack=True).candidate


def climb(start: Candidate, leaf: Candidate, bound_fn, rng: random.Random, *, steps: int,
          order="thesis") -> Climb:
    """Up to `steps` moves from `leaf` (a fixed candidate below `start`),
    keeping the leaf of least bound (`bound_fn`: candidate → ns)."""
    if not leaf.is_fixed:
        raise WorkbenchError("climb starts from a fixed candidate")
    if start.trail != leaf.trail[:len(start.trail)]:
        raise WorkbenchError("climb's leaf must extend start's trail")
    best = bound_fn(leaf)
    out = Climb(leaf, best, best)
    for step in range(1, steps + 1):
        out.steps = step
        try:
            cand = climb_move(start, out.candidate, rng, order=order)
        except (DeadEnd, InvalidDecision):
            cand = None
        if cand is None:
            out.failed += 1
            continue
        b = bound_fn(cand)
        if b <= out.bound_ns:
            if b < out.bound_ns:
                out.improved.append((step, b))
            out.candidate, out.bound_ns = cand, b
    return out


__all__ = ["Climb", "climb", "climb_move", "keep_applicable"]
