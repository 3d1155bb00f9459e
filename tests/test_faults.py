"""Fault injection (issue 20): what a careless or hostile user can do, each
answered by a clear error or a recorded status, with nothing lost, nothing
hung and nothing executed. One section per class of fault; each case checks
the answer and that nothing it should not touch changed."""

from __future__ import annotations

import random
import tempfile
import time
import warnings

import pytest

import workbench as wb
from workbench.descent import random_fixed
from workbench.errors import WorkbenchError
from workbench.runtime import RecordStore, evaluate
from workbench.runtime import cpu as cpu_backend


@pytest.fixture(scope="module")
def small_cands():
    root = wb.Candidate.root(wb.kernels.axpy(256))
    return [random_fixed(root, random.Random(s)) for s in range(3)]


def _inject(monkeypatch, faults: dict):
    """Make the generated C of candidate wb_<i> start with faults[i]."""
    real = cpu_backend.generate

    def broken(cand, name):
        g = real(cand, name)
        i = int(name.removeprefix("wb_"))
        if i in faults:
            g = type(g)(g.name, g.cuda, g.c.replace("{", "{ " + faults[i], 1), g.launch,
                        g.implementation)
        return g
    monkeypatch.setattr(cpu_backend, "generate", broken)


# ------------------------------------------------------------- CPU backend
def test_endless_loop_and_segfault_are_statuses(small_cands, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    _inject(monkeypatch, {0: "for (;;) {}", 1: "*(volatile int*)0 = 1;"})
    store = RecordStore(tmp_path / "r.jsonl")
    t0 = time.monotonic()
    recs = evaluate(small_cands, "cpu", store=store, timeout_s=1.0)
    took = time.monotonic() - t0
    assert [r["status"] for r in recs] == ["timeout", "crash", "ok"]
    assert "killed" in recs[0]["message"]
    assert recs[1]["x_signal_name"] == "SIGSEGV" and "SIGSEGV" in recs[1]["message"]
    assert took < 15, took  # the endless loop was killed at its deadline (1 s + 1 s grace)
    assert [r["status"] for r in store.records()] == ["timeout", "crash", "ok"]
    assert list((tmp_path / "tmp").iterdir()) == []  # no wb_cpu_* folder left


def test_abort_and_exit_in_generated_code(small_cands, monkeypatch, tmp_path):
    _inject(monkeypatch, {0: "abort();", 1: "exit(3);"})
    recs = evaluate(small_cands, "cpu", store=None, timeout_s=2.0)
    assert [r["status"] for r in recs] == ["crash", "crash", "ok"], [r["message"] for r in recs]
    assert recs[0]["x_signal_name"] == "SIGABRT"
    assert recs[1]["x_exit_code"] == 3


def test_timestamp_is_utc_on_every_python(small_cands):
    rec = evaluate(small_cands[:1], "cpu", store=None)[0]
    assert rec["timestamp"].endswith("+00:00")


# ------------------------------------------------------------------- store
_REC = {"status": "ok", "kernel": "k", "median_ns": 1.0, "times_ns": [1.0]}


@pytest.mark.parametrize("content", [
    b"name,value\nx,1\n",  # a CSV
    b"hello",  # one word, no newline
    b'{"schema": "workbench.run/0", "status": "ok"}\n',  # another schema
    b'{"schema": "workbench.run/1", "status": "ok"}\nnot json\n',  # corrupted line
    b"[1, 2]\n",  # JSON, not a record
    b"\xff\xfe\x00binary\n",
], ids=["csv", "word", "other-schema", "corrupt", "json-list", "binary"])
def test_store_refuses_foreign_files_and_leaves_them(tmp_path, content):
    path = tmp_path / "mine.txt"
    path.write_bytes(content)
    with pytest.raises(WorkbenchError, match="not a record store|record schema"):
        RecordStore(path).append(_REC)
    assert path.read_bytes() == content  # neither moved nor rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    with pytest.raises(WorkbenchError):
        RecordStore(path).rows()


def test_store_on_a_folder_or_unwritable_place(tmp_path):
    with pytest.raises(WorkbenchError, match="a folder"):
        RecordStore(tmp_path).append(_REC)
    import os
    if os.geteuid() == 0:
        return  # root writes anywhere
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(WorkbenchError, match="cannot open"):
            RecordStore(ro / "r.jsonl").append(_REC)
    finally:
        ro.chmod(0o700)


def test_store_truncated_tail_set_aside_under_the_lock(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl")
    store.append([_REC, _REC])
    whole = store.path.read_bytes()
    store.path.write_bytes(whole + b'{"schema": "workbench.run/1", "sta')  # a killed writer
    with pytest.warns(UserWarning, match="moved to"):
        store.append(_REC)
    assert store.path.read_bytes().startswith(whole)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(store.rows()) == 3
    assert (tmp_path / "r.jsonl.truncated").read_bytes() == b'{"schema": "workbench.run/1", "sta\n'


def test_store_refuses_a_bad_batch_whole(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl")
    with pytest.raises(WorkbenchError, match="not one of"):
        store.append([_REC, {**_REC, "status": "exploded"}])
    assert not store.path.exists() or store.path.read_bytes() == b""


def test_records_of_a_killed_search_survive_and_resume(tmp_path):
    """A search killed (SIGKILL) while it evaluates loses no stored record,
    and --resume continues from them."""
    import os
    import signal
    import subprocess
    import sys
    store = tmp_path / "runs.jsonl"
    cmd = [sys.executable, "-m", "workbench", "search", "--kernel", "axpy", "--sizes", "n=256",
           "--workers", "0", "--store", str(store), "--no-progress", "--json"]
    proc = subprocess.Popen([*cmd, "--budget", "200"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not store.exists() or
                                           store.read_bytes().count(b"\n") < 3):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a line cut by the kill is skipped, with a warning
        rows = RecordStore(store).rows()
    assert len(rows) >= 3
    sid = rows[0]["search"]["id"]
    out = subprocess.run([*cmd, "--budget", str(len(rows) + 2), "--resume", sid],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    after = RecordStore(store).rows()
    assert after[:len(rows)] == rows and len(after) > len(rows)


# --------------------------------------------------------- snippet sandbox
def _snip(text: str):
    from workbench.space.lexer import Source
    from workbench.space.snippet import parse_snippet
    src = Source(f'"{text}"')
    return parse_snippet(src, 1, len(src.text) - 1)


@pytest.fixture(scope="module")
def axpy_env():
    k = wb.kernels.axpy(64)
    return {"fun": k, "i": k.instructions()[0], "lhs": k.dims()[0]}


@pytest.mark.parametrize("text, match", [
    ("'x'.encode('{0.__class__.__init__.__globals__}'.format($lhs))", "no method"),
    ("'{0}'.format($lhs)", "no method"),
    ("'x'.ljust(1000000000000)", "no method"),
    ("$i.operands.clear()", "not declared"),
    ("$fun.copy()", "not declared"),
    ("$fun.target.raw", "not declared"),
    ("$fun.inst", "not declared"),
    ("'x' * 1000000000000", "takes numbers"),
    ("[1] * 1000000000000", "takes numbers"),
    ("4294967296 * 4294967296 * 4294967296", "beyond"),
    ("$fun.dims()[0]['x']", "index"),
    ("$lhs.logical.factors.count(1)", "no method"),
])
def test_snippets_cannot_escape(axpy_env, text, match):
    before = [list(i.operands) for i in axpy_env["fun"].instructions()]
    with pytest.raises(wb.SpaceError, match=match):
        _snip(text)(axpy_env)
    assert [list(i.operands) for i in axpy_env["fun"].instructions()] == before


@pytest.mark.parametrize("text, match", [
    ("(" * 60 + "1" + ")" * 60, "nested"),
    ("!" * 60 + "true", "nested"),
    ("-" * 60 + "1", "nested"),
    ("[" * 60 + "]" * 60, "nested"),
    ("(" * 5000 + "1" + ")" * 5000, "characters"),
    ("99999999999999999999999", "literal"),
    ("$fun._cache", "private"),
])
def test_snippet_limits_are_parse_errors(text, match):
    with pytest.raises(wb.SpaceSyntaxError, match=match):
        _snip(text)


def test_declared_snippets_still_work(axpy_env):
    assert _snip("$fun.target.max_threads_per_block >= 32")(axpy_env) is True
    assert _snip("$i.is_load() && $lhs.is_dim()")(axpy_env) in (True, False)
    assert _snip("[1, 2, 4][2] * 3 - 1")(axpy_env) == 11
