"""Today's bounds of recorded trails: a record keeps the bound of the model
that measured it and is never rewritten, so a model fixed after a GPU run
is checked against that run's times by replaying each trail and bounding
it again (`current_bounds`). That takes about half a second a record, so
`bounds_now` keeps the results in the data directory, under a digest of
the sources a bound depends on (`engine_fingerprint`), and `bound_apart`
does it in a process of its own for the explorer, whose clicks would
otherwise share the interpreter with minutes of replaying. `programs_now`
says whether each record timed the program today's code generator prints
for its trail (not cached: the printer is not in the fingerprint)."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import multiprocessing
import os
import time
from pathlib import Path

from ..paths import data_dir, write_atomic

# a record's program against today's printer (`programs_now`)
SAME, CHANGED, UNKNOWN = "same", "changed", "unknown"
PROGRAMS = {SAME: "today's program", CHANGED: "a program today's printer no longer writes",
            UNKNOWN: "recorded without its program's digest"}  # as a person reads each
_LANGUAGE = {"cpu": "c", "cuda": "cuda"}
# what `bound(record_candidate(record), target)` runs
BOUND_MODULES = ("workbench.candidate", "workbench.kernels", "workbench.model",
                 "workbench.runtime.records", "workbench.target")
_SAVE_S = 5.0  # a replay saves what it bounded this often (a killed one keeps it)


def measured(rows) -> list:
    """Rows with at least one sample and a bound (implementations only)."""
    return [r for r in rows if r.get("trail") and r.get("times_ns") and r.get("bound_ns")
            and r.get("status") in ("ok", "timeout")]


def current_bounds(rows, target=None) -> list:
    """The measured rows, each with `bound_now_ns`: the bound today's model
    gives its trail on `target` (a table name or file; default the record's
    own `target`). A trail the engine no longer accepts gets
    `bound_now_error` instead."""
    from ..errors import WorkbenchError
    from ..model import bound
    from ..runtime.records import record_candidate
    out = []
    for r in measured(rows):
        try:  # from_spec gives the same kernel object for an equal spec
            cand = record_candidate(r)
            out.append({**r, "bound_now_ns": bound(cand, target or r.get("target")).value_ns})
        except WorkbenchError as exc:
            out.append({**r, "bound_now_error": f"{type(exc).__name__}: {exc}"})
    return out


def programs_now(rows) -> list:
    """The rows, each with `source_now`: SAME when today's code generator
    prints the program the record measured (its `x_source_digest`),
    CHANGED when it prints another or none (today's space leaves the trail
    open: no program of it), UNKNOWN when the record carries no digest
    (recorded before 2026-12-08) or its trail no longer replays."""
    from ..codegen import generate
    from ..errors import WorkbenchError
    from ..runtime.records import record_candidate
    out = []
    for r in rows:
        was, lang = r.get("x_source_digest"), _LANGUAGE.get(r.get("backend"))
        now = UNKNOWN
        if was and lang:
            try:
                cand = record_candidate(r)
            except WorkbenchError:
                cand = None  # no bound of it either: `not_replayed`
            if cand is not None:
                try:
                    now = SAME if generate(cand).source_digest(lang) == was else CHANGED
                except WorkbenchError:  # an open candidate: today's printer writes none
                    now = CHANGED
        out.append({**r, "source_now": now})
    return out


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """A digest of the sources a bound runs (`BOUND_MODULES` and every
    workbench module they import, read statically: `sources.closure_digest`,
    with the .space files): with a trail, its kernel spec and a target
    table, they are all a bound depends on (with numpy's and Python's
    versions), so a bound cached under this digest is today's, and editing
    a report or a view keeps the cache."""
    import platform

    import numpy

    from ..sources import closure_digest
    text = f"{closure_digest(BOUND_MODULES)} numpy {numpy.__version__} " \
           f"python {platform.python_version()}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _bound_key(r: dict, tables: dict, target=None) -> str:
    """The cache key of a record's bound on `target` (default its own): its
    spec, its trail and the target table's contents (a recalibrated table is
    another)."""
    name = target or r.get("target")
    if name not in tables:
        from ..target import load_target
        try:
            tables[name] = hashlib.sha256(json.dumps(load_target(name).raw, sort_keys=True)
                                          .encode()).hexdigest()[:16]
        except Exception as exc:  # noqa: BLE001 - replaying it says why, in bound_now_error
            tables[name] = f"unloadable {type(exc).__name__}"
    text = json.dumps([r.get("sizes"), r.get("trail"), name, tables[name]], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cache_file() -> Path:
    """Where `bounds_now` keeps today's bounds: the data directory's
    `cache/bounds_now/<engine_fingerprint>.json`."""
    return data_dir() / "cache" / "bounds_now" / f"{engine_fingerprint()}.json"


# bounds this process received from `bound_apart`, by cache file: read like
# the file (a data directory that cannot be written still draws them)
_KNOWN: dict = {}


def _on_disk(path: Path) -> dict:
    """The cache file's bounds ({} when it is missing or not a cache)."""
    try:
        got = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def _read(path: Path) -> dict:
    return {**_on_disk(path), **_KNOWN.get(str(path), {})}


def bounds_now(rows, *, target=None, compute: bool = True, stop=None,
               cache: Path | None = None) -> list:
    """The measured rows (`measured`), each with `bound_now_ns` (or
    `bound_now_error`): the bound today's model gives its trail on `target`
    (a table name or file; default the record's own: `current_bounds`),
    kept in `cache` (default `cache_file()`) and saved every few seconds
    while replaying, and when replaying ends, however it ends;
    `compute=False` reads only that cache (rows it lacks come back without
    either key); `stop()`, asked before each record, ends the replaying
    early (what was bounded is kept). The records themselves are never
    rewritten."""
    rows = measured(rows)
    path, tables = cache or cache_file(), {}
    known = _read(path)
    keys = [_bound_key(r, tables, target) for r in rows]
    added, saved = {}, time.monotonic()
    try:
        for r, k in zip(rows, keys):
            if not compute or stop is not None and stop():
                break
            if k in known or k in added:
                continue
            got = current_bounds([r], target)[0]
            added[k] = ({"bound_now_ns": got["bound_now_ns"]} if "bound_now_ns" in got
                        else {"bound_now_error": got["bound_now_error"]})
            if time.monotonic() - saved > _SAVE_S:
                _save(path, added)
                saved = time.monotonic()
    finally:
        if added:
            _save(path, added)
    known.update(added)
    return [{**r, **known.get(k, {})} for r, k in zip(rows, keys)]


def _save(path: Path, added: dict) -> None:
    """Add `added` to the cache file, whole or not at all, under an
    exclusive lock (a lock file beside it), so that what another process
    saved meanwhile is kept."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            write_atomic(path, json.dumps({**_on_disk(path), **added}), prefix=".bounds-")
    except OSError:
        pass  # a read-only data directory: the bounds are recomputed next time


class Apart(RuntimeError):
    """Why `bound_apart` gave no bounds (the caller replays in its own process)."""


def _apart_main(conn, rows, target, digest: str, parent: int) -> None:
    try:  # background work: the notebook kernel and the look-ahead come first
        os.nice(19)
    except (AttributeError, OSError):
        pass
    try:
        if engine_fingerprint() != digest:  # the sources changed on disk since
            conn.send(("error", "the engine's sources changed since this process loaded "
                                "them: bounded here instead"))
            return
        got = bounds_now(rows, target=target, stop=lambda: os.getppid() != parent)
        conn.send(("ok", [{k: r[k] for k in ("bound_now_ns", "bound_now_error") if k in r}
                          for r in got]))
    except Exception as exc:  # noqa: BLE001 - said to the parent, not lost in a child
        conn.send(("error", f"{type(exc).__name__}: {exc}"))


def bound_apart(rows, *, target=None, stop=None, poll_s: float = 0.2) -> list | None:
    """`bounds_now(rows)` computed in a spawned process at the lowest
    priority, waited for here (a waiting thread holds no interpreter lock:
    the notebook's clicks keep theirs). The child checks it runs this
    process's engine (`engine_fingerprint`), saves to the same cache, ends
    if this process does, and sends its bounds back, which this process
    keeps for `bounds_now(…, compute=False)` even where the cache cannot
    be written. Returns `bounds_now`'s rows, or None when `stop()` (asked
    every `poll_s`) ended it (the child is killed; what it saved is kept);
    raises `Apart` saying why when no process started, or it died or
    failed."""
    rows = measured(rows)
    try:
        ctx = multiprocessing.get_context("spawn")  # a kernel's threads do not survive a fork
        mine, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_apart_main, daemon=True, name="workbench-bounds",
                           args=(theirs, rows, target, engine_fingerprint(), os.getpid()))
        proc.start()
        theirs.close()
    except (OSError, RuntimeError, ValueError) as exc:
        raise Apart(f"no process to bound in: {exc}") from None
    try:
        while not mine.poll(poll_s):
            if stop is not None and stop():
                proc.kill()
                return None
            if not proc.is_alive() and not mine.poll():
                raise Apart(f"the bounding process ended (exit code {proc.exitcode})")
        try:
            kind, got = mine.recv()
        except (EOFError, OSError) as exc:
            raise Apart(f"the bounding process ended: {exc}") from None
        if kind != "ok":
            raise Apart(got)
    finally:
        proc.join(2)  # it ends once it has sent
        if proc.is_alive():  # at nice 19 a busy machine may not give it the time to:
            proc.kill()  # it has saved and sent all it had, or was stopped
            proc.join(30)
        mine.close()
    tables: dict = {}
    keep = _KNOWN.setdefault(str(cache_file()), {})
    for r, g in zip(rows, got):
        if g:
            keep[_bound_key(r, tables, target)] = g
    return [{**r, **g} for r, g in zip(rows, got)]


__all__ = ["BOUND_MODULES", "CHANGED", "PROGRAMS", "SAME", "UNKNOWN", "Apart", "bound_apart",
           "bounds_now", "cache_file", "current_bounds", "engine_fingerprint", "measured",
           "programs_now"]
