"""Measure stored trails again with today's code generator and executor:
each measured record of the given files is replayed (`record_candidate`),
completed by a random descent (seeded by its place in the file) where
today's space leaves choices its trail did not know, and evaluated on the
CPU backend, the new records appended to a file of
the same name under `--out` (the old ones are kept as they are: records
are never rewritten). The new records carry the digest of the program they
timed (`x_source_digest`), so `python -m workbench audit` compares them
with today's bound as times of today's program.

    python benchmarks/remeasure_records.py data/runs/*.jsonl --out data/runs/remeasured_<date>
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from workbench.campaign import measured
from workbench.descent import random_fixed
from workbench.errors import WorkbenchError
from workbench.runtime import RecordStore, evaluate
from workbench.runtime.records import record_candidate


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--root", default="data/runs",
                    help="the files' paths below it are kept under --out")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    for f in map(Path, args.files):
        rows = measured(RecordStore(f).rows())
        try:
            rel = f.resolve().relative_to(Path(args.root).resolve())
        except ValueError:
            rel = Path(f.name)
        out = Path(args.out) / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        todo, skipped, completed = [], 0, 0
        for n, r in enumerate(rows):
            try:
                cand = record_candidate(r)
                if not cand.is_fixed:
                    cand, completed = random_fixed(cand, random.Random(n)), completed + 1
            except WorkbenchError:
                skipped += 1
                continue
            todo.append(cand)
        done = len(RecordStore(out).rows())  # resumable: evaluate appends in order
        todo = todo[done:]
        for i in range(0, len(todo), args.batch):
            evaluate(todo[i:i + args.batch], "cpu", store=RecordStore(out))
            print(f"{f}: {min(i + args.batch, len(todo))} of {len(todo)} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        print(f"{f} -> {out}: {len(todo)} measured again ({completed} completed by a random "
              f"descent), {skipped} trails no longer replay", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
