"""The audit of stored measurements (issue 19's "bound ≤ measured for every
stored measurement"): each record file's measured trails bounded again by
today's model (`bounds_now`, cached) against their fastest sample, and each
record's program printed again by today's code generator
(`programs_now`). A time is evidence against today's bound only when it
timed the program today's printer writes for that trail: a record whose
program changed since (or that predates `x_source_digest`, so cannot say)
is counted apart, never dropped. `python -m workbench audit` prints it."""

from __future__ import annotations

from pathlib import Path

from ..errors import WorkbenchError
from ..model.justification import fmt_time
from ..names import plural
from ..paths import data_dir
from .bounds import CHANGED, PROGRAMS, SAME, UNKNOWN, bounds_now, measured
from .report import by_program, soundness


def record_files(root: Path | None = None) -> list[Path]:
    """The record stores of a data directory: `runs/**/*.jsonl` and each
    campaign's `gpu/*/*.jsonl`, sorted."""
    root = Path(root) if root is not None else data_dir()
    return sorted({*root.glob("runs/**/*.jsonl"), *root.glob("gpu/*/*.jsonl")})


def audit_rows(rows, target=None) -> dict:
    """The soundness of today's bound (on `target`, default each record's
    own table) over the measured `rows`, split by whether each record's
    program is today's: `soundness` of all, and of those whose program is
    SAME, CHANGED or UNKNOWN; `not_replayed`: trails the engine no longer
    accepts."""
    now = bounds_now(measured(rows), target=target)
    ok = [r for r in now if "bound_now_ns" in r]
    return {"records": len(now), "not_replayed": len(now) - len(ok),
            "all": soundness(ok, "bound_now_ns"), **by_program(ok)}


def audit(paths=None, target=None) -> dict:
    """`audit_rows` of each record file (default `record_files()`), by path."""
    from ..runtime.records import RecordStore
    paths = [Path(p) for p in paths] if paths else record_files()
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise WorkbenchError(f"audit: no record file {', '.join(missing)}")
    if not paths:
        raise WorkbenchError(f"audit: no record files under {data_dir()} (runs/ and gpu/*/)")
    return {_shown(p): audit_rows(RecordStore(p).rows(), target) for p in paths}


def _shown(p: Path) -> str:
    """A file's path as a person reads it: below the working folder, from it."""
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def _count(s: dict) -> str:
    if not s["records"]:
        return "none"
    text = f"{s['sound']:,} of {s['records']:,} sound"
    if s["sound"] < s["records"]:
        w = s["worst"]
        text += f" (worst: bound {fmt_time(w['bound_ns'])} over fastest {fmt_time(w['min_ns'])})"
    return text


def audit_lines(result: dict, target=None) -> list[str]:
    """What `python -m workbench audit` prints."""
    on = f"on {target}" if target else "on each record's own table"
    lines = []
    for path, a in result.items():
        n = a["not_replayed"]
        lines.append(f"{path}: {a['records']:,} measured records, today's bound {on}: "
                     f"{_count(a['all'])}" + (f"; {plural(n, 'trail')} no longer "
                                               f"{'replays' if n == 1 else 'replay'}" if n else ""))
        for kind, what in PROGRAMS.items():
            if a[kind]["records"]:
                lines.append(f"  {what}: {_count(a[kind])}")
    total = {k: sum(a[k]["records"] for a in result.values()) for k in (SAME, CHANGED, UNKNOWN)}
    sound = {k: sum(a[k]["sound"] for a in result.values()) for k in (SAME, CHANGED, UNKNOWN)}
    lines.append(f"in all: today's program {sound[SAME]:,} of {total[SAME]:,} sound; "
                 f"changed since {sound[CHANGED]:,} of {total[CHANGED]:,}; "
                 f"without a digest {sound[UNKNOWN]:,} of {total[UNKNOWN]:,}")
    return lines


__all__ = ["audit", "audit_lines", "audit_rows", "record_files"]
