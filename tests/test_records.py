"""Typed records, the store protocol, the backend registry, the data directory."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from workbench.errors import WorkbenchError
from workbench.paths import data_dir, user_data_dir
from workbench.runtime import (
    SCHEMA,
    Backend,
    Record,
    RecordStore,
    Store,
    backends,
    get_backend,
    load_records,
    register_backend,
)
from workbench.runtime.cpu import CpuBackend

RUNS = sorted((Path(__file__).parents[1] / "data" / "runs").glob("*.jsonl"))


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_committed_records_read_and_round_trip(path):
    rows = RecordStore(path).rows()
    recs = RecordStore(path).records()
    assert rows and len(recs) == len(rows)
    for row, rec in zip(rows, recs, strict=True):
        assert rec.to_dict() == row  # the same JSON line back
        assert rec["median_ns"] == row["median_ns"] and rec.status == row["status"]
    df = load_records(path)
    assert len(df) == len(rows) and {"status", "median_ns", "bound_ns"} <= set(df.columns)


def _record(**kw) -> Record:
    row = RecordStore(RUNS[0]).rows()[0]
    return dataclasses.replace(Record.from_dict(row), **kw)


def test_record_is_frozen_and_reads_like_its_dict():
    rec = _record(extra={"max_error": 1e-6})
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.status = "timeout"
    assert rec["x_max_error"] == 1e-6 and rec.get("x_registers") is None
    assert dict(rec) == rec.to_dict() and "search" not in rec
    s = rec.with_search({"id": "s", "n": 0})
    assert s["search"]["id"] == "s" and rec.search is None
    assert Record.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_record_refuses_unknown_schema_and_fields():
    row = _record().to_dict()
    with pytest.raises(WorkbenchError, match="record schema 'workbench.run/0'"):
        Record.from_dict({**row, "schema": "workbench.run/0"})
    with pytest.raises(WorkbenchError, match="unknown colour"):
        Record.from_dict({**row, "colour": "red"})
    with pytest.raises(WorkbenchError, match="missing status"):
        Record.from_dict({k: v for k, v in row.items() if k != "status"})
    with pytest.raises(WorkbenchError, match="not one of"):
        _record(status="exploded")


def test_store_writes_records_as_json_lines(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl")
    assert isinstance(store, Store)
    rec = _record(extra={"registers": 32})
    store.append([rec])
    line = json.loads(store.path.read_text())
    assert line["schema"] == SCHEMA and line["x_registers"] == 32
    assert store.records() == [rec]


def test_backend_registry_passes_options():
    assert {"cpu", "cuda"} <= set(backends())
    be = get_backend("cpu", threads=2)
    assert isinstance(be, Backend) and be.threads == 2
    with pytest.raises(WorkbenchError, match="backend 'cuda'"):
        get_backend("cuda", threads=2)  # an option it does not take is said, not dropped
    with pytest.raises(WorkbenchError, match="unknown backend 'tpu'"):
        get_backend("tpu")
    register_backend("cpu4", lambda **o: CpuBackend(threads=4, **o))
    try:
        assert get_backend("cpu4").threads == 4
    finally:
        from workbench.runtime import backend
        backend._FACTORIES.pop("cpu4")


def test_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)  # not a checkout: the user data directory
    assert data_dir() == user_data_dir()
    assert RecordStore().path.is_relative_to(user_data_dir())
    checkout = tmp_path / "co"
    (checkout / "notebooks").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project]\nname = "candidate-workbench"\n')
    monkeypatch.chdir(checkout / "notebooks")  # inside a checkout: its data/
    assert data_dir() == (checkout / "data").resolve()
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "mine"))
    assert data_dir() == tmp_path / "mine"
