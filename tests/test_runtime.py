"""Measured timings: the CPU evaluator on random fixed candidates, failures
as statuses, the append-only record store, the CUDA evaluator (skipped
without a GPU) and the `run` command's contract."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from gpu_cases import build

import workbench as wb
from workbench.errors import WorkbenchError
from workbench.runtime import STATUSES, RecordStore, evaluate, load_records
from workbench.runtime import cpu as cpu_backend


def _matmul_cands(k=3):
    root = wb.Candidate.root(build("matmul"))
    import random

    from workbench.descent import random_fixed
    return [random_fixed(root, random.Random(s)) for s in range(k)]


def test_compile_error_and_wrong_result_are_statuses(tmp_path, monkeypatch):
    cands = _matmul_cands(3)
    real = cpu_backend.generate

    def broken(cand, name):
        g = real(cand, name)
        if name == "wb_0":
            return type(g)(g.name, g.cuda, g.c.replace("{", "{ syntax error;", 1), g.launch,
                           g.implementation)
        if name == "wb_1":  # reads B where it should read A: a wrong result
            return type(g)(g.name, g.cuda, g.c.replace("A[", "B["), g.launch,
                           g.implementation)
        return g
    monkeypatch.setattr(cpu_backend, "generate", broken)
    store = RecordStore(tmp_path / "r.jsonl")
    recs = evaluate(cands, "cpu", store=store)
    assert [r["status"] for r in recs] == ["compile_error", "wrong_result", "ok"]
    assert "error" in recs[0]["message"]
    assert "relative error" in recs[1]["message"] and recs[1]["verified"] is False
    assert list(store.load()["status"]) == ["compile_error", "wrong_result", "ok"]


def test_a_run_its_bound_proves_too_long_is_not_run(tmp_path):
    """A backend with a first-run limit (the GPU's) is not handed a candidate
    whose bound is past it: a timeout status saying why, the others run."""
    from workbench.runtime import get_backend
    cands = _matmul_cands(3)
    be = get_backend("cpu")
    got = []
    real = be.run

    def spy(kernel, run, **kw):
        got.append(len(run))
        return real(kernel, run, **kw)
    be.run = spy
    lows = sorted(wb.bound(c, be.target).value_ns for c in cands)
    be.first_run_limit_s = (lows[0] + lows[1]) / 2 / 1e9  # only the lowest bound fits
    recs = evaluate(cands, be, store=tmp_path / "r.jsonl")
    assert got == [1]
    fits = [r["bound_ns"] <= be.first_run_limit_s * 1e9 for r in recs]
    assert sorted(fits) == [False, False, True]
    for r, ok in zip(recs, fits, strict=True):
        assert r["status"] == ("ok" if ok else "timeout"), r["message"]
        assert ok or ("not run: its bound" in r["message"] and not r["times_ns"])
    assert recs[0]["reference_median_ns"] > 0  # the reference still ran


def test_a_callers_run_limit_is_the_same_rule():
    """`run_limit_s` (a campaign stage's limit) rules like the backend's
    first-run limit; when nothing is left to run, the backend is not asked
    at all (no reference is timed)."""
    cands = _matmul_cands(2)
    recs = evaluate(cands, "cpu", store=None, run_limit_s=1e-12)
    assert [r["status"] for r in recs] == ["timeout", "timeout"]
    assert all("not run: its bound" in r["message"] and r["bound_ns"] > 0 for r in recs)
    assert recs[0]["reference_median_ns"] is None


def test_a_callers_bounds_are_taken_as_given(monkeypatch):
    """`bounds=`: a caller that has a candidate's Bound on the backend's
    bound target (the search, before measuring a rollout's end) passes it,
    and evaluate does not bound that candidate again; None means "bound it
    here". One bound per candidate, else a clear error."""
    import workbench.runtime.evaluator as ev
    from workbench.runtime import get_backend
    from workbench.runtime.backend import bound_target
    cands = _matmul_cands(2)
    be = get_backend("cpu")
    given = wb.bound(cands[0], bound_target(be))
    calls = []
    real = ev.bound
    monkeypatch.setattr(ev, "bound", lambda c, t: calls.append(c) or real(c, t))
    recs = evaluate(cands, be, store=None, run_limit_s=1e-12, bounds=[given, None])
    assert calls == [cands[1]]
    assert recs[0]["bound_ns"] == given.value_ns
    assert recs[1]["bound_ns"] == real(cands[1], bound_target(be)).value_ns
    with pytest.raises(wb.WorkbenchError, match="got 1 bounds for 2 candidates"):
        evaluate(cands, be, store=None, bounds=[given])


def test_cuda_without_gpu_is_no_device(tmp_path):
    from workbench.runtime.cuda import _cupy
    if _cupy() is not None:
        pytest.skip("a GPU is present: test_cuda_evaluates covers it")
    recs = evaluate(_matmul_cands(1), "cuda", store=tmp_path / "r.jsonl")
    assert recs[0]["status"] == "no_device"
    assert "--backend cpu" in recs[0]["message"]
    assert recs[0]["bound_ns"] > 0


def test_cuda_evaluates(tmp_path):
    from workbench.runtime.cuda import _cupy
    if _cupy() is None:
        pytest.skip("no GPU: cupy is missing or cupy.is_available() is false")
    recs = evaluate(_matmul_cands(5), "cuda", store=tmp_path / "r.jsonl")
    assert all(r["status"] == "ok" and r["verified"] for r in recs), recs
    assert all(r["reference"].startswith("cupy") and r["ratio_to_reference"] for r in recs)
    assert all("x_registers" in r for r in recs)


def _write(store, n):
    store.append([{"status": "ok", "kernel": "k", "median_ns": float(i), "times_ns": [1.0]}
                  for i in range(n)])


def test_store_truncated_last_line(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl")
    _write(store, 3)
    data = store.path.read_bytes()
    store.path.write_bytes(data[:-20])  # a run killed while writing
    with pytest.warns(UserWarning, match="truncated last line skipped"):
        assert len(store.load()) == 2
    with pytest.warns(UserWarning, match="moved to"):  # under the lock: a killed writer's
        _write(store, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(store.load()) == 3
    aside = store.path.with_suffix(".jsonl.truncated").read_text()
    assert aside.strip() and aside.strip() in data.decode()


def test_store_refuses_other_schema_and_corruption(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl")
    _write(store, 2)
    with store.path.open("a") as fh:
        fh.write(json.dumps({"schema": "workbench.run/0", "status": "ok"}) + "\n")
    with pytest.raises(WorkbenchError, match=r"r.jsonl:3: record schema 'workbench.run/0'"):
        store.load()
    other = RecordStore(tmp_path / "s.jsonl")
    _write(other, 2)
    lines = other.path.read_text().split("\n")
    other.path.write_text("\n".join([lines[0][:10], lines[1], ""]))
    with pytest.raises(WorkbenchError, match="s.jsonl:1: not a JSON record"):
        other.load()
    with pytest.raises(WorkbenchError, match="not one of"):
        store.append({"status": "exploded"})
    assert set(STATUSES) == {"ok", "compile_error", "launch_error", "wrong_result", "timeout",
                             "no_device", "reference", "crash"}


def test_cli_run(tmp_path):
    out = subprocess.run([sys.executable, "-m", "workbench", "run", "--kernel", "axpy",
                          "--sizes", "n=256", "--random-seed", "1", "--backend", "cpu",
                          "--store", str(tmp_path / "r.jsonl"), "--json"],
                         capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    from workbench.runtime.calibrate import host_cpu_target
    # cpu_reference, or this host's table once `calibrate --backend cpu` wrote one
    assert got["status"] == "ok" and got["target"] == host_cpu_target()
    assert len(got["times_ns"]) >= 10 and got["median_ns"] > 0
    assert len(load_records(tmp_path / "r.jsonl")) == 1
    bad = subprocess.run([sys.executable, "-m", "workbench", "run", "--kernel", "axpy",
                          "--sizes", "n=256", "--json", "--store", "none"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "fixed candidate" in bad.stderr


def test_calibration_kernels_compile():
    from workbench.codegen.compile import compile_cuda, nvcc_path
    from workbench.runtime.calibrate import SOURCE
    if nvcc_path() is None:
        pytest.skip("nvcc is not installed")
    ptx = "".join(p.read_text() for p in compile_cuda([SOURCE], jobs=1))
    for name in ("wb_copy", "wb_l2_read", "wb_fma", "wb_shared_read", "wb_fma_chain",
                 "wb_chase", "wb_chase_shared", "wb_empty"):
        assert f".entry {name}" in ptx


def test_calibrated_table_loads(tmp_path):
    """A table built from (made-up) measurements is a valid target: every
    number documented, rates 5 % above the runs but never below the base
    table's peak (a bound must not slow the chip down), latencies 5 % below."""
    from workbench.model import hardware
    from workbench.runtime.calibrate import table
    meas = {"dram_bytes_per_s": 5.0e12, "l2_bytes_per_s": 9.0e12, "fma_per_s": 30e12,
            "shared_bytes_per_s": 30e12, "fma_latency_cycles": 4.2,
            "shared_latency_cycles": 30.0, "l1_latency_cycles": 35.0,
            "l2_latency_cycles": 260.0, "launch_overhead_s": 3e-6}
    raw = table(meas, "NVIDIA H200", 132, 1.98, when="2026-11-21")
    path = tmp_path / f"{raw['name']}.json"
    path.write_text(json.dumps(raw))
    hw = hardware(wb.target.load_target(str(path)))
    assert hw.name == "nvidia_h200"
    assert hw.resources["gpu"]["dram_bytes"] == pytest.approx(5.0e12 / 1.98e9 * 1.05, rel=1e-3)
    peak = wb.target.load_target("h200").raw["model"]["resources"]
    assert 30e12 / 1.98e9 * 1.05 < peak["gpu"]["fma"]  # the FMA run fell short: the peak stays
    assert raw["model"]["resources"]["gpu"]["fma"] == peak["gpu"]["fma"]
    assert raw["model"]["resources"]["block"]["fma"] == peak["block"]["fma"]
    assert "kept" in raw["sources"]["model.resources.gpu.fma"]
    assert hw.latency["load_l2"] == pytest.approx(260 * 0.95)
    b = wb.bound(wb.Candidate.root(wb.kernels.matmul(64, 64, 64)), target=str(path))
    assert b.value_ns > 0
    # another file of the same name (a campaign's own target.json beside
    # today's table of the same device) keeps its own numbers
    other = tmp_path / "again" / path.name
    other.parent.mkdir()
    other.write_text(json.dumps(table({**meas, "dram_bytes_per_s": 6.0e12}, "NVIDIA H200", 132,
                                      1.98, when="2026-11-22")))
    again = hardware(wb.target.load_target(str(other)))
    assert again.name == hw.name
    assert again.resources["gpu"]["dram_bytes"] == pytest.approx(6.0e12 / 1.98e9 * 1.05, rel=1e-3)
    assert hardware(wb.target.load_target(str(path))) is hw
    assert "launch_floor_cycles" not in raw["model"]  # not measured: no floor


def test_a_table_is_found_again_under_another_user_data_directory(tmp_path, monkeypatch):
    """Outside a checkout the data directory is the user's (XDG_DATA_HOME,
    HOME): a process that changes them finds the table of the new one, not
    the place it found first."""
    from workbench.paths import data_dir
    monkeypatch.delenv("WORKBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)  # no checkout above: the user data directory
    peak = wb.target.load_target("h200").raw
    found = []
    for who in ("alice", "bob"):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / who))
        where = data_dir() / "targets" / "mine_gpu.json"
        where.parent.mkdir(parents=True)
        where.write_text(json.dumps({**peak, "name": "mine_gpu", "description": who}))
        found.append(wb.target.load_target("mine_gpu").description)
    assert found == ["alice", "bob"]


def test_calibrated_launch_floor(tmp_path):
    """An empty kernel timed as the backend times candidates (3.2 µs, made
    up) gives a floor 20 % below it, 2,560 ns: axpy of 256 elements, whose
    model says a few hundred ns, is bounded by the floor, with the reason
    named; a matmul 1024 keeps its own bound, far above."""
    from workbench.runtime.calibrate import table
    meas = {"dram_bytes_per_s": 5.0e12, "l2_bytes_per_s": 9.0e12, "fma_per_s": 30e12,
            "shared_bytes_per_s": 30e12, "fma_latency_cycles": 4.2,
            "shared_latency_cycles": 30.0, "l1_latency_cycles": 35.0,
            "l2_latency_cycles": 260.0, "launch_overhead_s": 7e-6, "empty_kernel_s": 3.2e-6}
    raw = table(meas, "NVIDIA H200", 132, 1.98, when="2026-11-26")
    assert raw["model"]["launch_floor_cycles"] == pytest.approx(3.2e-6 * 1.98e9 * 0.8)
    t = tmp_path / "floor.json"
    t.write_text(json.dumps(raw))
    t = str(t)
    small = wb.Candidate.root(wb.kernels.axpy(256))
    assert wb.bound(small, "h200").value_ns < 2560
    b = wb.bound(small, t)
    assert b.value_ns == pytest.approx(2560)
    assert b.justification.children[0].kind == "Launch"
    big = wb.Candidate.root(wb.kernels.matmul(1024, 1024, 1024))
    assert wb.bound(big, t).value_ns == pytest.approx(wb.bound(big, "h200").value_ns, rel=0.5)


def test_cli_calibrate_without_gpu():
    from workbench.runtime.cuda import _cupy
    if _cupy() is not None:
        pytest.skip("a GPU is present")
    out = subprocess.run([sys.executable, "-m", "workbench", "calibrate", "--backend", "cuda"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "no CUDA device" in out.stderr


def test_cpu_blocks_in_parallel(tmp_path):
    """With OpenMP, blocks spread over two threads; results stay verified and
    the bound (the one-core table scaled to two cores) stays below every sample."""
    from workbench.codegen.compile import openmp_flag
    from workbench.runtime.cpu import CpuBackend
    if openmp_flag() is None:
        pytest.skip("the C compiler has no OpenMP")
    cands = _matmul_cands(4)
    recs = evaluate(cands, CpuBackend(threads=2), store=tmp_path / "r.jsonl")
    for r in recs:
        assert r["status"] == "ok" and r["verified"], r["message"]
        assert r["bound_ns"] <= min(r["times_ns"])
        assert r["versions"]["threads"] == 2
    with pytest.raises(WorkbenchError, match="positive integer"):
        CpuBackend(threads=0)


def test_a_search_worker_prebuilds_what_the_gpu_then_only_loads(tmp_path):
    """A search worker compiles its rollout's CUDA (`prebuild`: cubin bytes
    and ptxas facts) while the GPU measures one at a time; the backend uses
    it only for the very same code, and a kernel nvcc refused stays its
    message. No GPU needed: nvcc compiles for sm_90 here."""
    from workbench.codegen import Generated, generate
    from workbench.codegen.compile import nvcc_path
    from workbench.runtime.cuda import CudaBackend, _matching, unpack_prebuilt
    if nvcc_path() is None:
        pytest.skip("nvcc is not on PATH")
    cand = _matmul_cands(1)[0]
    be = CudaBackend()
    if be.cp is None:
        assert be.prebuild(cand) is None  # no device: no architecture to build for
        be.arch = "sm_90"
    p = be.prebuild(cand)
    g = generate(cand, "wb_0")
    assert p["cuda"] == g.cuda and p["cubin"][:4] == b"\x7fELF"
    assert p["facts"]["registers"] > 0
    gens = [Generated("wb_0", g.cuda, "", {}, None), Generated("wb_1", "other", "", {}, None),
            "could not generate", Generated("wb_3", "bad", "", {}, None)]
    pre = _matching(gens, [p, p, p, {"cuda": "bad", "error": "nvcc: no"}])
    assert set(pre) == {"wb_0", "wb_3"} and pre["wb_3"] == "nvcc: no"
    built = unpack_prebuilt(pre, str(tmp_path))
    path, facts = built["wb_0"]
    assert path.read_bytes() == p["cubin"] and facts == p["facts"]
    assert built["wb_3"] == "nvcc: no"


def test_cuda_child_deadline_kills_and_goes_on():
    """A CUDA kernel cannot be interrupted: the backend measures in a child
    process and kills it when a candidate's first run outlasts its limit.
    The candidate is a timeout, the others are measured by a new child, and
    one the child dies on is a launch error (here a stand-in child: no GPU)."""
    import time

    import fake_cuda_child

    from workbench.codegen import Generated
    from workbench.runtime.cuda import CudaBackend, _in_child, _kill
    be = CudaBackend.__new__(CudaBackend)
    be.isolate, be._child, be.first_run_limit_s, be.compile_s = True, None, 1.0, 0.0
    be.child_main = fake_cuda_child.main
    gens = [Generated(f"wb_{i}", code, "", {}, None)
            for i, code in enumerate(["ok", "HANG", "ok", "DIE", "ok"])]
    gens.insert(2, "could not generate")
    t0 = time.monotonic()
    try:
        res, ref = _in_child(be, {"builder": "axpy", "n": 64}, gens, samples=1, timeout_s=0.01,
                             seed=0)
    finally:
        _kill(be)
    assert [m.status for m in res] == ["ok", "timeout", "compile_error", "ok", "launch_error",
                                       "ok"]
    assert "killed after" in res[1].message and "died" in res[4].message
    assert res[0].extra["pid"] != res[3].extra["pid"]  # a new child after the kill
    assert ref is not None and ref.name == "fake"
    # a launch error replaces the child (its context may be broken); a child
    # that dies timing the reference keeps every result it sent
    gens = [Generated(f"wb_{i}", code, "", {}, None)
            for i, code in enumerate(["ok", "FAIL", "ok", "REFDIE"])]
    try:
        res, ref = _in_child(be, {"builder": "axpy", "n": 64}, gens, samples=1, timeout_s=0.01,
                             seed=0)
    finally:
        _kill(be)
    assert [m.status for m in res] == ["ok", "launch_error", "ok", "ok"]
    assert res[0].extra["pid"] != res[2].extra["pid"] == res[3].extra["pid"]
    assert ref is not None  # asked again of a new child
    # prebuilt cubins reach the child, again after it was replaced
    gens = [Generated(f"wb_{i}", code, "", {}, None) for i, code in enumerate(["ok", "HANG", "ok"])]
    try:
        res, _ = _in_child(be, {"builder": "axpy", "n": 64}, gens, samples=1, timeout_s=0.01,
                           seed=0, pre={"wb_2": (b"cubin", {})})
    finally:
        _kill(be)
    assert [m.status for m in res] == ["ok", "timeout", "ok"]
    assert [res[0].extra["prebuilt"], res[2].extra["prebuilt"]] == [False, True]
    assert time.monotonic() - t0 < 60


class _FakeArray:
    """A device array that allocates nothing (the benchmarks ask for GiBs)."""

    def __init__(self, n=1, *_, **__):
        self.n = n if isinstance(n, int) else len(n)

    def fill(self, _):
        pass

    def get(self):
        return np.full(4, 1000.0)


class _FakeEvent:
    def record(self):
        pass

    def synchronize(self):
        pass


def test_calibrate_runs_end_to_end_with_a_stand_in(tmp_path, monkeypatch):
    """`calibrate --backend cuda` against a stand-in for CuPy (every kernel
    a no-op, every event pair 4 µs apart, every clock64 chain 1,000 cycles):
    each microbenchmark's code runs, the table is written and loads as a
    target, with the launch floor from the empty kernel timed the backend's
    way. What a GPU measures is another matter; this keeps the code a lent
    GPU's few minutes would run from failing on a name or a shape."""
    from types import SimpleNamespace

    import workbench.runtime.calibrate as cal
    from workbench.model import hardware
    props = {"multiProcessorCount": 132, "l2CacheSize": 50 << 20, "name": b"Fake H200",
             "clockRate": 1980000}
    cuda = SimpleNamespace(
        runtime=SimpleNamespace(getDeviceProperties=lambda i: props),
        Device=lambda: SimpleNamespace(synchronize=lambda: None),
        Event=_FakeEvent, get_elapsed_time=lambda a, b: 0.004)
    fake = SimpleNamespace(
        RawModule=lambda code: SimpleNamespace(get_function=lambda name: lambda *a, **k: None),
        ones=_FakeArray, empty=_FakeArray, zeros=_FakeArray, asarray=_FakeArray,
        float32=np.float32, int32=np.int32, int64=np.int64, cuda=cuda)
    monkeypatch.setattr(cal, "cupy_module", lambda: fake)
    path = cal.calibrate(tmp_path)
    raw = json.loads(path.read_text())
    assert path.name == "fake_h200.json"
    assert raw["measured"]["empty_kernel_s"] == pytest.approx(4e-6)
    assert raw["model"]["latency"]["load_l2"] == pytest.approx(1000 / 4096 * 0.95, abs=0.01)
    hw = hardware(wb.target.load_target(str(path)))
    assert hw.ns(hw.launch_floor_cycles) == pytest.approx(3200)


def test_time_launches_warms_up_a_short_kernel_longer(monkeypatch):
    """A short launch is warmed up several times (clocks settle over a few
    ms), a long one once; then exactly `samples` timed launches (a stand-in
    for CuPy, so this runs without a GPU, and a clock the launches advance,
    so a loaded machine's pauses do not end the warm-up early)."""
    from types import SimpleNamespace

    import workbench.runtime.cuda as cuda_mod
    from workbench.runtime.cuda import WARMUP_MAX, WARMUP_S, time_launches
    now = [0.0]
    monkeypatch.setattr(cuda_mod, "time", SimpleNamespace(perf_counter=lambda: now[0]))

    class Event:
        def record(self):
            self.t = now[0]

        def synchronize(self):
            pass
    cuda = SimpleNamespace(Event=Event, Device=lambda: SimpleNamespace(synchronize=lambda: None),
                           get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3)
    cp = SimpleNamespace(cuda=cuda)
    flush = SimpleNamespace(fill=lambda v: None)
    short = WARMUP_S / (2 * WARMUP_MAX)  # the cap ends its warm-up, not the clock
    for pause, warmups in ((short, WARMUP_MAX), (2 * WARMUP_S, 1)):
        calls = []

        def launch(pause=pause, calls=calls):
            calls.append(1)
            now[0] += pause
        times = time_launches(cp, launch, flush, 4)
        assert len(times) == 4 and len(calls) == warmups + 4
        assert times == pytest.approx([pause * 1e9] * 4)


def test_inputs_are_drawn_once_per_kernel_and_seed():
    """A search measures one kernel over and over: its inputs and numpy's
    outputs are drawn once (axpy 2^26 takes seconds), kept read-only, and
    drawn anew for another seed or kernel."""
    from workbench.runtime.backend import inputs_for
    k = wb.kernels.matmul(8, 8, 4)
    a, ea = inputs_for(k, 0)
    b, eb = inputs_for(k, 0)
    assert a is b and ea is eb
    assert not a["A"].flags.writeable and not ea["C"].flags.writeable
    c, _ = inputs_for(k, 1)
    assert c is not a and not np.array_equal(c["A"], a["A"])
    d, _ = inputs_for(wb.kernels.matmul(8, 8, 4), 0)  # only the last is kept: drawn again
    assert d is not a and np.array_equal(d["A"], a["A"])


class _CopySpy(np.ndarray):
    """An input array that notes each copy `astype` makes of it."""
    copies: list = []

    def astype(self, dtype, *args, copy=True, **kw):
        if copy:
            _CopySpy.copies.append(np.dtype(dtype))
        return np.asarray(self).astype(dtype, *args, copy=copy, **kw)


@pytest.mark.parametrize("name, sizes", [("axpy", {"n": 4096}),
                                         ("matmul", {"m": 32, "n": 16, "k": 8}),
                                         ("batched_matmul", {"b": 2, "m": 8, "n": 8, "k": 4})])
def test_the_reference_times_the_computation_not_copies_of_its_inputs(name, sizes):
    """`baseline` (the library's float32 implementation the campaign times
    as the reference) copies no float32 input: CuPy does not elide them as
    numpy does, and two copies made CuPy's axpy reference on the H200 twice
    as slow (1.28 ms for 0.64 ms)."""
    kernel = getattr(wb.kernels, name)(**sizes)
    inputs = kernel.make_inputs(np.random.default_rng(0))
    spied = {k: v.view(_CopySpy) if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    _CopySpy.copies = []
    got = kernel.baseline(spied)
    assert _CopySpy.copies == []
    for k, v in kernel.reference(inputs).items():
        np.testing.assert_allclose(np.asarray(got[k]), v, rtol=1e-4, atol=1e-4)


def test_the_cpu_reference_counts_numpy_work_not_waits(monkeypatch):
    """In a busy explorer the numpy reference read 16.0 ms for a 27 µs
    product (its samples whole scheduler ticks of waiting), and the record's
    ratio to numpy was 600× too kind. It is timed now on as many BLAS
    threads as the generated code has, by this thread's CPU time."""
    import time

    from threadpoolctl import threadpool_info
    k = wb.kernels.matmul(64, 64, 32)
    inputs, _ = cpu_backend.inputs_for(k, 0)
    seen = []

    def waiting(d, xp=np):
        seen.append([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])
        time.sleep(0.01)  # a wait: no work of numpy's
        return {}
    monkeypatch.setattr(k, "baseline", waiting)
    ref = cpu_backend.CpuBackend().reference(k, inputs, samples=5)
    assert len(ref.times_ns) == 5 and max(ref.times_ns) < 5e6  # not the 10 ms slept
    assert all(n == [1] * len(n) for n in seen)  # BLAS on the generated code's one thread
    monkeypatch.undo()
    ref = cpu_backend.CpuBackend().reference(k, inputs, samples=5)
    assert 0 < ref.median_ns < 5e6  # numpy's own product: some work, counted
