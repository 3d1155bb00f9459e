"""The record store shared by several processes (issue 20): 4 writers ×
1,000 records of about 5 KB each, appended one at a time while a reader
loads the store again and again, lose none and corrupt none; a writer
killed mid-line leaves a tail that the next append sets aside."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import warnings

from workbench.runtime import RecordStore

WRITERS, RECORDS, PAD = 4, 1000, 5000


def _writer(path: str, w: int, start) -> None:
    store = RecordStore(path)
    start.wait()
    for n in range(RECORDS):
        store.append({"status": "ok", "kernel": "k", "x_writer": w, "x_n": n,
                      "x_pad": "x" * PAD})


def _reader(path: str, start, stop, out) -> None:
    store = RecordStore(path)
    start.wait()
    reads = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a reader never sees a line being written
        while not stop.is_set():
            rows = store.rows()
            assert all(r["status"] == "ok" for r in rows)
            reads += 1
    out.put(reads)


def test_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "runs.jsonl")
    ctx = mp.get_context("fork")
    start, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, w, start)) for w in range(WRITERS)]
    reader = ctx.Process(target=_reader, args=(path, start, stop, out))
    for p in [*procs, reader]:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    stop.set()
    reader.join(timeout=60)
    assert reader.exitcode == 0 and out.get(timeout=5) > 0
    raw = open(path, "rb").read()
    assert raw.endswith(b"\n")
    rows = [json.loads(line) for line in raw.split(b"\n")[:-1]]  # every line whole
    got = sorted((r["x_writer"], r["x_n"]) for r in rows)
    assert got == [(w, n) for w in range(WRITERS) for n in range(RECORDS)]
    assert not os.path.exists(path + ".truncated")
