"""TAG-MCTS with bound pruning (thesis §6.1), from any candidate.

Each iteration walks the tree from the search's start candidate with the
tree policy (TAG, eq. 6.1, or UCT), expands the leaf it reaches on one open
choice (the choice order), picks one new child by eq. 6.2, and hands the
child to a worker that finishes it by a Monte-Carlo descent and measures
it. Statistics then flow back up the path. Children whose bound reaches the
best measured time are cut, and the cause of every cut is counted.

Every measurement is appended to the record store the moment it returns,
with the tree path that produced it, so a search that is interrupted (time,
budget, `stop()`, Ctrl-C, a crash) loses nothing: `Search(..., resume=ID)`
rebuilds the tree and the statistics from the store and goes on.
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
import uuid
from dataclasses import dataclass, field, fields, replace

from ..candidate import Candidate, Choice
from ..errors import WorkbenchError
from ..kernels import require_loop_nest
from ..orders import choice_order, open_choice, order_spec
from ..runtime.backend import bound_target
from ..runtime.records import RecordStore, with_former_values
from .simulate import Task, backend_for, hopeless, register_root, simulate
from .tree import CAUSES, Node, expand, model_weights, tree_policy, weighted_pick
from .workers import InlineExecutor, executor


@dataclass(frozen=True)
class SearchOptions:
    """Everything a search can be told, in one typed place (the keyword
    arguments of `Search` and `wb.search`)."""
    # what it may spend: evaluations, seconds (at least one of them)
    budget: int | None = 200
    time_s: float | None = None
    # how it walks: a tree policy and a choice order (registered names or objects)
    policy: object = "tag"
    order: object = "thesis"
    seed: int = 0
    # how it measures
    samples: int = 10
    timeout_s: float = 10.0
    backend_options: dict = field(default_factory=dict)
    # moves of `search.climb` on the bound that polish each rollout's leaf
    # before it is measured (0: the thesis's rollouts, measured as they end)
    climb: int = 0
    # with climb: the share of rollouts whose climb starts from the fastest
    # implementation measured so far, carried into the node's subtree (its
    # decisions that still apply there kept, the rest descended); the others
    # climb from a new descent
    climb_from_best: float = 0.0
    # a time already reached elsewhere (a hand-forced recipe, another branch):
    # nodes bounded at or above it are cut from the start, so evaluations go
    # only where something faster may be; `best_ns` stays what it measured
    beat_ns: float | None = None
    # where: workers=None a LocalCluster with one worker per core, 0 this process;
    # or a dask.distributed `client`; `in_flight` evaluations at once
    workers: int | None = None
    client: object = None
    in_flight: int | None = None
    # records: a store ("default", a path, a RecordStore or None), an id, a
    # search to resume from that store
    store: object = "default"
    search_id: str | None = None
    resume: str | None = None
    callbacks: tuple = ()  # each called with the Search after every evaluation

    def __post_init__(self):
        if self.budget is None and self.time_s is None:
            raise WorkbenchError("a search needs a budget (evaluations) or a time limit")
        if not isinstance(self.climb, int) or isinstance(self.climb, bool) or self.climb < 0:
            raise WorkbenchError(f"climb must be a number of moves (0 or more), got "
                                 f"{self.climb!r}")
        if not (isinstance(self.climb_from_best, (int, float))
                and not isinstance(self.climb_from_best, bool)
                and 0.0 <= self.climb_from_best <= 1.0):
            raise WorkbenchError(f"climb_from_best must be a share from 0 to 1, got "
                                 f"{self.climb_from_best!r}")
        if self.budget is not None and (not isinstance(self.budget, int) or self.budget < 1):
            raise WorkbenchError("budget must be a positive number of evaluations, got "
                                 f"{self.budget!r}")

    @classmethod
    def of(cls, options: SearchOptions | None = None, **changes) -> SearchOptions:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise WorkbenchError(f"unknown search option(s) {', '.join(unknown)}: the options are "
                                 f"{', '.join(sorted(names))}")
        return replace(options or cls(budget=changes.get("budget", 200),
                                      time_s=changes.get("time_s")), **changes)


class Search:
    """A search from `start` (any candidate: the root, or one a person has
    partly decided), with `SearchOptions` given whole or as keywords.
    `run()` returns `summary()`; `best_candidate()` gives the best
    implementation back as a candidate with its trail."""

    def __init__(self, start: Candidate, backend: str = "cpu",
                 options: SearchOptions | None = None, **changes):
        o = self.options = SearchOptions.of(options, **changes)
        require_loop_nest(start.kernel, "a search (it measures implementations)")
        self.start = start
        self.spec, self.space = register_root(start)
        self.backend_name = backend
        self.backend_options = dict(o.backend_options)
        self.backend = backend_for(backend, self.backend_options)
        self.target = bound_target(self.backend)
        self.budget, self.time_s = o.budget, o.time_s
        self.policy = tree_policy(o.policy)
        self.order = choice_order(o.order)
        self.workers = ((os.cpu_count() or 1) if o.workers is None and o.client is None
                        else o.workers)
        self.client = o.client
        self.store = RecordStore.open(o.store)
        self.samples, self.timeout_s = o.samples, o.timeout_s
        self.callbacks = list(o.callbacks)
        self.on_finish: list = []  # each called with summary() when run() returns
        self.in_flight = o.in_flight
        self.rng = random.Random(o.seed)
        self.seed = o.seed
        self.cuts = {c: 0 for c in CAUSES}
        self.failures: dict = {"constraints": 0, "model": 0, "error": 0}
        self.errors: list = []
        self.history: list = []
        self.evaluations = 0
        self.nodes = 1
        self.best_ns = math.inf
        if o.beat_ns is not None and not o.beat_ns > 0:
            raise WorkbenchError(f"beat_ns must be a positive time in ns, got {o.beat_ns!r}")
        self.beat_ns = math.inf if o.beat_ns is None else float(o.beat_ns)
        self.best_record = None  # a Record (or a stored row after a resume)
        self.stopped: str | None = None
        self.elapsed_s = 0.0
        self._stop = threading.Event()
        self.root = Node(start, self._bound(start))
        self.search_id = (o.resume or o.search_id
                          or f"{start.kernel.name}-{uuid.uuid4().hex[:8]}")
        if o.resume:
            self._resume(o.resume)

    @property
    def threshold_ns(self) -> float:
        """What a node's bound must stay under to be kept: the best time
        measured, or `beat_ns` while nothing measured beats it."""
        return min(self.best_ns, self.beat_ns)

    # ------------------------------------------------------------ model
    def _bound(self, cand: Candidate) -> float:
        from ..model import bound
        return bound(cand, self.target).value_ns

    def _live(self, node: Node) -> list:
        live = []
        for c in node.children:
            if c.cut:
                continue
            if c.bound_ns >= self.threshold_ns:
                c.cut = "model"
                self.cuts["model"] += 1
                continue
            live.append(c)
        return live

    def _cut(self, node: Node, cause: str) -> None:
        if node.cut is None:
            node.cut = cause
            self.cuts[cause] += 1

    def _expand(self, node: Node, choice: Choice | None = None) -> None:
        if choice is None:
            choice = self.order.next(node.cand, target=self.target)
        expand(node, choice, self._bound, self.cuts)
        self.nodes += len(node.children)

    def _select(self) -> list | None:
        """A path root → node to descend from; None when the tree is exhausted."""
        while self.root.cut is None:
            node, path = self.root, [self.root]
            while True:
                if node.children is None:
                    if node.cand.is_fixed:
                        if node.evaluated or node.visits:
                            self._cut(node, "backtrack")
                            break
                        for n in path:
                            n.visits += 1
                        return path
                    self._expand(node)
                    if node.cut:
                        break
                    live = self._live(node)
                    if not live:
                        self._cut(node, "backtrack")
                        break
                    got = weighted_pick(live, model_weights([c.bound_ns for c in live],
                                                            self.threshold_ns), self.rng)
                    path.append(got if got is not None else self.rng.choice(live))
                    for n in path:
                        n.visits += 1
                    return path
                live = self._live(node)
                if not live:
                    self._cut(node, "backtrack")
                    break
                node = self.policy.select(node, live, self.threshold_ns, self.rng)
                path.append(node)
        return None

    # ------------------------------------------------------------ tasks
    def _climb_from(self) -> dict | None:
        """Where a rollout's climb starts: with probability `climb_from_best`,
        the fastest implementation measured so far (its trail and digest;
        the worker carries it into the node's subtree), else None (a new
        descent)."""
        o = self.options
        best = self.best_record
        if not o.climb or not o.climb_from_best or best is None \
                or self.rng.random() >= o.climb_from_best:
            return None
        return {"trail": best["trail"], "digest": best["digest"]}

    def _task(self, node: Node) -> Task:
        return Task(self.spec, self.space, [d.to_dict() for d in node.cand.trail],
                    backend=self.backend_name, backend_options=self.backend_options,
                    order=order_spec(self.order.rollout), seed=self.rng.randrange(2 ** 32),
                    best_ns=self.threshold_ns if math.isfinite(self.threshold_ns) else None,
                    start_bound_ns=node.bound_ns,
                    evaluate=self.backend_name != "cuda",  # GPU runs: one at a time, here
                    samples=self.samples, timeout_s=self.timeout_s, climb=self.options.climb,
                    climb_from=self._climb_from())

    def _absorb(self, path: list, fut) -> None:
        try:
            out = fut.result()
        except Exception as exc:  # noqa: BLE001 - a worker's failure is a count, not a crash
            self.failures["error"] += 1
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        if out.trail is None:
            self.failures[out.cause] += 1
            return
        rec = out.record
        if rec is None:  # measured here: one evaluation per device at a time
            from ..model import bound
            from ..runtime.evaluator import evaluate
            root = self.start.problem.root_problem
            cand = Candidate.replay(root.kernel, out.trail, self.space)
            # the best may have improved since the rollout was sent (the GPU
            # measures one at a time while every worker rolls out); and a
            # candidate bounded past the time limit could only time out
            b = bound(cand, self.target)
            if hopeless(b.value_ns, self.threshold_ns, self.timeout_s):
                self.cuts["model"] += 1  # a rollout's end, not the node's subtree
                return
            rec = evaluate([cand], self.backend, store=None, samples=self.samples,
                           timeout_s=self.timeout_s, bounds=[b],
                           prebuilt=None if out.built is None else [out.built])[0]
        leaf = path[-1]
        rec = rec.with_search({  # the search's fields: see Record
            "id": self.search_id, "n": self.evaluations, "policy": self.policy.name,
            "order": self.order.label,
            "path": [[c, list(o), v] for c, o, v in leaf.decisions()],
            "start_trail": [d.to_dict() for d in self.start.trail],
            "start_digest": self.start.digest(), "worker": out.worker,
            "rollout_s": out.rollout_s, "eval_s": out.eval_s,
            **({"climb": out.climb} if out.climb is not None else {}),
            "elapsed_s": self.elapsed_s + time.perf_counter() - self._t0})
        if self.store is not None:
            self.store.append([rec])
        self._account(path, rec)

    def _account(self, path: list, rec) -> None:
        """`rec`: a Record, or a stored row (a dict) when resuming."""
        leaf = path[-1]
        if leaf.cand.is_fixed:
            leaf.evaluated = True
        self.evaluations += 1
        t = rec.get("median_ns") if rec.get("status") == "ok" else None
        if t is not None:
            if t < self.best_ns:
                self.best_ns, self.best_record = t, rec
            self.policy.update(path, t, self.threshold_ns)
        if rec.get("status") == "no_device" and self.stopped is None:
            self.stopped = f"no_device: {rec.get('message', '')}"
        event = {"n": self.evaluations, "elapsed_s": rec["search"]["elapsed_s"],
                 "status": rec.get("status"), "median_ns": t, "best_ns": self.best_ns
                 if math.isfinite(self.best_ns) else None, "bound_ns": rec.get("bound_ns"),
                 "worker": rec["search"].get("worker"), "depth": len(path) - 1,
                 "cuts": dict(self.cuts)}
        self.history.append(event)
        for cb in self.callbacks:
            cb(event)

    # ------------------------------------------------------------ resume
    def _resume(self, search_id: str) -> None:
        if self.store is None:
            raise WorkbenchError("resume needs the record store the search wrote to")
        rows = [r for r in self.store.rows() if (r.get("search") or {}).get("id") == search_id]
        if not rows:
            raise WorkbenchError(f"no records of search {search_id!r} in {self.store.path}")
        if rows[0]["search"].get("start_digest") != self.start.digest():
            raise WorkbenchError(f"search {search_id!r} started from another candidate: pass "
                                 "the same start (its trail is in the records' search.start_trail)")
        for rec in sorted(rows, key=lambda r: r["search"]["n"]):
            path = [self.root]
            for choice, objs, value in rec["search"]["path"]:
                node = path[-1]
                if node.children is None:
                    try:
                        self._expand(node, open_choice(node.cand, choice, objs))
                    except WorkbenchError:
                        break  # the tree grew differently; credit the node reached
                nxt = next((c for c in node.children if c.value == value), None)
                if (node.choice.name, node.choice.objects) != (choice, tuple(objs)) or nxt is None:
                    break  # the tree grew differently; credit the node reached
                path.append(nxt)
            for n in path:
                n.visits += 1
            self._account(path, rec)
            self.elapsed_s = max(self.elapsed_s, rec["search"].get("elapsed_s") or 0.0)
        for node in self._all_nodes():  # cuts that follow from the restored best
            if node.children is not None:
                self._live(node)

    def _all_nodes(self):
        stack = [self.root]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(n.children or ())

    # ------------------------------------------------------------ running
    def stop(self) -> None:
        """Ask a running search to stop after the evaluations in flight."""
        self._stop.set()

    def _may_submit(self, pending: int) -> bool:
        if self._stop.is_set() or self.stopped:
            return False
        if self.budget is not None and self.evaluations + pending >= self.budget:
            return False
        return self.time_s is None or time.perf_counter() - self._t0 < self.time_s

    def run(self) -> dict:
        """Search until the budget, the time limit, `stop()` or exhaustion."""
        self._stop.clear()
        self.stopped = None
        self._t0 = time.perf_counter()  # elapsed_s holds the time of earlier runs
        ex = executor(self.workers, self.client)
        # inline: one at a time; workers: two each, so none waits on the tree
        in_flight = self.in_flight or (1 if isinstance(ex, InlineExecutor) else 2 * ex.workers)
        pending: dict = {}
        misses = 0
        try:
            while True:
                while len(pending) < in_flight and self._may_submit(len(pending)):
                    path = self._select()
                    if path is None:
                        self.stopped = self.stopped or "exhausted: every branch was cut"
                        break
                    pending[ex.submit(simulate, self._task(path[-1]))] = path
                if not pending:
                    break
                for fut in ex.wait_any(list(pending)):
                    before = self.evaluations
                    self._absorb(pending.pop(fut), fut)
                    misses = 0 if self.evaluations > before else misses + 1
                if misses > 50 * max(1, in_flight):
                    self.stopped = "no fixed candidate reached in the last descents"
                    break
        except KeyboardInterrupt:
            self.stopped = "interrupted"
        finally:
            for fut in pending:
                try:
                    fut.cancel()
                except Exception:  # noqa: BLE001, S110 - cancelling is best effort
                    pass
            ex.close()
            self.elapsed_s += time.perf_counter() - self._t0
        if self.stopped is None:
            self.stopped = ("stopped by the user" if self._stop.is_set() else
                            "budget" if self.budget is not None
                            and self.evaluations >= self.budget else "time limit")
        summary = self.summary()
        for cb in self.on_finish:  # a live view's finished state, however run() was called
            cb(summary)
        return summary

    def run_in_background(self) -> threading.Thread:
        """Run in a thread (notebooks): `stop()` ends it, the callbacks report."""
        t = threading.Thread(target=self.run, name=f"search-{self.search_id}", daemon=True)
        t.start()
        return t

    # ------------------------------------------------------------ results
    def best_candidate(self) -> Candidate | None:
        if self.best_record is None:
            return None
        root = self.start.problem.root_problem  # a resumed store may predate a choice
        return with_former_values(Candidate.replay(root.kernel, self.best_record["trail"],
                                                   self.space))

    def frame(self):
        import pandas as pd
        return pd.DataFrame(self.history)

    def summary(self) -> dict:
        best = self.best_record or {}
        return {"search_id": self.search_id, "kernel": self.start.kernel.name,
                "sizes": self.spec, "backend": self.backend_name,
                "policy": self.policy.name, "order": self.order.label,
                "climb": self.options.climb, "climb_from_best": self.options.climb_from_best,
                "evaluations": self.evaluations, "elapsed_s": self.elapsed_s,
                "stopped": self.stopped,
                "best_ns": best.get("median_ns"), "best_bound_ns": best.get("bound_ns"),
                "best_trail": best.get("trail"), "reference": best.get("reference"),
                "reference_median_ns": best.get("reference_median_ns"),
                "ratio_to_reference": best.get("ratio_to_reference"),
                "root_bound_ns": self.root.bound_ns, "nodes": self.nodes,
                "beat_ns": None if math.isinf(self.beat_ns) else self.beat_ns,
                "cuts": dict(self.cuts), "descent_failures": dict(self.failures),
                "errors": self.errors[-5:],
                "store": str(self.store.path) if self.store is not None else None}


def search(start: Candidate, backend: str = "cpu", **options) -> Search:
    """Build and run a search; returns the Search (`.summary()`, `.best_candidate()`)."""
    s = Search(start, backend, **options)
    s.run()
    return s


__all__ = ["Search", "SearchOptions", "search"]
