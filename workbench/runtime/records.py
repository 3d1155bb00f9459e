"""The record store: one JSON line per evaluation, append-only, under
`data/runs/` by default; loading gives a pandas DataFrame.

Every line carries `schema`; a file written by another schema version is
refused with the line that says so. A truncated last line (a run killed while
writing) is skipped with a warning when loading; before the next append it
is moved to `<file>.truncated`, so nothing is lost and the file stays valid.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from ..errors import WorkbenchError
from ..target import data_dir

SCHEMA = "workbench.run/1"
# "reference": a timing of the reference library alone (numpy / cuBLAS), no implementation
STATUSES = ("ok", "compile_error", "launch_error", "wrong_result", "timeout", "no_device",
            "reference")


class RecordStore:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else data_dir() / "runs" / "runs.jsonl"

    @classmethod
    def open(cls, store) -> RecordStore | None:
        """What a `store=` argument names: "default" (data/runs/runs.jsonl), a
        RecordStore, a path, or None (no store)."""
        if store is None or isinstance(store, RecordStore):
            return store
        return cls() if store == "default" else cls(store)

    def append(self, records) -> None:
        """Append records (dicts); each line is flushed to disk at once."""
        if isinstance(records, dict):
            records = [records]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._set_aside_truncated_tail()
        with self.path.open("a", encoding="utf-8") as fh:
            for r in records:
                if r.get("status") not in STATUSES:
                    raise WorkbenchError(f"record status {r.get('status')!r} is not one of "
                                         f"{', '.join(STATUSES)}")
                fh.write(json.dumps({"schema": SCHEMA, **r}, sort_keys=True) + "\n")
                fh.flush()
            os.fsync(fh.fileno())

    def _set_aside_truncated_tail(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb") as fh:  # a complete file ends in a newline: one byte read
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
        data = self.path.read_bytes()
        cut = data.rfind(b"\n") + 1
        aside = self.path.with_suffix(self.path.suffix + ".truncated")
        with aside.open("ab") as fh:
            fh.write(data[cut:] + b"\n")
        with self.path.open("r+b") as fh:
            fh.truncate(cut)
        warnings.warn(f"{self.path}: a truncated last line was moved to {aside}", stacklevel=3)

    def rows(self) -> list[dict]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").split("\n")
        complete = lines[-1] == ""
        out = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines) and not complete:
                    warnings.warn(f"{self.path}:{n}: truncated last line skipped", stacklevel=2)
                    continue
                raise WorkbenchError(f"{self.path}:{n}: not a JSON record (a corrupted line "
                                     "in the middle of the store)") from None
            if row.get("schema") != SCHEMA:
                raise WorkbenchError(f"{self.path}:{n}: record schema {row.get('schema')!r}; "
                                     f"this workbench reads {SCHEMA!r} (convert the file or "
                                     "load it with the workbench version that wrote it)")
            out.append(row)
        return out

    def load(self):
        """All records as a pandas DataFrame (one row per evaluation)."""
        import pandas as pd
        rows = self.rows()
        df = pd.DataFrame(rows)
        if "timestamp" in df:
            df["timestamp"] = pd.to_datetime(df["timestamp"])
        return df


def load_records(path: str | Path | None = None):
    return RecordStore(path).load()
