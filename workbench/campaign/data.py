"""Reading GPU campaigns on any machine: `data/gpu/<device>/` as a campaign
leaves it (records.jsonl, campaign.json, summary.json, target.json,
report.md, figures). The Timings tab, notebook 06 and `reproduce-search`
read through here, and say plainly when there is nothing to read."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..paths import data_dir, shipped_data_dir
from ..runtime.records import RecordStore

NO_GPU_DATA = ("no GPU data: data/gpu/ holds no campaign yet (no GPU run has happened; "
               "`make gpu` or `python -m workbench campaign --backend cuda` on a machine with "
               "an NVIDIA GPU leaves one there)")


def gpu_dirs() -> list[Path]:
    """Campaign folders under data/gpu/ (the data directory's, then the
    checkout's shipped ones), each holding a records.jsonl."""
    roots = dict.fromkeys([data_dir() / "gpu", shipped_data_dir() / "gpu"])
    seen, out = set(), []
    for root in roots:
        for d in sorted(root.glob("*/records.jsonl")) if root.is_dir() else []:
            if d.parent.name not in seen:
                seen.add(d.parent.name)
                out.append(d.parent)
    return out


def gpu_rows(kernel: str | None = None, sizes: dict | None = None) -> list[dict]:
    """Every GPU record (optionally of one kernel name and its spec), each
    with `gpu_dir`: the campaign folder's name."""
    out = []
    for d in gpu_dirs():
        for r in RecordStore(d / "records.jsonl").rows():
            if kernel is not None and r.get("kernel") != kernel:
                continue
            if sizes is not None and r.get("sizes") != sizes:
                continue
            out.append({**r, "gpu_dir": d.name})
    return out


def gpu_records(kernel: str | None = None, sizes: dict | None = None):
    """`gpu_rows` as a pandas DataFrame (empty when there is no GPU data)."""
    import pandas as pd
    df = pd.DataFrame(gpu_rows(kernel, sizes))
    if "timestamp" in df:
        df["timestamp"] = pd.to_datetime(df["timestamp"])
    return df


def summaries() -> dict:
    """folder name -> its summary.json (campaigns that reached the report)."""
    out = {}
    for d in gpu_dirs():
        p = d / "summary.json"
        if p.exists():
            out[d.name] = json.loads(p.read_text())
    return out


def redrawn() -> dict | None:
    """The campaigns' records bounded again by a later model (`campaign
    --report-only`, kept in each summary as `soundness_now` and
    `fig_5_1_now`), pooled: records, sound, the measured / bound ratios of
    the `ok` ones and their share within 10×, and when and on which table
    each folder was redrawn. None where no summary holds them. A record
    keeps the bound it was measured with; this is how a reader sees a model
    fixed after a GPU run without replaying every trail (about a minute)."""
    got = [(name, s) for name, s in summaries().items()
           if s.get("soundness_now") and s.get("fig_5_1_now", {}).get("ratios") is not None]
    if not got:
        return None
    ratios = sorted(x for _, s in got for x in s["fig_5_1_now"]["ratios"])
    # the shares pooled from each summary's own (its ratios are rounded)
    within = sum(round((s["fig_5_1_now"]["share_within_10x"] or 0) * s["fig_5_1_now"]["n"])
                 for _, s in got)
    return {"records": sum(s["soundness_now"]["records"] for _, s in got),
            "sound": sum(s["soundness_now"]["sound"] for _, s in got),
            "worst_ratio": max(s["soundness_now"]["worst_ratio"] or 0.0 for _, s in got),
            "ratios": ratios,
            "share_within_10x": within / len(ratios) if ratios else None,
            "folders": {name: {"written": s.get("written"),
                               "target": s["soundness_now"].get("target")} for name, s in got}}


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """A digest of the engine's sources (every .py and .space file of the
    package): with a trail, its kernel spec and a target table, they are all
    a bound depends on, so a bound cached under this digest is today's."""
    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parents[1]
    for f in sorted(p for p in pkg.rglob("*") if p.suffix in (".py", ".space")):
        h.update(f.relative_to(pkg).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def _bound_key(r: dict, tables: dict) -> str:
    """The cache key of a record's bound on its own target: its spec, its
    trail and the target table's contents (a recalibrated table is another)."""
    name = r.get("target")
    if name not in tables:
        from ..target import load_target
        try:
            tables[name] = hashlib.sha256(json.dumps(load_target(name).raw, sort_keys=True)
                                          .encode()).hexdigest()[:16]
        except Exception as exc:  # noqa: BLE001 - replaying it says why, in bound_now_error
            tables[name] = f"unloadable {type(exc).__name__}"
    text = json.dumps([r.get("sizes"), r.get("trail"), name, tables[name]], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _cache_file() -> Path:
    return data_dir() / "cache" / "bounds_now" / f"{engine_fingerprint()}.json"


def bounds_now(rows, *, compute: bool = True) -> list:
    """The measured rows (`report.measured`), each with `bound_now_ns` (or
    `bound_now_error`): the bound today's model gives its trail on the
    record's own target (`report.current_bounds`). Replaying takes about
    half a second a record, so the results are kept in the data directory
    under `cache/bounds_now/<engine_fingerprint>.json`; `compute=False`
    reads only that cache (rows it lacks come back without either key).
    The records themselves are never rewritten."""
    from .report import current_bounds, measured
    rows = measured(rows)
    path, tables = _cache_file(), {}
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        cache = {}
    keys = [_bound_key(r, tables) for r in rows]
    missing = [r for r, k in zip(rows, keys) if k not in cache]
    if compute and missing:
        for r, got in zip(missing, current_bounds(missing)):
            k = _bound_key(r, tables)
            cache[k] = ({"bound_now_ns": got["bound_now_ns"]} if "bound_now_ns" in got
                        else {"bound_now_error": got["bound_now_error"]})
        _write_atomic(path, cache)
    return [{**r, **cache.get(k, {})} for r, k in zip(rows, keys)]


def _write_atomic(path: Path, obj) -> None:
    """Write JSON whole or not at all (a reader never sees half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".bounds-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only data directory: the bounds are recomputed next time


def status_line() -> str:
    """One sentence: which GPU campaigns are there, or that there is none."""
    dirs = gpu_dirs()
    if not dirs:
        return NO_GPU_DATA
    parts = []
    for d in dirs:
        n = sum(1 for _ in (d / "records.jsonl").open()) if (d / "records.jsonl").exists() else 0
        parts.append(f"{d.name} ({n} records)")
    return "GPU data: " + ", ".join(parts)


__all__ = ["NO_GPU_DATA", "bounds_now", "engine_fingerprint", "gpu_dirs", "gpu_records",
           "gpu_rows", "redrawn", "status_line", "summaries"]
