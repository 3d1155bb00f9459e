"""Measure stored trails again with today's code generator and executor:
each measured record of the given files is replayed (`record_candidate`)
and evaluated on the CPU backend, the new records appended to a file of
the same name under `--out` (the old ones are kept as they are: records
are never rewritten). The new records carry the digest of the program they
timed (`x_source_digest`), so `python -m workbench audit` compares them
with today's bound as times of today's program.

    python benchmarks/remeasure_records.py data/runs/*.jsonl --out data/runs/remeasured_<date>
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from workbench.campaign import measured
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
        done = {r["digest"] for r in RecordStore(out).rows()}  # resumable
        todo, skipped = [], 0
        for r in rows:
            if r["digest"] in done:
                continue
            try:
                todo.append(record_candidate(r))
            except WorkbenchError:
                skipped += 1
        for i in range(0, len(todo), args.batch):
            evaluate(todo[i:i + args.batch], "cpu", store=RecordStore(out))
            print(f"{f}: {min(i + args.batch, len(todo))} of {len(todo)} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        print(f"{f} -> {out}: {len(todo)} measured again, {skipped} trails no longer replay",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
