"""`python -m workbench`: the engine from the command line.

Every command prints one JSON object with --json, a readable summary otherwise.
A subcommand is one function (parsed arguments in, exit code out) registered
with `@subcommand` beside the function that adds its arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import descent
from .candidate import Candidate
from .errors import WorkbenchError
from .kernels import build_kernel
from .orders import descent_order, order_names
from .space.space import load_space


def parse_sizes(text: str | None) -> dict:
    """"m=256,n=256,k=32" -> {"m": 256, ...} (ints, or floats where needed)."""
    out: dict = {}
    for part in filter(None, (text or "").split(",")):
        if "=" not in part:
            raise WorkbenchError(f"--sizes: expected name=value, got {part!r}")
        name, value = part.split("=", 1)
        if name.strip() in out:
            raise WorkbenchError(f"--sizes: {name.strip()} is given twice")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            try:
                out[name.strip()] = float(value)
            except ValueError:
                raise WorkbenchError(f"--sizes: {name} must be a number, got {value!r}") from None
    return out


def number(kind=int, low: float = 0, *, above: bool = False, high: float | None = None):
    """An argparse type: a `kind` number ≥ `low` (> `low` with `above`,
    ≤ `high` when given), so that a count, a time or a share out of range is
    a usage error naming the flag, not an empty run or a traceback."""
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}"
            ) from None
        if not (v > low if above else v >= low) or (high is not None and not v <= high):
            want = (f"more than {low:g}" if above else f"at least {low:g}") + (
                f" and at most {high:g}" if high is not None else "")
            raise argparse.ArgumentTypeError(f"must be {want}, got {text}")
        return v
    parse.__name__ = kind.__name__  # argparse names the type in some messages
    return parse


def load_candidate(args) -> Candidate:
    kernel = build_kernel(args.kernel, parse_sizes(args.sizes))
    space = getattr(args, "space", None)
    prune = None
    if getattr(args, "fcg", False):
        from .poly import fcg_prune
        prune = fcg_prune
    root = Candidate.root(kernel, space, prune)
    # a --space the engine cannot read is an input error here, before any
    # command works on it (an empty file listed no choice and `run` recorded
    # a compile_error for it)
    from .kernels.basic_block import BasicBlock
    from .space.values import BASIC_BLOCK, GPU, ensure_values
    ensure_values(root.space, BASIC_BLOCK if isinstance(kernel, BasicBlock) else GPU)
    if getattr(args, "trail", None):
        return replay_trail_file(root, args.trail, space, prune,
                                 getattr(args, "allow_other_kernel", False))
    return root


def replay_trail_file(root: Candidate, path, space=None, prune=None,
                      allow_other: bool = False) -> Candidate:
    """The candidate of a --trail file on `root`'s kernel: a document of
    Candidate.to_json() must be for that kernel and space (and replay to its
    digest) unless `allow_other`, which says on stderr what differs; a bare
    list of decisions carries no identity and is replayed as it is."""
    data, trail, diff = read_trail_file(root, path, allow_other)
    cand = Candidate.replay(root.problem.root_problem.kernel, trail, space, prune)
    if not diff and prune is None:
        check_replayed(data, cand, allow_other)
    return cand


def check_replayed(data, cand: Candidate, allow_other: bool) -> None:
    """A trail document's saved digest against the candidate it replayed to:
    an error, or with `allow_other` a warning on stderr."""
    from .validate import check_digest
    try:
        check_digest(data, cand)
    except WorkbenchError as exc:
        if not allow_other:
            raise
        print(f"warning: --allow-other-kernel: {exc}", file=sys.stderr)


def read_trail_file(root: Candidate, path, allow_other: bool = False):
    """(document, its decisions, what differs from `root`'s identity) of a
    --trail file, checked as `replay_trail_file` says."""
    from .candidate import FORMAT
    from .validate import check_identity, read_json_document
    data = read_json_document(path, "trail")
    if isinstance(data, dict):
        if data.get("format") != FORMAT or not isinstance(data.get("trail"), list):
            raise WorkbenchError(f"{path}: not a {FORMAT} document (Candidate.to_json()) nor a "
                                 "list of decisions")
        diff = check_identity(data, root, allow_other)
        for d in diff:
            print(f"warning: --allow-other-kernel: {d}", file=sys.stderr)
        trail = data["trail"]
    elif isinstance(data, list):
        trail, diff = data, ["no identity"]
    else:
        raise WorkbenchError(f"{path}: a trail is a JSON object or list, got "
                             f"{type(data).__name__}")
    if not all(isinstance(d, dict) for d in trail):
        raise WorkbenchError(f"{path}: every decision of a trail is an object "
                             "{choice, objects, value}")
    return data, trail, diff


def load_fixed(args) -> Candidate:
    """The --trail candidate, its open choices fixed by a random descent when
    --random-seed is given."""
    cand = load_candidate(args)
    if not cand.is_fixed and args.random_seed is not None:
        cand = descent.random_fixed(cand, random.Random(args.random_seed))
    return cand


def space_stats(root: Candidate, descents: int, seed: int, order="thesis") -> dict:
    """Random descents (thesis Tables 4.3 and 6.1), see `workbench.descent`."""
    out = descent.space_stats(root, descents, seed, descent_order(order))
    for key in ("log10_space_size", "thesis_log10_space_size"):
        if out[key] is None:
            # every descent died: only the Cartesian upper bound of the root is known
            out[key] = root.log10_size()
    return out


def _emit(obj: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(obj))
    else:
        for k, v in obj.items():
            print(f"{k}: {_text(k, v)}")


def _text(key: str, v) -> str:
    """A field as a person reads it (--json keeps every digit): times in
    their unit, other numbers to 4 digits, a mapping on one line, a list of
    records counted (a search printed its 2,000-character best trail and
    "elapsed_s: 13.454271096998127")."""
    from .model.justification import fmt_time
    if v is None:
        return "—"
    if isinstance(v, bool) or isinstance(v, int) and not key.endswith("_ns"):
        return str(v)
    if isinstance(v, (int, float)):
        if key.endswith("_ns"):
            return fmt_time(v, 4)
        return f"{v:.4g} s" if key.endswith("_s") else f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={_text(k, x)}" for k, x in v.items()) or "—"
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return f"{len(v)} entries (--json prints them)"
    if key.endswith("_ns") and isinstance(v, list) and v \
            and all(isinstance(x, (int, float)) for x in v):
        return f"{len(v)} samples, {fmt_time(min(v), 4)} to {fmt_time(max(v), 4)}"
    return str(v)


# --------------------------------------------------------------- arguments
def _kernel_args(p) -> None:
    p.add_argument("--kernel", required=True,
                   help="kernel builder, e.g. random_basic_block")
    p.add_argument("--sizes", default="", help="builder arguments, e.g. n=12,seed=7")
    p.add_argument("--space", default=None,
                   help="decision space (.space name or path); default: the kernel's")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _trail_args(p, random_seed: bool = False) -> None:
    p.add_argument("--trail", help="JSON file written by Candidate.to_json()")
    p.add_argument("--allow-other-kernel", action="store_true",
                   help="replay a --trail written for another kernel or space (says what "
                        "differs on stderr)")
    if random_seed:
        p.add_argument("--random-seed", type=int, default=None,
                       help="fix the open choices by a random descent with this seed")


def _candidate_args(p) -> None:
    _kernel_args(p)
    _trail_args(p)


def _fixed_args(p) -> None:
    _kernel_args(p)
    _trail_args(p, random_seed=True)


# ------------------------------------------------------------- subcommands
@dataclass(frozen=True)
class Subcommand:
    """One `python -m workbench NAME`: its parser's arguments and the function
    that runs it (parsed arguments in, exit code out)."""
    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(name: str, help: str, arguments: Callable = lambda p: None):
    """Register the decorated function as the subcommand `name`."""
    def register(run):
        SUBCOMMANDS[name] = Subcommand(name, help, arguments, run)
        return run
    return register


def _space_stats_args(p) -> None:
    _kernel_args(p)
    _trail_args(p)
    p.add_argument("--descents", type=number(int, 1), default=100,
                   help="random descents (default 100)")
    p.add_argument("--seed", type=int, default=0, help="of the descents (default 0)")
    p.add_argument("--order", default="thesis", choices=order_names(),
                   help="choice order of the descents (default: the thesis's)")
    p.add_argument("--fcg", action="store_true",
                   help="add the fusion conflict graph propagator (prunes order = MERGED)")


@subcommand("space-stats", "dead-end probability and depth of random descents",
            _space_stats_args)
def cmd_space_stats(args) -> int:
    root = load_candidate(args)
    t0 = time.perf_counter()
    out = space_stats(root, args.descents, args.seed, args.order)
    if not args.json:
        out["seconds"] = round(time.perf_counter() - t0, 3)
    _emit(out, args.json)
    return 0


def _explain_args(p) -> None:
    _kernel_args(p)
    p.add_argument("--trail", required=True,
                   help="JSON file: Candidate.to_json() or a list of decisions; the first "
                        "decision that dead-ends is explained")
    p.add_argument("--allow-other-kernel", action="store_true",
                   help="replay a --trail written for another kernel or space")
    p.add_argument("--choice", default=None,
                   help="NAME:OBJ1,OBJ2 — explain why every value of this open choice "
                        "dead-ends (when the trail replays)")
    p.add_argument("--ways-out", action="store_true",
                   help="also search, for each culprit, whether the trail without it leads "
                        "to an implementation (a witness; a few seconds a culprit)")


@subcommand("explain", "the earlier decisions that together cause a dead end (a minimal "
            "subset of the trail, checked), and the constraint that fails", _explain_args)
def cmd_explain(args) -> int:
    from .explain import describe, explain_trail, replay, ways_out
    root = load_candidate(argparse.Namespace(**{**vars(args), "trail": None}))
    data, trail, diff = read_trail_file(root, args.trail, args.allow_other_kernel)
    choice = None
    if args.choice:
        name, sep, objs = args.choice.partition(":")
        if not sep or not name:
            raise WorkbenchError(f"--choice: expected NAME:OBJ1,OBJ2, got {args.choice!r}")
        choice = (name, tuple(o for o in objs.split(",") if o))
    replayed = replay(root, trail)  # once: the explanation and the ways out share it
    if replayed[1] is None and not diff:  # it replays: to what it was saved with?
        check_replayed(data, replayed[0][-1], args.allow_other_kernel)
    ex = explain_trail(root.problem.root_problem.kernel, trail, space=root.space,
                       choice=choice, replayed=replayed)
    outs = (ways_out(ex.cand, ex, prefixes=replayed[0]) if args.ways_out and ex.verified
            else ())
    if args.json:
        print(json.dumps({**ex.to_dict(), **({"ways_out": [w.to_dict() for w in outs]}
                                             if args.ways_out else {})}))
    else:
        print(ex.text)
        print(f"verified: {ex.verified} ({ex.checks} checks)")
        for w in outs:  # the culprits by their names, as in the text
            print(f"drop `{describe(w.culprit, ex.cand)}`: {w.why}")
        if args.ways_out and not ex.verified:
            print("ways out not searched: the explanation is not verified")
    return 0


@subcommand("choices", "open choices of a candidate (root or --trail)", _candidate_args)
def cmd_choices(args) -> int:
    from .names import choice_label
    cand = load_candidate(args)
    chs = [{"name": c.name, "objects": list(c.objects), "values": list(c.values),
            "label": choice_label(cand, c.name, c.objects)} for c in cand.choices()]
    if args.json:
        print(json.dumps({"fixed": cand.is_fixed, "choices": chs}))
    else:
        for c in chs:  # objects by their names (workbench.names), not raw ids
            print(f"{c['label']} — {' | '.join(c['values'])}")
    return 0


@subcommand("codegen", "CUDA C, reference C and launch configuration of a fixed candidate "
                       "(--trail, or --random-seed)", _fixed_args)
def cmd_codegen(args) -> int:
    from .codegen import generate
    cand = load_fixed(args)
    if not cand.is_fixed:  # as `run` says it
        raise WorkbenchError(f"codegen needs a fixed candidate: {cand.open_count()} choices "
                             "are open (give a complete --trail or --random-seed)")
    g = generate(cand, "kernel")
    res = _resources(g, cand)
    if args.json:
        print(json.dumps({"cuda": g.cuda, "c": g.c, "launch": g.launch, "resources": res,
                          "candidate": json.loads(cand.to_json())}))
    else:
        print(g.cuda)
        print(f"// launch: {json.dumps(g.launch)}")
        print(f"// resources: {json.dumps(res)}")
    return 0


def _resources(g, cand) -> dict:
    """ptxas facts and occupancy of generated code (issue 21), or why none."""
    from .codegen.compile import CompileError, nvcc_path, resources
    if nvcc_path() is None:
        return {"error": "nvcc is not on PATH: no ptxas report"}
    try:
        return resources(g, cand.kernel.target.name)
    except CompileError as exc:
        return {"error": str(exc)[-2000:]}


def _bound_args(p) -> None:
    _candidate_args(p)
    p.add_argument("--target", default=None,
                   help="hardware target (a file of data/targets); default: the kernel's")
    p.add_argument("--lookahead", default=None, metavar="CHOICE:OBJ,OBJ",
                   help="also the bound after each value of this open choice")


@subcommand("bound", "lower bound on the run time of every implementation of a candidate, "
                     "with its justification tree", _bound_args)
def cmd_bound(args) -> int:
    from .model import bound
    from .model.justification import fmt_time
    from .model.lookahead import lookahead
    from .names import choice_label
    cand = load_candidate(args)
    b = bound(cand, args.target)
    out = {"value_ns": b.value_ns, "justification": b.justification.to_dict(),
           "target": b.target, "levels": b.levels}
    if args.lookahead:
        name, _, objs = args.lookahead.partition(":")
        objs = tuple(filter(None, objs.split(",")))
        kids = lookahead(cand, name, objs, args.target, parent=b)
        out["lookahead"] = {c.value: (c.value_ns if c.bound else None) for c in kids}
    if args.json:
        print(json.dumps(out))
    else:
        print(b.justification.render(depth=4))
        if args.lookahead:
            print(f"each value of {choice_label(cand, name, objs)} ({args.lookahead}):")
            # sizes in numeric order, other values as the engine lists them
            vals = sorted(out["lookahead"], key=lambda v: (0, int(v)) if v.isdigit() else (1, 0))
            for v in vals:
                ns = out["lookahead"][v]
                print(f"  {v}: {'dead end' if ns is None else fmt_time(ns, 4)}")
    return 0


def _climb_args(p) -> None:
    _candidate_args(p)
    p.add_argument("--target", default=None,
                   help="hardware target the bound is taken on (a file of data/targets); "
                        "default: the kernel's")
    p.add_argument("--moves", type=number(int, 0), default=100,
                   help="moves on the bound (default 100)")
    p.add_argument("--seed", type=int, default=0, help="of the descent and the moves")
    p.add_argument("--out", default=None,
                   help="write the implementation reached here (a trail file)")


@subcommand("climb", "an implementation of low bound below a candidate (root or --trail), by "
                     "the model alone: a random descent, then --moves moves on the bound "
                     "(search.climb; the candidate's decisions stay)", _climb_args)
def cmd_climb(args) -> int:
    from .errors import DeadEnd
    from .model import bound
    from .search.climb import climb
    start = load_candidate(args)
    if args.out:
        writable(args.out, "--out")
    rng = random.Random(args.seed)
    try:
        leaf = start if start.is_fixed else descent.random_fixed(start, rng)
    except DeadEnd as exc:
        raise WorkbenchError(f"no implementation below this candidate was reached: {exc}"
                             ) from None
    c = climb(start, leaf, lambda x: bound(x, args.target).value_ns, rng, steps=args.moves)
    if args.out:
        Path(args.out).write_text(c.candidate.to_json())
    out = {**c.to_dict(), "target": bound(c.candidate, args.target).target,
           "digest": c.candidate.digest(),
           "trail": [d.to_dict() for d in c.candidate.trail]}
    if args.json:
        print(json.dumps(out))
    else:
        from .model.justification import fmt_time
        cycles = out["target"].endswith("(cycles)")  # a basic block's
        shown = (lambda x: f"{x:,.0f} cycles") if cycles else (lambda x: fmt_time(x, 4))
        print(f"bound {shown(c.start_ns)} -> {shown(c.bound_ns)} on {out['target']} in "
              f"{c.steps} moves ({c.failed} reached no implementation)"
              + (f"; written to {args.out}" if args.out else ""))
    return 0


def _store(flag: str | None):
    """--store: a file, 'none' (keep no record) or the default store, checked
    writable before anything is measured (a run measured for seconds, then
    died on a store path under a file, its record lost)."""
    if flag == "none":
        return None
    from .runtime.records import RecordStore
    store = RecordStore.open(flag or "default")
    writable(store.path, "--store")
    return store


def writable(path, flag: str) -> Path:
    """`path` (a file a command writes when done), checked now: its folder
    exists or can be made, and it is not a folder. The error names `flag`."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkbenchError(f"{flag} {path}: cannot make its folder ({exc.strerror})") from None
    if path.is_dir():
        raise WorkbenchError(f"{flag} {path}: is a folder, not a file")
    if not os.access(path.parent, os.W_OK) or path.exists() and not os.access(path, os.W_OK):
        raise WorkbenchError(f"{flag} {path}: not writable")
    return path


def _run_args(p) -> None:
    _fixed_args(p)
    p.add_argument("--backend", choices=("cpu", "cuda"), default="cpu",
                   help="cpu: the reference C; cuda: the GPU (default cpu)")
    p.add_argument("--samples", type=number(int, 1), default=10,
                   help="timed runs (default 10; fewer are raised to 10)")
    p.add_argument("--store", default=None,
                   help="JSON-lines record file (default runs/runs.jsonl in the data "
                        "directory); 'none': keep none")


@subcommand("run", "measure a fixed candidate (--trail, or --random-seed) on a backend; "
                   "the record goes to the store", _run_args)
def cmd_run(args) -> int:
    from .runtime import evaluate, summary
    cand = load_fixed(args)
    if not cand.is_fixed:
        raise WorkbenchError(f"run needs a fixed candidate: {cand.open_count()} choices "
                             "are open (give a complete --trail or --random-seed)")
    rec = evaluate([cand], args.backend, store=_store(args.store), samples=args.samples)[0]
    _emit(summary(rec), args.json)
    return 0


def _calibrate_args(p) -> None:
    p.add_argument("--backend", choices=("cuda", "cpu"), default="cuda",
                   help="cuda: the GPU (targets/<device>.json); cpu: this host's core as the "
                        "reference executor runs it (targets/cpu-<model>.json)")
    p.add_argument("--out", default=None, help="folder for the target file")
    p.add_argument("--json", action="store_true", help="print one JSON object")


@subcommand("calibrate", "measure the GPU's (or with --backend cpu this host's) bandwidths, "
                         "FMA throughput and latencies; write targets/<device>.json in the "
                         "data directory", _calibrate_args)
def cmd_calibrate(args) -> int:
    from .runtime.calibrate import calibrate, calibrate_cpu
    path = calibrate_cpu(args.out) if args.backend == "cpu" else calibrate(args.out)
    _emit({"target": path.stem, "path": str(path)}, args.json)
    return 0


def _campaign_args(p) -> None:
    p.add_argument("--backend", choices=("cuda", "cpu"), default="cuda",
                   help="cuda: the GPU campaign; cpu: the same pipeline on the reference C")
    p.add_argument("--minutes", type=number(float, 0, above=True), default=25.0,
                   help="time budget (default 25)")
    p.add_argument("--out", default=None,
                   help="campaign folder (default data/gpu/<device>/; cpu: data/campaign-cpu/)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and counts: the dry run the test suite makes")
    p.add_argument("--seed", type=int, default=0, help="of the random candidates (default 0)")
    p.add_argument("--workers", type=number(int, 0), default=None,
                   help="processes drawing candidates (default one per core but one; 0: none)")
    p.add_argument("--stages", default="",
                   help="comma-separated measuring stages to run (correctness, random, "
                        "search, forced; default all; calibration and the report always run)")
    p.add_argument("--kernels", default="",
                   help="comma-separated thesis kernels the search and forced stages run (e.g. "
                        "'matmul 1024,axpy'; default all of Table 6.2)")
    p.add_argument("--n-correct", type=number(int, 0), default=None,
                   help="random fixed candidates per kernel checked against numpy (50)")
    p.add_argument("--n-random", type=number(int, 0), default=None,
                   help="random implementations timed per kernel (1000)")
    p.add_argument("--climb", type=number(int, 0), default=None, metavar="MOVES",
                   help="moves on the bound polishing each search rollout before it is "
                        "measured (default 64; 0: the thesis's rollouts)")
    p.add_argument("--draw-only", action="store_true",
                   help="only draw and cache the random candidates (data/campaign/drawn/), "
                        "on any machine, ahead of a GPU session")
    p.add_argument("--report-only", action="store_true",
                   help="redraw the report of the campaign in --out (any machine), with the "
                        "bounds of today's model beside the recorded ones")
    p.add_argument("--target", default=None,
                   help="with --report-only: the table to bound on (default: the campaign's "
                        "target.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


@subcommand("campaign", "everything a GPU must show, from one command: calibration, "
                        "correctness, bound against measured, random implementations, "
                        "TAG searches, a report in data/gpu/<device>/ (budgeted, resumable)",
            _campaign_args)
def cmd_campaign(args) -> int:
    from .campaign import draw_ahead, report_only, run_campaign
    opts = {"backend": args.backend, "minutes": args.minutes, "quick": args.quick,
            "seed": args.seed, "workers": args.workers,
            "out": Path(args.out) if args.out else None}
    split = lambda text: tuple(x.strip() for x in text.split(",") if x.strip())  # noqa: E731
    if args.stages:
        opts["stages"] = split(args.stages)
    if args.kernels:
        opts["thesis_kernels"] = split(args.kernels)
    for name in ("n_correct", "n_random", "climb"):
        if getattr(args, name) is not None:
            opts[name] = getattr(args, name)
    if args.report_only and args.draw_only:
        raise WorkbenchError("campaign: --report-only and --draw-only exclude each other")
    if args.draw_only and args.out:
        raise WorkbenchError("campaign --draw-only writes its trails where a campaign reads "
                             "them (campaign/drawn/ in the data directory, WORKBENCH_DATA to "
                             "move it); --out names a campaign's own folder")
    if args.target is not None and not args.report_only:
        raise WorkbenchError("campaign --target is read with --report-only only (a campaign "
                             "bounds on the table its calibration writes)")
    if args.report_only:
        if not args.out:
            raise WorkbenchError("campaign --report-only needs --out (a campaign folder)")
        out = report_only(Path(args.out), args.target)
    else:
        out = draw_ahead(**opts) if args.draw_only else run_campaign(**opts)
    if args.json:
        print(json.dumps(out, default=str))
    else:
        for k in ("out", "stages", "soundness", "soundness_now", "fig_5_1", "fig_5_1_now",
                  "drawn", "cache"):
            if k in out:
                print(f"{k}: {json.dumps(out[k], default=str)[:400]}")
    return 0


def _search_args(p) -> None:
    _candidate_args(p)
    p.add_argument("--backend", choices=("cpu", "cuda"), default="cpu", help="default cpu")
    p.add_argument("--budget", type=number(int, 1), default=200,
                   help="evaluations in all (default 200; with --resume, those before count)")
    p.add_argument("--time", type=number(float, 0, above=True), default=None,
                   help="time limit in seconds")
    p.add_argument("--workers", type=number(int, 0), default=None,
                   help="dask LocalCluster workers (default: one per core; 0: this process)")
    p.add_argument("--scheduler", default=None, help="address of an existing dask scheduler")
    p.add_argument("--policy", choices=("tag", "uct"), default="tag",
                   help="tag: TAG (thesis eq. 6.1, default); uct: UCT")
    p.add_argument("--top-k", type=number(int, 1), default=10,
                   help="TAG: best times kept per node")
    p.add_argument("--delta", type=number(float, 0), default=1.0,
                   help="TAG: exploration constant δ")
    p.add_argument("--order", choices=order_names(), default="thesis",
                   help="the choice order of descents (default thesis)")
    p.add_argument("--seed", type=int, default=0, help="of the descents (default 0)")
    p.add_argument("--samples", type=number(int, 1), default=10,
                   help="timed runs per evaluation (default 10)")
    p.add_argument("--climb", type=number(int, 0), default=0, metavar="MOVES",
                   help="moves on the bound that polish each rollout's leaf before it is "
                        "measured (default 0: measured as the rollout ends)")
    p.add_argument("--climb-from-best", type=number(float, 0, high=1), default=0.0, metavar="SHARE",
                   help="with --climb: the share of rollouts whose climb starts from the "
                        "fastest implementation measured so far (default 0)")
    p.add_argument("--store", default=None,
                   help="JSON-lines record file (default runs/runs.jsonl in the data "
                        "directory); 'none': keep none (nor can it be resumed)")
    p.add_argument("--resume", default=None, metavar="SEARCH_ID",
                   help="continue a search from its records in the store")
    p.add_argument("--out", default=None, help="write the best candidate (JSON) here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


@subcommand("search", "TAG-MCTS search with bound pruning from the root or a --trail "
                      "candidate; every evaluation goes to the store", _search_args)
def cmd_search(args) -> int:
    from .search import TAG, Search
    start = load_candidate(args)
    if args.out:
        writable(args.out, "--out")
    client = None
    if args.scheduler:
        from distributed import Client
        try:
            client = Client(args.scheduler, timeout=10)  # a closed port waited 30 s
        except (ValueError, OSError, TimeoutError) as exc:
            raise WorkbenchError(f"--scheduler {args.scheduler!r}: no dask scheduler there "
                                 f"({type(exc).__name__}: {exc})") from None
    workers = (os.cpu_count() or 1) if args.workers is None else args.workers
    bar = None

    def progress(ev):
        if bar is not None:
            bar.update(1)
            if ev["best_ns"]:
                bar.set_postfix(best=f"{ev['best_ns'] / 1e3:,.1f}us", refresh=False)
    policy = TAG(args.top_k, args.delta) if args.policy == "tag" else args.policy
    s = Search(start, args.backend, budget=args.budget, time_s=args.time, policy=policy,
               order=args.order, workers=workers, client=client,
               store=_store(args.store), resume=args.resume, seed=args.seed,
               samples=args.samples, climb=args.climb,
               climb_from_best=args.climb_from_best, callbacks=[progress])
    print(f"search {s.search_id}" + ("" if s.store is None else
                                      f" (continue it with --resume {s.search_id})"),
          file=sys.stderr, flush=True)
    if not args.no_progress:
        from tqdm import tqdm
        bar = tqdm(total=args.budget, initial=s.evaluations, file=sys.stderr, unit="eval",
                   desc=args.kernel)
    try:
        out = s.run()
    finally:
        if bar is not None:
            bar.close()
    best = s.best_candidate()
    if args.out and best is not None:
        Path(args.out).write_text(best.to_json())
        out["out"] = args.out
    _emit(out, args.json)
    return 0


def _reproduce_args(p) -> None:
    p.add_argument("--tables", default="6.1,6.2,6.3,order",
                   help="any of 6.1, 6.2 (read from data/gpu/), 6.3, order (the §6.3.3 "
                        "experiment: matmul 1024 in its own orders, whatever --kernels)")
    p.add_argument("--kernels", default=None,
                   help="comma-separated labels (default all: axpy, matmul 256, ...)")
    p.add_argument("--probes", type=number(int, 1), default=200,
                   help="Knuth probes per estimate")
    p.add_argument("--chen-probes", type=number(int, 0), default=0,
                   help="Chen probes (slow) per kernel")
    p.add_argument("--seed", type=int, default=0, help="of the probes (default 0)")
    p.add_argument("--orders", default="thesis",
                   help="comma-separated choice orders Table 6.3 is measured in "
                        f"(any of {', '.join(order_names())}; default thesis)")
    p.add_argument("--out", default=None, help="also write the result as JSON here")
    p.add_argument("--json", action="store_true")


@subcommand("reproduce-search", "thesis Tables 6.1 and 6.3 and the §6.3.3 order experiment, "
                                "beside the thesis figures", _reproduce_args)
def cmd_reproduce_search(args) -> int:
    from .search import thesis
    labels = ([x.strip() for x in args.kernels.split(",")] if args.kernels
              else list(thesis.KERNELS))
    unknown = [x for x in labels if x not in thesis.KERNELS]
    if unknown:
        raise WorkbenchError(f"unknown kernel label(s) {', '.join(unknown)}; known: "
                             f"{', '.join(thesis.KERNELS)}")
    tables = tuple(x.strip() for x in args.tables.split(",") if x.strip())
    bad = [x for x in tables if x not in thesis.TABLES]
    if bad or not tables:
        raise WorkbenchError(f"unknown table(s) {', '.join(bad) or repr(args.tables)}; known: "
                             f"{', '.join(thesis.TABLES)}")
    orders = tuple(x.strip() for x in args.orders.split(",") if x.strip())
    bad = [x for x in orders if x not in order_names()]
    if bad or not orders:
        raise WorkbenchError(f"unknown choice order(s) {', '.join(bad) or repr(args.orders)}; "
                             "known: "
                             f"{', '.join(order_names())}")
    if args.out:
        writable(args.out, "--out")
    out = thesis.reproduce(tables, tuple(labels), args.probes,
                           args.chen_probes, args.seed, orders=orders)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out) if args.json else thesis.render(out))
    return 0


def _volume_args(p) -> None:
    p.add_argument("--spec", required=True, help="volume spec JSON (see docs/volume-spec.md)")
    p.add_argument("--output", default=None, help="which value (default: the spec's output)")
    p.add_argument("--tile", default=None, metavar="DIM=SIZE,...",
                   help="also classify tiles, e.g. 2=16,3=16")
    p.add_argument("--json", action="store_true")


@subcommand("volume-regions", "sparsity regions of a volume program's output (volume model): "
                              "dense, constant-dependent, static, edges, corners", _volume_args)
def cmd_volume_regions(args) -> int:
    from .volume import Program, regions, tile
    reg = regions(Program.from_spec(Path(args.spec)), args.output)
    out = reg.to_dict()
    if args.tile:
        try:
            sizes = {int(k): int(v) for k, v in
                     (part.split("=", 1) for part in args.tile.split(","))}
        except ValueError:
            raise WorkbenchError(f"--tile: expected DIM=SIZE,..., got {args.tile!r}") from None
        out["tiling"] = tile(reg, sizes).to_dict()
    _emit(out, args.json)
    return 0


def _audit_args(p) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="record files (default: runs/**/*.jsonl and gpu/*/*.jsonl of the data "
                        "directory)")
    p.add_argument("--target", default=None,
                   help="bound on this table (default: each record's own)")
    p.add_argument("--json", action="store_true")


@subcommand("audit", "stored measurements against today's bound: how many are sound, split by "
                     "whether each timed the program today's code generator prints",
            _audit_args)
def cmd_audit(args) -> int:
    from .campaign.audit import audit, audit_lines
    if args.target is not None:
        from .model.hardware import hardware
        hardware(args.target)  # an unknown table is an error before minutes of replaying
    out = audit(args.files, args.target)
    if args.json:
        print(json.dumps(out, default=str))
    else:
        print("\n".join(audit_lines(out, args.target)))
    return 0


def _check_space_args(p) -> None:
    p.add_argument("path")
    p.add_argument("--json", action="store_true")


@subcommand("check-space", "parse and type-check a .space file", _check_space_args)
def cmd_check_space(args) -> int:
    sp = load_space(args.path)
    out = {"space": sp.name, "sets": len(sp.sets), "choices": len(sp.visible_choices()),
           "constraints": len(sp.constraints), "counters": len(sp.counters),
           "triggers": len(sp.triggers)}
    _emit(out, args.json)
    return 0


# -------------------------------------------------------------------- main
def parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="python -m workbench",
        description="Candidate Workbench: explore partially specified GPU kernel "
                    "implementations (candidates) from the command line.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for sc in SUBCOMMANDS.values():
        sc.arguments(sub.add_parser(sc.name, help=sc.help))
    return ap


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # raised, so that --json can print it as data
        raise _UsageError(f"{self.prog}: {message}")


# what a user did wrong, by exception type: the `kind` of a --json error (a
# KeyError is ours: input documents are checked where they are read, and a
# missing key said as the WorkbenchError naming it)
_INPUT_ERRORS = (WorkbenchError, OSError, json.JSONDecodeError, UnicodeDecodeError,
                 RecursionError, _UsageError)


def _kind(exc: BaseException) -> str:
    if isinstance(exc, _UsageError):
        return "usage"
    if isinstance(exc, WorkbenchError):
        return type(exc).__name__
    if isinstance(exc, OSError):
        return "file"
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return "format"
    if isinstance(exc, RecursionError):
        return "too_deep"
    return "internal"


def _fail(exc: BaseException, as_json: bool) -> int:
    """An error as data: with --json, {"error", "kind"} on stdout; always a
    line on stderr; a traceback only for an error of the workbench itself."""
    kind = _kind(exc)
    text = str(exc) or type(exc).__name__
    if kind == "internal":
        import traceback
        traceback.print_exc(file=sys.stderr)
        text = f"internal error ({type(exc).__name__}): {text}"
    if as_json:
        print(json.dumps({"error": text, "kind": kind}))
    print(f"error: {text}", file=sys.stderr)
    return 2 if kind != "internal" else 1


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # argparse takes "--jso" for "--json": before parsing, a prefix counts too
    as_json = any(len(a) > 3 and "--json".startswith(a) for a in argv)
    ap = parser()
    try:
        args = ap.parse_args(argv)
    except _UsageError as exc:
        if not as_json:
            ap.print_usage(sys.stderr)
        return _fail(exc, as_json)
    as_json = bool(getattr(args, "json", False))
    if args.command is None:  # no command: the list of them, and a usage exit
        ap.print_help(sys.stderr)
        return 2
    try:
        return SUBCOMMANDS[args.command].run(args)
    except _INPUT_ERRORS as exc:
        return _fail(exc, as_json)
    except KeyboardInterrupt:
        return _fail(WorkbenchError("interrupted"), as_json)
    except Exception as exc:  # noqa: BLE001 - a bug of ours, still reported as data
        return _fail(exc, as_json)


__all__ = ["SUBCOMMANDS", "Subcommand", "main", "parse_sizes", "parser", "space_stats",
           "subcommand"]
