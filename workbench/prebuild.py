"""Extended problems built before they are needed.

The first decision that lowers a communication (thesis §3.3.4) builds the
kernel's extended problem and carries the candidate over to it: 0.45–0.65 s
on matmul 1024 (1.3–1.8 s before it shared the root's clauses), against ~30
ms for a decision once that problem exists. A person reading the panels
leaves the interpreter idle for seconds, so a background thread builds, one
at a time, extended problems one lowering away from the candidate on show,
and the carry-over's plan (`lowering.transfer_plan`: the new propagator
instances it runs and the new variables' seeds). The explorer offers only
those a listed value's child reaches (its look-ahead worker found them):
building every lowering ahead (`Candidate.lowerings_ahead`, 5 s on matmul
1024 at the root) kept the kernel busy through fast clicking and doubled
its click latency (median 36 → 87 ms in the browser benchmark). A decision
that needs a problem being built waits for that build (`Problem.extended`
is thread-safe) instead of starting another. A newer offer replaces the
older one between two builds.
"""

from __future__ import annotations

import gc
import threading

from .space.lowering import transfer_plan


class LoweringPrebuilder:
    """A daemon thread preparing the lowerings ahead of the latest offered
    candidate. `offer(cand)` after each decision; `close()` to stop."""

    def __init__(self, freeze: bool = False):
        """`freeze`: `keep_out_of_gc()` after each build (a long-lived
        interactive process)."""
        self.freeze = freeze
        self._cv = threading.Condition()
        self._next = None  # the latest offer not yet taken: (candidate, fired sets or None)
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.built = 0  # extended problems this thread built
        # what it built for the last two offers: the problem cache holds only
        # problems some candidate holds, and a few (`Problem.extended`)
        self._held: list[list] = [[], []]
        self.error: BaseException | None = None  # the last build's failure

    def offer(self, cand, fired_sets=None) -> None:
        """Build the extended problems of `fired_sets` (default: every
        lowering one step ahead of `cand`, `Candidate.lowerings_ahead`) and
        carry-over from `cand`'s problem; replaces the previous offer."""
        with self._cv:
            if self._closed:
                return
            self._next = (cand, None if fired_sets is None else list(fired_sets))
            self._cv.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="lowering-prebuild")
                self._thread.start()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every offered candidate's lowerings are built."""
        with self._cv:
            return self._cv.wait_for(lambda: self._closed or (self._next is None
                                                              and not self._busy), timeout)

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._next = None
            self._cv.notify_all()

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._closed or self._next is not None)
                if self._closed:
                    return
                (cand, sets), self._next, self._busy = self._next, None, True
            try:
                self._prepare(cand, sets)
            except Exception as e:  # noqa: BLE001 — a decision rebuilds it and reports
                self.error = e
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()

    def _prepare(self, cand, sets) -> None:
        p = cand.problem
        seen: set[int] = set()
        held: list = []
        self._held = [self._held[-1], held]
        for fired in cand.lowerings_ahead() if sets is None else sets:
            if self._next is not None or self._closed:
                return  # a newer candidate: its lowerings first
            fresh = not p.has_extension(fired)
            new = p.extended(fired)
            if id(new) in seen:
                continue
            seen.add(id(new))
            held.append(new)
            self.built += fresh
            transfer_plan(p, new)  # the carry-over's instances and the new variables' seeds
            if self.freeze:  # the problem and the carry-over's signature sets
                keep_out_of_gc()


def keep_out_of_gc() -> None:
    """Move every object alive now out of the cyclic collector's reach
    (`gc.freeze`). A problem is millions of long-lived tuples built with the
    collector paused; left tracked, the next collections walk them all — 0.1–
    0.25 s per generation after one lowering on matmul 1024, at whatever
    click allocates next, and a full collection walks every problem. For a
    long-lived interactive kernel (the explorer) that holds its problems
    anyway; frozen cycles are never collected, so batch code should not."""
    gc.freeze()


__all__ = ["LoweringPrebuilder", "keep_out_of_gc"]
