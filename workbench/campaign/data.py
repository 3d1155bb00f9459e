"""Reading GPU campaigns on any machine: `data/gpu/<device>/` as a campaign
leaves it (records.jsonl, campaign.json, summary.json, target.json,
report.md, figures). The Timings tab, notebook 06 and `reproduce-search`
read through here, and say plainly when there is nothing to read."""

from __future__ import annotations

import json
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
    with `gpu_dir`, the campaign folder's name, and `gpu_file`, the record
    file's: a folder's other record files (`expert.jsonl`:
    benchmarks/gpu_expert.py) count too."""
    out = []
    for d in gpu_dirs():
        rows = [(f.name, r) for f in sorted(d.glob("*.jsonl")) for r in RecordStore(f).rows()]
        for name, r in rows:
            if kernel is not None and r.get("kernel") != kernel:
                continue
            if sizes is not None and r.get("sizes") != sizes:
                continue
            out.append({**r, "gpu_dir": d.name, "gpu_file": name})
    return out


def gpu_version() -> tuple:
    """What `gpu_rows` reads, as (path, mtime, size) of every record file:
    equal versions read the same rows (a view redraws only when it moved)."""
    out = []
    for d in gpu_dirs():
        for f in sorted(d.glob("*.jsonl")):
            try:
                st = f.stat()
            except OSError:
                continue
            out.append((str(f), st.st_mtime_ns, st.st_size))
    return tuple(out)


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


def status_line() -> str:
    """One sentence: which GPU campaigns are there, or that there is none."""
    dirs = gpu_dirs()
    if not dirs:
        return NO_GPU_DATA
    parts = []
    for d in dirs:
        n = sum(1 for f in d.glob("*.jsonl") for x in f.open() if x.strip())
        parts.append(f"{d.name} ({n} records)")
    return "GPU data: " + ", ".join(parts)


__all__ = ["NO_GPU_DATA", "gpu_dirs", "gpu_records", "gpu_rows", "gpu_version", "redrawn",
           "status_line", "summaries"]
