"""Two ideas side by side (issue 22): where two candidates — the current
candidates of two explorer branches, or any two of one kernel — differ.

The decisions are compared as sets: `common` counts those both trails hold;
a choice instance (choice, objects) that both trails decide, with different
values, is one `differ` row (the last decision of each trail on it: the
narrowest); every other decision held by one trail only is in `only_a` or
`only_b`. Beside them: the bound of each candidate, its best measured time
in the record store, and the unified diff of the two generated CUDA sources
when both are fixed (else the reason there is none).

Pure: no widgets (`widgets/compare_view.py` draws it).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from .candidate import Candidate, Decision
from .errors import WorkbenchError
from .explain import describe


def _values(d: Decision) -> str:
    return "|".join(d.values)


@dataclass(frozen=True)
class Comparison:
    names: tuple[str, str]
    digests: tuple[str, str]
    common: int  # decisions both trails hold
    only_a: tuple[Decision, ...]  # held by the first trail only (in its order)
    only_b: tuple[Decision, ...]
    differ: tuple[tuple[str, tuple[str, ...], str, str], ...]  # (choice, objects, value_a, value_b)
    bounds: tuple[float | None, float | None]  # ns
    measured: tuple[float | None, float | None]  # best median ns in the store, or None
    code_diff: str | None  # unified diff of the CUDA sources (empty: the same code)
    code_note: str = ""  # why there is no code diff, or what it says
    target: str | None = None  # the target of the bounds and the measured times (None: any)

    @property
    def same(self) -> bool:
        """The two candidates have the same domains (equal digests)."""
        return self.digests[0] == self.digests[1]

    @property
    def text(self) -> str:
        from .model.justification import fmt_time
        a, b = self.names
        lines = [f"{a} against {b}: {self.common} decisions in common, {len(self.differ)} "
                 f"differ, {len(self.only_a)} only in {a}, {len(self.only_b)} only in {b}"
                 + (" (the same candidate)" if self.same else "")]
        for choice, objects, va, vb in self.differ:
            lines.append(f"  {choice}({', '.join(objects)}): {a} {va}, {b} {vb}")
        for name, only in ((a, self.only_a), (b, self.only_b)):
            for d in only:
                lines.append(f"  only in {name}: {describe(d)}")

        lines.append(f"bound: {a} {fmt_time(self.bounds[0])}, {b} {fmt_time(self.bounds[1])}")
        lines.append(f"measured: {a} {fmt_time(self.measured[0])}, "
                     f"{b} {fmt_time(self.measured[1])}")
        if self.code_diff is None:
            lines.append(f"code: {self.code_note}")
        else:
            added, removed = diff_counts(self.code_diff)
            lines.append("code: the same CUDA" if not self.code_diff else
                         f"code: {added} lines added, {removed} removed from {a} to {b}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict:
        return {"names": list(self.names), "digests": list(self.digests),
                "common": self.common,
                "only_a": [d.to_dict() for d in self.only_a],
                "only_b": [d.to_dict() for d in self.only_b],
                "differ": [{"choice": c, "objects": list(o), "value_a": va, "value_b": vb}
                           for c, o, va, vb in self.differ],
                "bounds_ns": list(self.bounds), "measured_ns": list(self.measured),
                "code_diff": self.code_diff, "code_note": self.code_note,
                "target": self.target, "same": self.same, "text": self.text}


def diff_counts(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) of a unified diff."""
    lines = diff.splitlines()
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return added, removed


def decision_sets(trail_a, trail_b) -> tuple[int, tuple, tuple, tuple]:
    """(common, only_a, only_b, differ) of two trails (see the module)."""
    set_a, set_b = set(trail_a), set(trail_b)
    mine = [d for d in trail_a if d not in set_b]
    theirs = [d for d in trail_b if d not in set_a]
    last_a = {(d.choice, d.objects): d for d in mine}  # the last one on each instance
    last_b = {(d.choice, d.objects): d for d in theirs}
    keys = [k for k in last_a if k in last_b]
    differ = tuple((c, o, _values(last_a[c, o]), _values(last_b[c, o])) for c, o in keys)
    paired = {last_a[k] for k in keys} | {last_b[k] for k in keys}
    only_a = tuple(dict.fromkeys(d for d in mine if d not in paired))
    only_b = tuple(dict.fromkeys(d for d in theirs if d not in paired))
    return len(set_a & set_b), only_a, only_b, differ


def _cuda(cand: Candidate) -> str:
    from .codegen import generate
    return generate(cand).cuda


def _code_diff(a: Candidate, b: Candidate, names, cuda) -> tuple[str | None, str]:
    open_ = [f"{n} is not fixed yet ({c.open_count()} open choices)"
             for n, c in zip(names, (a, b), strict=True) if not c.is_fixed]
    if open_:
        return None, "; ".join(open_) + ": the code appears once every choice is fixed"
    try:
        ca, cb = cuda(a), cuda(b)
    except Exception as exc:  # noqa: BLE001 - a comparison says why, never fails on codegen
        return None, f"no code: generating it failed ({type(exc).__name__}: {exc})"
    diff = "".join(difflib.unified_diff(ca.splitlines(keepends=True),
                                        cb.splitlines(keepends=True),
                                        fromfile=f"{names[0]}.cu", tofile=f"{names[1]}.cu"))
    if not diff:
        return "", "the same CUDA"
    added, removed = diff_counts(diff)
    return diff, f"{added} lines added, {removed} removed"


def _best(rows, digest: str, target: str | None) -> float | None:
    ok = [r["median_ns"] for r in rows
          if r.get("digest") == digest and r.get("status") == "ok" and r.get("median_ns")
          and (target is None or r.get("target") == target)]
    return min(ok) if ok else None


def _compare(a: Candidate, b: Candidate, names, bound: Callable, rows: list,
             target: str | None, cuda: Callable | None) -> Comparison:
    common, only_a, only_b, differ = decision_sets(a.trail, b.trail)

    def ns(c):
        try:
            return bound(c).value_ns
        except WorkbenchError:
            return None
    diff, note = _code_diff(a, b, names, cuda or _cuda)
    return Comparison(
        names=tuple(names), digests=(a.digest(), b.digest()), common=common,
        only_a=only_a, only_b=only_b, differ=differ, bounds=(ns(a), ns(b)),
        measured=(_best(rows, a.digest(), target), _best(rows, b.digest(), target)),
        code_diff=diff, code_note=note, target=target)


def compare(session, a: int, b: int, *, cuda: Callable | None = None) -> Comparison:
    """The current candidates of branches `a` and `b` (indices) of an
    explorer `Session`: bounds from the session (cached there), measured
    times from its record store for its target (any target when the session
    has none). `cuda`: the CUDA of a fixed candidate (default:
    `codegen.generate`; a view passes a cached one)."""
    n = len(session.branches)
    for i in (a, b):
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
            raise WorkbenchError(f"no branch {i!r}: this session has branches 0 to {n - 1}")
    ba, bb = session.branches[a], session.branches[b]
    return _compare(ba.cand, bb.cand, (ba.name, bb.name), session.bound, session._rows(),
                    session.target, cuda)


def compare_candidates(a: Candidate, b: Candidate, *, target: str | None = None,
                       store=None, names=("a", "b"), cuda: Callable | None = None
                       ) -> Comparison:
    """Two candidates of one kernel, without a Session: bounds on `target`
    (default: the kernel's), measured times from `store` (a `store=` as
    `evaluate` takes it; None: none) of this kernel's sizes on `target`
    (any target when None)."""
    from .model import bound as model_bound
    ka, kb = (c.problem.root_problem.kernel for c in (a, b))
    if ka is not kb and ka.spec() != kb.spec():
        raise WorkbenchError("compare candidates of one kernel: "
                             f"{ka.spec()} against {kb.spec()}")
    rows = []
    if store is not None:
        from .runtime.records import RecordStore
        spec = ka.spec()
        rows = [r for r in RecordStore.open(store).rows() if r.get("sizes") == spec]
    return _compare(a, b, names, lambda c: model_bound(c, target), rows, target, cuda)


__all__ = ["Comparison", "compare", "compare_candidates", "decision_sets", "diff_counts"]
