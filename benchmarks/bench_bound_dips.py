"""How often, and by how much, a child's raw bound falls below its parent's
along descents (the shown bound is clamped to the parent's, so the explorer
hides it; a large dip means the parent's bound claimed more than one of its
children's implementations may take, the signature of an unsound term).

Descents in the thesis order and in random order (a random open choice, a
random live value), as a person clicks, at the thesis's sizes, on `h200`.

    python benchmarks/bench_bound_dips.py [--descents 3] [--seed 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import workbench as wb
from workbench.kernels import build_kernel
from workbench.model.lookahead import lookahead
from workbench.orders import choice_order
from workbench.search.thesis import KERNELS


def descend(root, target, order: str, rng) -> list[tuple[str, float, float, float]]:
    """(choice, parent's shown bound, the taken child's raw bound, the least
    raw bound of every live child) at every step."""
    steps = []
    cand, b = root, wb.bound(root, target)
    order_ = choice_order(order)
    while not cand.is_fixed:
        ch = order_.next(cand, target=target, parent=b, rng=rng)
        if ch is None:
            break
        kids = [k for k in lookahead(cand, ch.name, ch.objects, target, parent=b)
                if k.bound is not None]
        if not kids:
            break  # a dead end: this descent stops
        k = rng.choice(kids)
        steps.append((ch.name, b.value_ns, k.bound.raw_ns, min(x.bound.raw_ns for x in kids)))
        cand = cand.apply(ch.name, ch.objects, k.value)
        b = k.bound
    return steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--descents", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", default="h200")
    ap.add_argument("--kernels", default="matmul 1024,matmul 256,axpy",
                    help=f"comma-separated, of: {', '.join(KERNELS)}")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = []
    for name in args.kernels.split(","):
        builder, sizes = KERNELS[name]
        root = wb.Candidate.root(build_kernel(builder, sizes))
        for order in ("thesis", "random"):
            rng = random.Random(args.seed)
            t0 = time.perf_counter()
            steps = dips = any_dips = 0
            worst, worst_choice, worst_any = 1.0, None, 1.0
            for _ in range(args.descents):
                for choice, parent, raw, least in descend(root, args.target, order, rng):
                    steps += 1
                    if raw < parent * (1 - 1e-9):
                        dips += 1
                        if parent / raw > worst:
                            worst, worst_choice = parent / raw, choice
                    if least < parent * (1 - 1e-9):  # some value's child, taken or not
                        any_dips += 1
                        worst_any = max(worst_any, parent / least)
            rows.append({"kernel": name, "order": order, "steps": steps, "dips": dips,
                         "worst_ratio": round(worst, 3), "worst_choice": worst_choice,
                         "steps_with_a_child_below": any_dips,
                         "worst_ratio_any_child": round(worst_any, 3),
                         "seconds": round(time.perf_counter() - t0, 1)})
            r = rows[-1]
            print(f"{name:12s} {order:7s}: {dips} of {steps} steps dip, worst parent/child "
                  f"×{r['worst_ratio']} ({worst_choice}); some child below its parent at "
                  f"{any_dips} (worst ×{r['worst_ratio_any_child']}), {r['seconds']} s",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d"), "command": " ".join(sys.argv),
            "target": args.target, "descents": args.descents, "seed": args.seed,
            "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
