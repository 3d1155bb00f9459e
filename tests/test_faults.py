"""Fault injection (issue 20): what a careless or hostile user can do, each
answered by a clear error or a recorded status, with nothing lost, nothing
hung and nothing executed. One section per class of fault; each case checks
the answer and that nothing it should not touch changed."""

from __future__ import annotations

import json
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
from workbench.runtime.records import SCHEMA


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


def test_store_completes_a_whole_last_record_that_lost_its_newline(tmp_path):
    """A whole record without its newline (an editor's save) was cut from
    the store as a killed writer's line: a measurement gone from it."""
    store = RecordStore(tmp_path / "r.jsonl")
    store.append([_REC, {**_REC, "median_ns": 7.0}])
    store.path.write_bytes(store.path.read_bytes().rstrip(b"\n"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.append({**_REC, "median_ns": 9.0})
        assert [r["median_ns"] for r in store.rows()][-2:] == [7.0, 9.0]
    assert not (tmp_path / "r.jsonl.truncated").exists()
    one = RecordStore(tmp_path / "one.jsonl")  # a store of one such line was refused
    one.path.write_bytes(json.dumps({**_REC, "schema": SCHEMA}).encode())
    one.append(_REC)
    assert len(one.rows()) == 2
    with pytest.raises(WorkbenchError, match="no such record store"):
        wb.load_records(tmp_path / "typo.jsonl")


def test_store_refuses_a_bad_batch_whole(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl")
    with pytest.raises(WorkbenchError, match="not one of"):
        store.append([_REC, {**_REC, "status": "exploded"}])
    assert not store.path.exists() or store.path.read_bytes() == b""


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


# ----------------------------------------------------- command line (--json)
def _cli(capsys, *argv):
    from workbench.cli import main
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def axpy64_trail(tmp_path_factory):
    root = wb.Candidate.root(wb.kernels.axpy(64))
    path = tmp_path_factory.mktemp("trail") / "t64.json"
    path.write_text(random_fixed(root, random.Random(1)).to_json())
    return path


def _bad_files(tmp_path):
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "num.json").write_text("42")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "other.json").write_text(json.dumps({"format": "workbench.explorer/1"}))
    (tmp_path / "target.json").write_text(json.dumps({"name": "t", "limits": {
        "max_threads_per_block": -1, "max_thread_dims": 3, "max_block_dims": 3,
        "max_grid_y_z": 65535, "shared_memory_bytes": "lots", "vector_widths": [2, 4],
        "max_unroll": 512, "warp_size": 32}}))


@pytest.mark.parametrize("argv", [
    ["choices", "--kernel", "nope"],
    ["choices", "--kernel", "axpy", "--sizes", "n=-4"],
    ["choices", "--kernel", "axpy", "--sizes", "n=abc"],
    ["choices", "--kernel", "axpy", "--sizes", "n"],
    ["choices", "--kernel", "axpy", "--sizes", "n=1099511627777"],
    ["choices", "--kernel", "matmul", "--sizes", "m=1048576,n=1048576,k=1048576"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64,bogus=3"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--space", "nowhere"],
    ["choices", "--kernel", "axpy", "--bogus-flag"],
    ["choices"],
    ["run", "--kernel", "axpy", "--sizes", "n=64", "--store", "none"],
    ["bound", "--kernel", "axpy", "--sizes", "n=64", "--target", "nowhere"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--trail", "{missing}"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--trail", "{tmp}/list.json"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--trail", "{tmp}/num.json"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--trail", "{tmp}/deep.json"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--trail", "{tmp}/bin.json"],
    ["choices", "--kernel", "axpy", "--sizes", "n=64", "--trail", "{tmp}/other.json"],
    ["bound", "--kernel", "axpy", "--sizes", "n=64", "--target", "{tmp}/list.json"],
    ["bound", "--kernel", "axpy", "--sizes", "n=64", "--target", "{tmp}/target.json"],
    ["bound", "--kernel", "axpy", "--sizes", "n=64", "--target", "{tmp}/deep.json"],
    ["volume-regions", "--spec", "{tmp}/list.json"],
    ["volume-regions", "--spec", "{missing}"],
    ["check-space", "{missing}"],
])
def test_cli_errors_are_json_data(capsys, tmp_path, argv):
    _bad_files(tmp_path)
    argv = [a.format(tmp=tmp_path, missing=tmp_path / "missing.json") for a in argv]
    rc, out, err = _cli(capsys, *argv, "--json")
    assert rc != 0
    got = json.loads(out)
    assert set(got) == {"error", "kind"} and got["error"] and got["kind"] != "internal", got
    assert "Traceback" not in err


def test_trail_on_another_kernel_is_refused_naming_both(capsys, axpy64_trail):
    rc, out, _ = _cli(capsys, "choices", "--kernel", "axpy", "--sizes", "n=128", "--trail",
                      str(axpy64_trail), "--json")
    got = json.loads(out)
    assert rc == 2 and "axpy(n=64)" in got["error"] and "axpy(n=128)" in got["error"]
    rc, out, err = _cli(capsys, "choices", "--kernel", "axpy", "--sizes", "n=128", "--trail",
                        str(axpy64_trail), "--allow-other-kernel", "--json")
    assert rc == 0 and "axpy(n=64)" in err and "axpy(n=128)" in err
    rc, out, _ = _cli(capsys, "choices", "--kernel", "axpy", "--sizes", "n=64", "--trail",
                      str(axpy64_trail), "--json")
    assert rc == 0 and json.loads(out)["fixed"] is True


def test_trail_with_a_wrong_digest_is_refused(capsys, axpy64_trail, tmp_path):
    data = json.loads(axpy64_trail.read_text())
    data["digest"] = "0" * 64
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    rc, out, _ = _cli(capsys, "choices", "--kernel", "axpy", "--sizes", "n=64", "--trail",
                      str(edited), "--json")
    assert rc == 2 and "digest" in json.loads(out)["error"]


def test_paths_inside_documents_are_not_followed(axpy64_trail, tmp_path):
    data = json.loads(axpy64_trail.read_text())
    for key, value in (("space", "/etc/passwd"), ("space", "../../gpu"),
                       ("kernel", {"builder": "axpy", "n": 64, "target": "/etc/passwd"})):
        with pytest.raises(WorkbenchError, match="not followed|not a kernel"):
            wb.Candidate.from_json(json.dumps({**data, key: value}))


# ------------------------------------------------------------- session state
@pytest.fixture()
def saved_session(tmp_path):
    from workbench.session import Session
    root = wb.Candidate.root(wb.kernels.axpy(64))
    s = Session(root, path=tmp_path / "state.json")
    for _ in range(2):
        ch = s.cand.choices()[0]
        s.apply(ch.name, ch.objects, ch.values[0])
    return s


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["branches"][0].update(pos=-3), "pos must be"),
    (lambda d: d["branches"][0].update(pos=99), "pos must be"),
    (lambda d: d["branches"][0].update(pos="1"), "pos must be"),
    (lambda d: d.update(current=5), "current must be"),
    (lambda d: d["kernel"].update(n=128), "other domains"),
    (lambda d: d.update(space="/etc/passwd"), "not followed"),
    (lambda d: d.update(target="../../secrets"), "not followed"),
    (lambda d: d.update(branches=[]), "non-empty"),
    (lambda d: d["branches"].append(dict(d["branches"][0])), "of its own"),
    (lambda d: d["branches"][0].update(trail="x"), "list of decisions"),
    (lambda d: d.update(kernel="axpy"), "kernel spec"),
])
def test_session_load_validates(saved_session, tmp_path, edit, match):
    from workbench.session import Session
    data = json.loads(saved_session.path.read_text())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(WorkbenchError, match=match):
        Session.load(bad)
    again = Session.load(saved_session.path)
    assert again.cand.digest() == saved_session.cand.digest()


def test_failed_autosave_leaves_the_session_as_it_was(saved_session):
    s = saved_session
    saved = s.path.read_text()
    state = (s.cand.digest(), s.branch.pos, len(s.branch.history), len(s.branches))
    s.path.unlink()
    s.path.mkdir()  # the state file is now a folder: the next save fails
    ch = s.cand.choices()[0]
    with pytest.raises(WorkbenchError, match="could not be saved"):
        s.apply(ch.name, ch.objects, ch.values[0])
    with pytest.raises(WorkbenchError, match="could not be saved"):
        s.new_branch("other")
    with pytest.raises(WorkbenchError, match="could not be saved"):
        s.undo()
    assert (s.cand.digest(), s.branch.pos, len(s.branch.history), len(s.branches)) == state
    assert [p.name for p in s.path.parent.iterdir() if p.suffix == ".tmp"] == []
    s.path.rmdir()
    s.path.write_text(saved)


# ------------------------------------------------------------- volume specs
_VOL = {"inputs": {"x": [1, 3, 8, 8]}, "constants": {"w": [4, 3, 3, 3], "zero": []},
        "ops": [{"op": "pad", "result": "p", "source": "x", "low": [0, 0, 1, 1],
                 "high": [0, 0, 1, 1], "value": "zero"},
                {"op": "conv2d_nchw_fchw", "result": "y", "input": "p", "filter": "w"}],
        "output": "y"}


@pytest.mark.parametrize("path, value, match", [
    (("inputs", "x"), [1, 3, "4 or i1 = 100", 8], "list of"),
    (("inputs", "x"), [1, 3, 2**40, 8], "at most"),
    (("inputs", "x"), [1, 3, 2**20, 2**20], "elements"),
    (("inputs", "x"), [1] * 40, "rank"),
    (("ops", 1, "strides"), [0, 1], "positive"),
    (("ops", 1, "dilations"), [1, 0], "positive"),
    (("ops", 1, "strides"), [1], "2 integers"),
    (("ops", 1, "bogus"), 1, "unknown field"),
    (("ops", 0, "low"), [0, 0, 2**62, 1], "beyond"),
    (("ops", 0, "value"), "zero or 1 = 1", "volume name|not a declared"),
    (("output",), "y or 1", "not the result"),
])
def test_volume_spec_is_checked_before_isl(path, value, match):
    import copy

    from workbench.volume import Program
    spec = copy.deepcopy(_VOL)
    node = spec
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    t0 = time.monotonic()
    with pytest.raises(WorkbenchError, match=match):
        Program.from_spec(spec)
    assert time.monotonic() - t0 < 5


# -------------------------------------------------------- careless use
def test_no_python_version_only_apis():
    """requires-python is 3.10: no API that only 3.11+ has (datetime.UTC made
    every evaluate() fail on 3.10)."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    newer = re.compile(r"\b(?:_?dt|datetime)\.UTC\b|\bimport tomllib\b|\bfrom tomllib\b|"
                       r"\bExceptionGroup\b|\bexcept\s*\*|\bTaskGroup\b|\bStrEnum\b|"
                       r"typing import[^\n]*\b(?:Self|LiteralString|Never|assert_never)\b|"
                       r"\bhashlib\.file_digest\b|\bcontextlib\.chdir\b|\.add_note\(")
    found = []
    for folder in ("workbench", "widgets", "benchmarks"):
        for f in sorted((root / folder).rglob("*.py")):
            for n, line in enumerate(f.read_text(encoding="utf-8").split("\n"), 1):
                if newer.search(line):
                    found.append(f"{f.relative_to(root)}:{n}: {line.strip()}")
    assert not found, "Python 3.11+ only:\n" + "\n".join(found)


def test_evaluation_leaves_no_temporary_folder(small_cands, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    evaluate(small_cands[:2], "cpu", store=None)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------- bad decisions and trails
@pytest.fixture(scope="module")
def bb_root():
    return wb.Candidate.root(wb.kernels.random_basic_block(6, seed=1))


@pytest.mark.parametrize("args", [
    ("bogus", ("i0", "i1"), "BEFORE"), ("order", ("zz",), "BEFORE"),
    ("order", ("i0", "i1"), "NOPE"), ("order", 5, "BEFORE"), (None, None, None),
    ("order", ("i0", "i1"), None), ("order", [("i0", "i1")], "BEFORE"),
])
def test_bad_decisions_are_invalid_and_change_nothing(bb_root, args):
    before = bb_root.digest()
    with pytest.raises(wb.InvalidDecision):
        bb_root.apply(*args)
    assert bb_root.digest() == before


@pytest.mark.parametrize("trail", [[{"choice": "order"}], [{"x": 1}], ["str"], [None], [5]])
def test_malformed_trails_are_invalid(bb_root, trail):
    with pytest.raises(wb.InvalidDecision):
        wb.Candidate.replay(bb_root.kernel, trail)


# ------------------------------------------------------------ .space files
@pytest.mark.parametrize("text", [
    'choice enum x($a in Insts):\n value A:\n  requires "$a.name == \n',  # unterminated
    "choice enum x($a in Nowhere):\n value A:\nend\n",  # unknown set
    'require forall $a in Insts: "' + "(" * 3000 + "1" + ")" * 3000 + '"\n',  # too long
    'require forall $a in Insts: "' + "!" * 100 + 'true"\n',  # too deep
    "\x00\x01binary",
])
def test_bad_space_files_are_named(capsys, tmp_path, text):
    f = tmp_path / "bad.space"
    f.write_text(text)
    rc, out, err = _cli(capsys, "check-space", str(f), "--json")
    got = json.loads(out)
    assert rc == 2 and got["kind"] in ("SpaceSyntaxError", "SpaceError"), got
    assert "Traceback" not in err


def test_a_second_logical_dimension_of_one_name_is_refused():
    """Labels, recipes and the strip products name logical dimensions by
    name: a kernel spec that repeats one gets a clear error, not a merge."""
    from workbench.kernels.ir import Kernel
    k = Kernel("twice", {"builder": "twice"})
    k.logical_dim("m", 64)
    with pytest.raises(WorkbenchError, match="second logical dimension named 'm'"):
        k.logical_dim("m", 32)
    assert [ld.name for ld in k.logical_dims()] == ["m"]  # nothing kept of the refused one


def test_bad_decisions_and_evaluations_are_named(tmp_path):
    """evaluate() recorded a compile_error for a candidate with open choices
    (a record is always of a fixed candidate); a plain-string `objects` in a
    trail was split into characters; an unknown choice in decide_all read
    as 'objects that never appear'; an empty `values` as a value '' outside
    the domain."""
    root = wb.Candidate.root(wb.kernels.axpy(256))
    store = tmp_path / "r.jsonl"
    half = root.apply("dim_kind", "d0", "BLOCK")
    with pytest.raises(WorkbenchError, match=r"candidate 0 has \d+ open choices"):
        evaluate([half], "cpu", store=store)
    assert not store.exists()
    with pytest.raises(WorkbenchError, match="loop-nest kernel"):
        evaluate([wb.Candidate.root(wb.kernels.random_basic_block(4, seed=1))], "cpu",
                 store=store)
    got = wb.Candidate.replay(root.kernel, [{"choice": "dim_kind", "objects": "d0",
                                             "value": "BLOCK"}])
    assert got.digest() == half.digest()
    with pytest.raises(WorkbenchError, match="keeps no value"):
        wb.Candidate.replay(root.kernel, [{"choice": "dim_kind", "objects": ["d0"],
                                           "values": []}])
    with pytest.raises(WorkbenchError, match="unknown choice 'nosuch'"):
        root.decide_all([wb.Decision("nosuch", ("d0",), ("X",))])
    with pytest.raises(WorkbenchError, match=r"dim_kind\('d0',\) is not fixed"):
        root.value("dim_kind", "d0")
