"""The root candidate: how long `Candidate.root` takes, and what the root's
pair check of the thread levels (`thread_levels.shave`) adds and removes.

For each kernel at the picker's default sizes and the thesis's: the median
time of building the propagated root from scratch (a new kernel object each
time, so no cache answers), with the pair check and without it (the peer,
in the same run, alternating), and the values the check removed, each
verified a dead end by applying it to the unshaved root.

    python benchmarks/bench_root.py [--reps 5] [--out data/bench/root.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import workbench as wb
import workbench.candidate as candidate
from widgets.picker import KERNELS
from workbench.space.thread_levels import shave

THESIS = {"matmul": {"m": 1024, "n": 1024, "k": 1024}, "axpy": {"n": 2 ** 26}}


def _root(name, sizes, shaved: bool):
    candidate.shave = shave if shaved else (lambda problem, st: [])
    try:
        kernel = wb.kernels.build_kernel(name, sizes)
        t = time.perf_counter()
        root = wb.Candidate.root(kernel, prune=lambda k: ())  # out of the root cache
        return time.perf_counter() - t, root
    finally:
        candidate.shave = shave


def measure(name, sizes, reps: int) -> dict:
    times = {True: [], False: []}
    roots = {}
    for _ in range(reps):
        for shaved in (True, False):  # alternating: the machine's drift hits both
            t, roots[shaved] = _root(name, sizes, shaved)
            times[shaved].append(t)
    kept = {(c.name, c.objects): set(c.values) for c in roots[True].choices(include_fixed=True)}
    removed = dead = 0
    for ch in roots[False].choices():
        for v in ch.values:
            if v not in kept[(ch.name, ch.objects)]:
                removed += 1
                try:
                    roots[False].apply(ch.name, ch.objects, v)
                except wb.DeadEnd:
                    dead += 1
    return {"kernel": name, "sizes": sizes,
            "root_ms": round(statistics.median(times[True]) * 1e3, 1),
            "root_ms_peer": round(statistics.median(times[False]) * 1e3, 1),
            "values_removed": removed, "removed_that_dead_end": dead}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "data" / "bench" / "root.json"))
    a = ap.parse_args(argv)
    cases = [(n, {k: d for k, (d, _) in sizes.items()}) for n, sizes in KERNELS.items()]
    cases += list(THESIS.items())
    rows = []
    for name, sizes in cases:
        rows.append(measure(name, sizes, a.reps))
        print(json.dumps(rows[-1]), flush=True)
    Path(a.out).write_text(json.dumps({
        "benchmark": "root", "when": time.strftime("%Y-%m-%d"), "host": platform.node(),
        "python": platform.python_version(), "reps": a.reps,
        "peer": "the same root without the pair check (thread_levels.shave), same run",
        "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
