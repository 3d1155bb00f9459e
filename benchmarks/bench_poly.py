"""The polyhedral aids: time to build the fusion conflict graph and colour it
(Figure 1 of the pluto-lp-dfp seed and the shipped kernels), what the FCG
propagator removes from each kernel's root and the dead-end probability of
random descents with and without it (same seeds), and Affine-MARS timings on
the seed's examples and on a fixed matmul 1024's tiles.

    python benchmarks/bench_poly.py [--descents 100]
Writes data/poly/bench.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import islpy as isl
from peer import write_figures

import workbench as wb
from workbench.descent import random_fixed, space_stats
from workbench.poly import PolyProgram, fcg_prune, from_kernel
from workbench.poly.fcg import build_fcg, colour
from workbench.poly.mars import mars
from workbench.poly.tiles import tile_footprints

KERNELS = {"axpy": {"n": 1 << 16}, "matmul": {"m": 256, "n": 256, "k": 32},
           "strided_matmul": {"m": 256, "n": 256, "k": 32},
           "batched_matmul": {"b": 4, "m": 64, "n": 64, "k": 32},
           "reuse_matmul": {"b": 4, "m": 64, "n": 64, "k": 32}}


def timed(fn, *a, **kw):
    t0 = time.perf_counter()
    out = fn(*a, **kw)
    return out, (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--descents", type=int, default=100)
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "poly" / "bench.json")
    args = ap.parse_args()
    out: dict = {"fcg": {}, "propagator": {}, "mars": {}}
    sq = {s: f"[N] -> {{ {s}[i, j] : 0 <= i < N and 0 <= j < N }}" for s in ("S1", "S2", "S3")}
    fig1 = PolyProgram.from_isl(sq, {
        "S1->S2": "[N] -> { S1[a, b] -> S2[i, j] : a = j and b = i }",
        "S2->S3": "[N] -> { S2[p, q] -> S3[i, j] : i = q and j = p }"})
    progs = {"figure1": fig1}
    for name, sizes in KERNELS.items():
        progs[name] = from_kernel(getattr(wb.kernels, name)(**sizes))
    for name, prog in progs.items():
        g, t_build = timed(build_fcg, prog)
        c, t_colour = timed(colour, prog)
        out["fcg"][name] = {"vertices": len(g.vertices), "edges": len(g.edges),
                            "build_ms": t_build, "colour_ms": t_colour,
                            "permutations": c.to_dict()["permutations"], "cuts": len(c.cuts)}
        print(f"FCG {name}: {len(g.vertices)} vertices, {len(g.edges)} edges, build "
              f"{t_build:.0f} ms, colouring {t_colour:.0f} ms, {len(c.cuts)} cuts")
    for name, sizes in KERNELS.items():
        kernel = getattr(wb.kernels, name)(**sizes)
        removed, t_prune = timed(fcg_prune, kernel)
        plain = wb.Candidate.root(kernel)
        with_fcg = wb.Candidate.root(kernel, prune=fcg_prune)
        left = [r for r in removed if "MERGED" in plain.domain("order", r[1])]
        row = {"proposed": len(removed), "removed_at_root": len(left), "prune_ms": t_prune}
        for label, root in (("without", plain), ("with", with_fcg)):
            st, t = timed(space_stats, root, args.descents, 0)
            row[label] = {"dead_end_probability": st["dead_end_probability"],
                          "mean_depth": st["mean_depth"], "seconds": t / 1e3}
        out["propagator"][name] = row
        print(f"propagator {name}: proposes {len(removed)}, removes {len(left)} at the root; "
              f"dead ends {row['without']['dead_end_probability']:.2f} without, "
              f"{row['with']['dead_end_probability']:.2f} with")
    dom = isl.Set("{ S[i, j] : 0 <= i < 256 and 0 <= j < 256 }")
    jac = [isl.Map("{ S[i, j] -> A[i - 1, j - 1] }"), isl.Map("{ S[i, j] -> A[i, j - 1] }"),
           isl.Map("{ S[i, j] -> A[i + 1, j - 1] }")]
    for label, deps, tile in (("single affine, s=16", [isl.Map("{ S[i, j] -> A[i] }")],
                               (16, 1)), ("jacobi 1d, s=16", jac, (16, 1))):
        m, t = timed(mars, dom, deps, [(1, 1), (-1, 1)], [16, 16], tile)
        out["mars"][label] = {"ms": t, "mars": len(m.parts), "sizes": m.sizes(),
                              "consumer_tiles": len(m.consumers)}
        print(f"MARS {label}: {len(m.parts)} MARS {m.sizes()}, {t:.0f} ms")
    fixed = random_fixed(wb.Candidate.root(wb.kernels.matmul(m=1024, n=1024, k=1024)),
                         random.Random(0))
    fps, t = timed(tile_footprints, fixed)
    out["mars"]["matmul 1024 fixed (seed 0)"] = {"ms": t, "footprints": [f.to_dict()
                                                                          for f in fps]}
    print(f"tile footprints of a fixed matmul 1024: {t:.0f} ms")
    write_figures(args.out, json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
