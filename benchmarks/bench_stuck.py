"""Manual descents in a person's order: how often does one get stuck?

A person picks a random open choice and a value. Two ways to pick values:
- `lookahead`: any value whose child is not an immediate dead end (what the
  explorer's red buttons allow; propagation alone decides);
- `proven`: only values the Session proved (a witness below the child).
A descent is *stuck* at a choice whose every value is dead (lookahead) or
whose no value is proven (proven). Stuck states are explained
(`workbench.explain`) and the size of each explanation is reported, with
how many of its drop buttons lead to an implementation (`ways_out`).

    python benchmarks/bench_stuck.py [--mode lookahead|proven] [--descents 50]
        [--kernels matmul=64x64x32,axpy,...] [--no-globals] [--space PATH]
        [--json out.json]
    python benchmarks/bench_stuck.py --stored data/bench/stuck_*.json [--smallest 5]
        [--json out.json]

A peer in the same run: `--no-globals` (the clauses alone) or `--space` an
earlier gpu.space (e.g. `git show HEAD~3:workbench/space/spaces/gpu.space`).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

import workbench as wb
from workbench.descent import _children
from workbench.kernels.linalg import SMALL_SIZES


def parse_kernels(text: str) -> list:
    out = []
    for item in text.split(","):
        name, _, dims = item.partition("=")
        sizes = dict(SMALL_SIZES[name])
        if dims:
            sizes = dict(zip(sizes, map(int, dims.split("x"))))
        out.append((name, sizes))
    return out


def lookahead_descent(root, rng):
    """(stuck choice or None, candidate reached)."""
    cand = root
    while not cand.is_fixed:
        ch = rng.choice(cand.choices())
        kids, _ = _children(cand, ch)
        if not kids:
            return ch, cand
        cand = rng.choice(kids)
    return None, cand


def proven_descent(root, rng, budget_s):
    """Follow proven values only; returns (stuck choice or None, candidate,
    witness checks passed)."""
    s = wb.Session(root, store=None)
    while not s.cand.is_fixed:
        wit = s.witness(budget_s=300)  # the first lowerings cost tens of seconds cold
        if wit is None:
            return "no witness", s.cand
        assert wit.is_fixed and wb.witness.extends(wit, s.cand)
        ch = rng.choice(s.cand.choices())
        opts = s.options(ch.name, ch.objects, prove_s=budget_s)
        proven = [o for o in opts if o.status == "proven"]
        if not proven:
            return ch, s.cand
        s.apply(ch.name, ch.objects, rng.choice(proven).value)
    assert wb.Candidate.replay(root.kernel, s.cand.trail).digest() == s.cand.digest()
    return None, s.cand


def explain_stored(paths: list, out: str | None, smallest: int = 0) -> None:
    """Each stuck state an earlier run kept, explained again by this engine:
    the culprits, whether they were verified, the culprits of each value
    (`Explanation.by_value`) and the seconds it took; with `smallest` K, also
    the size of a smallest explanation when one of at most K decisions
    exists, searched exhaustively (`wb.smallest_explanation`: None proves
    that every explanation of the state is larger than K)."""
    rows = []
    for path in paths:
        data = json.load(open(path))
        for run in data["rows"] if isinstance(data, dict) else data:
            for st in run.get("stuck_states", []):
                head = {"from": Path(path).name, "seed": run.get("seed"),
                        "kernel": run["kernel"], "choice": st["choice"]}
                # the trail replayed by this engine (the saved digest is the
                # engine's of the day: a stronger space changes it)
                choice = (st["choice"][0], tuple(st["choice"][1]))
                cand, gone = _replayed(st["candidate"], choice)
                if gone:
                    rows.append({**head, "gone": gone})
                    print(json.dumps(rows[-1]), flush=True)
                    continue
                t0 = time.perf_counter()
                prefixes = cand.prefixes()  # one replay for the explanation and its ways out
                ex = wb.explain(cand, choice=choice, prefixes=prefixes)
                row = {**head, "culprits": len(ex.culprits), "verified": ex.verified,
                       "by_value": [[v, len(sub)] for v, sub in ex.by_value],
                       "seconds": round(time.perf_counter() - t0, 1), "text": ex.text}
                t0 = time.perf_counter()
                row["ways_out"] = _ways(cand, ex, prefixes)
                row["ways_out_s"] = round(time.perf_counter() - t0, 1)
                if smallest:
                    t0 = time.perf_counter()
                    best = wb.smallest_explanation(cand, choice=choice, at_most=smallest)
                    row.update(trail=len(cand.trail), smallest_at_most=smallest,
                               smallest=None if best is None else len(best),
                               subsets_tried=sum(math.comb(len(cand.trail), k) for k in
                                                 range(1, min(smallest, len(cand.trail)) + 1))
                               if best is None else None,
                               smallest_s=round(time.perf_counter() - t0, 1))
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "text"}), flush=True)
    gone = [r for r in rows if "gone" in r]
    rows = [r for r in rows if "gone" not in r]
    sizes = [r["culprits"] for r in rows]
    worst = [max((n for _, n in r["by_value"]), default=r["culprits"]) for r in rows]
    summary = {"no_longer_stuck": len(gone), "states": len(rows),
               "verified": sum(r["verified"] for r in rows),
               "at_most_5": sum(n <= 5 for n in sizes),
               "every_value_at_most_5": sum(n <= 5 for n in worst),
               "drops": {k: sum(r["ways_out"].get(k, 0) for r in rows)
                         for k in ("proven", "dead", "open")},
               "with_a_proven_drop": sum(r["ways_out"].get("proven", 0) > 0 for r in rows)}
    if smallest:  # a smallest explanation of at most K decisions, or proof there is none
        summary["smallest_at_most"] = {"K": smallest,
                                       "found": sum(r["smallest"] is not None for r in rows),
                                       "none_exists": sum(r["smallest"] is None for r in rows)}
    print(json.dumps(summary))
    if out:
        Path(out).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"),
                                         "command": " ".join(sys.argv), "summary": summary,
                                         "rows": rows + gone}, indent=1) + "\n")


def _ways(cand, ex, prefixes) -> dict:
    """How many of the explanation's drops lead to an implementation
    (`explain.ways_out`: proven), to none (dead), or were not settled."""
    out: dict = {}
    for way in wb.ways_out(cand, ex, prefixes=prefixes):
        out[way.status] = out.get(way.status, 0) + 1
    return out


def _replayed(saved: dict, choice: tuple) -> tuple:
    """(the candidate of a saved stuck state's trail replayed by this engine,
    why it is not stuck any more: its trail dead-ends sooner, the choice is
    decided, a value of it now lives; None when it still is)."""
    try:
        cand = wb.Candidate.replay(wb.kernels.from_spec(saved["kernel"]), saved["trail"])
    except wb.DeadEnd as e:
        return None, f"the trail dead-ends sooner: {e}"
    ch = next((c for c in cand.choices() if (c.name, tuple(c.objects)) == choice), None)
    if ch is None:
        return cand, "the choice is decided by propagation"
    kids, _ = _children(cand, ch)
    return cand, (f"{len(kids)} of its values live" if kids else None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("lookahead", "proven"), default="lookahead")
    ap.add_argument("--descents", type=int, default=50)
    ap.add_argument("--kernels", default="matmul=64x64x32")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prove-s", type=float, default=0.5)
    ap.add_argument("--explain", action="store_true", help="explain each stuck state")
    ap.add_argument("--no-globals", action="store_true",
                    help="the peer: propagation by the clauses alone, without the global "
                         "propagators (workbench.space.thread_levels)")
    ap.add_argument("--space", help="a .space file to descend in instead of the kernel's own")
    ap.add_argument("--stored", nargs="+", metavar="JSON",
                    help="explain again the stuck states kept by earlier runs (their "
                         "--json files) instead of descending")
    ap.add_argument("--smallest", type=int, default=0, metavar="K",
                    help="with --stored: search every subset of at most K decisions for a "
                         "smaller explanation (exhaustive; none found proves there is none)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.stored:
        return explain_stored(args.stored, args.json, args.smallest)
    prune = None
    if args.no_globals:
        from workbench.space.problem import Problem
        Problem._globals = False

        def prune(kernel):  # a root of its own, not the kernel's cached one
            return ()
    results = []
    for name, sizes in parse_kernels(args.kernels):
        space = wb.space.load_space(args.space) if args.space else None
        root = wb.Candidate.root(wb.kernels.build_kernel(name, sizes), space, prune=prune)
        rng = random.Random(args.seed)
        stuck, sizes_expl, verified, times, kept = [], [], 0, [], []
        for _ in range(args.descents):
            t0 = time.perf_counter()
            if args.mode == "lookahead":
                ch, cand = lookahead_descent(root, rng)
            else:
                ch, cand = proven_descent(root, rng, args.prove_s)
            times.append(time.perf_counter() - t0)
            # one line per descent, so a long run cut short still says what it saw
            print(f"{name} descent {len(times)}: {times[-1]:.1f} s, "
                  f"{'stuck at ' + str(getattr(ch, 'name', ch)) if ch else 'fixed'}",
                  file=sys.stderr, flush=True)
            if ch is None:
                continue
            stuck.append(getattr(ch, "name", ch))
            if args.explain and not isinstance(ch, str):
                prefixes = cand.prefixes()
                ex = wb.explain(cand, choice=(ch.name, ch.objects), prefixes=prefixes)
                sizes_expl.append(len(ex.culprits))
                # the stuck state itself, so a long explanation can be studied again
                kept.append({"choice": [ch.name, list(ch.objects)], "culprits": len(ex.culprits),
                             "by_value": [[v, len(sub)] for v, sub in ex.by_value],
                             "ways_out": _ways(cand, ex, prefixes),
                             "text": ex.text, "candidate": json.loads(cand.to_json())})
                verified += ex.verified
                print(f"  explained by {len(ex.culprits)}: {ex.text}", file=sys.stderr,
                      flush=True)
        row = {"kernel": name, "sizes": sizes, "mode": args.mode, "descents": args.descents,
               "globals": not args.no_globals, "space": args.space or "gpu.space",
               "stuck": len(stuck), "stuck_choices": sorted(set(stuck)),
               "descent_s_median": round(statistics.median(times), 3)}
        if args.explain and sizes_expl:
            row.update(explanations=len(sizes_expl), verified=verified,
                       at_most_5=sum(n <= 5 for n in sizes_expl),
                       median_culprits=statistics.median(sizes_expl), stuck_states=kept)
        results.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
