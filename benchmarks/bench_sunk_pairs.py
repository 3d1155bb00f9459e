"""Does a guarded load → store pair wait for its load? A hypothesis tested
against the H200's records, and refuted as a bound.

The searches' GPU records sit far above their bounds (median measured /
bound near 10×, against about 2× for uniformly drawn implementations). The
loosest without spills copy a tile to shared memory through stores guarded
by `threadIdx.x == 0 && threadIdx.y == 0`: nvcc sinks each `__ldg` into its
store's `if` (the model's `sinks`), one block per pair, and the one thread
that passes the guard issues them in order. A matmul 256 ran 16,384 such
pairs a thread in 641 µs, 77 cycles a pair, where the bound (5.6 µs) let
the 32 pairs of an unrolled body overlap.

The hypothesis: such a store waits for its load whatever came before, one
load latency per pair, counted by `model.pinned.pinned_waits(sunk=...)` on
one thread that runs every statement. Three readings, each narrower:

    any      every load whose only sink is a store narrower than it
    no-asm   not a cache-hint load (`asm volatile` is not sunk: it runs
             where it is written, and the stores after a run of them wait once)
    variant  and the load varies along every sequential loop around the
             store (an invariant load may be hoisted out of the loop)

For each record it prints nothing; it counts, per reading, the records whose
chain would exceed their fastest sample (a rule built on it would be
unsound there) and Fig. 5.1 by population with max(today's bound, chain).

    python benchmarks/bench_sunk_pairs.py [--json data/bound/sunk_pairs_h200.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.campaign.report import current_bounds, fig_5_1_by_population, measured
from workbench.candidate import Candidate
from workbench.codegen.printer import PINNED_LOADS, is_global
from workbench.kernels import from_spec
from workbench.model.bound import _Model
from workbench.model.facts import Facts
from workbench.model.hardware import hardware
from workbench.model.pinned import pinned_waits
from workbench.paths import shipped_data_dir
from workbench.space.values import DimKind

READINGS = ("any", "no-asm", "variant")


def predicate(m: _Model, reading: str):
    impl = m.impl

    def sunk(load, store) -> bool:
        if load.op != "load" or m.sinks(load) != (store,):
            return False
        if not set(impl.guard(store)) > set(impl.guard(load)):
            return False
        if reading == "any":
            return True
        if is_global(impl, load) and impl.cache[load.name] in PINNED_LOADS:
            return False
        if reading == "no-asm":
            return True
        return not any(lp.kind in (DimKind.LOOP, DimKind.UNROLL) and lp.size > 1
                       and not set(lp.dims) & set(load.dims) for lp in impl.ancestors(store))
    return sunk


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the counts here")
    args = ap.parse_args(argv)
    data = shipped_data_dir()
    table = str(data / "targets" / "nvidia_h200.json")
    rows = []
    for path in sorted((data / "gpu").glob("nvidia_h200*/*.jsonl")):
        rows += [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    now = [r for r in current_bounds(measured(rows), table) if "bound_now_ns" in r]
    hw = hardware(table)
    out = {"records": len(now), "table": "data/targets/nvidia_h200.json",
           "today": fig_5_1_by_population(now, "bound_now_ns"), "readings": {}}
    chains: dict = {x: [] for x in READINGS}
    for r in now:
        cand = Candidate.replay(from_spec(r["sizes"]), r["trail"])
        m = _Model(Facts(cand), hw)
        for x in READINGS:
            _, cycles, _ = pinned_waits(m.impl, m.latency, sunk=predicate(m, x))
            chains[x].append(hw.ns(cycles))
    for x in READINGS:
        over = [(r["kernel"], r.get("digest", "")[:12], round(c / min(r["times_ns"]), 3))
                for r, c in zip(now, chains[x]) if c > min(r["times_ns"])]
        lifted = [{**r, "with_ns": max(r["bound_now_ns"], c)} for r, c in zip(now, chains[x])]
        out["readings"][x] = {"unsound": len(over), "worst": sorted(over, key=lambda o: -o[2])[:5],
                              "fig_5_1_by_population": fig_5_1_by_population(lifted, "with_ns")}
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
