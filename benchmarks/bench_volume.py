"""Volume model latency (issue 7) and the SDBM fast path against isl.

- the paper's §5 example: program element map and all regions (target < 1 s);
- tile classification for new tile sizes (parametric, target < 200 ms);
- emptiness checks of tile domains, tile by tile: SDBM against isl in the
  same run on the same tiles and region pieces (the isl side intersects the
  prebuilt box with the piece, as the SDBM side does).

    python benchmarks/bench_volume.py [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics

from bench_bound import timed as timed_all

from workbench.volume import Program, regions, tile
from workbench.volume.fastpath import boxed, isl_box, pieces, tile_boxes
from workbench.volume.kernels import conv_spec

PAPER = conv_spec(1, 3, 512, 512, 8, 5, 5)  # the paper's §5 example (tests check it)


def timed(fn, reps):
    return statistics.median(timed_all(fn, reps))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    t = timed(lambda: regions(Program.from_spec(PAPER)).counts(), args.reps)
    print(f"paper example, spec → regions and counts: {t * 1e3:.0f} ms (target < 1 s)")
    reg = regions(Program.from_spec(PAPER))
    for size in (8, 16, 32, 64):
        t = timed(lambda size=size: tile(reg, {2: size, 3: size}), args.reps)
        print(f"tile classification {size}×{size}: {t * 1e3:.1f} ms (target < 200 ms)")
    shape = [1, 8, 256, 256]
    ps = pieces(reg.constant_dependent)
    for size in (16, 8):
        boxes = list(tile_boxes(shape, {2: size, 3: size}))
        sd = [[boxed(s, lo, hi) for _, s in ps] for _, lo, hi in boxes]
        ib = [isl_box("act0", lo, hi) for _, lo, hi in boxes]
        checks = len(boxes) * len(ps)
        t_sdbm = timed(lambda sd=sd: [s.is_empty() for row in sd for s in row], args.reps)
        t_isl = timed(lambda ib=ib: [b.intersect(x).is_empty() for x in ib for b, _ in ps],
                      args.reps)
        same = ([s.is_empty() for row in sd for s in row]
                == [b.intersect(x).is_empty() for x in ib for b, _ in ps])
        print(f"{checks} emptiness checks ({size}×{size} tiles × {len(ps)} pieces): SDBM "
              f"{t_sdbm / checks * 1e6:.1f} µs, isl {t_isl / checks * 1e6:.1f} µs per check; "
              f"SDBM/isl = {t_sdbm / t_isl:.2f} (same answers: {same})")


def random_systems(count: int, seed: int = 0):
    """HSDBMs with difference constraints (not boxes), as in tests/test_sdbm.py."""
    import random

    from workbench.sdbm import SDBM
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(2, 4)
        names = [f"x{i}" for i in range(n)]
        cons = [(a, b, rng.randint(-8, 8)) for a, b in
                (rng.sample([*names, None], 2) for _ in range(3 * n))]
        chain = rng.choice(([1, 2, 4, 8], [1, 3, 6, 12]))
        out.append(SDBM.build(names, cons, {v: (m, rng.randrange(m)) for v, m in
                                            zip(names, (rng.choice(chain) for _ in names))}))
    return out


def systems() -> None:
    """isl decides emptiness while it builds a basic set (is_empty on a built
    set is a lookup), so both sides are timed from the constraint text the
    systems are written in to the answer."""
    import islpy as isl

    from workbench.sdbm import SDBM
    sys_ = random_systems(2000)
    texts = [s.to_isl_string() for s in sys_]
    parts = [(s.names, s.bounds, s.congruences) for s in sys_]
    t_sdbm = timed(lambda: [SDBM(*p).is_empty() for p in parts], 3)
    t_isl = timed(lambda: [isl.BasicSet(t).is_empty() for t in texts], 3)
    same = [SDBM(*p).is_empty() for p in parts] == [isl.BasicSet(t).is_empty() for t in texts]
    print(f"2000 random HSDBMs with difference constraints, construction + emptiness: SDBM "
          f"{t_sdbm / 2000 * 1e6:.1f} µs, isl {t_isl / 2000 * 1e6:.1f} µs per system; "
          f"SDBM/isl = {t_sdbm / t_isl:.2f} (same answers: {same})")


if __name__ == "__main__":
    main()
    systems()
