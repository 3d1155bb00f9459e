"""GPU facts without a GPU (issue 21): ptxas's report of registers, spills,
shared and local memory, the occupancy they allow on a target, the bound
with registers in μ, `codegen --json` carrying them, and the CUDA backend's
batch build (checked with a stand-in for CuPy where no GPU is)."""

import json
import random
import subprocess
import sys
from types import SimpleNamespace

import pytest
from gpu_cases import build

import workbench as wb
from workbench.codegen import generate
from workbench.codegen.compile import (
    nvcc_path,
    occupancy,
    parse_ptxas,
    ptxas_report,
    resources,
    spills,
)
from workbench.descent import random_fixed
from workbench.model.registers import bound_with_registers, register_threads_per_sm

needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")

REPORT = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k0' for 'sm_90'
ptxas info    : Function properties for k0
    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 384 bytes cmem[0]
ptxas info    : Compiling entry function 'k1' for 'sm_90'
ptxas info    : Function properties for k1
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 384 bytes cmem[0]
"""


def test_parse_ptxas_per_kernel():
    got = parse_ptxas(REPORT)
    assert got["k0"] == {"registers": 255, "spill_stores": 40, "spill_loads": 36,
                         "spill_bytes": 76, "stack_bytes": 48, "shared_bytes": 4096,
                         "local_bytes": 48, "barriers": 1, "arch": "sm_90"}
    assert got["k1"]["registers"] == 32 and got["k1"]["shared_bytes"] == 0
    assert spills(got["k0"]) and not spills(got["k1"])


def test_occupancy_limits():
    """The CUDA occupancy calculator's arithmetic on h200 (cc 9.0): 64 K
    registers, allocated per warp in units of 256; 2048 threads, 32 blocks
    and 228 KB of shared memory per SM."""
    occ = occupancy({"registers": 77, "shared_bytes": 0}, {"block": [128, 1, 1]}, "h200")
    # 77 registers -> 80 per thread -> 2560 per warp -> 25 warps -> 6 blocks of 4 warps
    assert occ["limits"]["registers"] == 6 and occ["blocks_per_sm"] == 6
    assert occ["limited_by"] == "registers" and occ["occupancy"] == pytest.approx(24 / 64)
    occ = occupancy({"registers": 16}, {"block": [64, 1, 1], "shared_bytes": 100_000}, "h200")
    assert occ["limited_by"] == "shared_memory" and occ["blocks_per_sm"] == 2
    occ = occupancy({"registers": 16}, {"block": [32, 1, 1]}, "h200")
    assert occ["limited_by"] == "blocks" and occ["blocks_per_sm"] == 32


def test_register_threads_per_sm():
    assert register_threads_per_sm(32, 256, "h200") == 2048  # registers do not limit
    assert register_threads_per_sm(255, 256, "h200") == 256  # 8 warps of 8,192 registers
    # 128 registers: 4,096 per warp, 16 warps: half of a 1,024-thread block fits, so none
    # would launch; μ stays at one block
    assert register_threads_per_sm(128, 1024, "h200") == 1024
    assert register_threads_per_sm(64, 1024, "h200") == 1024  # 32 warps: one block
    assert register_threads_per_sm(0, 256, "h200") is None


def _fixed(n, seed=0, name="matmul"):
    root = wb.Candidate.root(build(name))
    rng = random.Random(seed)
    return [random_fixed(root, rng) for _ in range(n)]


def test_bound_with_registers_never_lower():
    """Fewer threads per SM can only lengthen the run: the register bound is
    never below the plain one, and equals it when registers do not bind."""
    for c in _fixed(2):
        plain = wb.bound(c).value_ns
        assert bound_with_registers(c, 16).value_ns == pytest.approx(plain)
        assert bound_with_registers(c, 255).value_ns >= plain * (1 - 1e-9)


def test_bound_with_registers_raises_some_bound():
    """At matmul 1024 some random candidates run more blocks than 255-register
    threads let the SMs hold at once, and their bound is the level below
    repeated over waves: μ_2 binds and the bound rises. (At 256×256×32 the
    grids are small and memory usage dominates: 1 candidate of 30 rose.)"""
    root = wb.Candidate.root(wb.kernels.build_kernel("matmul", {"m": 1024, "n": 1024, "k": 1024}))
    rng = random.Random(0)
    for _ in range(30):
        c = random_fixed(root, rng)
        if bound_with_registers(c, 255).value_ns > wb.bound(c).value_ns * 1.0001:
            return
    pytest.fail("no candidate's bound rose with 255 registers per thread")


@needs_nvcc
def test_ptxas_report_batch(tmp_path):
    cands = _fixed(4, seed=3)
    gens = [generate(c, f"k{i}") for i, c in enumerate(cands)]
    rep = ptxas_report(gens, "sm_90", workdir=str(tmp_path), jobs=2)
    assert set(rep.facts) == {g.name for g in gens} and not rep.errors
    for g in gens:
        f = rep.facts[g.name]
        assert f["registers"] > 0 and f["arch"] == "sm_90" and rep.cubins[g.name].exists()
    one = resources(cands[0], "h200")
    assert one["registers"] == rep.facts["k0"]["registers"]
    assert one["occupancy"]["blocks_per_sm"] >= 1


@needs_nvcc
def test_ptxas_report_isolates_a_bad_kernel(tmp_path):
    gens = [generate(c, f"k{i}") for i, c in enumerate(_fixed(2, seed=5))]
    sources = {g.name: g.cuda for g in gens}
    sources["broken"] = 'extern "C" __global__ void broken() { this is not CUDA; }'
    rep = ptxas_report(sources, "sm_90", workdir=str(tmp_path), jobs=1)
    assert "broken" in rep.errors and set(rep.facts) == {"k0", "k1"}


@needs_nvcc
def test_codegen_json_resources():
    out = subprocess.run([sys.executable, "-m", "workbench", "codegen", "--kernel", "axpy",
                          "--sizes", "n=256", "--random-seed", "1", "--json"],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)["resources"]
    assert res["registers"] > 0 and "spill_stores" in res and "local_bytes" in res
    # the DESIGN contract's keys
    assert {"registers", "spill_bytes", "shared_bytes", "local_bytes"} <= set(res)
    assert res["occupancy"]["target"] == "h200"


@needs_nvcc
def test_cuda_backend_batch_build(tmp_path, monkeypatch):
    """The CUDA backend's batch build without a GPU: a stand-in for CuPy
    (device sm_90, cubins 'loaded' by path) shows each candidate gets its
    cubin and its ptxas facts, and a kernel nvcc refuses is a compile error."""
    from workbench.runtime.cuda import CudaBackend
    loaded = []

    class Module:
        def __init__(self, path):
            loaded.append(path)

        def get_function(self, name):
            return SimpleNamespace(name=name)
    be = CudaBackend.__new__(CudaBackend)
    be._cubins = {}
    be.cp = SimpleNamespace(RawModule=lambda path: Module(path))
    be.arch = "sm_90"  # what __init__ reads from the device's properties
    cands = _fixed(3, seed=7)
    built = be._prebuild([generate(c, f"wb_{i}") for i, c in enumerate(cands)], str(tmp_path))
    assert set(built) == {"wb_0", "wb_1", "wb_2"}
    for i, c in enumerate(cands):
        fn, facts = be._function(generate(c, f"wb_{i}"), built)
        assert fn.name == f"wb_{i}" and facts["registers"] > 0
    assert len(set(loaded)) == len(loaded)  # one load per cubin
    with pytest.raises(wb.WorkbenchError):
        be._function(SimpleNamespace(name="bad", cuda=""), {"bad": "nvcc: error"})


@needs_nvcc
def test_ptxas_report_timeout_kills_and_names(tmp_path):
    """A job past its time limit is killed (its whole nvcc tree) and each of
    its kernels named with the reason, instead of holding the campaign."""
    gens = [generate(c, f"k{i}") for i, c in enumerate(_fixed(2, seed=9))]
    rep = ptxas_report(gens, "sm_90", workdir=str(tmp_path), jobs=1, timeout_s=0.01)
    assert set(rep.errors) == {"k0", "k1"} and not rep.facts
    assert all("took more than" in e for e in rep.errors.values())
