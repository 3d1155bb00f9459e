"""The measurement campaign (issue 21): everything a GPU must show, from one
command, in the order that puts the most valuable data first, within a time
budget, resumable.

Stages (each skipped when a previous run of the same folder finished it,
each resumed from the records when it was cut off):

1. `calibration` — `runtime.calibrate` writes `targets/<device>.json`
   (CUDA); the bound of every later record uses it.
2. `correctness` — `n_correct` random fixed candidates per thesis kernel
   (at the test sizes, `kernels.linalg.SMALL_SIZES`) run and checked against
   numpy; a failure keeps its CUDA in the record (`x_code`).
3. `random` — `n_random` random implementations of matmul 256×256×32 and
   axpy 2^26, interleaved, with their bounds and the reference library's
   time (cuBLAS / CuPy; numpy on the CPU).
4. `search` — a TAG search per thesis kernel at the thesis's sizes
   (Table 6.2), its best time beside the reference.
5. `forced` — manual decision forcing: a recipe (`workbench.recipes`)
   fixes a thesis kernel's structure the way a person tuning it by hand
   does (register tiles, float4 streams), a TAG search decides the rest;
   one search per plan of `recipes.PLANS` (tile variants), then, per
   kernel, a TAG search of its whole space below the best time its recipes
   reached (`SearchOptions.beat_ns`); beside Table 6.2.
6. `report` — `report.md`, `summary.json` and SVG figures (Fig. 5.1, bound
   against measured), the soundness count over every measured record.

Every measurement is a record of the store (`records.jsonl` in the output
folder) appended as it comes, tagged `x_campaign` = {stage, label, seed};
a search's records carry their `search.id` (`campaign-<label>`, or
`forced-<label>-<recipe>-…` for a forced plan's). The
folder's `campaign.json` says which stages finished. Each record also
carries what ptxas says of its CUDA (`x_ptxas`: registers, spills, shared
and local memory, where nvcc exists), the occupancy that allows
(`x_occupancy`) and the bound with those registers in μ
(`x_bound_registers_ns`, `model.registers`).

Random candidates are drawn in worker processes while the device measures
(the descents are the slow part); a candidate whose bound already exceeds
the stage's time limit is not run (status `timeout`, no sample: the bound
proves it would exceed the limit).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import datetime as _dt
import hashlib
import json
import multiprocessing
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..candidate import Candidate
from ..errors import WorkbenchError
from ..kernels import build_kernel
from ..kernels.linalg import SMALL_SIZES
from ..paths import data_dir
from ..runtime.backend import bound_target
from ..runtime.records import RecordStore
from ..target import load_target
from ..validate import read_json_document
from .searches import stage_forced, stage_search

STAGES = ("calibration", "correctness", "random", "search", "forced", "report")
# share of the remaining time each measuring stage may take
SHARES = {"correctness": 0.2, "random": 0.3, "search": 0.35, "forced": 0.15}

# the thesis kernels: label -> (builder, thesis sizes) (search.thesis.KERNELS)
CORRECTNESS_KERNELS = ("axpy", "matmul", "strided_matmul", "batched_matmul", "reuse_matmul")
RANDOM_KERNELS = {"matmul 256": ("matmul", {"m": 256, "n": 256, "k": 32}),
                  "axpy 2^26": ("axpy", {"n": 2 ** 26})}
QUICK_RANDOM = {"matmul 256": ("matmul", {"m": 16, "n": 16, "k": 8}),
                "axpy 2^26": ("axpy", {"n": 256})}
QUICK_SEARCH = ("axpy", "matmul 256")
QUICK_CORRECTNESS = ("axpy", "matmul")


@dataclass
class CampaignOptions:
    backend: str = "cuda"
    minutes: float = 25.0
    out: Path | None = None  # default: data/gpu/<device>/
    quick: bool = False  # small sizes and counts: the CPU dry run of the test suite
    seed: int = 0
    workers: int | None = None  # drawing processes; None: one per core but one; 0: inline
    n_correct: int = 50
    n_random: int = 1000
    search_budget: int = 100_000  # evaluations per kernel (time is the real limit)
    # moves on the bound (`search.climb`) polishing each rollout before the
    # device measures it: the workers climb while the GPU measures
    climb: int = 64
    samples: int = 10
    limit_s: float = 0.2  # a run longer than this is not sampled again (status timeout)
    arch: str | None = None  # ptxas architecture; default: the device's, else sm_90
    thesis_kernels: tuple = ()  # labels of search.thesis.KERNELS; default: all
    correctness_kernels: tuple = CORRECTNESS_KERNELS  # builders, at SMALL_SIZES
    drawn: Path | None = None  # cache of drawn trails; default data/campaign/drawn/
    stages: tuple = ()  # measuring stages to run (of SHARES); default all (calibration and
    # the report always run)

    def wants(self, stage: str) -> bool:
        return not self.stages or stage in self.stages

    def __post_init__(self):
        if self.quick:  # every stage, the fewest candidates that exercise it (unless given)
            full = CampaignOptions.__dataclass_fields__
            for name, few in (("n_correct", 1), ("n_random", 2), ("search_budget", 2),
                              ("climb", 4)):
                if getattr(self, name) == full[name].default:
                    setattr(self, name, few)
            self.thesis_kernels = tuple(self.thesis_kernels or QUICK_SEARCH)
            if self.correctness_kernels == CORRECTNESS_KERNELS:
                self.correctness_kernels = QUICK_CORRECTNESS


@dataclass
class Campaign:
    options: CampaignOptions
    out: Path
    backend: object
    device: str
    store: RecordStore
    deadline: float
    state: dict = field(default_factory=dict)
    log: list = field(default_factory=list)
    rollouts: object = None  # the searches' shared DaskExecutor (`searches._rollout_client`)

    # ------------------------------------------------------------ state
    @property
    def state_path(self) -> Path:
        return self.out / "campaign.json"

    def save(self) -> None:
        self.state_path.write_text(json.dumps(self.state, indent=1, default=str) + "\n")

    def note(self, text: str) -> None:
        self.log.append(f"{time.strftime('%H:%M:%S')} {text}")
        if self.options.backend == "cuda" or os.environ.get("WORKBENCH_CAMPAIGN_VERBOSE"):
            print(self.log[-1], flush=True)

    def left_s(self) -> float:
        return self.deadline - time.monotonic()

    def stage_deadline(self, stage: str) -> float:
        """This stage's share of the time left (report reserve kept aside)."""
        later = [s for s in SHARES if STAGES.index(s) >= STAGES.index(stage)
                 and not self.done(s) and self.options.wants(s)]
        # the report's time: seconds for a few thousand records; a short
        # campaign (the few minutes a lent GPU has left) keeps less aside
        reserve = 5.0 if self.options.quick else min(45.0, 6.0 * self.options.minutes)
        left = max(0.0, self.left_s() - reserve)
        share = SHARES[stage] / sum(SHARES[s] for s in later)
        return time.monotonic() + left * share

    def done(self, stage: str) -> bool:
        return self.state.get("stages", {}).get(stage, {}).get("status") == "done"

    def finish(self, stage: str, status: str, t0: float, **summary) -> None:
        entry = self.state.setdefault("stages", {}).setdefault(stage, {})
        if status != "failed":  # an earlier run's failure, now overcome
            entry.pop("error", None)
            entry.pop("traceback", None)
        entry.update(status=status, elapsed_s=round(entry.get("elapsed_s", 0.0)
                                                    + time.monotonic() - t0, 2), **summary)
        self.save()
        self.note(f"{stage}: {status}")

    # ------------------------------------------------------------ records
    def tagged(self, stage: str) -> dict:
        """(label, seed) -> row for the stage's records already in the store."""
        out = {}
        for r in self.store.rows():
            c = r.get("x_campaign") or {}
            if c.get("stage") == stage:
                out[(c.get("label"), c.get("seed"))] = r
        return out


# ---------------------------------------------------------------- drawing
def _draw(job) -> list:
    """Worker: random fixed candidates of one kernel, one per seed, as trails."""
    from ..descent import random_fixed
    builder, sizes, seeds = job
    root = Candidate.root(build_kernel(builder, sizes))
    out = []
    for seed in seeds:
        try:
            cand = random_fixed(root, random.Random(seed))
            out.append((seed, [d.to_dict() for d in cand.trail], None))
        except WorkbenchError as exc:  # every attempt died: the seed is reported, not fatal
            out.append((seed, None, f"{type(exc).__name__}: {exc}"))
    return out


def _jobs(builder: str, sizes: dict, seeds: list, chunk: int) -> list:
    return [(builder, sizes, seeds[i:i + chunk]) for i in range(0, len(seeds), chunk)]


def _pool(workers: int | None):
    n = max(1, (os.cpu_count() or 2) - 1) if workers is None else workers
    if n == 0:
        return None
    # spawn: the parent may hold a CUDA context, which a forked child must not inherit
    return cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))


class DrawnCache:
    """Trails of random fixed candidates already drawn, one JSON-lines file
    per kernel spec and space text ({"seed", "trail"} per line), so a
    campaign (or `campaign --draw-only` on a machine without a GPU, ahead of
    one) pays each descent once. A trail the engine no longer accepts is
    drawn afresh."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def path(self, builder: str, sizes: dict) -> Path:
        from ..space.space import load_space
        space = build_kernel(builder, sizes).space
        key = json.dumps([builder, sizes, load_space(space).text], sort_keys=True)
        return self.folder / f"{builder}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsonl"

    def load(self, builder: str, sizes: dict) -> dict:
        p = self.path(builder, sizes)
        if not p.exists():
            return {}
        out = {}
        for line in p.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill: that seed is drawn again
            out[row["seed"]] = row["trail"]
        return out

    def add(self, builder: str, sizes: dict, seed: int, trail: list) -> None:
        p = self.path(builder, sizes)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a") as fh:
            fh.write(json.dumps({"seed": seed, "trail": trail}) + "\n")


def _drawn(pool, jobs, cache: DrawnCache | None = None):
    """(seed, trail, error) as they come: cached trails first, then from the
    pool or this process (each new trail added to the cache)."""
    cached = cache.load(*jobs[0][:2]) if cache is not None and jobs else {}
    todo = []
    for builder, sizes, seeds in jobs:
        for seed in seeds:
            if seed in cached:
                yield seed, cached[seed], None
        rest = [x for x in seeds if x not in cached]
        if rest:
            todo.append((builder, sizes, rest))

    def fresh():
        if pool is None:
            for job in todo:
                yield from _draw(job)
            return
        # A window of jobs in flight, refilled as this stream is read: a
        # stream that queued all its jobs at once held the pool until every
        # one ran, and a second kernel's stream waited behind it (an H200's
        # first campaign drew 16 of 1,000 matmul 256 in five minutes, its axpy
        # none).
        pending, running = list(todo), set()
        window = max(1, getattr(pool, "_max_workers", 1))
        try:
            while pending or running:
                while pending and len(running) < window:
                    running.add(pool.submit(_draw, pending.pop(0)))
                done, running = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    yield from f.result()
        finally:
            for f in running:
                f.cancel()
    for seed, trail, err in fresh():
        if trail is not None and cache is not None:
            cache.add(todo[0][0], todo[0][1], seed, trail)
        yield seed, trail, err


# ---------------------------------------------------------------- measuring
def _facts(camp: Campaign, gens) -> dict:
    """ptxas facts per kernel name (empty without nvcc)."""
    from ..codegen.compile import CompileError, nvcc_path, ptxas_report
    if nvcc_path() is None or not gens:
        return {}
    try:
        with tempfile.TemporaryDirectory(prefix="wb_ptxas_") as tmp:
            rep = ptxas_report(gens, camp.options.arch or _arch(camp.backend), workdir=tmp,
                               timeout_s=30.0)
    except (CompileError, OSError) as exc:
        camp.note(f"ptxas: {exc}")
        return {}
    return rep.facts


def _arch(backend) -> str:
    return getattr(backend, "arch", None) or "sm_90"  # CudaBackend.arch: the device's


def measure(camp: Campaign, stage: str, items: list) -> list:
    """Measure fixed candidates of one kernel; items: (label, seed, cand).
    Records (tagged, with ptxas facts and the register bound) are appended
    to the store and returned."""
    from ..codegen import generate
    from ..codegen.compile import occupancy
    from ..model.registers import bound_with_registers
    from ..runtime.evaluator import evaluate
    if not items:
        return []
    o, be = camp.options, camp.backend
    target = bound_target(be)
    gens = [generate(c, f"wb_{stage}_{i}") for i, (_, _, c) in enumerate(items)]
    # the CUDA backend compiles its batch with ptxas -v itself (x_ptxas); others get it here
    facts = {} if getattr(be, "name", "") == "cuda" else _facts(camp, gens)
    # a candidate bounded past the stage's limit is a timeout without running
    recs = evaluate([c for _, _, c in items], be, store=None, samples=o.samples,
                    timeout_s=o.limit_s, seed=o.seed, run_limit_s=o.limit_s)
    kernel = items[0][2].problem.root_problem.kernel
    out = []
    for i, rec in enumerate(recs):
        label, seed, cand = items[i]
        g = gens[i]
        extra = dict(rec.extra)
        extra["campaign"] = {"stage": stage, "label": label, "seed": seed}
        f = facts.get(g.name) or extra.get("ptxas")
        if f is not None:
            extra["ptxas"] = f
            extra["occupancy"] = occupancy(f, g.launch, kernel.target.name)
        regs = extra.get("registers") or (f or {}).get("registers")
        if regs and getattr(be, "name", "") == "cuda":
            try:
                extra["bound_registers_ns"] = bound_with_registers(cand, regs, target).value_ns
            except WorkbenchError as exc:
                extra["bound_registers_error"] = str(exc)
        if rec.status not in ("ok", "timeout"):
            extra["code"] = g.cuda  # failures keep their code
        out.append(dataclasses.replace(rec, extra=extra))
    camp.store.append(out)
    return out


# ---------------------------------------------------------------- stages
def stage_calibration(camp: Campaign) -> None:
    t0 = time.monotonic()
    if camp.options.backend != "cuda":
        note = f"the CPU backend's bound uses the {camp.backend.target} table"
        if not camp.options.quick:  # the host's core, as the reference executor runs it
            from ..runtime import calibrate as cal
            if hasattr(cal, "calibrate_cpu"):
                path = cal.calibrate_cpu()
                note = f"host calibrated: {path}"
        # the folder keeps the table its bounds were taken on, as a GPU's does
        # (the calibrated one, or `cpu_reference` in a quick run)
        (camp.out / "target.json").write_text(
            json.dumps(load_target(camp.backend.target).raw, indent=2) + "\n")
        camp.finish("calibration", "done", t0, target=camp.backend.target, note=note)
        return
    from ..runtime.calibrate import calibrate
    from ..runtime.cuda import CudaBackend
    path = calibrate()
    (camp.out / "target.json").write_text(path.read_text())
    camp.backend = CudaBackend()  # picks the calibrated table for its bound
    camp.finish("calibration", "done", t0, target=camp.backend.target, path=str(path))


def stage_draw_and_measure(camp: Campaign, stage: str, kernels: dict, n: int,
                           pool) -> None:
    """Draw `n` random fixed candidates per kernel (label -> (builder,
    sizes)), measure them in batches as they come, interleaving kernels."""
    t0 = time.monotonic()
    end = camp.stage_deadline(stage)
    have = camp.tagged(stage)
    o = camp.options
    per_label = {}
    for label, (builder, sizes) in kernels.items():
        seeds = [o.seed * 1_000_003 + s for s in range(n)
                 if (label, o.seed * 1_000_003 + s) not in have]
        per_label[label] = (builder, sizes, seeds)
    cache = DrawnCache(o.drawn or data_dir() / "campaign" / "drawn")
    streams = {label: _drawn(pool, _jobs(b, s, seeds, 2 if o.quick else 4), cache)
               for label, (b, s, seeds) in per_label.items() if seeds}
    batch = 2 if o.quick else 16  # a batch: one nvcc build, one set of inputs, one reference
    measured = {label: 0 for label in kernels}
    draw_errors: list = []
    try:
        _measure_streams(camp, stage, streams, per_label, batch, end, measured, draw_errors)
    finally:  # also when a batch raises: queued draws are cancelled now, not at collection
        for s in streams.values():
            s.close()
    rows = camp.tagged(stage)
    counts: dict = {}
    for (label, _), r in rows.items():
        c = counts.setdefault(label, {})
        c[r["status"]] = c.get(r["status"], 0) + 1
    complete = all(sum(counts.get(label, {}).values()) >= n for label in kernels)
    camp.finish(stage, "done" if complete else "partial", t0, statuses=counts,
                draw_errors=draw_errors[-10:], wanted_per_kernel=n)


def _measure_streams(camp, stage, streams, per_label, batch, end, measured, draw_errors):
    """Measure batches from the drawing streams, kernel after kernel, until
    they are spent or the stage's time is up."""
    cut = False
    while streams and not cut:
        for label in list(streams):
            if time.monotonic() > end:
                cut = True
                break
            builder, sizes, _ = per_label[label]
            root = Candidate.root(build_kernel(builder, sizes))
            items = []
            for seed, trail, err in streams[label]:
                cand = None
                if trail is not None:
                    try:
                        cand = Candidate.replay(root.kernel, trail)
                    except WorkbenchError as exc:  # a cached trail the engine now refuses
                        trail, err = None, f"replay: {exc}"
                if cand is None:
                    draw_errors.append(f"{label} seed {seed}: {err}")
                else:
                    items.append((label, seed, cand))
                if len(items) >= batch:
                    break
            else:
                del streams[label]
            measure(camp, stage, items)
            measured[label] += len(items)


def stage_report(camp: Campaign) -> dict:
    from .report import write_report
    t0 = time.monotonic()
    summary = write_report(camp.out, camp.state)
    camp.finish("report", "done", t0, report=str(camp.out / "report.md"))
    return summary


# ---------------------------------------------------------------- entry
def _guarded(camp: Campaign, stage: str, fn, *args) -> None:
    """Run a stage; an exception ends that stage only, recorded in
    campaign.json with its traceback (status `failed`), so the GPU's few
    minutes go on to the next stage and the report. KeyboardInterrupt still
    ends the campaign (the records so far are kept)."""
    t0 = time.monotonic()
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - recorded, not lost
        import traceback
        camp.finish(stage, "failed", t0, error=f"{type(exc).__name__}: {exc}",
                    traceback=traceback.format_exc()[-4000:])


def _backend(name: str):
    from ..runtime.backend import get_backend
    be = get_backend(name)
    if name == "cuda" and getattr(be, "cp", None) is None:
        from ..runtime.cuda import NO_DEVICE
        raise WorkbenchError(f"campaign --backend cuda: {NO_DEVICE}")
    return be


def _checked(o: CampaignOptions) -> CampaignOptions:
    """`o`, or a WorkbenchError naming an unknown stage or thesis kernel, or
    a climb that is not a number of moves."""
    from ..search import SearchOptions
    SearchOptions(climb=o.climb)  # the searches' own check, before any stage runs
    unknown = set(o.stages) - set(SHARES)
    if unknown:
        raise WorkbenchError(f"campaign: unknown stage(s) {sorted(unknown)}; "
                             f"choose among {list(SHARES)}")
    from ..search.thesis import KERNELS
    unknown = set(o.thesis_kernels) - set(KERNELS)
    if unknown:
        raise WorkbenchError(f"campaign: unknown thesis kernel(s) {sorted(unknown)}; "
                             f"choose among {list(KERNELS)}")
    return o


def draw_ahead(options: CampaignOptions | None = None, **changes) -> dict:
    """Draw (and cache) the random candidates of the correctness and random
    stages without measuring anything: run it on any machine before a GPU
    session, commit data/campaign/drawn/, and the GPU's minutes go to
    measuring. Returns, per kernel, how many trails the cache holds."""
    o = _checked(dataclasses.replace(options or CampaignOptions(), **changes))
    cache = DrawnCache(o.drawn or data_dir() / "campaign" / "drawn")
    deadline = time.monotonic() + o.minutes * 60
    plan = [(b, SMALL_SIZES[b], o.n_correct) for b in o.correctness_kernels]
    plan += [(b, sz, o.n_random) for b, sz in (QUICK_RANDOM if o.quick
                                              else RANDOM_KERNELS).values()]
    pool = _pool(0 if o.quick and o.workers is None else o.workers)
    out = {}
    try:
        for builder, sizes, n in plan:
            seeds = [o.seed * 1_000_003 + s for s in range(n)]
            stream = _drawn(pool, _jobs(builder, sizes, seeds, 2 if o.quick else 4), cache)
            for _ in stream:
                if time.monotonic() > deadline:
                    break
            stream.close()
            out[f"{builder} {json.dumps(sizes, sort_keys=True)}"] = len(cache.load(builder,
                                                                                   sizes))
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return {"drawn": out, "cache": str(cache.folder)}


def report_only(out: Path, target: str | None = None) -> dict:
    """Redraw a finished (or cut-off) campaign's report on any machine, with
    the counts of today's model beside the recorded bounds (`bounds.
    current_bounds`) on `target` (default: the campaign's own target.json;
    another table when that one is known to be wrong); the records and
    campaign.json are only read."""
    from .report import write_report
    out = Path(out)
    if not (out / "records.jsonl").exists():
        raise WorkbenchError(f"campaign --report-only: {out} holds no records.jsonl")
    if target is not None:
        load_target(target)  # a misspelt table: an error, not a report replaying nothing
    state_path = out / "campaign.json"
    state = read_state(state_path) if state_path.exists() else {}
    summary = write_report(out, state, rebound=target or True)
    summary["out"] = str(out)
    return summary


def read_state(path: Path) -> dict:
    """A campaign.json: an object whose `stages`, when there, is an object of
    objects (an edited or foreign file is an error naming it, not a KeyError
    halfway through a resumed campaign)."""
    state = read_json_document(path, "campaign state")
    stages = state.setdefault("stages", {}) if isinstance(state, dict) else None
    if not isinstance(stages, dict) or not all(isinstance(v, dict) for v in stages.values()):
        raise WorkbenchError(f"{path}: not a campaign state (an object whose \"stages\" maps "
                             "each stage to an object)")
    return state


def default_out(backend) -> Path:
    from ..runtime.cuda import slug
    if backend.name == "cuda":
        return data_dir() / "gpu" / slug(backend.device)
    return data_dir() / "campaign-cpu"


def run_campaign(options: CampaignOptions | None = None, **changes) -> dict:
    """Run (or resume) the campaign; returns the report's summary (also in
    `<out>/summary.json`)."""
    o = _checked(dataclasses.replace(options or CampaignOptions(), **changes))
    be = _backend(o.backend)
    out = Path(o.out) if o.out else default_out(be)
    out.mkdir(parents=True, exist_ok=True)
    camp = Campaign(o, out, be, be.device, RecordStore(out / "records.jsonl"),
                    time.monotonic() + o.minutes * 60)
    if camp.state_path.exists():
        camp.state = read_state(camp.state_path)
        camp.state.setdefault("runs", []).append(_dt.datetime.now(_dt.timezone.utc).isoformat())
    else:
        camp.state = {"device": be.device, "backend": be.name, "quick": o.quick,
                      "runs": [_dt.datetime.now(_dt.timezone.utc).isoformat()], "stages": {}}
    camp.state["options"] = {k: (str(v) if isinstance(v, Path) else v)
                             for k, v in dataclasses.asdict(o).items()}
    camp.state["stages"].pop("report", None)  # always redrawn
    camp.save()
    sizes = {k: SMALL_SIZES[k] for k in o.correctness_kernels}
    pool = _pool(0 if o.quick and o.workers is None else o.workers)
    try:
        if not camp.done("calibration"):  # every bound needs the table
            _guarded(camp, "calibration", stage_calibration, camp)
        if not camp.done("correctness") and o.wants("correctness"):
            _guarded(camp, "correctness", stage_draw_and_measure, camp, "correctness",
                     {k: (k, s) for k, s in sizes.items()}, o.n_correct, pool)
        if not camp.done("random") and o.wants("random"):
            _guarded(camp, "random", stage_draw_and_measure, camp, "random",
                     QUICK_RANDOM if o.quick else RANDOM_KERNELS, o.n_random, pool)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    try:
        if not camp.done("search") and o.wants("search"):
            _guarded(camp, "search", stage_search, camp)
        if not camp.done("forced") and o.wants("forced"):
            _guarded(camp, "forced", stage_forced, camp)
    finally:
        if camp.rollouts is not None:
            camp.rollouts.close()
    summary = stage_report(camp)
    summary["out"] = str(out)
    summary["stages"] = {k: v.get("status") for k, v in camp.state["stages"].items()}
    return summary


__all__ = ["STAGES", "Campaign", "CampaignOptions", "DrawnCache", "default_out", "draw_ahead",
           "measure", "report_only", "run_campaign"]
