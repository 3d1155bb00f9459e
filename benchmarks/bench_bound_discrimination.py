"""How often the bound discriminates (issue 19): at the root of a kernel, the
`dim_kind`/`size` choices whose children do not all have the same bound; and
along descents in a choice order, the share of decisions whose children
(look-ahead, propagated) do not all have the same bound — any difference,
the ones the explorer's 4-digit labels show, and those of 1 % or more.
Values are taken at random (`--values random`: a candidate soon far from
any fast one, whose bound one bottleneck decides) or as a person following
the labels does (`--values best`: the least child bound, ties at random).

    python benchmarks/bench_bound_discrimination.py [--descents 3] [--m 1024 --n 1024 --k 1024]
        [--target h200] [--order thesis] [--values random|best]

Writes data/bound/discrimination.json (beside it, with the time in its name,
when that record exists) and prints one line per figure.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from peer import write_figures

import workbench as wb
from workbench.model.justification import fmt_time
from workbench.model.lookahead import lookahead
from workbench.orders import choice_order


def differs(kids) -> bool:
    alive = {round(k.value_ns, 6) for k in kids if k.bound is not None}
    return len(alive) > 1


def visible(kids) -> bool:
    """The children's labels differ as the explorer prints them (4 digits)."""
    return len({fmt_time(k.value_ns, 4) for k in kids if k.bound is not None}) > 1


def spread(kids) -> float:
    """Largest child bound over the smallest, minus one (0: all equal)."""
    alive = [k.value_ns for k in kids if k.bound is not None]
    return max(alive) / min(alive) - 1 if alive and min(alive) > 0 else 0.0


def root_figure(root, target) -> dict:
    b = wb.bound(root, target)
    chs = [c for c in root.choices() if c.name in ("dim_kind", "size")]
    hits = [f"{c.name}({','.join(c.objects)})" for c in chs
            if differs(lookahead(root, c.name, c.objects, target, parent=b))]
    return {"choices": len(chs), "differing": len(hits), "which": hits}


def descents(root, target, order, n, seed, values="random") -> dict:
    rng = random.Random(seed)
    total = hit = big = shown = 0
    spreads: list = []  # of the differing decisions
    per: dict = {}  # choice name -> [decisions, differing]
    for _ in range(n):
        cand, b = root, wb.bound(root, target)
        order_ = choice_order(order)
        while not cand.is_fixed:
            ch = order_.next(cand, target=target, parent=b, rng=rng)
            if ch is None:
                break
            kids = lookahead(cand, ch.name, ch.objects, target, parent=b)
            alive = [k for k in kids if k.bound is not None]
            if not alive:
                break  # a dead end: this descent stops
            total += 1
            diff = differs(kids)
            hit += diff
            shown += visible(kids)
            if diff:
                spreads.append(spread(kids))
                big += spreads[-1] >= 0.01
            row = per.setdefault(ch.name, [0, 0])
            row[0] += 1
            row[1] += diff
            if values == "best":
                least = min(k.value_ns for k in alive)
                alive = [k for k in alive if k.value_ns <= least]
            k = rng.choice(alive)
            cand = cand.apply(ch.name, ch.objects, k.value)
            b = k.bound
    spreads.sort()
    return {"decisions": total, "differing": hit, "share": hit / max(total, 1),
            "differing_by_1pct": big, "differing_in_labels": shown,
            "spread_median": spreads[len(spreads) // 2] if spreads else 0.0,
            "by_choice": {k: {"decisions": a, "differing": b} for k, (a, b) in sorted(per.items())}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--descents", type=int, default=3)
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--target", default="h200")
    ap.add_argument("--order", default="thesis")
    ap.add_argument("--values", choices=("random", "best"), default="random")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "bound"
                                          / "discrimination.json"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    root = wb.Candidate.root(wb.kernels.matmul(args.m, args.n, args.k))
    r = root_figure(root, args.target)
    print(f"root: {r['differing']} of {r['choices']} dim_kind/size choices have children "
          f"with differing bounds")
    d = descents(root, args.target, args.order, args.descents, args.seed, args.values)
    print(f"{args.descents} descents ({args.order} order, {args.values} values): "
          f"{d['differing']} of "
          f"{d['decisions']} decisions ({100 * d['share']:.0f} %) show differing child bounds, "
          f"{d['differing_in_labels']} in the explorer's 4-digit labels, "
          f"{d['differing_by_1pct']} by 1 % or more (median spread "
          f"{100 * d['spread_median']:.1f} %)")
    for name, row in d["by_choice"].items():
        print(f"  {name:>16}: {row['differing']:3d} of {row['decisions']:3d}")
    out = {"date": time.strftime("%Y-%m-%d"), "kernel": f"matmul {args.m}x{args.n}x{args.k}",
           "target": args.target, "order": args.order,
           "values": args.values, "root": r, "descents": d,
           "seconds": round(time.perf_counter() - t0, 1)}
    write_figures(args.out, json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
