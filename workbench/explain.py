"""Conflict explanations: which earlier decisions cause a dead end.

Decisions commute, so any subset of a candidate's trail is a valid
candidate of its own. An explanation of a *target* — a decision that
dead-ends, or an open choice every value of which dead-ends — is a small
subset of the trail that still reproduces it. It is found by progression
with binary search (the deletion filter of QuickXplain, with a dichotomy
over the trail's prefixes, whose candidates are already known):

    the culprit found last is the decision whose prefix first reproduces
    the target together with the culprits found so far;

so every culprit is necessary (propagation is monotone: fewer decisions
never prune more). When that finds more than five, the reversed trail is
tried too and the smaller set kept. Each explanation is then checked from
the root: the culprits alone reproduce the target, and dropping any one of
them does not.

What dropping each culprit leads to (`ways_out`) is a question of its own:
the rest of the trail may hold another conflict. A witness search on the
trail without it says whether a person who drops it can reach an
implementation.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field, replace

from .candidate import Candidate, Decision, as_objects, history_without
from .errors import DeadEnd, InvalidDecision, NeverAppears, WorkbenchError
from .model.lookahead import Stopped
from .names import choice_label, decision_label, object_label


@dataclass(frozen=True)
class Explanation:
    culprits: tuple  # Decisions of the trail that together cause the target
    target: str  # what dead-ends, in words
    reasons: tuple  # (value or decision text, the constraint that fails)
    verified: bool  # the culprits reproduce it, and every one is needed
    checks: int  # target tests run
    # the candidate explained: names the culprits' objects in `text` (raw ids without it)
    cand: Candidate | None = field(default=None, repr=False, compare=False)
    # a choice left without a value: per value, the culprits that alone rule
    # it out (an irreducible subset each; together they are the culprits)
    by_value: tuple = ()  # ((value, culprits), …)
    decision: Decision | None = None  # the decision explained (None: an open choice)

    @property
    def text(self) -> str:
        why = "; ".join(self.lines)
        return f"{self.head} — {why}" if why else self.head

    @property
    def head(self) -> str:
        """The culprits and what they cause, in words (`text` without the
        failing constraints)."""
        if not self.culprits:
            return f"{self.target.removeprefix('decision ')} is ruled out by the kernel itself"
        # numbered when the values' own culprits refer to them
        head = " and ".join(f"{f'({k}) ' if self.by_value else ''}`{describe(d, self.cand)}`"
                            for k, d in enumerate(self.culprits, 1))
        head += (" cannot hold together with " if self.target.startswith("decision")
                 else " leave no value of ")
        return head + self.target.removeprefix("decision ")

    @property
    def lines(self) -> list[str]:
        """One line per failing constraint: the decision, or each value with
        the culprits that alone rule it out."""
        return [f"{what}{self._whose(what)}: {constraint}" for what, constraint in self.reasons]

    def _whose(self, what: str) -> str:
        """' (by decisions 1, 3)': the culprits, numbered as in the head, that
        alone rule out the value a reason is about (when fewer than all)."""
        for value, sub in self.by_value:
            if what.endswith(f" = {value}") and len(sub) < len(self.culprits):
                if not sub:
                    return " (by the kernel alone)"
                nums = ", ".join(str(self.culprits.index(d) + 1) for d in sub)
                return f" (by decision{'s' if len(sub) > 1 else ''} {nums})"
        return ""

    def to_dict(self) -> dict:
        """The JSON of `explain --json`; `dead`, `constraint` and `decisions`
        are the DESIGN contract's names for what is explained (always a dead
        end: `explain_trail` refuses anything else), the failing constraints
        and the culprits as `[choice, [objects], value]`."""
        return {"dead": True,
                "constraint": "; ".join(dict.fromkeys(c for _, c in self.reasons)),
                "decisions": [[d.choice, list(d.objects),
                               d.values[0] if len(d.values) == 1 else list(d.values)]
                              for d in self.culprits],
                "culprits": [d.to_dict() for d in self.culprits], "target": self.target,
                "reasons": [list(r) for r in self.reasons], "verified": self.verified,
                "checks": self.checks, "text": self.text,
                "by_value": [{"value": v, "culprits": [d.to_dict() for d in sub]}
                             for v, sub in self.by_value]}


def describe(d: Decision, cand: Candidate | None = None) -> str:
    """A decision in words: with the candidate it belongs to (one whose
    problem has its objects, e.g. the current one), its objects by their
    names (`workbench.names`: "dim kind: mad · n · tile 0 = THREAD"); without,
    the raw form "dim_kind(d13) = THREAD"."""
    if cand is None:
        return f"{d.choice}({', '.join(d.objects)}) = {'|'.join(d.values)}"
    return decision_label(cand, d)


def _constraint(e: DeadEnd, c: Candidate | None = None) -> str:
    # named by the problem the dead end happened in: a lowering fired by the
    # decisions tried may have created its objects after `c`
    where = e.problem or c
    names = e.objects if where is None else [object_label(where, o) for o in e.objects]
    objs = f" on ({', '.join(names)})" if e.objects else ""
    return f"{e.constraint}{objs}"


class _Target:
    """A dead end to reproduce: `reasons(c)` is None when candidate `c` does
    not reproduce it, else the failing constraints."""

    def __init__(self, decision: Decision | None, choice: tuple | None, value=None):
        # `value`: only that value of `choice` (pruned, or its child a dead end)
        self.decision, self.choice, self.value = decision, choice, value

    def __str__(self) -> str:
        return self.text()

    def text(self, cand: Candidate | None = None) -> str:
        """In words when `cand` (the candidate explained) is given."""
        if self.decision is not None:
            return f"decision {describe(self.decision, cand)}"
        name, objs = self.choice
        return f"{name}({', '.join(objs)})" if cand is None else choice_label(cand, name, objs)

    def reproduced_by(self, c) -> bool:
        """Whether `_with`'s result `c` reproduces it: a dead end (its reason
        text), or a candidate with reasons; None (a subset that cannot be
        taken) does not."""
        return c is not None and (isinstance(c, str) or self.reasons(c) is not None)

    def reasons(self, c: Candidate):
        d = self.decision
        name, objs = (d.choice, d.objects) if d is not None else self.choice
        if (name, objs) not in c.problem.index:  # its objects come from a lowering
            return None
        if self.decision is not None:
            try:
                c.decide(self.decision)
            except DeadEnd as e:
                return ((describe(self.decision, c), _constraint(e, c)),)
            except InvalidDecision as e:
                return ((describe(self.decision, c), str(e)),)
            return None
        name, objs = self.choice
        if self.value is not None:
            if self.value not in c.domain(name, objs):
                return ((f"{name} = {self.value}", "pruned"),)
            why = _value_fails(c, name, objs, self.value)
            return None if why is None else (why,)
        out = []
        for value in sorted(c.domain(name, objs)):
            why = _value_fails(c, name, objs, value)
            if why is None:
                return None
            out.append(why)
        return tuple(out)


def _value_fails(c: Candidate, name: str, objs: tuple, value: str):
    """(value text, the constraint that fails) when the child of `value`
    dead-ends, else None."""
    try:
        c.apply(name, objs, value)
    except DeadEnd as e:
        return (f"{name} = {value}", _constraint(e, c))
    return None


def _go_on(stop) -> None:
    """Raise Stopped when `stop()` says the explanation is no longer wanted."""
    if stop is not None and stop():
        raise Stopped("explanation stopped")


def _with(base: Candidate, extra, stop=None) -> Candidate | str | None:
    """`base` plus the decisions `extra`, taken together (`decide_all`: one
    fixpoint, then one more per lowering whose objects the rest wait for);
    the reason text when they dead-end (or a value was pruned away); None
    when some are about objects that no decision of this subset creates
    (it left out the decisions that fire their lowering). `stop()`, asked
    first, abandons the explanation (raises Stopped): each check costs up to
    a few tenths of a second, an explanation up to tens of checks."""
    _go_on(stop)
    try:
        return base.decide_all(extra)
    except DeadEnd as e:
        return _constraint(e, base)
    except NeverAppears:
        return None
    except InvalidDecision as e:
        return str(e)


def _what(cand: Candidate, decision, choice, who: str) -> tuple:
    """(decision, choice) of a dead end to explain, checked: exactly one of
    them, a decision given as its dict read, a choice's objects known."""
    if (decision is None) == (choice is None):
        raise WorkbenchError(f"{who} needs either decision= or choice=")
    if isinstance(decision, dict):
        decision = Decision.from_dict(decision)
    if choice is not None:
        choice = (choice[0], as_objects(choice[1]))
        cand._var(*choice)  # unknown choice or objects: a clear error
    return decision, choice


def explain(cand: Candidate, *, decision=None, choice=None, prefixes=None,
            stop=None) -> Explanation:
    """Explain why `decision` (a Decision or its dict) dead-ends on `cand`,
    or why every value of the open choice `choice` = (name, objects) does.
    `prefixes`: the candidates after 0, 1, … decisions of cand's trail when
    known (a Session's history), else replayed from the root. `stop()`,
    asked before each check, abandons it (raises Stopped: the explorer's
    person has moved on)."""
    decision, choice = _what(cand, decision, choice, "explain")
    target = _Target(decision, choice)
    trail = list(cand.trail)
    if prefixes is None:
        prefixes = cand.prefixes()
    checks = 0

    def fails(prefixes, j: int, must: list) -> bool:
        nonlocal checks
        checks += 1
        return target.reproduced_by(_with(prefixes[j], must, stop))

    if not fails(prefixes, len(trail), []):
        dom = cand.domain(*choice) if choice is not None else ()
        if len(dom) == 1:
            raise WorkbenchError(f"{target.text(cand)} is already fixed (= {next(iter(dom))}): "
                                 "only a choice every value of which dead-ends is explained")
        raise WorkbenchError(f"{target.text(cand)} does not dead-end on this candidate: "
                             "nothing to explain")
    culprits = _progression(trail, prefixes, fails)
    if len(culprits) > SMALL:
        # which irreducible subset progression finds depends on the trail's
        # order (it keeps the latest decisions it can); the reversed order
        # often finds a smaller one (7 → 5 decisions on a stuck matmul state)
        _go_on(stop)
        order, rev = prefixes[0].decide_each(trail[::-1])  # a subset of a live trail: live
        other = _progression(order, rev, fails)
        if len(other) < len(culprits):
            culprits = tuple(d for d in trail if d in other)  # trail order
    ex = replace(_verified(culprits, target, prefixes[0], checks, cand, stop),
                 decision=decision)
    if choice is not None and ex.verified and len(culprits) > 1:
        ex = replace(ex, by_value=_by_value(culprits, choice, prefixes[0], cand, stop))
    return ex


SMALL = 5  # an explanation a person reads at a glance


def smallest_explanation(cand: Candidate, *, decision=None, choice=None, at_most: int = SMALL,
                         stop=None) -> tuple | None:
    """A smallest subset of cand's trail that reproduces the target of
    `explain` (the same `decision=` or `choice=`), by trying every subset of
    1, 2, … `at_most` decisions; None when no subset of at most `at_most`
    does — then every explanation of this dead end is larger, whatever the
    method. Exhaustive: C(n, ≤ at_most) subsets (637 for a 10-decision
    trail, 68,405 for 25), each one decision on its prefix's candidate, so
    for benchmarks and a person who asks, not for a click. `stop()`, asked
    before each check, abandons it."""
    decision, choice = _what(cand, decision, choice, "smallest_explanation")
    target, trail, root = _Target(decision, choice), list(cand.trail), cand.root_candidate()

    for k in range(1, min(at_most, len(trail)) + 1):
        # subsets in trail order, grouped by all but their last decision: one
        # fixpoint for that prefix, then one decision per subset on top of it
        for head in itertools.combinations(range(len(trail)), k - 1):
            base = _with(root, [trail[i] for i in head], stop)
            if base is None or isinstance(base, str):  # objects no decision here creates
                continue  # (or a smaller subset: found at k - 1 already)
            for last in range(head[-1] + 1 if head else 0, len(trail)):
                if target.reproduced_by(_with(base, [trail[last]], stop)):
                    return tuple(trail[i] for i in (*head, last))
    return None


def _by_value(culprits: tuple, choice: tuple, root: Candidate, cand: Candidate,
              stop=None) -> tuple:
    """Per value of `choice` left on `cand`, an irreducible subset of
    `culprits` that alone rules it out (a value a person could get back by
    dropping one of a few decisions). A deletion filter over the culprits,
    latest first: one check per culprit and value, each on top of the
    candidate of the culprits before it (shared by every value), where
    progression would take about log2(len) checks per culprit kept (most
    values keep most culprits). Latest first also tries a decision on
    objects a lowering creates before the decisions that fire that lowering
    (without them it could not be taken, and they would look needed)."""
    prefixes = [root]
    for d in culprits:  # the culprits replay from the root (verified)
        _go_on(stop)
        prefixes.append(prefixes[-1].decide(d))
    out = []
    for value in sorted(cand.domain(*choice)):
        target = _Target(None, choice, value)
        kept: list = []  # the culprits after the one tried that are still needed
        for i in reversed(range(len(culprits))):
            if not target.reproduced_by(_with(prefixes[i], kept, stop)):
                kept.insert(0, culprits[i])  # not ruled out without it: needed
        out.append((value, tuple(kept)))
    return tuple(out)


def _progression(trail, prefixes, fails) -> tuple:
    must: list = []  # culprits found so far
    limit = len(trail)
    while not fails(prefixes, 0, must):
        lo, hi = 0, limit  # fails(lo) False, fails(hi) True
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fails(prefixes, mid, must):
                hi = mid
            else:
                lo = mid
        must.insert(0, trail[hi - 1])  # kept in trail order: a lowering before its objects
        limit = hi - 1
    return tuple(must)


def _verified(culprits, target: _Target, root: Candidate, checks: int,
              cand: Candidate, stop=None) -> Explanation:
    c = _with(root, culprits, stop)
    reasons = (None if c is None else (("decisions", c),) if isinstance(c, str)
               else target.reasons(c))
    ok = reasons is not None
    for k in range(len(culprits)):
        if not ok:
            break
        ok = not target.reproduced_by(_with(root, culprits[:k] + culprits[k + 1:], stop))
        checks += 1
    return Explanation(culprits, target.text(cand), tuple(reasons or ()), ok, checks + 1, cand)


def replay(root: Candidate, trail) -> tuple[list, Decision | None]:
    """(the candidates after each decision of `trail` — decisions or their
    dicts — up to the first that dead-ends, that decision or None): the
    `prefixes` that `explain` and `ways_out` take."""
    c, prefixes = root, [root]
    for d in trail:
        d = Decision.from_dict(d) if isinstance(d, dict) else d
        try:
            c = c.decide(d)
        except DeadEnd:
            return prefixes, d
        except InvalidDecision:
            # a value the decisions before it pruned is what a person most
            # wants explained ("why not 64?"); it was refused as an error.
            # One the root does not offer either (a typo) stays an error.
            if not _pruned_by_earlier(root, d):
                raise
            return prefixes, d
        prefixes.append(c)
    return prefixes, None


def _pruned_by_earlier(root: Candidate, d: Decision) -> bool:
    """Whether the root offers every value of `d` (so that decisions before
    it pruned one)."""
    if (d.choice, d.objects) not in root.problem.index:
        return False
    return set(d.values) <= set(root.domain(d.choice, d.objects))


def explain_trail(kernel, trail, *, space=None, choice=None, replayed=None) -> Explanation:
    """Replay `trail` (decisions or their dicts); explain the first decision
    that dead-ends, or, when it replays, the open `choice` = (name, objects).
    `replayed`: `replay`'s answer, when the caller has it already."""
    prefixes, dead = replayed or replay(Candidate.root(kernel, space), trail)
    if dead is not None:
        return explain(prefixes[-1], decision=dead, prefixes=prefixes)
    if choice is None:
        raise WorkbenchError("the trail replays without a dead end: name a --choice whose "
                             "values all dead-end")
    return explain(prefixes[-1], choice=choice, prefixes=prefixes)


@dataclass(frozen=True)
class WayOut:
    """What dropping one culprit leads to: the candidate of every other
    decision of the trail (and the decision explained, when it is one).
    `status`: `proven` (a witness below it), `dead` (it dead-ends, its
    other decisions no longer replay, or its subtree was searched
    exhaustively) or `open` (not settled within the budget), as values are
    in `Session.options`."""
    culprit: Decision
    status: str
    why: str  # in words, for a tooltip or a line
    witness: Candidate | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {"culprit": self.culprit.to_dict(), "status": self.status, "why": self.why}


def ways_out(cand: Candidate, ex: Explanation, *, prefixes=None, budget_s: float = 2.0,
             stop=None) -> tuple:
    """One `WayOut` per culprit of `ex` (an explanation of `cand`): the
    trail without that culprit, re-applied as `Session.drop` does
    (`candidate.history_without`: a decision on objects that the dropped
    one's lowering created no longer replays), then the decision
    explained when there is one, searched for a witness for at most
    `budget_s` seconds (`witness.find_witness`). `prefixes`: as in
    `explain`. `stop()`, asked between culprits and inside each search,
    abandons it (raises Stopped)."""
    from .witness import DEAD, OPEN, PROVEN, find_witness
    if not ex.culprits:
        return ()
    trail = list(cand.trail)
    _go_on(stop)
    if prefixes is None:
        prefixes = cand.prefixes()
    e = ex.decision
    out = []
    for d in ex.culprits:
        _go_on(stop)
        note = ""
        try:
            c = history_without(prefixes, trail.index(d))[-1]
        except DeadEnd as err:  # decisions commute: not after a live trail's subset
            out.append(WayOut(d, DEAD, f"the other decisions dead-end: {_constraint(err, c)}"))
            continue
        except InvalidDecision as err:
            out.append(WayOut(d, DEAD, f"the other decisions no longer replay: {err}"))
            continue
        if e is not None and (e.choice, e.objects) not in c.problem.index:
            note = " (the decision explained no longer applies: its objects came from this one)"
        elif e is not None:
            try:
                c = c.decide(e)
            except (DeadEnd, InvalidDecision) as err:
                why = _constraint(err, c) if isinstance(err, DeadEnd) else str(err)
                out.append(WayOut(d, DEAD, f"the decision tried still fails: {why}"))
                continue
        s = find_witness(c, rng=random.Random(0), budget_s=budget_s, stop=stop)
        _go_on(stop)
        if s.witness is not None:
            out.append(WayOut(d, PROVEN, "leads to an implementation (a witness found)" + note,
                              s.witness))
        elif s.exhausted:
            out.append(WayOut(d, DEAD, "still no implementation: another conflict remains "
                                       f"({s.nodes} candidates searched){note}"))
        else:
            out.append(WayOut(d, OPEN, f"not settled in {budget_s:g} s{note}"))
    return tuple(out)


__all__ = ["Explanation", "WayOut", "describe", "explain", "explain_trail", "replay",
           "smallest_explanation", "ways_out"]
