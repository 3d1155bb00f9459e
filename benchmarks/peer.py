"""What the benchmarks share: a percentile, and running this script's
`--child` mode on one checkout's engine (this one, or a peer's measured in
the same run) and reading the JSON line it prints last."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def pct(xs, q):
    """The q-quantile of xs, the element at rank ⌊q·n⌋ (no interpolation)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_child(script: str, engine: str, *args: str):
    """`script --child --engine ENGINE ARGS…` in a process of its own, run
    from the engine's checkout with it first on the path; the JSON of the
    last line it prints."""
    out = subprocess.run([sys.executable, script, "--child", "--engine", engine, *args],
                         capture_output=True, text=True, check=True, cwd=engine,
                         env={**os.environ, "PYTHONPATH": engine})
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_figures(path, text: str):
    """Write a benchmark's figures to `path`, or, when a file is already
    there (a committed record the README cites: records are never
    rewritten), beside it with the time in its name; prints and returns the
    path written."""
    path = Path(path)
    if path.exists():
        path = path.with_name(f"{path.stem}_{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"figures written to {path}", file=sys.stderr)
    return path
