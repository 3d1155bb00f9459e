"""The campaign's searches (`workbench.campaign.run` runs them as stages):
`search`, a TAG search per thesis kernel from its root (Table 6.2), and
`forced`, manual decision forcing as a person tuning a kernel by hand does
it — each plan of `recipes.PLANS` forced, a TAG search for what it leaves
open, then a search of the kernel's whole space below the best time the
recipes reached (`SearchOptions.beat_ns`). Both resume from the store's
records by search id."""

from __future__ import annotations

import hashlib
import os
import time
from typing import TYPE_CHECKING

from ..candidate import Candidate
from ..errors import WorkbenchError
from ..kernels import build_kernel
from ..kernels.linalg import SMALL_SIZES

if TYPE_CHECKING:
    from .run import Campaign, CampaignOptions

# the forced stage at the test sizes (`recipes.PLANS` at the thesis's sizes)
QUICK_FORCED = {"axpy": [("vector_axpy", {"threads": 16}), ("vector_axpy", {"threads": None})],
                "matmul 256": [("register_tiled_matmul", {"tm": 2, "tn": 2, "threads": 4})]}


def _search_workers(o: CampaignOptions) -> int:
    """Rollout workers of a search: none in the quick run, else a dask
    LocalCluster where `distributed` imports (one per core but one)."""
    if o.quick:
        return 0
    if o.workers is not None:
        return o.workers
    try:
        import distributed  # noqa: F401
    except ImportError:
        return 0
    return max(1, (os.cpu_count() or 2) - 1)


def _search_id(rows: list, base: str, start_digest: str) -> str:
    """The search id a campaign resumes: `base`, unless its records started
    from another root (the engine has changed the kernel's space since, as
    between two GPU sessions a day apart): then a fresh search, named after
    its own start, so the old records stay as they are."""
    starts = {(r.get("search") or {}).get("start_digest") for r in rows
              if (r.get("search") or {}).get("id") == base}
    if not starts or starts == {start_digest}:
        return base
    return f"{base}-{start_digest[:8]}"


def _rollout_client(camp: Campaign):
    """The dask client every search of the campaign rolls out on, or None
    (inline: the quick run, no `distributed`). A LocalCluster takes seconds
    to start and its workers build each kernel's root once, and a campaign
    runs up to 25 searches: it is started once, and `run_campaign` closes
    it."""
    n = _search_workers(camp.options)
    if n == 0:
        return None
    if camp.rollouts is None:
        from ..search.workers import DaskExecutor
        camp.rollouts = DaskExecutor(workers=n)
    return camp.rollouts.client


def _search(camp: Campaign, start: Candidate, base_id: str, time_s: float,
            rows: list, beat_ns: float | None = None) -> dict:
    """A TAG search of the campaign's backend from `start` (resumed when its
    records are there, `_search_id`; `beat_ns`: `SearchOptions.beat_ns`),
    and its result: evaluations, best, the reference's median, and whether
    it finished."""
    from ..search import TAG, Search
    o = camp.options
    sid = _search_id(rows, base_id, start.digest())
    resume = sid if any((r.get("search") or {}).get("id") == sid for r in rows) else None
    # a fixed start (a recipe that leaves nothing open) needs no rollout
    s = Search(start, camp.backend.name, budget=o.search_budget, time_s=time_s,
               policy=TAG(), workers=0,
               client=None if start.is_fixed else _rollout_client(camp), store=camp.store,
               search_id=sid, resume=resume, seed=o.seed, samples=o.samples,
               timeout_s=o.limit_s, beat_ns=beat_ns, climb=o.climb)
    s.backend = camp.backend  # the campaign's (calibrated) backend instance
    out = s.run()
    best, ref = out.get("best_ns"), out.get("reference_median_ns")
    return {"search_id": sid, "evaluations": out["evaluations"],
            "best_ns": best, "reference": out.get("reference"),
            "reference_median_ns": ref,
            "speedup_vs_reference": ref / best if best and ref else None,
            "stopped": out["stopped"], "climb": o.climb,
            "finished": out["stopped"] in ("budget", "exhausted: every branch was cut")}


def _thesis_root(o: CampaignOptions, label: str) -> tuple[Candidate, dict]:
    """The root of a thesis kernel (its sizes; the test sizes when quick)."""
    from ..search import thesis as th
    builder, sizes = th.KERNELS[label]
    if o.quick:
        sizes = SMALL_SIZES[builder]
    return Candidate.root(build_kernel(builder, sizes)), sizes


def _each_item(camp: Campaign, stage: str, key: str, items: list, name_of, run_one) -> None:
    """The loop of the stages that search: each unfinished item in turn with
    an equal share of the stage's time left, its result saved as it comes (a
    stage cut off resumes from it), then the stage's status. `run_one(item,
    time_s, rows, results)` gives an item's result."""
    t0 = time.monotonic()
    results = camp.state.setdefault("stages", {}).setdefault(stage, {}).get(key, {})
    todo = [x for x in items if not results.get(name_of(x), {}).get("finished")]
    end = camp.stage_deadline(stage)
    rows = camp.store.rows()
    for i, item in enumerate(todo):
        time_s = max(1.0, (end - time.monotonic()) / (len(todo) - i))
        if time.monotonic() > end and not camp.options.quick:
            break
        name = name_of(item)
        got = results[name] = run_one(item, time_s, rows, results)
        camp.state["stages"][stage][key] = results
        camp.save()
        camp.note(f"{stage} {name}: {got.get('evaluations')} evaluations, best "
                  f"{got.get('best_ns')} ns{' ' + got['error'] if got.get('error') else ''}")
    complete = all(results.get(name_of(x), {}).get("finished") for x in items)
    camp.finish(stage, "done" if complete else "partial", t0, **{key: results})


def stage_search(camp: Campaign) -> None:
    """A TAG search per thesis kernel at the thesis's sizes (Table 6.2)."""
    from ..search import thesis as th
    o = camp.options

    def one(label, time_s, rows, _results):
        root, sizes = _thesis_root(o, label)
        return {**_search(camp, root, f"campaign-{label.replace(' ', '_')}-{o.seed}", time_s,
                          rows), "sizes": sizes}
    _each_item(camp, "search", "kernels", list(o.thesis_kernels or th.KERNELS), str, one)


def plan_name(label: str, recipe: str, options: dict) -> str:
    """`matmul 256: register_tiled_matmul(tm=4, tn=4, threads=16)`."""
    from ..recipes import plan_name as recipe_plan
    return f"{label}: {recipe_plan(recipe, options)}"


def forced_plans(o: CampaignOptions) -> list[tuple]:
    """(label, recipe, options) of the forced stage, for the kernels asked
    for: each thesis kernel's `recipes.plans` at the thesis's sizes."""
    from ..recipes import plans
    from ..search.thesis import KERNELS
    if o.quick:
        return [(label, recipe, opts) for label, ps in QUICK_FORCED.items()
                if not o.thesis_kernels or label in o.thesis_kernels for recipe, opts in ps]
    return [(label, recipe, opts) for label in (o.thesis_kernels or KERNELS)
            for recipe, opts in plans(build_kernel(*KERNELS[label]))]


BELOW = "below"  # the forced stage's last item of a kernel: a search below its recipes


def _forced_items(plans: list) -> list:
    """Each kernel's plans, then a search of its whole space below the best
    time they reached."""
    out = []
    for label in dict.fromkeys(p[0] for p in plans):
        out += [p for p in plans if p[0] == label] + [(label, BELOW, {})]
    return out


def item_name(label: str, recipe: str, options: dict) -> str:
    return (f"{label}: a TAG search below its best recipe" if recipe == BELOW
            else plan_name(label, recipe, options))


def stage_forced(camp: Campaign) -> None:
    """Manual decision forcing, as a person does it: each plan's recipe
    (`recipes.forced_candidate`) fixes a kernel's structure, a TAG search
    decides what it leaves open (one evaluation where it leaves nothing);
    then a TAG search of the kernel's whole space that cuts every node
    bounded at or above the best those plans reached (`beat_ns`): can the
    search beat the expert? A recipe that does not apply to this space is
    recorded, not raised."""
    from ..recipes import forced_candidate
    o = camp.options

    def one(item, time_s, rows, results):
        label, recipe, opts = item
        root, sizes = _thesis_root(o, label)
        row = {"kernel": label, "recipe": recipe, "options": opts, "sizes": sizes}
        digest = hashlib.sha256(item_name(*item).encode()).hexdigest()[:8]
        base = f"forced-{label.replace(' ', '_')}-{recipe}-{digest}-{o.seed}"
        if recipe == BELOW:
            best = [r["best_ns"] for r in results.values()
                    if r.get("kernel") == label and r.get("recipe") != BELOW and r.get("best_ns")]
            if not best:
                return {**row, "error": "no recipe of this kernel was measured", "finished": True}
            return {**row, **_search(camp, root, base, time_s, rows, beat_ns=min(best)),
                    "beat_ns": min(best), "open_choices": len(root.choices())}
        try:
            start = forced_candidate(root, recipe, **opts)
        except WorkbenchError as exc:
            return {**row, "error": str(exc), "finished": True}
        return {**row, **_search(camp, start, base, time_s, rows),
                "open_choices": len(start.choices())}
    _each_item(camp, "forced", "plans", _forced_items(forced_plans(o)),
               lambda item: item_name(*item), one)


__all__ = ["BELOW", "QUICK_FORCED", "forced_plans", "item_name", "plan_name", "stage_forced",
           "stage_search"]
