"""An exploration session: the state behind the candidate explorer, in plain
Python (the widgets only render it and forward clicks).

Branches of candidates side by side; in each, the candidates from the root
down to the current one (undo is stepping back, redo stepping forward along
the decisions undone, a jump is stepping to any earlier decision); bounds
and look-ahead cached by candidate digest; the best measured time of the
kernel from the record store. The whole state — kernel, target, the trail
and the undone decisions of every branch — saves to JSON and, with a path,
after every change, so a restarted notebook kernel loses nothing.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

from .candidate import Candidate, Decision, as_objects, history_without
from .errors import DeadEnd, InvalidDecision, WorkbenchError
from .paths import write_atomic
from .witness import DEAD, OPEN, PROVEN, adopt, extends, find_witness

FORMAT = "workbench.explorer/1"


@dataclass
class Branch:
    name: str
    history: list  # candidates from the root (index 0) down
    pos: int = 0  # index of the current candidate in history
    note: str = ""

    @property
    def cand(self) -> Candidate:
        return self.history[self.pos]


@dataclass(frozen=True)
class Option:
    """One remaining value of a choice, with the bound of the child and
    whether the child leads somewhere: `proven` (a witness, a fixed candidate
    below the child, is known), `dead` (the child dead-ends, or its subtree
    was searched exhaustively) or `open` (not known yet either way)."""
    value: str
    bound_ns: float | None  # None: the child dead-ends at once
    dead_end: str = ""
    above_best: bool = False  # the child's bound reaches the best measured time
    status: str = OPEN
    witness: Candidate | None = None  # a fixed candidate below the child, when proven
    lowering: frozenset = frozenset()  # the child's fired triggers, when it lowered something


@dataclass
class Session:
    root: Candidate
    target: str | None = None
    path: str | Path | None = None  # autosave file
    store: object = "default"
    branches: list = field(default_factory=list)
    current: int = 0

    def __post_init__(self):
        if not self.branches:
            start = self.root
            if start.trail:  # a candidate's session: its decisions are its first steps
                # (a branch's history[i] holds i decisions: drop, jump, explain and
                # saving rely on it)
                self.root = start.root_candidate()
                history = self.root.decide_each(start.trail[:-1])[1] + [start]
            else:
                history = [start]
            self.branches = [Branch("main", history, len(history) - 1)]
        self._bounds: dict = {}
        self._kids: dict = {}  # look-ahead children by (digest, choice, objects)
        self._rows_cache: tuple = (None, [])
        self._snapshot()  # what a failed autosave goes back to
        self._witness: dict = {}  # digest -> witness, or None once proven empty
        self._known: list = []  # recent witnesses, reused for any candidate they extend
        self.load_notes: list[str] = []  # what `load(strict=False)` let pass, in words
        self._status: dict = {}  # (digest, choice, objects, value) -> (status, witness)
        self._rng = random.Random(0)

    # -------------------------------------------------------------- state
    @property
    def branch(self) -> Branch:
        return self.branches[self.current]

    @property
    def cand(self) -> Candidate:
        return self.branch.cand

    def apply(self, choice: str, objects, value) -> Candidate:
        """Force a decision; on InvalidDecision or DeadEnd nothing changes."""
        # raises before any change
        return self._push([self.cand.apply(choice, as_objects(objects), value)])

    def _push(self, steps: list) -> Candidate:
        """The candidates `steps` (one decision each, from the current one)
        become the branch's next steps, in place of what redo would reach."""
        b = self.branch
        del b.history[b.pos + 1:]
        b.history += steps
        b.pos = len(b.history) - 1
        self._autosave()
        return self.cand

    def undo(self) -> Candidate:
        if self.branch.pos > 0:
            self.branch.pos -= 1
            self._autosave()
        return self.cand

    def redo(self) -> Candidate:
        b = self.branch
        if b.pos + 1 < len(b.history):
            b.pos += 1
            self._autosave()
        return self.cand

    def jump(self, step: int) -> Candidate:
        """Back (or forward) to the candidate after `step` decisions."""
        b = self.branch
        if not 0 <= step < len(b.history):
            raise WorkbenchError(f"no step {step}: this branch has steps 0 to "
                                 f"{len(b.history) - 1}")
        b.pos = step
        self._autosave()
        return self.cand

    def reset(self) -> Candidate:
        return self.jump(0)

    def new_branch(self, name: str | None = None, cand: Candidate | None = None) -> Branch:
        """A new branch from the current candidate, or from `cand` (e.g. the
        best a search found: its trail is replayed from the root)."""
        name = name or f"branch {len(self.branches)}"
        if any(b.name == name for b in self.branches):
            raise WorkbenchError(f"a branch is already named {name!r}")
        if cand is None:
            history = list(self.branch.history[:self.branch.pos + 1])
        else:
            history = self._prefixes([d.to_dict() for d in cand.trail])
        self.branches.append(Branch(name, history, len(history) - 1))
        self.current = len(self.branches) - 1
        self._autosave()
        return self.branch

    def switch(self, index: int) -> Candidate:
        if not 0 <= index < len(self.branches):
            raise WorkbenchError(f"no branch {index}")
        self.current = index
        self._autosave()
        return self.cand

    # ------------------------------------------------------------- bounds
    def bound(self, cand: Candidate | None = None):
        from .model import bound
        cand = cand or self.cand
        key = cand.digest()
        if key not in self._bounds:
            self._bounds[key] = bound(cand, self.target)
        return self._bounds[key]

    def path_bounds(self) -> list:
        """(step, decision or None, bound in ns) for the current branch."""
        b = self.branch
        out = [(0, None, self.bound(b.history[0]).value_ns)]
        for k, c in enumerate(b.history[1:], 1):
            out.append((k, c.trail[-1], self.bound(c).value_ns))
        return out

    def cached_options(self, choice: str, objects, cand: Candidate | None = None):
        """`options` if already computed, else None (never computes)."""
        cand = cand or self.cand
        if (cand.digest(), choice, as_objects(objects)) in self._kids:
            return self.options(choice, objects, cand)
        return None

    def options(self, choice: str, objects, cand: Candidate | None = None, stop=None,
                prove_s: float = 0.0) -> list[Option]:
        """Each remaining value with the bound of its child (look-ahead) and
        its status, for the current candidate or `cand`; cached, so going
        back to a candidate costs nothing. The value the candidate's witness
        takes is proven at once; `prove_s` > 0 searches up to that many
        seconds per other value for a witness of its child (else it stays
        open unless a known witness already covers it)."""
        from .model.lookahead import lookahead
        cand = cand or self.cand
        objects = as_objects(objects)
        key = (cand.digest(), choice, objects)
        fresh = {}  # this call's children: proving a value reuses its propagation
        if key not in self._kids:  # `stop`: see model.lookahead (nothing is cached then)
            kids = lookahead(cand, choice, objects, self.target, parent=self.bound(cand),
                             stop=stop, keep=True)
            fresh = {k.value: k.cand for k in kids}
            self._kids[key] = [replace(k, cand=None) for k in kids]
        kids = self._kids[key]
        best = self.best_measured_ns()
        if prove_s > 0:
            self.witness(cand, budget_s=max(prove_s, 1.0), stop=stop)
        out = []
        for k in kids:
            if k.bound is None:
                out.append(Option(k.value, None, k.error, status=DEAD))
                continue
            if stop is not None and stop():
                from .model.lookahead import Stopped
                raise Stopped(f"proving {choice}{objects} stopped")
            status, wit = self.prove(choice, objects, k.value, cand, budget_s=prove_s, stop=stop,
                                     child=fresh.get(k.value))
            out.append(Option(k.value, k.value_ns, "", best is not None and k.value_ns >= best,
                              status, wit, k.lowering))
        return out

    # ---------------------------------------------------------- witnesses
    def witness(self, cand: Candidate | None = None, budget_s: float = 5.0, stop=None
                ) -> Candidate | None:
        """A fixed candidate below `cand` (default: the current one): a known
        witness when one extends it, else one searched for up to `budget_s`
        (`workbench.witness`; no search with `budget_s` ≤ 0); None when there
        is none (the subtree was searched exhaustively) or none was found in
        time."""
        cand = cand or self.cand
        key = cand.digest()
        if key in self._witness:
            return self._witness[key]
        for w in reversed(self._known):
            if extends(w, cand):
                self._witness[key] = w
                return w
        if budget_s <= 0:
            return None
        got = find_witness(cand, rng=self._rng, budget_s=budget_s, stop=stop)
        if got.witness is not None or got.exhausted:
            self._remember(key, got.witness)
        return got.witness

    def _remember(self, key: str, w: Candidate | None) -> None:
        self._witness[key] = w
        if w is not None:
            self._known = [*self._known[-63:], w]

    def prove(self, choice: str, objects, value: str, cand: Candidate | None = None,
              budget_s: float = 0.0, stop=None, child: Candidate | None = None
              ) -> tuple[str, Candidate | None]:
        """(status, witness) of one value of an open choice of `cand`;
        `child`: that value's child when the caller has it already."""
        cand = cand or self.cand
        objects = as_objects(objects)
        key = (cand.digest(), choice, objects, value)
        got = self._status.get(key)
        if got is not None:
            return got
        w = self._witness.get(cand.digest())
        if w is not None and w.value(choice, objects) == value:
            got = (PROVEN, w)
        else:
            try:
                child = child if child is not None else cand.apply(choice, objects, value)
            except DeadEnd:
                got = (DEAD, None)
            else:
                w = self.witness(child, budget_s=budget_s, stop=stop)
                if w is not None:
                    got = (PROVEN, w)
                elif child.digest() in self._witness:  # its subtree holds none
                    got = (DEAD, None)
        if got is None:
            return OPEN, None  # not cached: more time may prove it later
        self._status[key] = got
        return got

    def finish(self, budget_s: float = 5.0, tries: int = 1, climb: int = 0,
               on_phase=None) -> Candidate:
        """Take the implementation a person reaches who always follows the
        least child bound (`descent.least_bound_fixed`) — where that meets a
        choice with no live value, the current candidate's witness instead,
        with `tries` > 1 the one of lowest bound among that many —; with
        `climb`, move it that many times on the bound (`search.climb`: the
        person's decisions stay); its remaining decisions join the branch
        (each one a step: undo walks back). `on_phase(text)` is told what it
        does next (seconds each on the thesis's matmuls)."""
        from .descent import least_bound_fixed
        said = on_phase or (lambda text: None)
        said("following the least child bound down to an implementation")
        bound_ns = lambda c: self.bound(c).value_ns  # noqa: E731
        fixed = least_bound_fixed(self.cand, self._rng, bound_ns)
        if fixed is None:
            fixed = self._witness_fixed(budget_s, tries, said)
        else:
            self._remember(self.cand.digest(), fixed)  # it proves the values it took
        if climb:
            said(f"{climb} moves on the bound from it")
            from .search.climb import climb as climb_bound
            fixed = climb_bound(self.cand, fixed, bound_ns, self._rng, steps=climb).candidate
        steps = []
        said(f"taking its {len(fixed.trail) - len(self.cand.trail)} decisions, one step each")
        for d in fixed.trail[len(self.cand.trail):]:
            steps.append((steps[-1] if steps else self.cand).decide(d))
        return self._push(steps)

    def _witness_fixed(self, budget_s: float, tries: int, said) -> Candidate:
        """The current candidate's witness adopted (the least bound of
        `tries`), for `finish`."""
        said("looking for an implementation below")
        w = self.witness(budget_s=budget_s)
        if w is None:
            raise WorkbenchError("no implementation below this candidate was found "
                                 f"in {budget_s:g} s" + ("" if self.cand.digest() not in
                                                         self._witness else
                                                         ": its subtree holds none"))
        for k in range(tries - 1):
            said(f"another implementation below ({k + 2} of {tries}), to keep the lowest bound")
            other = find_witness(self.cand, rng=self._rng, budget_s=budget_s).witness
            if other is not None and self.bound(other).value_ns < self.bound(w).value_ns:
                w = other
                self._remember(self.cand.digest(), w)
        return adopt(self.cand, w)

    def force_recipe(self, recipe: str, *, on_step=None, **options) -> Candidate:
        """Force a named recipe (`recipes.RECIPES`) on the current candidate,
        each of its decisions a step (undo walks back), those propagation has
        settled left out. All or nothing: a decision the candidate refuses
        (an earlier decision of the person's may rule it out) raises
        WorkbenchError naming it, and nothing changes. `on_step(k)` is told
        each time k decisions have been taken."""
        from .recipes import recipe_steps
        # raises before any change
        return self._push([c for _, c in recipe_steps(self.cand, recipe, on_step=on_step,
                                                      **options)])

    def explain(self, choice=None, decision=None, stop=None):
        """Why `decision` dead-ends here, or why every value of the open
        `choice` = (name, objects) does (`workbench.explain`; `stop()` abandons
        it, raising Stopped)."""
        return self.explainer(choice, decision)[1](stop)

    def explainer(self, choice=None, decision=None):
        """(the current candidate, a function of `stop` that explains it, a
        function of (explanation, `stop`) that says where dropping each of
        its culprits leads — `explain.ways_out`, whose witnesses this
        session then knows): the candidate and its history are read now, so
        another thread may explain while the person goes on. Raises Stopped
        when another thread is changing the branch (a `drop` between its two
        writes)."""
        from .explain import explain, ways_out
        from .model.lookahead import Stopped
        b = self.branch
        history, pos = list(b.history), b.pos
        if pos >= len(history) or len(history[pos].trail) != pos:
            raise Stopped("the branch changed while it was read")
        cand, prefixes = history[pos], history[:pos + 1]

        def ways(ex, stop=None, budget_s: float = 2.0) -> tuple:
            outs = ways_out(cand, ex, prefixes=prefixes, stop=stop, budget_s=budget_s)
            for way in outs:  # a drop taken finds its witness known
                if way.witness is not None:
                    self._remember(way.witness.digest(), way.witness)
            return outs
        return cand, (lambda stop=None: explain(cand, choice=choice, decision=decision,
                                                prefixes=prefixes, stop=stop)), ways

    def drop(self, step: int) -> Candidate:
        """The current candidate without decision number `step` (1-based, as
        in the path): every other decision is re-applied in order, on a new
        history, so undo still reaches the candidate before."""
        b = self.branch
        trail = list(b.cand.trail)
        if not 1 <= step <= len(trail):
            raise WorkbenchError(f"no decision {step}: this candidate has decisions 1 to "
                                 f"{len(trail)}")
        try:
            hist = history_without(b.history[:b.pos + 1], step - 1)
        except (DeadEnd, InvalidDecision) as exc:
            raise WorkbenchError(f"without decision {step} the others no longer replay: "
                                 f"{exc}") from None
        b.history[:] = hist
        b.pos = len(hist) - 1
        self._autosave()
        return self.cand

    def best_measured_ns(self, backend: str | None = None, target: str | None = None
                         ) -> float | None:
        """Best median time of this kernel (same sizes) in the record store,
        of records whose bound used `target` (default: the session's, when
        set — a CPU time beside a GPU bound means nothing) and, when given,
        measured by `backend`."""
        target = target or self.target
        ok = [r["median_ns"] for r in self._rows()
              if r.get("status") == "ok" and r.get("median_ns")
              and (target is None or r.get("target") == target)
              and (backend is None or r.get("backend") == backend)]
        return min(ok) if ok else None

    def set_target(self, target: str | None) -> None:
        """Bounds and look-ahead from now on on `target` (a hardware table;
        None: the default); the cached bounds are dropped, decisions kept."""
        if target == self.target:
            return
        if target is not None:
            from .validate import target_name
            target_name(target)
            from .model.hardware import hardware
            hardware(target)  # a table without a model is refused here, not at the next click
        self.target = target
        self._bounds.clear()
        self._kids.clear()
        self._autosave()

    def _rows(self) -> list:
        """This kernel's records; the file is read again only when it changed
        (a refresh asks for the best time once per listed choice)."""
        if self.store is None:
            return []
        from .runtime.records import RecordStore
        st = RecordStore.open(self.store)
        try:
            stat = st.path.stat()
        except OSError:
            return []
        key = (str(st.path), stat.st_mtime_ns, stat.st_size)
        if self._rows_cache[0] != key:
            spec = self.root.problem.root_problem.kernel.spec()
            try:
                rows = [r for r in st.rows() if r.get("sizes") == spec]
            except (OSError, WorkbenchError):
                rows = []
            self._rows_cache = (key, rows)
        return self._rows_cache[1]

    def records_version(self) -> tuple | None:
        """The version of this kernel's records in the store: equal versions
        hold the same records (a view redraws only when it moved)."""
        self._rows()
        return self._rows_cache[0]

    def records(self):
        import pandas as pd
        return pd.DataFrame(self._rows())

    # --------------------------------------------------------- persistence
    def _prefixes(self, trail: list) -> list:
        """The candidates after 0, 1, … decisions of `trail`."""
        out = [self.root]
        for d in trail:
            dd = Decision.from_dict(d)
            out.append(out[-1].restrict(dd.choice, dd.objects, dd.values))
        return out

    def to_json(self) -> str:
        kernel = self.root.problem.root_problem.kernel
        return json.dumps({
            "format": FORMAT, "kernel": kernel.spec(), "space": self.root.space.name,
            "target": self.target, "current": self.current,
            "branches": [{"name": b.name, "pos": b.pos, "note": b.note,
                          "trail": [d.to_dict() for d in b.history[-1].trail],
                          "digest": b.history[-1].digest()}
                         for b in self.branches]})

    def save(self, path: str | Path | None = None) -> Path:
        return write_atomic(Path(path or self.path), self.to_json())

    def _autosave(self) -> None:
        """Save after a change; if that fails, the change is taken back (the
        session stays as it was saved last) and the error says why."""
        if self.path is None:
            return
        try:
            self.save()
        except (OSError, TypeError, ValueError) as exc:
            self._restore()
            raise WorkbenchError(f"the explorer state could not be saved to {self.path} "
                                 f"({getattr(exc, 'strerror', None) or exc}): the change was "
                                 "not made") from None
        self._snapshot()

    def _snapshot(self) -> None:
        """The state as last saved (what `_restore` goes back to)."""
        self._saved = (list(self.branches), self.current,
                       [(b, b.name, list(b.history), b.pos, b.note) for b in self.branches])

    def _restore(self) -> None:
        saved = getattr(self, "_saved", None)
        if saved is None:
            return
        branches, current, fields = saved
        for b, name, history, pos, note in fields:
            b.name, b.history, b.pos, b.note = name, history, pos, note
        self.branches[:] = branches
        self.current = current

    @classmethod
    def load(cls, path: str | Path, store="default", autosave: bool = True, *,
             strict: bool = True) -> Session:
        """A saved session, every field checked: the kernel spec and the
        space and target names (among the project's own), each branch's
        name, trail, position and the digest its trail must replay to.
        `strict=False` (the explorer's picker): a branch whose decisions all
        replay but to other domains — propagation grew stronger since it was
        saved — is kept, said in `load_notes`; its decisions are the record."""
        from . import kernels
        from .validate import read_json_document, space_name, target_name
        data = read_json_document(path, "explorer state")
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise WorkbenchError(f"{path} is not a {FORMAT} file")
        try:
            kernel = kernels.from_spec(data.get("kernel"))
            space = space_name(data.get("space"))
            target = data.get("target")
            if target is not None:
                target_name(target)
            branches = _checked_branches(data.get("branches"))
        except WorkbenchError as exc:
            raise WorkbenchError(f"{path}: {exc}") from None
        root = Candidate.root(kernel, space)
        s = cls(root, target, path if autosave else None, store)
        s.branches, notes = [], []
        for b in branches:
            try:
                hist = s._prefixes(b["trail"])
            except (InvalidDecision, DeadEnd) as exc:
                raise WorkbenchError(f"{path}: branch {b['name']!r} no longer replays: {exc}"
                                     ) from None
            if "digest" in b and hist[-1].digest() != b["digest"]:
                if strict:
                    raise WorkbenchError(f"{path}: branch {b['name']!r} replays to other domains "
                                         "than it was saved with: the kernel "
                                         f"({_spec_line(data['kernel'])}), the space or the "
                                         "trail were edited since")
                notes.append(f"branch {b['name']!r}: its {len(hist) - 1} decisions replay to "
                             "other domains than they were saved with (the space or its "
                             "propagation changed since); kept as they replay now")
            pos = b.get("pos", len(hist) - 1)
            if not isinstance(pos, int) or isinstance(pos, bool) or not 0 <= pos < len(hist):
                raise WorkbenchError(f"{path}: branch {b['name']!r}: pos must be a step from 0 "
                                     f"to {len(hist) - 1}, got {pos!r}")
            s.branches.append(Branch(b["name"], hist, pos, b.get("note", "")))
        current = data.get("current", 0)
        if not isinstance(current, int) or isinstance(current, bool) \
                or not 0 <= current < len(s.branches):
            raise WorkbenchError(f"{path}: current must be a branch from 0 to "
                                 f"{len(s.branches) - 1}, got {current!r}")
        s.current = current
        s.load_notes = notes
        s._snapshot()
        return s


def _spec_line(spec: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in spec.items())


def _checked_branches(branches) -> list:
    if not isinstance(branches, list) or not branches:
        raise WorkbenchError("branches must be a non-empty list")
    names = set()
    for n, b in enumerate(branches):
        if not isinstance(b, dict):
            raise WorkbenchError(f"branch {n} is not an object")
        name = b.get("name")
        if not isinstance(name, str) or name in names:
            raise WorkbenchError(f"branch {n}: name must be a string of its own, got {name!r}")
        names.add(name)
        trail = b.get("trail")
        if not isinstance(trail, list) or not all(isinstance(d, dict) for d in trail):
            raise WorkbenchError(f"branch {name!r}: trail must be a list of decisions")
        if not isinstance(b.get("note", ""), str):
            raise WorkbenchError(f"branch {name!r}: note must be a string")
    return branches


__all__ = ["DEAD", "OPEN", "PROVEN", "Branch", "Option", "Session"]
