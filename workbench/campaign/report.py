"""What a campaign's records say: the soundness count (bound ≤ every measured
time), Fig. 5.1 (the CDF of measured / bound), Table 6.2 (the search's best
against the reference, beside the thesis's), correctness by kernel, ptxas
facts; written as `report.md`, `summary.json` and SVG figures. Every
function here reads rows of the record store (dicts), so the same code
reads a finished campaign on any machine (`campaign.data`)."""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import statistics
from pathlib import Path

from ..model.justification import fmt_time
from ..runtime.records import RecordStore
from ..search.thesis import fmt_speedup
from .bounds import CHANGED, PROGRAMS, SAME, UNKNOWN, bounds_now, measured, programs_now

# thesis Fig. 5.1: share of implementations within 10× of their bound
THESIS_FIG_5_1_WITHIN_10X = 0.70
GOAL_WITHIN_10X = 0.90


def soundness(rows, key: str = "bound_ns") -> dict:
    """Bound ≤ the fastest sample, over every measured record: the count, the
    share, and the worst ratio bound / fastest with its candidate."""
    rs = [r for r in measured(rows) if r.get(key)]
    worst, worst_row, bad = 0.0, None, []
    for r in rs:
        ratio = r[key] / min(r["times_ns"])
        if ratio > worst:
            worst, worst_row = ratio, r
        if ratio > 1.0:
            bad.append(r)
    out = {"bound": key, "records": len(rs), "sound": len(rs) - len(bad),
           "share_sound": (len(rs) - len(bad)) / len(rs) if rs else None,
           "worst_ratio": worst if rs else None}
    if worst_row is not None:
        out["worst"] = _which(worst_row, key)
    out["counterexamples"] = [_which(r, key) for r in sorted(
        bad, key=lambda r: -r[key] / min(r["times_ns"]))[:10]]
    return out


def by_program(bounded) -> dict:
    """{SAME, CHANGED, UNKNOWN: `soundness` of today's bound} over rows that
    carry `bound_now_ns` (`bounds_now`), by `programs_now`."""
    now = programs_now(bounded)
    return {kind: soundness([r for r in now if r["source_now"] == kind], "bound_now_ns")
            for kind in (SAME, CHANGED, UNKNOWN)}


def _which(r, key: str = "bound_ns") -> dict:
    return {"kernel": r.get("kernel"), "sizes": r.get("sizes"), "digest": r.get("digest"),
            "bound_ns": r.get(key), "recorded_bound_ns": r.get("bound_ns"),
            "min_ns": min(r["times_ns"]),
            "bound_registers_ns": r.get("x_bound_registers_ns"),
            "stage": (r.get("x_campaign") or {}).get("stage")
            or ("search" if r.get("search") else None), "trail": r.get("trail")}


def fig_5_1(rows, key: str = "bound_ns") -> dict:
    """measured (median) / bound, sorted, for the `ok` records; the share
    within 10× beside the thesis's 70 % and the 90 % goal."""
    ratios = sorted(r["median_ns"] / r[key] for r in measured(rows)
                    if r["status"] == "ok" and r.get("median_ns") and r.get(key))
    within = sum(1 for x in ratios if x <= 10.0)
    return {"ratios": ratios, "n": len(ratios),
            "share_within_10x": within / len(ratios) if ratios else None,
            "median_ratio": statistics.median(ratios) if ratios else None,
            "thesis_share_within_10x": THESIS_FIG_5_1_WITHIN_10X,
            "goal_share_within_10x": GOAL_WITHIN_10X}


def population(r: dict) -> str:
    """Which drawing a record comes from: `random` (the correctness and
    random stages' uniform descents: the thesis's Fig. 5.1 population, 35,000
    random matmul implementations), `search` (rollouts a search steered
    towards low bounds, so towards the model's blind spots) or `other`."""
    if (r.get("x_campaign") or {}).get("stage") in ("correctness", "random"):
        return "random"
    return "search" if r.get("search") else "other"


ORIGINS = {"random": "random implementations", "search": "TAG search rollouts",
           "forced": "recipes forced by hand", "other": "other runs"}


def origin(r: dict) -> str:
    """How a record's implementation was chosen, finer than `population`:
    `random`, `forced` (a recipe of `recipes.PLANS` forced by the campaign's
    forced stage with a search for the rest, or benchmarks/gpu_expert.py's
    recipe: tagged `x_expert`, or read by `data.gpu_rows` from a folder's
    expert.jsonl), `search` (a TAG search of the whole space, the forced
    stage's search below its recipes included) or `other` (`ORIGINS` names
    them)."""
    if population(r) == "random":
        return "random"
    sid = str((r.get("search") or {}).get("id") or "")
    from .searches import BELOW
    if r.get("x_expert") or r.get("gpu_file") == "expert.jsonl" or (
            sid.startswith("forced-") and f"-{BELOW}-" not in sid):
        return "forced"
    return "search" if sid else "other"


def fig_5_1_by_population(rows, key: str = "bound_ns") -> dict:
    """`fig_5_1`'s share and median for each `population` (no ratios)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(population(r), []).append(r)
    return {p: {k: v for k, v in fig_5_1(g, key).items() if k in ("n", "share_within_10x",
                                                                   "median_ratio")}
            for p, g in sorted(groups.items())}


def statuses(rows, stage: str) -> dict:
    """label -> {status: count} for one stage's records."""
    out: dict = {}
    for r in rows:
        c = r.get("x_campaign") or {}
        if c.get("stage") == stage:
            d = out.setdefault(c.get("label"), {})
            d[r["status"]] = d.get(r["status"], 0) + 1
    return out


def random_stage(rows) -> dict:
    """Per kernel of the random stage: counts, best and median time, the
    reference's median, and how many beat it."""
    out = {}
    by: dict = {}
    for r in rows:
        c = r.get("x_campaign") or {}
        if c.get("stage") == "random":
            by.setdefault(c.get("label"), []).append(r)
    for label, rs in by.items():
        ok = [r["median_ns"] for r in rs if r["status"] == "ok" and r.get("median_ns")]
        refs = [r["reference_median_ns"] for r in rs if r.get("reference_median_ns")]
        ref = statistics.median(refs) if refs else None
        out[label] = {"records": len(rs), "ok": len(ok),
                      "best_ns": min(ok) if ok else None,
                      "median_ns": statistics.median(ok) if ok else None,
                      "reference": next((r["reference"] for r in rs if r.get("reference")), None),
                      "reference_median_ns": ref,
                      "beat_reference": sum(1 for t in ok if ref and t < ref)}
    return out


def ptxas_facts(rows) -> dict:
    """How many records carry ptxas facts, the share that spill, registers."""
    fs = [r["x_ptxas"] for r in rows if r.get("x_ptxas")]
    regs = [f["registers"] for f in fs]
    spill = sum(1 for f in fs if f.get("spill_stores") or f.get("spill_loads"))
    return {"records": len(fs), "spilling": spill,
            "share_spilling": spill / len(fs) if fs else None,
            "median_registers": statistics.median(regs) if regs else None,
            "max_registers": max(regs) if regs else None,
            "device_registers_differ": sum(
                1 for r in rows if r.get("x_ptxas") and r.get("x_registers")
                and r["x_registers"] != r["x_ptxas"]["registers"])}


def _axpy_bandwidth(row: dict, sizes: dict | None, target: dict | None) -> None:
    """axpy's bytes per second (x and y read, z written) in `row`, and its
    share of the fastest copy measured: the calibration's grid-stride copy,
    or a faster one `benchmarks/gpu_copy.py` timed (`write_report` adds it)."""
    ours = row.get("best_ns")
    if not ours or not sizes:
        return
    row["bytes_per_s"] = 12 * sizes.get("n", 0) / (ours * 1e-9)
    got = (target or {}).get("measured") or {}
    copy = max((got.get(k) or 0 for k in ("dram_bytes_per_s", "best_copy_bytes_per_s")),
               default=0)
    if copy:
        row["share_of_copy_bandwidth"] = row["bytes_per_s"] / copy


def _kernel_key(builder, sizes) -> tuple:
    """(builder, its sizes as JSON, the spec's `builder` left out): records
    of one kernel at one size share it."""
    sizes = {k: v for k, v in (sizes or {}).items() if k != "builder"}
    return builder, json.dumps(sizes, sort_keys=True)


def references(records) -> dict:
    """(builder, sizes as JSON) -> the median, least and largest of the
    reference medians every record of that kernel carries, and how many:
    one record's reference is one timing of the library (the H200's batched
    matmul read 9.6–105 µs across a session), so a ratio to it is read
    against all of them."""
    by: dict = {}
    for r in records or ():
        if r.get("reference_median_ns"):
            by.setdefault(_kernel_key(r.get("kernel"), r.get("sizes")), []).append(
                r["reference_median_ns"])
    return {k: {"median_ns": statistics.median(v), "min_ns": min(v), "max_ns": max(v),
                "records": len(v)} for k, v in by.items()}


def _reference(row: dict, own: float | None, key: tuple, refs: dict) -> None:
    """`row`'s reference: the median over the folder's records of the kernel
    and sizes `key` (`references`), its range beside; `own`, the reference
    timed in the row's own runs, where the folder holds no other."""
    ref = refs.get(key)
    row["reference_own_ns"] = own
    row["reference_ns"] = ref["median_ns"] if ref else own
    row["reference_range_ns"] = (ref["min_ns"], ref["max_ns"]) if ref else None
    row["reference_records"] = ref["records"] if ref else (1 if own else 0)
    ours = row.get("best_ns")
    row["speedup"] = row["reference_ns"] / ours if ours and row["reference_ns"] else None


def _evaluations(row: dict) -> str:
    """A search's evaluations, and the climb on the bound its rollouts took."""
    n = row.get("evaluations") or "—"
    return f"{n} (climb {row['climb']})" if row.get("climb") else str(n)


def table_6_2(state: dict, target: dict | None = None, records=None) -> list:
    """The searches' best beside the reference and the thesis's Table 6.2
    (speed-up = reference time / our time; the thesis's on a Quadro K4000).
    `records`: the folder's, whose references give the median one
    (`references`)."""
    from ..search.thesis import KERNELS, THESIS_6_2
    res = ((state.get("stages") or {}).get("search") or {}).get("kernels") or {}
    refs = references(records)
    rows = []
    for label in KERNELS:
        got = res.get(label) or {}
        ours = got.get("best_ns")
        th_ours, th_ref = THESIS_6_2[label]
        row = {"kernel": label, "best_ns": ours, "reference": got.get("reference"),
               "evaluations": got.get("evaluations"), "climb": got.get("climb"),
               "sizes": got.get("sizes"),
               "thesis_best_ns": th_ours, "thesis_reference_ns": th_ref,
               "thesis_speedup": th_ref / th_ours}
        _reference(row, got.get("reference_median_ns"),
                   _kernel_key(KERNELS[label][0], got.get("sizes")), refs)
        if label == "axpy":
            _axpy_bandwidth(row, got.get("sizes"), target)
        rows.append(row)
    return rows


def forced_table(state: dict, target: dict | None = None, records=None) -> list:
    """Per plan of the `forced` stage (a recipe forced, a search for the
    rest): its best beside the reference (as in `table_6_2`), or why the
    recipe did not apply."""
    from ..search.thesis import KERNELS
    res = ((state.get("stages") or {}).get("forced") or {}).get("plans") or {}
    refs = references(records)
    rows = []
    for name, got in res.items():
        row = {"plan": name, "kernel": got.get("kernel"), "best_ns": got.get("best_ns"),
               "reference": got.get("reference"),
               "evaluations": got.get("evaluations"), "climb": got.get("climb"),
               "open_choices": got.get("open_choices"),
               "error": got.get("error"), "beat_ns": got.get("beat_ns"),
               "stopped": got.get("stopped")}
        builder = KERNELS.get(got.get("kernel"), (None,))[0]
        _reference(row, got.get("reference_median_ns"), _kernel_key(builder, got.get("sizes")),
                   refs)
        if got.get("kernel") == "axpy":
            _axpy_bandwidth(row, got.get("sizes"), target)
        rows.append(row)
    return rows


GOALS = {"axpy": "≥ 90 % of the measured copy bandwidth", "matmul 256": "≥ 1.5× cuBLAS",
         "matmul 1024": "≥ 0.85× cuBLAS"}


# ---------------------------------------------------------------- figures
def _svg(width, height, body, title) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"font-family='sans-serif' font-size='11'><rect width='100%' height='100%' "
            f"fill='white'/><text x='{width / 2}' y='16' text-anchor='middle' "
            f"font-size='13'>{html.escape(title)}</text>{body}</svg>\n")


def _logscale(lo, hi, a, b):
    lo, hi = math.log10(lo), math.log10(hi)
    span = (hi - lo) or 1.0
    return lambda v: a + (math.log10(v) - lo) / span * (b - a)


def _decades(lo, hi):
    return [10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def cdf_svg(ratios, title="Fig. 5.1: CDF of measured / bound") -> str:
    """Step CDF of `ratios` on a log x axis, with the 10× line."""
    w, h, lm, r, t, b = 520, 300, 50, 20, 30, 40
    if not ratios:
        return _svg(w, h, f"<text x='{w / 2}' y='{h / 2}' text-anchor='middle'>no measured "
                    "record</text>", title)
    lo, hi = min(min(ratios), 1.0), max(max(ratios), 10.0)
    ticks = _decades(lo, hi)
    x = _logscale(ticks[0], ticks[-1], lm, w - r)

    def y(v):
        return h - b - v * (h - b - t)
    pts, n = [], len(ratios)
    for i, v in enumerate(ratios):
        pts += [f"{x(v):.1f},{y(i / n):.1f}", f"{x(v):.1f},{y((i + 1) / n):.1f}"]
    body = [f"<polyline fill='none' stroke='#1f77b4' stroke-width='1.5' points='{' '.join(pts)}'/>",
            f"<line x1='{x(10):.1f}' y1='{t}' x2='{x(10):.1f}' y2='{h - b}' stroke='#d62728' "
            "stroke-dasharray='4'/>",
            f"<text x='{x(10) + 3:.1f}' y='{t + 12}' fill='#d62728'>10×</text>",
            f"<line x1='{lm}' y1='{h - b}' x2='{w - r}' y2='{h - b}' stroke='black'/>",
            f"<line x1='{lm}' y1='{t}' x2='{lm}' y2='{h - b}' stroke='black'/>",
            f"<text x='{(lm + w - r) / 2}' y='{h - 8}' text-anchor='middle'>measured / bound"
            "</text>"]
    for v in ticks:
        body.append(f"<text x='{x(v):.1f}' y='{h - b + 14}' text-anchor='middle'>{v:g}</text>")
    for q in (0, 0.5, 1):
        body.append(f"<text x='{lm - 4}' y='{y(q) + 4:.1f}' text-anchor='end'>{q:g}</text>")
    return _svg(w, h, "".join(body), title)


def scatter_svg(rows, title="bound against measured (fastest sample)") -> str:
    """log-log scatter of bound against the fastest sample, with y = x."""
    w, h, lm, r, t, b = 520, 360, 60, 20, 30, 40
    pts = [(x["bound_ns"], min(x["times_ns"])) for x in measured(rows)]
    if not pts:
        return _svg(w, h, f"<text x='{w / 2}' y='{h / 2}' text-anchor='middle'>no measured "
                    "record</text>", title)
    lo = min(min(p) for p in pts)
    hi = max(max(p) for p in pts)
    ticks = _decades(lo, hi)
    x = _logscale(ticks[0], ticks[-1], lm, w - r)
    yy = _logscale(ticks[0], ticks[-1], h - b, t)
    body = [f"<line x1='{x(ticks[0]):.1f}' y1='{yy(ticks[0]):.1f}' x2='{x(ticks[-1]):.1f}' "
            f"y2='{yy(ticks[-1]):.1f}' stroke='#888' stroke-dasharray='4'/>"]
    for bx, my in pts:
        colour = "#d62728" if bx > my else "#1f77b4"
        body.append(f"<circle cx='{x(bx):.1f}' cy='{yy(my):.1f}' r='2' fill='{colour}' "
                    "fill-opacity='0.6'/>")
    for v in ticks:
        body.append(f"<text x='{x(v):.1f}' y='{h - b + 14}' text-anchor='middle'>{v:g}</text>")
        body.append(f"<text x='{lm - 4}' y='{yy(v) + 4:.1f}' text-anchor='end'>{v:g}</text>")
    body.append(f"<text x='{(lm + w - r) / 2}' y='{h - 8}' text-anchor='middle'>bound (ns); "
                "red: above the measured time</text>")
    return _svg(w, h, "".join(body), title)


# ---------------------------------------------------------------- report
def expert_table(rows, records=()) -> list:
    """Per forced-by-hand plan (`x_expert`: benchmarks/gpu_expert.py), its
    completions' best median, fastest sample, bound and reference median
    (over these and the folder's `records`, as in `table_6_2`)."""
    every = references([*records, *rows])
    plans: dict = {}
    for r in rows:
        e = r.get("x_expert")
        if not e:  # measured before records were tagged: one plan per bound
            sizes = " ".join(f"{k}={v}" for k, v in (r.get("sizes") or {}).items()
                             if k != "builder")
            e = {"label": f"{r.get('kernel')} {sizes} (bound {fmt_time(r.get('bound_ns'))})"}
        key = (e.get("label"), json.dumps(e.get("tiles"), sort_keys=True))
        plans.setdefault(key, []).append(r)
    out = []
    for (label, tiles), rs in plans.items():
        ok = [r for r in rs if r.get("status") == "ok" and r.get("median_ns")]
        best = min((r["median_ns"] for r in ok), default=None)
        refs = [r["reference_median_ns"] for r in rs if r.get("reference_median_ns")]
        row = {"label": label, "tiles": json.loads(tiles), "records": len(rs),
               "ok": len(ok), "best_ns": best,
               "fastest_ns": min((min(r["times_ns"]) for r in ok), default=None),
               "bound_ns": min((r["bound_ns"] for r in rs if r.get("bound_ns")), default=None),
               "reference": next((r["reference"] for r in rs if r.get("reference")), None)}
        _reference(row, statistics.median(refs) if refs else None,
                   _kernel_key(rs[0].get("kernel"), rs[0].get("sizes")), every)
        out.append(row)
    return out


def summarize(rows, state: dict, target: dict | None = None) -> dict:
    fig = fig_5_1(rows)
    return {"device": state.get("device"), "backend": state.get("backend"),
            "quick": state.get("quick"), "runs": state.get("runs"),
            "records": len(rows), "measured": len(measured(rows)),
            "stages": {k: v.get("status") for k, v in (state.get("stages") or {}).items()},
            "stage_errors": {k: v["error"] for k, v in (state.get("stages") or {}).items()
                             if v.get("error")},
            "correctness": statuses(rows, "correctness"),
            "soundness": soundness(rows),
            "soundness_registers": soundness(rows, "x_bound_registers_ns"),
            "fig_5_1": {k: v for k, v in fig.items() if k != "ratios"},
            "fig_5_1_by_population": fig_5_1_by_population(rows),
            "random": random_stage(rows), "ptxas": ptxas_facts(rows),
            "table_6_2": table_6_2(state, target, rows),
            "forced": forced_table(state, target, rows)}


def with_current_bounds(s: dict, rows, target=None) -> dict:
    """`s` (a summary) with `soundness_now` and `fig_5_1_now`: the same
    counts with the bounds of today's model (`current_bounds`)."""
    now = bounds_now(rows, target=target)  # cached: the Timings tab and a redraw share it
    fig = fig_5_1(now, "bound_now_ns")
    s["soundness_now"] = soundness(now, "bound_now_ns")
    s["soundness_now"]["not_replayed"] = sum(1 for r in now if "bound_now_error" in r)
    # whether each record timed the program today's printer writes (`audit`)
    s["soundness_now"]["by_program"] = {
        k: {x: v[x] for x in ("records", "sound", "worst_ratio")}
        for k, v in by_program([r for r in now if "bound_now_ns" in r]).items()}
    s["fig_5_1_by_population_now"] = fig_5_1_by_population(now, "bound_now_ns")
    # the ratios stay, so that a reader draws the CDF without replaying
    s["fig_5_1_now"] = {**{k: v for k, v in fig.items() if k != "ratios"},
                        "ratios": [float(f"{x:.4g}") for x in fig["ratios"]]}  # last: long
    return s


def _ref_md(r: dict) -> str:
    """A row's reference: its median, and the range over its records."""
    text = fmt_time(r.get("reference_ns"))
    lo_hi, n = r.get("reference_range_ns"), r.get("reference_records") or 0
    if lo_hi and n > 1:
        text += f" (median of {n}: {fmt_time(lo_hi[0])}–{fmt_time(lo_hi[1])})"
    return text


def _pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


_POPULATIONS = {"random": "random implementations (uniform descents: the thesis's population)",
                "search": "the searches' rollouts (steered to low bounds)", "other": "other"}


def _populations_md(s: dict) -> list:
    """Fig. 5.1's share per population, recorded bounds and today's."""
    by, now = s.get("fig_5_1_by_population") or {}, s.get("fig_5_1_by_population_now") or {}
    if not by:
        return []
    out = ["| Fig. 5.1 by population | n | within 10× | median measured / bound |"
           + (" today's model: within 10× | median |" if now else ""), "|---|---|---|---|"
           + ("---|---|" if now else "")]
    for p, f in by.items():
        row = (f"| {_POPULATIONS.get(p, p)} | {f['n']} | {_pct(f['share_within_10x'])} | "
               f"{f['median_ratio'] and round(f['median_ratio'], 2)} |")
        if now:
            g = now.get(p) or {}
            row += (f" {_pct(g.get('share_within_10x'))} | "
                    f"{g.get('median_ratio') and round(g['median_ratio'], 2)} |")
        out.append(row)
    return out + [""]


def markdown(s: dict) -> str:
    lines = [f"# Campaign on {s['device']} ({s['backend']} backend)", "",
             f"Runs: {', '.join(s.get('runs') or [])}."
             + (" **Quick dry run: small sizes and counts.**" if s.get("quick") else ""), "",
             "| stage | status |", "|---|---|"]
    errors = s.get("stage_errors") or {}
    lines += [f"| {k} | {v}" + (f": {errors[k][:200]}" if k in errors else "") + " |"
              for k, v in s["stages"].items()]
    lines += ["", "## Correctness against numpy (random fixed candidates, test sizes)", "",
              "| kernel | " + " | ".join(_STATUS_COLS) + " |",
              "|---|" + "---|" * len(_STATUS_COLS)]
    for label, c in s["correctness"].items():
        lines.append(f"| {label} | " + " | ".join(str(c.get(k, 0)) for k in _STATUS_COLS) + " |")
    snd, sr = s["soundness"], s["soundness_registers"]
    lines += ["", "## The bound against every measured time", "",
              f"Bound ≤ fastest sample: **{snd['sound']} of {snd['records']}** "
              f"({_pct(snd['share_sound'])}); worst bound / fastest: "
              f"{snd['worst_ratio'] and round(snd['worst_ratio'], 3)}"
              + (f" ({snd['worst']['kernel']} {snd['worst']['digest']})" if snd.get("worst")
                 else "") + ".",
              f"With ptxas registers in μ: {sr['sound']} of {sr['records']} "
              f"({_pct(sr['share_sound'])}), worst "
              f"{sr['worst_ratio'] and round(sr['worst_ratio'], 3)}.",
              "", f"Fig. 5.1 ([fig_5_1.svg](fig_5_1.svg)): {_pct(s['fig_5_1']['share_within_10x'])}"
              f" of {s['fig_5_1']['n']} implementations within 10× of their bound (thesis 70 %, "
              "goal ≥ 90 %); median measured / bound "
              f"{s['fig_5_1']['median_ratio'] and round(s['fig_5_1']['median_ratio'], 2)}. "
              "Scatter: [bound_vs_measured.svg](bound_vs_measured.svg).", ""]
    if s.get("soundness_now"):
        sn, fn = s["soundness_now"], s["fig_5_1_now"]
        on = f" on `{sn['target']}`" if sn.get("target") else ""  # the table it bounded on
        lines += [f"With the bounds of today's model{on} (the records keep theirs): bound ≤ "
                  f"fastest sample **{sn['sound']} of {sn['records']}** "
                  f"({_pct(sn['share_sound'])}), worst bound / fastest "
                  f"{sn['worst_ratio'] and round(sn['worst_ratio'], 3)}; Fig. 5.1 "
                  f"{_pct(fn['share_within_10x'])} within 10×, median "
                  f"{fn['median_ratio'] and round(fn['median_ratio'], 2)}"
                  + (f"; {sn['not_replayed']} trails no longer replay" if sn['not_replayed']
                     else "") + ".", ""]
        bp = sn.get("by_program") or {}
        if any(bp.get(k, {}).get("records") for k in (SAME, CHANGED)):
            lines += ["By the program each record timed (`python -m workbench audit`): "
                      + ", ".join(f"{v['sound']} of {v['records']} sound ({what})"
                                  for k, what in PROGRAMS.items()
                                  if (v := bp.get(k, {})).get("records")) + ".", ""]
    lines += _populations_md(s)
    lines += [
              "## Random implementations", "",
              "| kernel | records | ok | best | median | reference | beat it |",
              "|---|---|---|---|---|---|---|"]
    for label, x in s["random"].items():
        lines.append(f"| {label} | {x['records']} | {x['ok']} | {fmt_time(x['best_ns'])} | "
                     f"{fmt_time(x['median_ns'])} | {x['reference']} "
                     f"{fmt_time(x['reference_median_ns'])} "
                     f"| {x['beat_reference']} |")
    lines += ["", "## Table 6.2: search against the reference, beside the thesis", "",
              "The reference: the median of the library's timings over every record of "
              "the kernel in this folder (their range and count beside; the best record's "
              "own is one timing of them).", "",
              "| kernel | evaluations | ours | reference | speed-up | thesis (K4000) | goal |",
              "|---|---|---|---|---|---|---|"]
    for r in s["table_6_2"]:
        speedup = fmt_speedup(r["speedup"])
        extra = (f" ({_pct(r['share_of_copy_bandwidth'])} of copy bandwidth)"
                 if r.get("share_of_copy_bandwidth") else "")
        lines.append(f"| {r['kernel']} | {_evaluations(r)} | {fmt_time(r['best_ns'])} | "
                     f"{_ref_md(r)} | "
                     f"{speedup}{extra} | "
                     f"{fmt_time(r['thesis_best_ns'])} vs {fmt_time(r['thesis_reference_ns'])}: "
                     f"{r['thesis_speedup']:.2f}× | {GOALS.get(r['kernel'], '')} |")
    if s.get("forced"):
        lines += ["", "## Forced by hand, searched for the rest (the `forced` stage)", "",
                  "A recipe fixes the structure a person tuning the kernel chooses; a TAG "
                  "search decides what it leaves open (open choices; 0: one evaluation). "
                  "Then a TAG search of the kernel's whole space that cuts every node "
                  "bounded at or above the best recipe's time: what it finds beats the "
                  "expert; `exhausted` means the bound proves nothing in the space can.", "",
                  "| plan | open choices | evaluations | ours | reference | speed-up | goal |",
                  "|---|---|---|---|---|---|---|"]
        for r in s["forced"]:
            if r.get("error"):
                lines.append(f"| {r['plan']} | — | — | does not apply: {r['error'][:120]} "
                             "| — | — | — |")
                continue
            speedup = fmt_speedup(r["speedup"])
            extra = (f" ({_pct(r['share_of_copy_bandwidth'])} of copy bandwidth)"
                     if r.get("share_of_copy_bandwidth") else "")
            plan = r["plan"]
            if r.get("beat_ns"):  # the search below the recipes: what it had to beat
                won = ("nothing measured" if not r["best_ns"] else "beat it"
                       if r["best_ns"] < r["beat_ns"] else "did not beat it")
                plan += f" (to beat: {fmt_time(r['beat_ns'])}; {won}; {r.get('stopped') or '—'})"
            lines.append(f"| {plan} | {r['open_choices']} | {_evaluations(r)} | "
                         f"{fmt_time(r['best_ns'])} | {r['reference'] or ''} {_ref_md(r)} "
                         f"| {speedup}{extra} | {GOALS.get(r['kernel'], '')} |")
    if s.get("expert"):
        lines += ["", "## Forced by hand: the expert kernels (benchmarks/gpu_expert.py)", "",
                  "| kernel | tiles | ok | best median | fastest | bound | reference | "
                  "speed-up |", "|---|---|---|---|---|---|---|---|"]
        for x in s["expert"]:
            tiles = ", ".join(f"{k} {v}" for k, v in (x["tiles"] or {}).items()) or "—"
            speedup = fmt_speedup(x["speedup"])
            lines.append(f"| {x['label']} | {tiles} | {x['ok']} of {x['records']} | "
                         f"{fmt_time(x['best_ns'])} | {fmt_time(x['fastest_ns'])} | "
                         f"{fmt_time(x['bound_ns'])} "
                         f"| {x['reference']} {_ref_md(x)}"
                         + (f"; its own runs {fmt_time(x['reference_own_ns'])}"
                            if x.get("reference_records", 0) > 1
                            and x.get("reference_own_ns") != x["reference_ns"] else "")
                         + f" | {speedup} |")
    if s.get("copy"):
        lines += ["", "## Copy bandwidth and axpy in one run (benchmarks/gpu_copy.py)", "",
                  "Each timed as a candidate is (L2 flushed first), in interleaved rounds. "
                  "axpy's share of copy bandwidth above is of the fastest copy here or the "
                  "calibration's, whichever is faster. Axpy records timed before the "
                  "reference stopped copying x and y (2026-11-28) carry a CuPy reference "
                  "about twice as slow as the one below.", "",
                  "| kernel | median | bytes/s | of the fastest copy |", "|---|---|---|---|"]
        for r in s["copy"]:
            lines.append(f"| {r['kernel']} | {fmt_time(r['median_ns'])} | "
                         f"{r['bytes_per_s_median'] / 1e12:.2f} TB/s | "
                         f"{_pct(r['share_of_best_copy'])} |")
    p = s["ptxas"]
    lines += ["", "## ptxas", "", f"{p['records']} records carry ptxas facts; "
              f"{p['spilling']} spill ({_pct(p['share_spilling'])}); median registers "
              f"{p['median_registers']}, max {p['max_registers']}; the device's register count "
              f"differs from ptxas's on {p['device_registers_differ']}.", ""]
    return "\n".join(lines)


_STATUS_COLS = ("ok", "wrong_result", "compile_error", "launch_error", "timeout", "no_device")


def write_report(out: Path, state: dict, rebound: bool | str = False) -> dict:
    """report.md, summary.json, fig_5_1.svg, bound_vs_measured.svg in `out`;
    with `rebound`, the counts with today's model too (and fig_5_1_now.svg), on the campaign's own
    table or the one `rebound` names (`campaign --report-only`: a replay per
    record, so not at the end of a GPU's few minutes)."""
    out = Path(out)
    rows = RecordStore(out / "records.jsonl").rows()
    tpath = out / "target.json"
    target = json.loads(tpath.read_text()) if tpath.exists() else None
    cpath = out / "copy_bandwidth.json"  # benchmarks/gpu_copy.py: copies and axpys of one run
    copies = json.loads(cpath.read_text()) if cpath.exists() else None
    if copies:
        target = target or {}
        target.setdefault("measured", {})["best_copy_bytes_per_s"] = \
            copies["best_copy_bytes_per_s"]
    s = summarize(rows, state, target)
    if copies:
        s["copy"] = [{k: v for k, v in r.items() if k != "times_ns"} for r in copies["rows"]]
    if (out / "expert.jsonl").exists():  # measured beside the campaign, read alike
        s["expert"] = expert_table(RecordStore(out / "expert.jsonl").rows(), rows)
    if rebound:
        on = rebound if isinstance(rebound, str) else (str(tpath) if tpath.exists() else None)
        with_current_bounds(s, rows, on)
        s["soundness_now"]["target"] = on or "each record's own"
    s["written"] = _dt.datetime.now(_dt.timezone.utc).isoformat()
    (out / "summary.json").write_text(json.dumps(s, indent=1, default=str) + "\n")
    (out / "report.md").write_text(markdown(s))
    (out / "fig_5_1.svg").write_text(cdf_svg(fig_5_1(rows)["ratios"]))
    (out / "bound_vs_measured.svg").write_text(scatter_svg(rows))
    if rebound:
        (out / "fig_5_1_now.svg").write_text(cdf_svg(
            s["fig_5_1_now"]["ratios"], "Fig. 5.1, today's model: CDF of measured / bound"))
    return s


__all__ = ["ORIGINS", "cdf_svg", "fig_5_1",
           "fig_5_1_by_population", "forced_table", "origin", "population", "references",
           "by_program", "markdown", "ptxas_facts", "random_stage", "scatter_svg", "soundness",
           "statuses", "summarize", "table_6_2", "with_current_bounds", "write_report"]
