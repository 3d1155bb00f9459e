"""The choices column: the open choices of the current candidate, grouped by
instruction and loop nest, named in words, each value labelled with the
bound of its child and whether it is proven to lead to an implementation.

Drawing is one `ChoicesView` message per refresh (see choices_widget). The
look-ahead that labels the values runs, by `lookahead` mode:
- "process" (default): in a worker process (`workbench.lookahead_process`),
  so it never competes with a click for the kernel's interpreter; the next
  click stops it;
- "background": in a thread of the kernel (the worker's fallback);
- "sync": before `refresh` returns (tests, scripts); "off": never.
Labels are kept by target and candidate digest: going back to a candidate shows them
at once.
"""

from __future__ import annotations

import html
import os
import threading
import time

from workbench.errors import WorkbenchError
from workbench.model.justification import fmt_time
from workbench.model.lookahead import Stopped
from workbench.names import choice_group, choice_label, plural, raw
from workbench.prebuild import LoweringPrebuilder
from workbench.session import DEAD, PROVEN, Option

from .choices_widget import ChoicesView

MODES = ("process", "background", "sync", "off")


def _w():
    import ipywidgets
    return ipywidgets


def choice_key(name: str, objects) -> str:
    return f"{name}|{','.join(objects)}"


def look(value: str, o: Option | None) -> dict:
    """A value button's text, style and tooltip from its Option (None: the
    look-ahead has not reached it yet)."""
    if o is None:
        return {"v": value, "text": value, "style": "pending", "disabled": False,
                "tip": "force this value (the bound of its child: computing)"}
    if o.bound_ns is None or o.status == DEAD:
        why = o.dead_end or "no implementation below: its subtree was searched exhaustively"
        return {"v": value, "text": f"✗ {value}", "style": "dead", "disabled": True,
                "tip": why}
    proven = o.status == PROVEN
    tip = ("proven: an implementation below it is known (it cannot get you stuck)"
           if proven else
           "open: not proven yet — propagation allows it, but it may get you stuck")
    if o.above_best:
        tip += "; its bound already reaches the best measured time"
    style = "above" if o.above_best else "proven" if proven else "open"
    t = fmt_time(o.bound_ns, 4)
    return {"v": value, "text": f"{'✓ ' if proven else ''}{value} · {t}",
            "style": style, "disabled": False, "tip": f"child bound {t}; {tip}"}


def _grouped(cand, chs: list) -> list:
    """`chs` with each group's choices together, groups in the order they
    first appear (the space's order of choices within a group)."""
    first: dict = {}
    for c in chs:
        first.setdefault(choice_group(cand, c.name, c.objects), len(first))
    return sorted(chs, key=lambda c: first[choice_group(cand, c.name, c.objects)])


class ChoicesPanel:
    """The left column: a filter, "most discriminating first", and the
    `ChoicesView` of at most `max_choices` open choices."""

    prove_s = 0.3  # seconds per value spent looking for a witness of its child
    witness_s = 30.0  # for the current candidate's (lowerings cost seconds cold)
    # worker processes sharing the listed choices (row k to worker k mod n),
    # one per two cores beyond the two the kernel and the browser need: on 2
    # cores a second worker made labels slower (978 → 1,168 ms median) and
    # clicks too (253 → 277 ms); each worker holds its own copy of the kernel
    workers = max(1, min(4, ((os.cpu_count() or 2) - 2) // 2))

    def __init__(self, ex, max_choices: int, lookahead: str, on_change):
        """`ex`: the explorer (its session, `force`, `do`, `show_stuck`);
        `on_change()`: the filter or the ranking changed."""
        if lookahead not in MODES:
            raise WorkbenchError(f"lookahead must be one of {', '.join(MODES)}, "
                                 f"not {lookahead!r}")
        w = _w()
        self._ex = ex
        self.max_choices = max_choices
        self.lookahead = lookahead
        self.gen = 0  # bumped by every refresh and click: a stale look-ahead stops
        self.last_lookahead_ms = 0.0  # refresh → every listed value has its child bound
        self.last_proof_ms = 0.0  # refresh → proofs done
        # ((target, digest), choice, objects) -> (phase, [Option]): bounds are
        # the target's (a label kept across "bound on" showed the other table's)
        self._labels: dict = {}
        self._listed: dict = {}  # key -> Choice on show
        self._shown: tuple = (None, [])  # (candidate, listed choices)
        self._note = ""  # the list's own note (ranking, fixed, no match)
        self._matched = 0  # open choices the filter lets through (before the cut)
        self._n_top: int | None = None  # choices the ranking on show found moving alone
        self._last_ranked = None  # (target, digest) of the last candidate listed ranked
        self._provisional = False  # the list on show is in the candidate before's order
        self._jobs: dict = {}  # gen -> ((target, digest), t0, final phase)
        self._done = threading.Condition()
        self._done_gen = 0
        self._lock = threading.RLock()
        self._worker: threading.Thread | None = None
        self._procs: list = []
        self._closed = False
        self._phases: dict = {}  # (gen, phase) -> workers done with it
        self._results = threading.Lock()  # one reader thread per worker
        # the extended problems one lowering ahead, built while the person reads
        # (the other modes build them in this interpreter, by looking ahead)
        # (WORKBENCH_PREBUILD=0 turns it off: the benchmark's peer)
        self._prebuild = (LoweringPrebuilder(freeze=True) if lookahead == "process"
                          and os.environ.get("WORKBENCH_PREBUILD", "1") != "0" else None)
        self._ahead: set = set()  # fired sets offered to it for the candidate on show
        if lookahead == "process":
            from workbench.lookahead_process import LookaheadProcess
            self._procs = [LookaheadProcess(self._on_results) for _ in range(self.workers)]
        self.filter = w.Text(placeholder="filter: instruction, dimension or choice",
                             layout=w.Layout(width="auto", min_width="180px", flex="1 1 260px"))
        self.filter.observe(lambda _: on_change(), names="value")
        self.hint = w.Checkbox(description="most discriminating first", value=False,
                               indent=False, layout=w.Layout(width="auto"))  # whole at 1,024 px
        self.hint.observe(lambda _: on_change(), names="value")
        self._on_change = on_change
        # (target, digest) -> the choices whose values move the bound, most
        # discriminating first; ranked in a process of its own with the
        # "process" look-ahead, else in a thread (3–4 s on matmul 256 on h200:
        # it bounds every value of every choice the bound reads)
        self._rankings: dict = {}
        self._ranking = None  # (key, stop Event) of the ranking under way
        self._ranker = None  # the ranking's process (look-ahead "process"), once asked
        self._rank_sent = None  # (job number, ranking job, candidate) sent to it
        self.view = ChoicesView()
        self.view.on_event(self._on_event)
        self.widget = w.VBox([w.HBox([self.filter, self.hint]), self.view],
                             layout=w.Layout(width="46%"))

    def _seen_as(self, cand) -> tuple:
        """What a candidate's labels are kept under: the target the bounds
        are on, and the candidate."""
        return (self._ex.session.target, cand.digest())

    def _label(self, cand, ch):
        """The (phase, [Option]) kept for choice `ch` of `cand`, or None."""
        return self._labels.get((self._seen_as(cand), ch.name, ch.objects))

    # ------------------------------------------------------------ listing
    def listed(self, chs: list, cand) -> tuple[list, str]:
        """The open choices `chs` on show — filtered, grouped (or ranked when
        asked), cut — and a note about the ranking."""
        f = self.filter.value.strip().lower()
        if f:
            chs = [c for c in chs if f in c.name.lower() or any(f in o.lower() for o in c.objects)
                   or f in choice_label(cand, c.name, c.objects).lower()]
        note = ""
        self._n_top = None
        if not self.hint.value:
            self._stop_ranking()  # unticked: a ranking ticked again starts anew
        ranked = self._ranked(cand) if self.hint.value and chs else None
        wait = ("<span class='wb-spin'></span> ranking the choices by how far their values "
                "move the bound…")
        under_way = self.hint.value and chs and ranked is None
        if under_way:  # the candidate before's order meanwhile: most of its choices are
            with self._done:  # still open, and the rows move less (three times a click)
                ranked = self._rankings.get(self._last_ranked)
        if under_way and ranked is None:  # nothing to go by: grouped meanwhile
            note = wait
            chs = _grouped(cand, chs)
        elif self.hint.value and chs:
            rank = {k: i for i, k in enumerate(ranked)}
            top = [c for c in chs if (c.name, c.objects) in rank]
            top.sort(key=lambda c: rank[(c.name, c.objects)])
            rest = [c for c in chs if (c.name, c.objects) not in rank]
            # the ranking bounds each value alone, unpropagated (bounding every
            # propagated child took 22 s against 3.7 on matmul 256); the labels
            # are bounds after propagation, and where they are in they decide
            # the order: the list read 'size … 36.64 | 35.11 µs' above 'dim
            # kind … 35.11 | 128.6 µs', and 'nothing moves' above 87.54 | 256.7 µs
            chs = self._by_labels(cand, top + _grouped(cand, rest))
            self._n_top = len(top)
            note = self._ranking_note(cand, chs[:self.max_choices])
            self._provisional = bool(under_way)
            if under_way:
                note = f"{wait} (meanwhile in the order of the candidate before)"
            else:
                self._last_ranked = self._seen_as(cand)
        else:
            chs = _grouped(cand, chs)
        self._matched = len(chs)
        return chs[:self.max_choices], note

    def _ranking_note(self, cand, listed: list) -> str:
        """What the ranked list says of its order, before and after the
        labels of the listed choices are in."""
        n, labelled = self._n_top, all(self._label(cand, c) for c in listed)
        apart = sum(self._label_spread(cand, c) is not None for c in listed)
        if labelled and apart:
            return (f"{plural(apart, 'listed choice')} whose labels differ first, the most "
                    "discriminating first (the largest least bound, then the widest spread); "
                    "the others after")
        if labelled:
            return ("the choices whose values alone move the bound first; after propagation "
                    "their labels read alike" if n else
                    "no open choice moves the bound by its value alone, and no listed label "
                    "differs after propagation")
        if n:
            return (f"{plural(n, 'choice')} whose values alone give different bounds first, "
                    "ordered by their labels once those are in; the others after")
        return ("no open choice moves the bound by its value alone; the labels (bounds after "
                "propagation) order those listed once they are in")

    def _label_spread(self, cand, ch) -> tuple | None:
        """(least, largest) child bound of `ch`'s labels when every value of
        it is labelled and two differ; else None."""
        got = self._label(cand, ch)
        if not got or not got[1] or len(got[1]) < len(ch.values):
            return None
        bounds = [o.bound_ns for o in got[1] if o.bound_ns is not None]
        return (min(bounds), max(bounds)) if len(bounds) > 1 and max(bounds) > min(bounds) \
            else None

    def _by_labels(self, cand, chs: list) -> list:
        """`chs` with the choices whose labels differ first — the largest
        least child bound first, then the widest spread: the ranking's key on
        the bounds the labels show —, the others after in their order."""
        keyed = [(self._label_spread(cand, c), i, c) for i, c in enumerate(chs)]
        apart = sorted((x for x in keyed if x[0] is not None),
                       key=lambda x: (-x[0][0], x[0][0] - x[0][1], x[1]))
        return [c for _, _, c in apart] + [c for got, _, c in keyed if got is None]

    def _ranked(self, cand) -> list | None:
        """The ranking of `cand`'s choices, or None while a thread computes it
        (sync mode: at once). It used to run in the click: every click with
        the box ticked waited seconds for it. A ranking of another candidate
        under way stops."""
        key = self._seen_as(cand)
        if key not in self._rankings and self.lookahead == "sync":
            self._keep_ranking(key, self._rank(cand))
        with self._done:
            if self._ranking is not None and self._ranking[0] != key:
                self._stop_ranking()
            if key in self._rankings:
                return self._rankings[key]
            if self._ranking is not None:  # this candidate's, under way
                return None
            job = self._ranking = (key, threading.Event())
        if not (self.lookahead == "process" and self._rank_apart(cand, job)):
            threading.Thread(target=self._rank_in_thread, args=(cand, job), daemon=True,
                             name="explorer-ranking").start()
        return None

    def _rank_apart(self, cand, job) -> bool:
        """Rank `cand` in a process of its own (look-ahead "process"); False
        if it cannot start. In a thread of this interpreter the ranking held
        it for seconds: clicks meanwhile took 38 ms median, p90 63, against
        14 / 33 with it apart (matmul 1024, `bench_explorer_kernel.py`)."""
        from workbench.lookahead_process import LookaheadProcess
        if self._ranker is None:
            self._ranker = LookaheadProcess(self._on_ranked)
        s = self._ex.session
        with self._done:
            self._rank_sent = (self._rank_sent[0] + 1 if self._rank_sent else 1, job, cand)
            n = self._rank_sent[0]
        return self._ranker.submit({"kind": "rank", "gen": n, "space": cand.space.name,
                                    "kernel": cand.problem.root_problem.kernel.spec(),
                                    "target": s.target, "trail": [d.to_dict() for d in cand.trail]})

    def _on_ranked(self, msgs: list) -> None:
        """The ranking process's answers (its reader thread): the latest job's
        ranking is kept; if the process failed it or died, a thread ranks
        instead."""
        for m in msgs:
            with self._done:
                sent = self._rank_sent
                if sent is None or (m[1] != sent[0] and m[0] != "gone"):
                    continue  # a job stopped since
                self._rank_sent = None
            _, job, cand = sent
            if m[0] == "ranked":
                self._ranking_done(job, [(c, tuple(o)) for c, o in m[2]])
            else:
                threading.Thread(target=self._rank_in_thread, args=(cand, job), daemon=True,
                                 name="explorer-ranking").start()

    def _rank(self, cand, stop=None) -> list:
        from workbench.model.lookahead import rank_choices
        session = self._ex.session
        try:
            ranked = rank_choices(cand, session.target, parent=session.bound(cand), stop=stop)
        except WorkbenchError:
            return []
        return [(r.choice, r.objects) for r in ranked if r.spread_ns > 0]

    def _stop_ranking(self) -> None:
        with self._done:
            job, self._ranking = self._ranking, None
            if job is not None:
                job[1].set()
            sent, self._rank_sent = self._rank_sent, None
            self._done.notify_all()
        if sent is not None and self._ranker.alive:  # it stops between two choices
            self._ranker.submit({"kind": "halt"})

    def _keep_ranking(self, key, ranked: list) -> None:
        with self._done:  # the kernel's thread lists while a ranking thread keeps
            self._rankings[key] = ranked
            while len(self._rankings) > 32:
                del self._rankings[next(iter(self._rankings))]

    def _rank_in_thread(self, cand, job) -> None:
        """Rank `cand` here (the modes without worker processes, or when the
        ranking's process failed), then as `_ranking_done`."""
        ranked = None
        try:
            ranked = self._rank(cand, stop=job[1].is_set)
        except Stopped:
            pass
        finally:
            self._ranking_done(job, ranked)

    def _ranking_done(self, job, ranked: list | None) -> None:
        """Keep `ranked` (None: stopped) and list the choices again if its
        candidate is still on show with the box ticked; stops once the box is
        unticked, another candidate is listed or the panel closes."""
        key, stopped = job
        try:
            if ranked is None:
                return
            self._keep_ranking(key, ranked)
            with self._lock:  # after the refresh that asked has set what is on show
                relist = (not stopped.is_set() and self.hint.value
                          and self._shown[0] is not None
                          and self._seen_as(self._shown[0]) == key)
            if relist:
                self._on_change()  # the ranked list, a new generation
        finally:
            with self._done:
                if self._ranking is job:
                    self._ranking = None
                self._done.notify_all()

    def _row(self, cand, ch) -> dict:
        got = self._label(cand, ch)
        by_value = {o.value: o for o in got[1]} if got else {}
        return {"key": choice_key(ch.name, ch.objects),
                "label": choice_label(cand, ch.name, ch.objects),
                "raw": raw(ch.name, ch.objects),
                "group": choice_group(cand, ch.name, ch.objects),
                "values": [look(v, by_value.get(v)) for v in ch.values]}

    def _final(self) -> int:
        return 1 if self.prove_s > 0 else 0

    def refresh(self, cand) -> tuple:
        """The rows for `cand`, labelled from the cache; (generation,
        candidate, choices still to label) for `start_lookahead`."""
        with self._lock:
            self.gen += 1
            gen, digest = self.gen, self._seen_as(cand)
            open_choices = cand.choices()
            self._matched = 0
            listed, note = self.listed(open_choices, cand) if open_choices else ([], "")
            self._listed = {choice_key(c.name, c.objects): c for c in listed}
            self._shown = (cand, listed)
            final = self._final()
            pending = [c for c in listed
                       if self._labels.get((digest, c.name, c.objects), (-1,))[0] < final]
            if not open_choices:
                note = ("<b>Every choice is decided</b>: this candidate is an implementation. "
                        "The Code tab shows its CUDA; Run measures it. Undo (u) to go back.")
            elif not listed:
                f = html.escape(self.filter.value)
                note = f"<i>no open choice matches the filter {f!r}</i>"
            self._note = note  # what the list says; progress is appended to it
            if listed and not pending:  # labelled from the cache: said at once
                self._note_alike(gen)
            progress = "<span class='wb-spin'></span> computing each value's child bound…" \
                if pending and listed and self.lookahead != "off" else ""
            self._draw(gen, cand, listed, progress, self._more(open_choices, listed))
            if not pending or self.lookahead == "off":
                self._finish(gen)
            self._ahead = set()
            known = (self._labels.get((digest, c.name, c.objects)) for c in listed)
            self._offer_lowerings(cand, [got[1] for got in known if got])
            return gen, cand, pending

    def _more(self, open_choices: list, listed: list) -> str:
        """The line under the list: the open choices not on show, and why."""
        cut = self._matched - len(listed)  # matched the filter, past max_choices
        if not self.filter.value.strip():
            return f"{cut} more open choices (filter to see them)" if cut > 0 else ""
        other = len(open_choices) - self._matched
        parts = ([f"{cut} more match the filter (narrow it to see them)"] if cut > 0 else []) \
            + ([f"{other} open choices do not match it"] if other > 0 else [])
        return "; ".join(parts)

    def _draw(self, gen, cand, listed, progress=None, more=None) -> None:
        """`progress`: None keeps the note; else the list's note and it."""
        rows = [self._row(cand, c) for c in listed]
        labelled = all(v["style"] != "pending" for r in rows for v in r["values"])
        with self.view.hold_sync():
            self.view.rows = rows
            self.view.gen = gen
            self.view.labelled = labelled
            if progress is not None:
                self.view.note = "<br>".join(x for x in (self._note, progress) if x)
            if more is not None:
                self.view.more = more

    def _redraw(self, gen: int, progress: str | None = None) -> None:
        """The current rows again with whatever labels arrived (one message);
        `progress` replaces the progress text ("" clears it)."""
        with self._lock:
            if gen != self.gen:
                return
            cand, listed = self._shown
            self._draw(gen, cand, listed, progress)

    # ------------------------------------------------------------- events
    def _on_event(self, content: dict) -> None:
        ex = self._ex
        kind = content.get("kind")
        if kind == "undo":
            ex.do(ex.session.undo)
        elif kind == "redo":
            ex.do(ex.session.redo)
        elif kind == "force":
            ch = self._listed.get(content.get("key"))
            if ch is not None and content.get("value") in ch.values:
                ex.force(ch.name, ch.objects, content["value"])

    def click(self, row: int, value) -> None:
        """Force `value` (a string or an index) of the `row`-th listed
        choice, as a click in the page does."""
        ch = self._shown[1][row]
        v = ch.values[value] if isinstance(value, int) else value
        self.view.event({"kind": "force", "key": choice_key(ch.name, ch.objects), "value": v})

    # --------------------------------------------------------- look-ahead
    def start_lookahead(self, gen: int, cand, pending: list) -> None:
        if not pending or self.lookahead == "off":
            return
        self._jobs[gen] = (self._seen_as(cand), time.perf_counter(), self._final(), 1)
        for old in [g for g in self._jobs if g < gen - 8]:
            del self._jobs[old]
        for key in [k for k in self._phases if k[0] < gen - 8]:
            del self._phases[key]
        if self.lookahead == "process" and self._submit(gen, cand, pending):
            return
        if self.lookahead == "sync":
            self.fill(gen, cand, pending)
        else:
            self._worker = threading.Thread(target=self.fill, args=(gen, cand, pending),
                                            daemon=True, name="explorer-lookahead")
            self._worker.start()

    def _submit(self, gen: int, cand, pending: list) -> bool:
        """One job per worker, each a share of the choices; a worker with no
        share gets an empty job (it stops what it was doing)."""
        s = self._ex.session
        n = len(self._procs)
        shares = [pending[k::n] for k in range(n)]
        busy = sum(1 for sh in shares if sh)
        digest, t0, final, _ = self._jobs[gen]
        self._jobs[gen] = (digest, t0, final, busy)
        base = {"kernel": cand.problem.root_problem.kernel.spec(), "space": cand.space.name,
                "target": s.target, "trail": [d.to_dict() for d in cand.trail],
                "witness_s": self.witness_s,
                "best_ns": s.best_measured_ns(backend=self._ex.backend)}
        ok = True
        for proc, share in zip(self._procs, shares):
            ok &= proc.submit({**base, "gen": gen if share else -gen,
                               "prove_s": self.prove_s if share else 0.0,
                               "items": [(c.name, list(c.objects)) for c in share]})
        return ok

    def _on_results(self, msgs: list) -> None:
        """A batch from a worker process (its reader thread)."""
        with self._results:
            self._take_results([m for m in msgs if m[0] != "gone"])
        if not self._closed and any(m[0] == "gone" for m in msgs):
            self._lost_worker()

    def _lost_worker(self) -> None:
        """A worker died with a job under way (out of memory, say): its
        results never come, so the labels still missing on show are computed
        in a thread instead (the spinner stayed for good); the next click
        starts a new worker."""
        with self._lock:
            gen, (cand, listed) = self.gen, self._shown
            if cand is None or gen not in self._jobs or self._done_gen >= gen:
                return  # nothing under way
            digest, final = self._seen_as(cand), self._final()
            pending = [c for c in listed
                       if self._labels.get((digest, c.name, c.objects), (-1,))[0] < final]
        threading.Thread(target=self.fill, args=(gen, cand, pending), daemon=True,
                         name="explorer-lookahead").start()

    def _take_results(self, msgs: list) -> None:
        touched, finished = set(), []
        for m in msgs:
            kind, gen = m[0], m[1]
            job = self._jobs.get(gen)
            if job is None:
                continue
            digest, t0, final, busy = job
            if kind == "opts":
                _, _, phase, choice, objects, fields = m
                opts = [Option(**f) for f in fields]
                self._labels[(digest, choice, tuple(objects))] = (phase, opts)
                touched.add(gen)
                if gen == self.gen:
                    self._offer_lowerings(self._shown[0], [opts])
            elif kind == "fail":
                _, _, choice, objects, why = m
                self._labels[(digest, choice, tuple(objects))] = (final, [])
                touched.add(gen)
            elif kind == "phase":
                done = self._phases[(gen, m[2])] = self._phases.get((gen, m[2]), 0) + 1
                if done < busy:  # another worker still has its share
                    continue
                self._phase_done(gen, m[2], t0, final)
                if m[2] >= final:
                    finished.append(gen)
            elif kind == "error":
                self._redraw(gen, f"<span style='color:#b00'>look-ahead failed: "
                                  f"{html.escape(str(m[2]))}</span>")
                finished.append(gen)
        for gen in touched - set(finished):
            self._redraw(gen)
        for gen in finished:
            self._redraw(gen, "")
            self._after_proofs(gen)

    def _offer_lowerings(self, cand, option_lists) -> None:
        """Values whose child lowers a communication: their extended problems
        are built in the background, so that clicking them does not (1.3–1.7 s
        on matmul 1024 the first time; the worker built its own copy)."""
        if self._prebuild is None:
            return
        with self._lock:
            new = {o.lowering for opts in option_lists for o in opts if o.lowering} - self._ahead
            if new:
                self._ahead |= new
                self._prebuild.offer(cand, sorted(self._ahead, key=sorted))

    def _note_alike(self, gen: int) -> bool:
        """When every value listed gives one and the same child bound (a first
        visit on a CPU table: 0 of matmul 256's 1,013 root choices move it
        there, 290 on h200's), add to the list's note why and where to look
        (it stays when the progress goes); whether it did."""
        with self._lock:
            if gen != self.gen or self.hint.value:
                return False
            cand, listed = self._shown
            bounds = set()
            for ch in listed:
                got = self._label(cand, ch)
                if not got:
                    return False
                bounds |= {round(o.bound_ns, 3) for o in got[1] if o.bound_ns is not None}
            if len(bounds) != 1:
                return False
            name = str(self._ex.session.target or "")
            target = html.escape(name or "the default table")
            same = fmt_time(next(iter(bounds)), 4)
            where = (", or pick a GPU table in <b>bound on</b>" if name.startswith("cpu")
                     else "")  # a CPU table (cpu_reference, cpu-<host>) moves far less
            alike = (f"<i>every value listed gives the same child bound, {same} on {target}: "
                     "these choices do not tell implementations apart here. Tick <b>most "
                     f"discriminating first</b> for the choices that do{where}.</i>")
            self._note = "<br>".join(x for x in (self._note, alike) if x)
            return True

    def _phase_done(self, gen: int, phase: int, t0: float, final: int) -> None:
        ms = (time.perf_counter() - t0) * 1e3
        if phase >= final:
            self.last_proof_ms = ms
        if phase == 0:
            self.last_lookahead_ms = ms
            if self._by_labels_now(gen) and final == 0:
                self._redraw(gen)
            if self._note_alike(gen) and final == 0:
                self._redraw(gen)
            if final > 0 and gen == self.gen:
                self._redraw(gen, "<span class='wb-spin'></span> bounds done; looking for "
                                  "implementations below each value…")

    def _by_labels_now(self, gen: int) -> bool:
        """With the box ticked, the list on show put in the order its labels,
        now in, give, and its note said again (in place: no new generation,
        so the proofs under way go on); whether anything changed."""
        with self._lock:
            if gen != self.gen or self._n_top is None or not self._shown[1]:
                return False  # not a ranked list (unticked, or its ranking under way)
            cand, listed = self._shown
            # a provisional order (the candidate before's ranking) keeps its note
            note = self._note if self._provisional else self._ranking_note(cand, listed)
            ordered = self._by_labels(cand, listed)
            if ordered == listed and note == self._note:
                return False
            self._shown, self._note = (cand, ordered), note
            return True

    def _after_proofs(self, gen: int) -> None:
        """Proofs are in: a listed choice whose every value is dead is
        explained; waiters are woken."""
        if gen == self.gen:
            cand, listed = self._shown
            for ch in listed:
                got = self._label(cand, ch)
                if got and got[1] and all(o.status == DEAD for o in got[1]):
                    self._ex.show_stuck(ch, gen=gen)
                    break
        self._finish(gen)

    def _finish(self, gen: int) -> None:
        with self._done:
            self._done_gen = max(self._done_gen, gen)
            self._done.notify_all()

    def fill(self, gen: int, cand, pending: list) -> None:
        """The look-ahead in this interpreter (sync and background modes);
        stops as soon as a newer refresh has made `cand` stale."""
        t0 = time.perf_counter()
        session, digest = self._ex.session, self._seen_as(cand)
        stale = lambda: gen != self.gen  # noqa: E731
        final = self._final()
        for phase, prove_s in enumerate((0.0, self.prove_s)[:final + 1]):
            if prove_s:
                session.witness(cand, budget_s=self.witness_s, stop=stale)
            for ch in pending:
                if stale():
                    return
                try:
                    opts = session.options(ch.name, ch.objects, cand, prove_s=prove_s, stop=stale)
                except Stopped:
                    return
                except WorkbenchError:
                    opts = []
                self._labels[(digest, ch.name, ch.objects)] = (phase, opts)
                if self.lookahead != "sync":
                    self._redraw(gen)
            self._phase_done(gen, phase, t0, final)
        self._redraw(gen, "")
        self._after_proofs(gen)

    def wait_lookahead(self, timeout: float | None = None) -> bool:
        """Block until the look-ahead of the last refresh is done (bounds
        and proofs); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._done:  # a ranking under way lists the choices again when done
            while self._done_gen < self.gen or self._ranking is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._done.wait(left)
        return True

    def rows(self) -> list:
        """The rows on show, as the page draws them."""
        return list(self.view.rows)

    def close(self) -> None:
        self._closed = True  # the workers' pipes close: not a death to make up for
        self._stop_ranking()
        if self._ranker is not None:
            self._ranker.close()
        if self._prebuild is not None:
            self._prebuild.close()
        for proc in self._procs:
            proc.close()


__all__ = ["ChoicesPanel", "choice_key", "look"]
