"""How much of the H200's time the "pinned pairs" explain, read off the
printed CUDA: the cross-check of `model/pinned.py` (which walks the
implementation instead; see docs/results.md, second GPU session).

The generated CUDA loads global memory with `__ldg`/`__ldcg`/`__ldca` (`asm
volatile`) or `__ldcv` (`asm` with a "memory" clobber) and stores it with
`__stcg`/`__stwt` (`asm` with a "memory" clobber), so nvcc keeps them in
program order; a warp issues in order, so a store waits for the load it
writes, and the next load issues after that store. Unrolled `load → store`
pairs then run one after the other, one L2 latency each. This replays every
H200 record's trail, prints its CUDA, walks it in program order (loops
multiply) and counts the *waits*: a global store whose value comes from a
pinned load issued since the previous wait. An estimate of the kernel's
time follows:

    waits × their load's latency (the calibrated table's) × waves of blocks

(waves: blocks over the most that can be resident at once: threads,
blocks, shared memory and ptxas's registers per SM). It reads the printed
code, so it is an estimate, not a model term: a wait inside a loop for a
load issued before the loop counts once per iteration (a model rule must
count it once), and it trusts ptxas not to hoist a load above a store to
global memory it cannot prove apart. The script prints, per
record, the estimate against the fastest sample, and the counts: how many
records the estimate would put above their time (a rule built on it would
be unsound there), and Fig. 5.1 with max(bound, estimate).

    python benchmarks/bench_pinned_pairs.py [--json data/bound/pinned_pairs_h200.json]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

from workbench.campaign.bounds import current_bounds, measured
from workbench.codegen import generate
from workbench.codegen.compile import occupancy
from workbench.model.hardware import hardware
from workbench.paths import shipped_data_dir
from workbench.runtime.records import record_candidate

PINNED_LOAD = re.compile(r"(v_\w+\[[^\]]*\]|t_) = __ld(cg|ca|cv|g)\(")
STORE = re.compile(r"__st(?:cg|wt)\(")
VALUE = re.compile(r"v_\w+\[[^\]]*\]")
VEC_LANE = re.compile(r"(v_\w+\[[^\]]*\]) = t_\.[xyzw];")
FOR = re.compile(r"for \(\w+ \w+ = 0; \w+ < (\d+);")


def waits(cuda: str, latency: dict) -> tuple[int, float]:
    """Waits of one thread that runs every statement (thread 0: guards only
    drop work), in program order, and their cycles: a loop multiplies what
    its body counts; a wait lasts the least latency of its load's path
    (`__ldca` and `__ldg` may hit L1; `__ldcg`/`__ldcv` go to L2 at least)."""
    mult = [1]  # trip counts of the open braces
    total, cycles = 0, 0.0
    issued: dict = {}  # values of pinned loads issued since the last wait -> latency
    for raw in cuda.splitlines()[1:]:
        code = raw.split("//")[0]
        m = PINNED_LOAD.search(code)
        if m:
            issued[m.group(1)] = latency[{"ca": "load_l1", "g": "load_readonly"}.get(
                m.group(2), "load_l2")]
        lane = VEC_LANE.search(code)
        if lane and "t_" in issued:
            issued[lane.group(1)] = issued["t_"]
        hit = [issued[v] for v in VALUE.findall(code) if v in issued]
        if STORE.search(code) and hit:
            total += math.prod(mult)
            cycles += math.prod(mult) * max(hit)
            issued = {}
        for ch in code:
            if ch == "{":
                f = FOR.search(code)
                mult.append(int(f.group(1)) if f else 1)
            elif ch == "}":
                mult.pop()
    return total, cycles


def resident_blocks(launch: dict, registers: int | None, table: str, hw) -> int:
    """Blocks the GPU holds at once: `codegen.compile.occupancy` per SM
    (threads, blocks, shared memory, ptxas's registers) times the SMs."""
    per_sm = occupancy({"registers": registers or 0}, launch, table)["blocks_per_sm"]
    return max(1, per_sm or 1) * hw.sms


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the per-record figures and the counts here")
    args = ap.parse_args(argv)
    data = shipped_data_dir()
    table = str(data / "targets" / "nvidia_h200.json")
    hw = hardware(table)
    rows = []
    for path in sorted((data / "gpu").glob("nvidia_h200*/*.jsonl")):
        rows += [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    out = []
    for r in current_bounds(measured(rows), table):
        if "bound_now_ns" not in r:
            continue
        cand = record_candidate(r)
        g = generate(cand, "k")
        n, cycles = waits(g.cuda, hw.latency)
        blocks = math.prod(g.launch["grid"])
        waves = math.ceil(blocks / resident_blocks(g.launch, r.get("x_registers"), table, hw))
        est = cycles * waves / hw.clock_ghz
        fastest = min(r["times_ns"])
        out.append({"kernel": r["kernel"], "sizes": r["sizes"], "digest": r["digest"],
                    "status": r["status"], "median_ns": r.get("median_ns"),
                    "fastest_ns": fastest, "bound_ns": r["bound_now_ns"], "waits": n,
                    "waves": waves, "estimate_ns": est})
        print(f"{r['kernel']:>15} {fastest / 1e3:12.1f} µs  bound {r['bound_now_ns'] / 1e3:10.1f}"
              f"  waits {n:6d} × waves {waves:5d} → {est / 1e3:10.1f} µs"
              f"{'  ABOVE' if est > fastest else ''}", flush=True)
    above = [x for x in out if x["estimate_ns"] > x["fastest_ns"]]
    ok = [x for x in out if x["status"] == "ok"]

    def within(key):
        ratios = [x["median_ns"] / key(x) for x in ok]
        return sum(q <= 10 for q in ratios) / len(ratios), statistics.median(ratios)
    now = within(lambda x: x["bound_ns"])
    both = within(lambda x: max(x["bound_ns"], x["estimate_ns"]))
    summary = {"records": len(out), "with_waits": sum(x["waits"] > 0 for x in out),
               "estimate_above_fastest": len(above),
               "worst_estimate_over_fastest": max((x["estimate_ns"] / x["fastest_ns"]
                                                   for x in out), default=None),
               "fig_5_1_bound": {"within_10x": now[0], "median": now[1], "n": len(ok)},
               "fig_5_1_max_bound_estimate": {"within_10x": both[0], "median": both[1]}}
    print(json.dumps(summary, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": out}, indent=1)
                                   + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
