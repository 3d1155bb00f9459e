"""Evaluation throughput with 1 and 2 dask workers on the CPU backend (issue 6).

The same fixed candidates of matmul 256×256×32 are measured through the
search's worker task (replay the trail, compile the reference C, verify,
time ≥ 10 samples) on a LocalCluster of 1 and then 2 single-threaded worker
processes. Each worker first gets one warm-up task (its root candidate and
lowerings are built once per process), then the clock runs until every
candidate is measured. The peer of the 2-worker run is the 1-worker run.

    python benchmarks/bench_workers.py [--candidates 24] [--seed 0] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import random
import time

import workbench as wb
from workbench.descent import random_fixed
from workbench.search.simulate import Task, evaluate_trail


def _replay(task: Task) -> int:
    from workbench.search.simulate import _replayed
    return len(_replayed(task)[0].trail)


def throughput(tasks, workers: int, warm_all: bool) -> dict:
    from distributed import Client, LocalCluster, wait
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        names = list(client.scheduler_info()["workers"])
        warm = [client.submit(evaluate_trail, tasks[0], workers=[w], pure=False) for w in names]
        if warm_all:
            warm += [client.submit(_replay, t, workers=[w], pure=False)
                     for w in names for t in tasks]
        wait(warm)
        t0 = time.perf_counter()
        futs = [client.submit(evaluate_trail, t, pure=False) for t in tasks]
        outs = client.gather(futs)
        dt = time.perf_counter() - t0
    ok = sum(o.record.status == "ok" for o in outs)
    return {"workers": workers, "warm": warm_all, "evaluations": len(tasks), "ok": ok,
            "seconds": dt, "per_second": len(tasks) / dt,
            "eval_s_mean": sum(o.eval_s for o in outs) / len(outs),
            "distinct_workers": len({o.worker for o in outs})}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    kernel = wb.kernels.matmul(m=256, n=256, k=32)
    root = wb.Candidate.root(kernel)
    rng = random.Random(args.seed)
    fixed = [random_fixed(root, rng) for _ in range(args.candidates)]
    tasks = [Task(kernel.spec(), "gpu", [d.to_dict() for d in c.trail]) for c in fixed]
    result = {"kernel": "matmul 256x256x32", "candidates": len(tasks)}
    for label, warm_all in (("evaluation", True), ("cold", False)):
        one, two = throughput(tasks, 1, warm_all), throughput(tasks, 2, warm_all)
        result[label] = {"one": one, "two": two, "ratio": two["per_second"] / one["per_second"]}
        for r in (one, two):
            print(f"{label}: {r['workers']} worker(s): {r['evaluations']} in {r['seconds']:.1f} s"
                  f" = {r['per_second']:.2f}/s (mean evaluation {r['eval_s_mean']:.2f} s)")
        print(f"{label}: 2 workers / 1 worker: {result[label]['ratio']:.2f}x")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
