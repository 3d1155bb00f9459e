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


__all__ = ["NO_GPU_DATA", "gpu_dirs", "gpu_records", "gpu_rows", "status_line", "summaries"]
