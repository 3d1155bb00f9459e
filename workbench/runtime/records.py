"""Records and their store: one JSON line per evaluation, append-only, under
`runs/runs.jsonl` of the data directory (`workbench.paths.data_dir`) by
default; loading gives a pandas DataFrame.

Every line carries `schema`; a file written by another schema version is
refused with the line that says so. The store is safe to share between
processes (a notebook's background search and its Run button, two CLI
searches): every append takes an exclusive advisory lock (`fcntl.flock`) on
the file and writes whole lines; every read takes a shared one, so a reader
never sees a line being written. Under the exclusive lock, before writing,
the file is checked to be a store of this schema (every line since the last
check in this process); a file that is not (another format, another schema,
a corrupted line) is refused, never repaired or moved. The only repairs: a
whole last record without its newline gets it; a truncated last line (a
writer killed mid-line — under the lock, no live writer can have left one)
is copied to `<file>.truncated` and cut from the store, so nothing is lost
and the file stays valid. See docs/records.md.
"""

from __future__ import annotations

import dataclasses
import fcntl
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
# "crash": the generated code killed its process (x_signal, x_signal_name) or it exited
STATUSES = ("ok", "compile_error", "launch_error", "wrong_result", "timeout", "no_device",
            "reference", "crash")


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
# (device, inode) of a store file -> (bytes, lines) of it this process has checked
_CHECKED: dict[tuple, tuple[int, int]] = {}
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
        """Append records (Records, or dicts of the stored form) as whole
        lines under an exclusive lock, then fsync. Refuses a file that is not
        a store of this schema (nothing is written to it)."""
        if isinstance(records, Mapping):
            records = [records]
        records = [r.to_dict() if isinstance(r, Record) else {"schema": SCHEMA, **r}
                   for r in records]
        for r in records:
            if r.get("status") not in STATUSES:
                raise WorkbenchError(f"record status {r.get('status')!r} is not one of "
                                     f"{', '.join(STATUSES)}")
        blob = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()
        if not blob:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = self._open(os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._check(fd)
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            start, n = _CHECKED[self._key(fd)]
            _CHECKED[self._key(fd)] = (start + len(blob), n + len(records))
        finally:
            os.close(fd)  # releases the lock

    def _open(self, flags: int) -> int:
        if self.path.is_dir():
            raise WorkbenchError(f"{self.path}: a folder, not a record store")
        try:
            return os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise WorkbenchError(f"{self.path}: cannot open the record store: "
                                 f"{exc.strerror}") from None

    @staticmethod
    def _key(fd: int) -> tuple:
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino)

    def _check(self, fd: int) -> None:
        """Under the exclusive lock: every line since the last check is a
        record of this schema; a truncated last line is set aside."""
        size = os.fstat(fd).st_size
        key = self._key(fd)
        start, lines_before = _CHECKED.get(key, (0, 0))
        if start > size:  # the file shrank under us: check it all again
            start, lines_before = 0, 0
        if start == size:
            _CHECKED[key] = (start, lines_before)
            return
        data = os.pread(fd, size - start, start)
        nl = data.rfind(b"\n")
        lines = data[:nl + 1].split(b"\n")[:-1]
        for n, line in enumerate(lines, lines_before + 1):
            if line.strip():
                self._check_line(line, n)
        tail = data[nl + 1:]
        if tail and self._is_record(tail):  # only its newline is missing (an editor's
            os.write(fd, b"\n")             # save): completed, never cut
            lines.append(tail)
            nl = len(data)
        elif tail:
            self._set_aside(fd, tail, start + nl + 1, had_line=start > 0 or nl >= 0)
        _CHECKED[key] = (start + nl + 1, lines_before + len(lines))

    def _check_line(self, line: bytes, n: int) -> None:
        where = f"{self.path}:{n}"
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise WorkbenchError(f"{where}: not a record store (a line that is not JSON); "
                                 "nothing was written to it") from None
        if not isinstance(row, dict) or row.get("schema") != SCHEMA:
            got = row.get("schema") if isinstance(row, dict) else type(row).__name__
            raise WorkbenchError(f"{where}: not a record store of schema {SCHEMA!r} (a line "
                                 f"of schema {got!r}); nothing was written to it")

    def _is_record(self, line: bytes) -> bool:
        """Whether `_check_line` takes `line` (a writer killed mid-line
        leaves a prefix that does not parse)."""
        try:
            self._check_line(line, 0)
        except WorkbenchError:
            return False
        return True

    def _set_aside(self, fd: int, tail: bytes, cut: int, had_line: bool) -> None:
        """A last line without its newline: a writer killed while writing."""
        if not had_line:
            raise WorkbenchError(f"{self.path}: not a record store (no complete record line); "
                                 "nothing was written to it")
        if not tail.lstrip().startswith(b"{"):
            raise WorkbenchError(f"{self.path}: not a record store (its last line is not "
                                 "JSON); nothing was written to it")
        aside = self.path.with_suffix(self.path.suffix + ".truncated")
        with aside.open("ab") as fh:
            fh.write(tail + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.ftruncate(fd, cut)
        warnings.warn(f"{self.path}: a truncated last line ({len(tail)} bytes, a writer "
                      f"killed while writing) was moved to {aside}", stacklevel=4)

    def rows(self) -> list[dict]:
        """The stored dicts, read under a shared lock (never a line being
        written); a truncated last line is skipped with a warning."""
        if not self.path.exists():
            return []
        fd = self._open(os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read()
        finally:
            os.close(fd)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkbenchError(f"{self.path}: not a record store (not UTF-8 text)") from None
        lines = text.split("\n")
        complete = lines[-1] == ""
        out = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines) and not complete and n > 1:
                    warnings.warn(f"{self.path}:{n}: truncated last line skipped", stacklevel=2)
                    continue
                raise WorkbenchError(f"{self.path}:{n}: not a JSON record (a corrupted line "
                                     "in the middle of the store, or not a store)") from None
            if not isinstance(row, dict) or row.get("schema") != SCHEMA:
                got = row.get("schema") if isinstance(row, dict) else type(row).__name__
                raise WorkbenchError(f"{self.path}:{n}: record schema {got!r}; "
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


def with_former_values(cand):
    """`cand` with every choice the space gained since records were first
    kept (`space.values.FORMER_VALUES`) that it leaves open decided to the
    value the code took before that choice existed. A record is always of a
    fixed candidate, so such a choice is open only when its trail is older
    than the choice: that trail measured the former value's code."""
    from ..space.values import FORMER_VALUES
    while True:  # one at a time: a decision may settle the next
        left = [c for c in cand.choices() if FORMER_VALUES.get(c.name) in c.values]
        if not left:
            return cand
        cand = cand.apply(left[0].name, left[0].objects, FORMER_VALUES[left[0].name])


def record_candidate(r: Mapping, *, space=None):
    """The fixed candidate a record measured: its trail replayed on its
    kernel spec (`r["sizes"]`), `with_former_values`. Raises WorkbenchError
    when the trail no longer replays."""
    from ..candidate import Candidate
    from ..kernels import from_spec
    if not r.get("trail"):
        raise WorkbenchError("the record holds no trail (a reference timing, or not an "
                             "implementation)")
    return with_former_values(Candidate.replay(from_spec(r.get("sizes")), r["trail"], space))


def load_records(path: str | Path | None = None):
    """The records of a JSON-lines file (default: the data directory's) as a
    pandas DataFrame. A path named that does not exist is an error (a typo
    read as an empty store would say "nothing was measured")."""
    if path is not None and not Path(path).exists():
        raise WorkbenchError(f"{path}: no such record store")
    return RecordStore(path).load()


__all__ = ["SCHEMA", "STATUSES", "Record", "RecordStore", "Store", "load_records",
           "record_candidate", "with_former_values"]
