"""Records and their store: one JSON line per evaluation, append-only, under
`runs/runs.jsonl` of the data directory (`workbench.paths.data_dir`) by
default; loading gives a pandas DataFrame.

Every line carries `schema`; a file written by another schema version is
refused with the line that says so. A truncated last line (a run killed while
writing) is skipped with a warning when loading; before the next append it
is moved to `<file>.truncated`, so nothing is lost and the file stays valid.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import WorkbenchError
from ..paths import data_dir

SCHEMA = "workbench.run/1"
# "reference": a timing of the reference library alone (numpy / cuBLAS), no implementation
STATUSES = ("ok", "compile_error", "launch_error", "wrong_result", "timeout", "no_device",
            "reference")


@dataclass(frozen=True)
class Record(Mapping):
    """One evaluation (schema `workbench.run/1`): what was measured, where,
    and the bound beside it.

    `extra` holds what a backend adds (registers, shared_bytes, local_bytes,
    max_error, ...); on disk each is a top-level `x_<name>` key. `search` is
    set on the records a search measured (`Search` adds it with
    `with_search`): id, n (the evaluation's index), policy, order, path (the
    tree decisions [choice, objects, value] from the start), start_trail,
    start_digest, worker, rollout_s, eval_s, elapsed_s; on disk a nested
    object, absent on other records.

    A record reads like the dict it is stored as (`rec["median_ns"]`,
    `rec.get("x_max_error")`, `"search" in rec`), so code written against the
    JSON lines keeps working; `to_dict()` / `from_dict()` convert, and
    `from_dict` refuses another schema version.
    """
    timestamp: str  # ISO 8601, UTC; one per evaluated batch
    kernel: str
    sizes: dict  # the kernel's spec()
    backend: str
    target: str  # the hardware table the bound used
    device: str
    driver: str
    reference: str | None  # the reference library's name
    reference_times_ns: list
    reference_median_ns: float | None
    versions: dict
    trail: list  # Decision.to_dict() of each decision; [] for a reference record
    digest: str | None
    status: str  # one of STATUSES
    message: str
    verified: bool | None
    times_ns: list  # every sample
    median_ns: float | None
    ratio_to_reference: float | None
    bound_ns: float | None = None
    bound_reason: str | None = None  # the bound's top-level justification, or why none
    extra: dict = field(default_factory=dict)
    search: dict | None = None
    schema: str = SCHEMA

    def __post_init__(self):
        if self.schema != SCHEMA:
            raise WorkbenchError(f"record schema {self.schema!r}; this workbench reads "
                                 f"{SCHEMA!r}")
        if self.status not in STATUSES:
            raise WorkbenchError(f"record status {self.status!r} is not one of "
                                 f"{', '.join(STATUSES)}")

    def with_search(self, search: dict) -> Record:
        return dataclasses.replace(self, search=search)

    def to_dict(self) -> dict:
        """The JSON line's object (`schema` included)."""
        out = {f.name: getattr(self, f.name) for f in _FIELDS if f.name not in ("extra",
                                                                                 "search")}
        out.update({f"x_{k}": v for k, v in self.extra.items()})
        if self.search is not None:
            out["search"] = self.search
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> Record:
        """A record from its JSON object; refuses another schema, a missing
        field or an unknown key (one not `x_`-prefixed)."""
        if data.get("schema") != SCHEMA:
            raise WorkbenchError(f"record schema {data.get('schema')!r}; this workbench reads "
                                 f"{SCHEMA!r} (convert the file or load it with the "
                                 "workbench version that wrote it)")
        names = {f.name for f in _FIELDS} - {"extra"}
        unknown = [k for k in data if k not in names and not k.startswith("x_")]
        missing = [f.name for f in _FIELDS if f.name not in data
                   and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING]
        if unknown or missing:
            raise WorkbenchError("not a record: " + "; ".join(
                ([f"unknown {', '.join(unknown)}"] if unknown else [])
                + ([f"missing {', '.join(missing)}"] if missing else [])))
        return cls(**{k: v for k, v in data.items() if k in names},
                   extra={k[2:]: v for k, v in data.items() if k.startswith("x_")})

    # read like the stored dict
    def __getitem__(self, key: str):
        if key in _KEYS and (key != "search" or self.search is not None):
            return getattr(self, key)
        if key.startswith("x_") and key[2:] in self.extra:
            return self.extra[key[2:]]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    __hash__ = None  # lists inside: a record is a value, not a key


_FIELDS = dataclasses.fields(Record)
_KEYS = frozenset(f.name for f in _FIELDS) - {"extra"}


@runtime_checkable
class Store(Protocol):
    """Where records go: `append` (records, or dicts of the stored form),
    `rows` (the stored dicts, in order), `load` (a pandas DataFrame)."""

    def append(self, records) -> None: ...

    def rows(self) -> list[dict]: ...

    def records(self) -> list[Record]:
        """The rows as typed Records (every row must be a whole record)."""
        return [Record.from_dict(r) for r in self.rows()]

    def load(self): ...


class RecordStore:
    """The JSON-lines `Store`."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else data_dir() / "runs" / "runs.jsonl"

    @classmethod
    def open(cls, store) -> RecordStore | None:
        """What a `store=` argument names: "default" (runs/runs.jsonl in the
        data directory), a RecordStore, a path, or None (no store)."""
        if store is None or isinstance(store, RecordStore):
            return store
        return cls() if store == "default" else cls(store)

    def append(self, records) -> None:
        """Append records (Records, or dicts of the stored form); each line
        is flushed to disk at once."""
        if isinstance(records, Mapping):
            records = [records]
        records = [r.to_dict() if isinstance(r, Record) else {"schema": SCHEMA, **r}
                   for r in records]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._set_aside_truncated_tail()
        with self.path.open("a", encoding="utf-8") as fh:
            for r in records:
                if r.get("status") not in STATUSES:
                    raise WorkbenchError(f"record status {r.get('status')!r} is not one of "
                                         f"{', '.join(STATUSES)}")
                fh.write(json.dumps(r, sort_keys=True) + "\n")
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

    def records(self) -> list[Record]:
        """The rows as typed Records (every row must be a whole record)."""
        return [Record.from_dict(r) for r in self.rows()]

    def load(self):
        """All records as a pandas DataFrame (one row per evaluation)."""
        import pandas as pd
        rows = self.rows()
        df = pd.DataFrame(rows)
        if "timestamp" in df:
            df["timestamp"] = pd.to_datetime(df["timestamp"])
        return df


def load_records(path: str | Path | None = None):
    """The records of a JSON-lines file (default: the data directory's) as a
    pandas DataFrame."""
    return RecordStore(path).load()


__all__ = ["SCHEMA", "STATUSES", "Record", "RecordStore", "Store", "load_records"]
