"""Candidates: partially specified implementations (thesis §3.1).

A `Candidate` is immutable. `apply` returns a new candidate whose decision
vector shares every per-choice table that propagation did not touch; undo is
keeping the old one. Every candidate carries its decision trail, which
replays it exactly (`to_json` / `from_json`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import DeadEnd, InvalidDecision, NeverAppears, WorkbenchError
from .space.lowering import settle
from .space.problem import Problem, permute
from .space.propagators import (
    DECISION,
    EXTRA,
    FALSE,
    INF,
    Store,
    decision_start,
    pack_sat,
    status,
)
from .space.space import Space, load_space
from .space.thread_levels import shave

FORMAT = "workbench.candidate/1"


@dataclass(frozen=True)
class Choice:
    """An open choice instance: its name, the objects it applies to and the
    values that remain."""
    name: str
    objects: tuple[str, ...]
    values: tuple[str, ...]


@dataclass(frozen=True)
class Pruning:
    """Values that propagation (or the decision itself) removed."""
    choice: str
    objects: tuple[str, ...]
    removed: tuple[str, ...]
    remaining: tuple[str, ...]
    by: str

    def __str__(self) -> str:
        return (f"{self.choice}({', '.join(self.objects)}): removed {{{', '.join(self.removed)}}}"
                f" -> {{{', '.join(self.remaining)}}} by {self.by}")


_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# (universe, domain) -> the names of the domain's values (`value_names`)
_NAMES: dict = {}


def value_names(u: tuple, dom: int) -> tuple[str, ...]:
    """The names of the values of the universe `u` in the bitset `dom`,
    remembered by content: many variables share a universe and a domain,
    and the explorer names every choice at every click."""
    key = (u, dom)
    got = _NAMES.get(key)
    if got is None:
        if len(_NAMES) > 200_000:
            _NAMES.clear()
        got = _NAMES[key] = tuple(str(u[i]) for i in range(len(u)) if dom >> i & 1)
    return got


# every visible choice instance of the last few candidates asked: an
# explorer click lists them for several panels, and a candidate never
# changes; kept for a few only (a search tree holds thousands of candidates)
_CHOICES: dict = {}
_CHOICES_KEPT = 8
_CHOICES_LOCK = threading.Lock()


def _recent_choices(cand) -> tuple:
    got = _CHOICES.get(id(cand))
    if got is not None and got[0]() is cand:
        return got[1]
    every = tuple(Choice(info.name, cand.problem.keys[v][1], cand._names(v, d))
                  for info, v, d in cand._visible_vars(True))
    with _CHOICES_LOCK:
        _CHOICES.pop(id(cand), None)
        _CHOICES[id(cand)] = (weakref.ref(cand), every)
        while len(_CHOICES) > _CHOICES_KEPT:
            del _CHOICES[next(iter(_CHOICES))]
    return every


def _digest_plan(problem) -> list:
    """(repr of "(key, " , table, slot) for every non-inverse key of
    `problem` in sorted key order: what `Candidate.digest` hashes."""
    plan = _PLANS.get(problem)
    if plan is None:
        plan = [(f"({key!r}, ", problem.vc[v], problem.vj[v])
                for key, (v, inv) in sorted(problem.index.items()) if not inv]
        _PLANS[problem] = plan
    return plan


def as_objects(objects) -> tuple[str, ...]:
    """The objects of a choice instance as a tuple of names; a single string
    is one object ("d0", not ('d', '0'))."""
    if isinstance(objects, str):
        return (objects,)
    if not isinstance(objects, (tuple, list)):
        raise InvalidDecision(f"objects must be a name or a list of names, got "
                              f"{type(objects).__name__}")
    return tuple(map(str, objects))


@dataclass(frozen=True)
class Decision:
    """Restrict one choice instance to the given values (one value: fix it)."""
    choice: str
    objects: tuple[str, ...]
    values: tuple[str, ...]

    def to_dict(self) -> dict:
        d = {"choice": self.choice, "objects": list(self.objects)}
        if len(self.values) == 1:
            d["value"] = self.values[0]
        else:
            d["values"] = list(self.values)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Decision:
        try:
            values = (d["value"],) if "value" in d else d["values"]
            values = (values,) if isinstance(values, str) else tuple(map(str, values))
            out = cls(str(d["choice"]), as_objects(d["objects"]), values)
        except (KeyError, TypeError) as exc:
            raise InvalidDecision(f"malformed decision {d!r}: needs choice, objects and "
                                  "value (or values)") from exc
        if not out.values:
            raise InvalidDecision(f"malformed decision {d!r}: it keeps no value")
        return out

    def check(self, cand: Candidate) -> tuple[int, int]:
        """The variable and the mask of kept values (in stored orientation);
        raises InvalidDecision naming what is wrong."""
        space = cand.problem.space
        info = space.choices.get(self.choice)
        if info is None or info.hidden:
            names = ", ".join(c.name for c in space.visible_choices())
            raise InvalidDecision(f"unknown choice {self.choice!r}; choices: {names}")
        if info.kind == "counter":
            raise InvalidDecision(f"{self.choice} is a counter: it follows from other choices "
                                  "and cannot be decided")
        got = cand.problem.index.get((self.choice, self.objects))
        if got is None:
            raise InvalidDecision(f"{self.choice} has no instance on objects {self.objects}")
        v, inv = got
        mask, unknown = _value_mask(cand.problem, v, inv, self.values)
        if unknown:
            universe = [str(x) for x in cand.problem.universe[v]]
            raise InvalidDecision(f"{unknown[0]!r} is not a value of {self.choice}; values: "
                                  f"{', '.join(universe)}")
        dom = cand._dom(v)
        if dom & mask == 0:
            now = ", ".join(cand._names(v, dom, inv))
            raise InvalidDecision(f"{self.choice}({', '.join(self.objects)}) = "
                                  f"{'|'.join(self.values)} is outside its domain {{{now}}}")
        return v, mask


_ROOTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


_ROOTS_KEPT = 4  # roots per kernel (by space and extra propagator), the last built


def _root_cache(kernel) -> dict:
    """The roots of a kernel, kept on the kernel itself where it can hold
    them: a cache keyed weakly by the kernel whose values (the roots, through
    their problem) reference the kernel would never let a kernel go. The last
    few built only: a caller passing a new `prune` function each time (a
    lambda) would otherwise keep one root problem per call."""
    try:
        return kernel.__dict__.setdefault("_candidate_roots", {})
    except AttributeError:
        return _ROOTS.setdefault(kernel, {})


class Candidate:
    """A kernel with a domain for each of its choices, at a propagation fixpoint."""

    __slots__ = ("__weakref__", "_digest", "_history", "_log", "_sat", "_tables", "problem",
                 "trail")

    def __init__(self, problem: Problem, tables, trail, log, history=(), sat: bytes | None = None):
        self.problem = problem
        self._tables = tuple(tables)
        self._sat = sat  # packed satisfied-clause flags (propagators.Store.sat)
        self.trail: tuple[Decision, ...] = tuple(trail)
        self._log = log
        # (problem, log) of the prunings before a lowering changed the
        # problem: resolved into words only when asked (`pruned`)
        self._history = history

    # ------------------------------------------------------------ creation
    @classmethod
    def root(cls, kernel, space: Space | str | None = None, prune=None) -> Candidate:
        """The propagated root candidate of `kernel` in its decision space
        (by default the kernel's own `space` attribute). `prune`: an optional
        extra propagator, `prune(kernel) -> [(choice, objects, values to
        remove, reason)]`, applied before the root's propagation (e.g.
        `workbench.poly.fcg_prune`); its removals show in `pruned()` with
        their reason."""
        if space is None:
            space = getattr(kernel, "space", None)
            if space is None:
                raise InvalidDecision("kernel has no default decision space; pass space=")
        if isinstance(space, str):
            space = load_space(space)
        per_kernel = _root_cache(kernel)
        key = (id(space), prune)  # the root's problem holds the space: its id stays its own
        root = per_kernel.get(key)
        if root is None:
            try:
                problem = base = Problem(space, kernel)
            except WorkbenchError as exc:
                own = getattr(kernel, "space", None)
                if own is None or space.name.removesuffix(".space") == own:
                    raise
                raise WorkbenchError(f"the space {space.name} does not fit this kernel (its own "
                                f"space is {own!r}): {exc}") from None
            st = Store(problem, problem.init_tables)
            for name, objects, values, reason in (prune(kernel) if prune else ()):
                got = problem.index.get((name, tuple(objects)))
                if got is None:
                    continue
                v, inv = got
                removed = _value_mask(problem, v, inv, values)[0]  # unknown values: nothing
                dom = st.get(v)
                if dom & removed:
                    st.put(v, dom & ~removed, EXTRA)
                    problem.extra_reason[problem.keys[v]] = reason
            problem, st, history = settle(problem, st, range(len(problem.instances)))
            while written := shave(problem, st):  # the root's pair check (thread_levels)
                problem, st, more = settle(problem, st,
                                           [j for v in written for j in decision_start(st, v)])
                history += more
            root = cls(problem, st.tables, (), st.log, history, pack_sat(st.sat))
            base._root_candidate = root  # for root_candidate() once the cache let it go
            per_kernel[key] = root
            while len(per_kernel) > _ROOTS_KEPT:  # the oldest goes
                per_kernel.pop(next(iter(per_kernel)), None)
        return root

    @classmethod
    def replay(cls, kernel, trail: Iterable, space=None, prune=None) -> Candidate:
        cand = cls.root(kernel, space, prune)
        for d in trail:
            if isinstance(d, dict):
                d = Decision.from_dict(d)
            elif not isinstance(d, Decision):
                raise InvalidDecision(f"a trail holds decisions ({{choice, objects, value}}), "
                                      f"not {type(d).__name__}")
            cand = cand.restrict(d.choice, d.objects, d.values)
        return cand

    def root_candidate(self) -> Candidate:
        """The root this candidate's trail starts from (with its `prune`,
        when it had one): the cached root of its root problem."""
        if not self.trail:
            return self
        root = self.problem.root_problem.__dict__.get("_root_candidate")
        return root if root is not None else Candidate.root(self.problem.root_problem.kernel,
                                                            self.space)

    def prefixes(self) -> list:
        """The candidates after 0, 1, …, all decisions of this candidate's
        trail, replayed in its order from its root (`root_candidate`)."""
        out = [self.root_candidate()]
        for d in self.trail:
            out.append(out[-1].decide(d))
        return out

    def decide_each(self, decisions: Iterable[Decision]) -> tuple[list, list]:
        """Take `decisions` one by one from here, in their order except that
        a decision on objects a lowering creates waits until they exist
        (decisions commute): (the order taken, the candidates after 0, 1, …
        of them). Raises NeverAppears (an InvalidDecision) when some objects
        never appear, and
        DeadEnd as `decide` does."""
        order, after, wait = [], [self], list(decisions)
        while wait:
            d = next((d for d in wait if (d.choice, d.objects) in after[-1].problem.index), None)
            if d is None:
                after[-1]._never_appear(wait)
            wait.remove(d)
            after.append(after[-1].decide(d))
            order.append(d)
        return order, after

    def decide_all(self, decisions: Iterable[Decision]) -> Candidate:
        """Take `decisions` together: every one whose objects exist is written
        first, then one fixpoint runs for all of them (then the same for
        those whose objects a lowering created). Decisions commute and the
        propagators are monotone, so the domains equal those of `decide_each`
        with one fixpoint, and one run of the global propagators, instead of
        one per decision (1.1–1.6× faster on whole matmul 64×64×32 trails);
        the log of what each one pruned is not kept apart. Raises
        NeverAppears (objects that never appear), InvalidDecision (a value
        outside a choice) and DeadEnd."""
        cand, wait = self, list(decisions)
        while wait:
            index = cand.problem.index
            now = [d for d in wait if (d.choice, d.objects) in index]
            if not now:
                cand._never_appear(wait)
            wait = [d for d in wait if (d.choice, d.objects) not in index]
            cand = cand._take(now)
        return cand

    # ------------------------------------------------------------- queries
    @property
    def kernel(self):
        return self.problem.kernel

    @property
    def space(self) -> Space:
        return self.problem.space

    def _dom(self, v: int):
        p = self.problem
        return self._tables[p.vc[v]][p.vj[v]]

    def _names(self, v: int, dom: int, inv: bool = False) -> tuple[str, ...]:
        p = self.problem
        if inv:
            dom = permute(dom, p.choice_infos[p.vc[v]].inverse)
        return value_names(p.universe[v], dom)

    def _never_appear(self, wait: list):
        """Raise for decisions none of whose objects exist here: the first
        that names an unknown choice, by name; else NeverAppears."""
        for d in wait:
            info = self.space.choices.get(d.choice)
            if info is None or info.hidden:
                d.check(self)  # "unknown choice …; choices: …"
        raise NeverAppears(wait)

    def _var(self, name: str, objects) -> tuple[int, bool]:
        objects = as_objects(objects)
        got = self.problem.index.get((name, objects))
        if got is None:
            if name not in self.space.choices:
                raise InvalidDecision(f"unknown choice {name!r}")
            raise InvalidDecision(f"{name} has no instance on objects {objects}")
        return got

    def domain(self, name: str, objects=()) -> frozenset:
        """Remaining values of a choice instance (strings, also for integers)."""
        v, inv = self._var(name, objects)
        if self.space.choices[name].kind == "counter":
            raise InvalidDecision(f"{name} is a counter: use .counter({name!r}, ...) for its "
                                  "[min, max]")
        return frozenset(self._names(v, self._dom(v), inv))

    def counter(self, name: str, objects=()) -> tuple[int, int | None]:
        """[min, max] of a counter instance (max None for a half counter)."""
        v, _ = self._var(name, objects)
        if self.space.choices[name].kind != "counter":
            raise InvalidDecision(f"{name} is not a counter")
        lo, hi = self._dom(v)
        return lo, (None if self.space.choices[name].half else hi)

    def value(self, name: str, objects=()) -> str:
        dom = self.domain(name, objects)
        if len(dom) != 1:
            raise InvalidDecision(f"{name}{as_objects(objects)} is not fixed: {sorted(dom)}")
        return next(iter(dom))

    def _visible_vars(self, include_fixed: bool):
        p = self.problem
        for ci, info in enumerate(p.choice_infos):
            if info.hidden or info.kind == "counter":
                continue
            table = self._tables[ci]
            for v in p.choice_vars[ci]:
                d = table[p.vj[v]]
                if include_fixed or d & (d - 1):
                    yield info, v, d

    def choices(self, include_fixed: bool = False) -> list[Choice]:
        """Open choice instances (each pair of a mirrored choice listed once)."""
        every = _recent_choices(self)
        if include_fixed:
            return list(every)
        return [c for c in every if len(c.values) > 1]

    def lowerings_ahead(self) -> list[frozenset]:
        """The fired sets one more lowering can lead to: for each trigger not
        yet fired whose conditions are not already false, the problem's
        fired set plus it (several may give the same extended problem)."""
        p = self.problem
        st = Store(p, self._tables)
        return [p.fired | {t.key} for t in p.triggers() if t.key not in p.fired
                and all(status(st, lit) != FALSE for lit in t.lits)]

    @property
    def is_fixed(self) -> bool:
        p = self.problem
        for ci, info in enumerate(p.choice_infos):
            if info.kind == "counter":
                continue
            for d in self._tables[ci]:
                if d & (d - 1):
                    return False
        return True

    def open_count(self) -> int:
        return sum(1 for _ in self._visible_vars(False))

    def log10_size(self) -> float:
        """log10 of the Cartesian product of the open domains: an upper bound
        on the number of implementations."""
        import math
        return sum(math.log10(d.bit_count()) for _, _, d in self._visible_vars(False))

    def assignment(self) -> dict:
        """{(choice, objects): value} of every visible choice (fixed candidates)."""
        if not self.is_fixed:
            raise InvalidDecision("assignment() needs a fixed candidate")
        return {(info.name, self.problem.keys[v][1]): self._names(v, d)[0]
                for info, v, d in self._visible_vars(True)}

    def pruned(self, limit: int | None = None) -> list[Pruning]:
        """What the last decision (or the root's initial propagation) removed,
        and which constraint removed it; the first `limit` only if given (a
        lowering's log holds thousands, and naming each costs)."""
        out: list[Pruning] = []
        for problem, log in (*self._history, (self.problem, self._log)):
            if limit is not None:
                log = log[:limit - len(out)]
            out += _resolve(problem, log)
        return out

    # ------------------------------------------------------------ decisions
    def apply(self, name: str, objects, value) -> Candidate:
        """Fix a choice instance to one value; returns the new candidate.
        Raises InvalidDecision or DeadEnd; `self` is never modified."""
        return self.restrict(name, objects, (value,))

    def restrict(self, name: str, objects, values) -> Candidate:
        """Restrict a choice instance to a set of values (or an alias)."""
        if isinstance(values, (str, int)):
            values = (values,)
        d = Decision(str(name), as_objects(objects), tuple(map(str, values)))
        return self.decide(d)

    def decide(self, d: Decision) -> Candidate:
        return self._take((d,))

    def _take(self, ds) -> Candidate:
        """Write the decisions `ds` (their objects exist here), then one
        fixpoint from what each of them wakes (`decide`, `decide_all`)."""
        p = self.problem
        st = Store(p, self._tables, self._sat)
        written = []
        for d in ds:
            v, mask = d.check(self)
            dom = st.get(v)
            if dom & mask != dom:
                if not dom & mask:  # another decision of `ds` left it no value
                    raise DeadEnd("another decision taken with it", (), d.choice, decision=d)
                st.put(v, dom & mask, DECISION)
            written.append(v)
        try:
            p2, st, history = settle(p, st, [j for v in written for j in decision_start(st, v)])
        except DeadEnd as e:
            e.decision = ds[-1]
            raise
        return Candidate(p2, st.tables, self.trail + tuple(ds), st.log, history,
                         pack_sat(st.sat))

    # ----------------------------------------------------------- persistence
    def digest(self) -> str:
        """A hash of the decision vector: equal digests, equal domains
        (kept: a candidate never changes, and the explorer asks often)."""
        cached = getattr(self, "_digest", None)
        if cached is not None:
            return cached
        # the bytes hashed are repr((key, domain)) for every key in sorted
        # order, as always (saved states and records hold digests); the keys'
        # order and text are the problem's, computed once
        tables = self._tables
        text = "".join([f"{prefix}{tables[ci][j]!r})"
                        for prefix, ci, j in _digest_plan(self.problem)])
        self._digest = hashlib.sha256(text.encode()).hexdigest()
        return self._digest

    def to_json(self) -> str:
        spec = getattr(self.problem.root_problem.kernel, "spec", None)
        if spec is None:
            raise InvalidDecision("this kernel cannot be serialised: it has no spec()")
        return json.dumps({"format": FORMAT, "space": self.space.name,
                           "kernel": spec(), "trail": [d.to_dict() for d in self.trail],
                           "digest": self.digest()})

    @classmethod
    def from_json(cls, text: str) -> Candidate:
        from . import kernels
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidDecision(f"not a candidate JSON document: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InvalidDecision(f"not a {FORMAT} document")
        from .validate import space_name
        kernel = kernels.from_spec(data.get("kernel"))
        space = data.get("space")
        space = space_name(space) if space is not None else None  # never a path from a file
        trail = data.get("trail", [])
        if not isinstance(trail, list) or not all(isinstance(d, dict) for d in trail):
            raise InvalidDecision("a candidate's trail is a list of decisions")
        cand = cls.replay(kernel, trail, space)
        if "digest" in data and cand.digest() != data["digest"]:
            raise InvalidDecision("replaying the trail gives different domains than the ones "
                                  "saved: the space or the kernel changed since")
        return cand

    _SHOWN = 3  # decisions named in repr (the last ones); _repr_html_ shows 8 times more

    def _summary(self) -> str:
        state = "fixed" if self.is_fixed else f"{self.open_count()} open choices"
        kernel = getattr(self.problem.root_problem.kernel, "name", None)
        return (f"{self.space.name}{f' · {kernel}' if isinstance(kernel, str) else ''}: "
                f"{state}, {len(self.trail)} decisions")

    def __repr__(self) -> str:
        # objects by their names (workbench.names), never by raw ids
        from .names import decision_label
        shown = self.trail[-self._SHOWN:]
        texts = [decision_label(self, d) for d in shown]
        if len(self.trail) > len(shown):
            texts.insert(0, "…")
        last = f": {'; '.join(texts)}" if texts else ""
        return f"<Candidate {self._summary()}{last}>"

    def _repr_html_(self) -> str:
        """The summary and the last decisions in words, each with its raw
        form (`dim_kind(d0) = BLOCK`) as a tooltip."""
        import html

        from .names import decision_label, raw
        shown = self.trail[-8 * self._SHOWN:]
        rows = "".join(
            f"<li title='{html.escape(raw(d.choice, d.objects))} = "
            f"{html.escape('|'.join(d.values))}'>{html.escape(decision_label(self, d))}</li>"
            for d in shown)
        start = len(self.trail) - len(shown) + 1
        more = (f"<div><i>{start - 1} earlier decisions not shown</i></div>"
                if start > 1 else "")
        body = f"{more}<ol start='{start}'>{rows}</ol>" if rows else ""
        return f"<div><b>Candidate</b> {html.escape(self._summary())}{body}</div>"


def _value_mask(problem: Problem, v: int, inv: bool, values) -> tuple[int, list]:
    """The mask of `values` (or aliases) of variable `v` in stored
    orientation, and the values that are not values of its choice."""
    info = problem.choice_infos[problem.vc[v]]
    universe = [str(x) for x in problem.universe[v]]
    mask, unknown = 0, []
    for val in values:
        if val in info.aliases:
            mask |= info.value_mask((val,))
        elif val in universe:
            mask |= 1 << universe.index(val)
        else:
            unknown.append(val)
    if inv:
        mask = permute(mask, info.inverse)
    return mask, unknown


def _interval(iv) -> str:
    def f(x):
        return "inf" if x >= INF else "-inf" if x <= -INF else str(x)
    return f"[{f(iv[0])}, {f(iv[1])}]"


def _resolve(problem: Problem, log) -> list[Pruning]:
    out = []
    for v, old, new, cause in log:
        name, objs = problem.keys[v]
        info = problem.choice_infos[problem.vc[v]]
        if info.kind == "counter":
            out.append(Pruning(name, objs, (_interval(old),), (_interval(new),),
                               problem.cause_text(cause, v)))
            continue
        u = problem.universe[v]
        out.append(Pruning(name, objs, value_names(u, old & ~new), value_names(u, new),
                           problem.cause_text(cause, v)))
    return out


def history_without(prefixes: list, k: int) -> list:
    """The prefixes (candidates after 0, 1, … decisions) of the last one of
    `prefixes` without its decision number k (0-based): those before it kept,
    every later decision re-applied in order, one by one. Raises DeadEnd, or
    InvalidDecision for a decision on objects that only decision k's
    lowering created (`Session.drop` replays so, and `explain.ways_out`
    with it)."""
    hist = prefixes[:k + 1]
    for d in prefixes[-1].trail[k + 1:]:
        hist.append(hist[-1].decide(d))
    return hist
