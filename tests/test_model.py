"""The lower-bound model (thesis ch. 5): hand-computed cases, monotonicity
along random descents, soundness against measured times, a roofline
cross-check, look-ahead and the CLI contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_cases import BOUND_TARGETS

import workbench as wb
from workbench.errors import WorkbenchError
from workbench.kernels.ir import Kernel, Operand
from workbench.model import hardware
from workbench.model.audit import roofline_ns
from workbench.model.lookahead import lookahead, rank_choices


def copy_kernel(n: int) -> Kernel:
    """z = x: one load, one store, one loop nest each, no strip-mining."""
    k = Kernel("copy", {"builder": "copy", "n": n})
    ln = k.logical_dim("n", n)
    x = k.array("x", n, {"n": 1}, "input")
    z = k.array("z", n, {"n": 1}, "output")
    dx, dz = k.nest("x", ln), k.nest("z", ln)
    k.inst("ld_x", "load", dx, array=x)
    k.inst("st_z", "store", dz, [Operand("inst", "ld_x", k.pair(dx, dz, ln))], z)
    return k


def test_single_load():
    """copy of n = 4096 floats on the H200 table (clock 1.98 GHz).

    Root: the load's latency is the minimum over its open cache directive,
    an L1 hit, 28 cycles; the store waits for it: a chain of 28 cycles =
    28 / 1.98 = 14.141 ns. DRAM moves 2 · 4096 · 4 = 32,768 B at 2,424 B per
    cycle = 13.52 cycles = 6.83 ns, less. Bound: 14.141 ns.
    With cache(ld_x) = L2 the load takes the L2 latency, 150 cycles:
    150 / 1.98 = 75.758 ns.
    """
    root = wb.Candidate.root(copy_kernel(4096))
    b = wb.bound(root, "h200")
    assert b.value_ns == pytest.approx(28 / 1.98)
    assert b.justification.children[0].kind == "Chain"
    dram = next(n for n in b.justification.walk() if n.fields.get("resource") == "dram_bytes")
    assert dram.fields["amount"] == 2 * 4096 * 4
    assert dram.value_ns == pytest.approx(32768 / 2424 / 1.98)
    l2 = wb.bound(root.apply("cache", ("ld_x",), "L2"), "h200")
    assert l2.value_ns == pytest.approx(150 / 1.98)


def test_reduction_loop():
    """matmul 1×1×64 (a dot product of 64 elements) on the H200 table.

    Every implementation runs the 64 dependent multiply-adds of the single
    output in one thread: ld_a → mad (L1 hit, 28 cycles), 63 more mad → mad
    steps (4 cycles each) and mad → st_c (4 cycles): 28 + 64 · 4 = 284
    cycles = 143.43 ns. On the Kepler table (0.811 GHz, 9-cycle FP32; compute
    capability 3.0 caches global loads in L2 only, so ld_a costs the 150-cycle
    L2 latency whatever its directive): (150 + 64 · 9) / 0.811 = 895.19 ns.
    """
    root = wb.Candidate.root(wb.kernels.matmul(1, 1, 64))
    assert wb.bound(root, "h200").value_ns == pytest.approx(284 / 1.98)
    assert wb.bound(root, "kepler_k4000").value_ns == pytest.approx((150 + 64 * 9) / 0.811)
    chain = next(n for n in wb.bound(root).justification.walk() if n.kind == "Chain")
    assert chain.fields["path"] == ["ld_a", "mad", "st_c"]


def _fix(cand, choice, value):
    for ch in cand.choices():
        if ch.name == choice and value in ch.values:
            cand = cand.apply(ch.name, ch.objects, value)
    return cand


def test_block_parallel_axpy():
    """axpy, n = 2^20, every dimension a BLOCK dimension, on the H200 table.

    That makes 2^20 blocks of one thread. At most min(32 blocks, 2048/1
    threads) = 32 blocks reside on each of the 132 SMs: μ_max = 4,224, so
    ⌈2^20 / 4,224⌉ = 249 rounds, each at least one thread's chain ld_x →
    fma → st_z = 28 + 4 = 32 cycles: 249 · 32 = 7,968 cycles = 4,024.24 ns.
    That beats the compulsory DRAM traffic, 3 · 4 MiB = 12,582,912 B at
    2,424 B per cycle = 5,191.0 cycles = 2,621.7 ns, which is what the bound
    shows when the dimension kinds are still open.
    """
    k = wb.kernels.axpy(1 << 20)
    root = wb.Candidate.root(k)
    c = _fix(root, "dim_kind", "BLOCK")
    b = wb.bound(c, "h200")
    assert b.value_ns == pytest.approx(249 * 32 / 1.98)
    par = b.justification.children[0]
    assert par.kind == "ParallelismLevel"
    assert (par.fields["eta_min"], par.fields["eta_lcm"], par.fields["mu_max"]) == \
        (1 << 20, 1 << 20, 4224)
    open_ = wb.bound(root, "h200")
    assert open_.value_ns == pytest.approx(3 * 4 * (1 << 20) / 2424 / 1.98)
    assert "DRAM bandwidth at the GPU level" in open_.justification.text
    assert open_.to_dict()["justification"]["children"][0]["resource"] == "dram_bytes"
    # a CPU target names its top level after the processor it bounds
    cpu = wb.bound(root, "cpu_reference").justification
    texts = [j.text for j in cpu.walk()]
    assert any("at the CPU level" in t for t in texts)
    assert not any("GPU" in t for t in texts)


def test_target_files_document_every_number():
    for t in BOUND_TARGETS:
        hw = hardware(t)
        assert hw.clock_ghz > 0 and hw.sms >= 1
    with pytest.raises(WorkbenchError, match="no `model` table"):
        hardware(_limits_only())


def test_bad_input_is_a_clear_error():
    from toy_kernel import toy
    space = str(Path(__file__).parent / "spaces" / "loops.space")
    with pytest.raises(WorkbenchError, match="GPU space"):
        wb.bound(wb.Candidate.root(toy(), space))
    # a basic block has its own model (thesis §2.4, tests/test_search.py)
    assert wb.bound(wb.Candidate.root(wb.kernels.random_basic_block(6, seed=1))).target \
        == "basic_block (cycles)"
    with pytest.raises(WorkbenchError, match="no target 'nope'"):
        wb.bound(wb.Candidate.root(wb.kernels.axpy(1024)), target="nope")


def _limits_only():
    from workbench.target import Target
    return Target("bare", "", {"warp_size": 32}, {}, {"limits": {"warp_size": 32}})


def test_roofline_by_hand():
    """matmul 64³ on the H200 table: 262,144 FMAs / 16,896 per cycle =
    15.52 cycles; 3 · 64² · 4 = 49,152 B / 2,424 B per cycle = 20.28
    cycles, the larger: 20.28 / 1.98 = 10.24 ns."""
    roof = roofline_ns(wb.kernels.matmul(64, 64, 64), hardware("h200"))
    assert roof == pytest.approx(49152 / 2424 / 1.98)


def test_lookahead_and_ranking():
    root = wb.Candidate.root(wb.kernels.matmul(64, 64, 64))
    b = wb.bound(root)
    ch = next(c for c in root.choices() if c.name == "cache")
    kids = lookahead(root, ch.name, ch.objects, parent=b)
    assert sorted(c.value for c in kids) == sorted(ch.values)
    assert all(c.value_ns >= b.value_ns for c in kids)
    ranked = rank_choices(root, limit=10, parent=b)
    assert ranked and all(r.guaranteed_ns >= 0 for r in ranked)
    top = ranked[0]
    # the ranking is a lower bound of what the propagated children give
    kids = {c.value: c for c in lookahead(root, top.choice, top.objects, parent=b)}
    for v, ns in top.per_value.items():
        if kids[v].bound is not None:
            assert kids[v].value_ns >= ns * (1 - 1e-9) or kids[v].value_ns >= b.value_ns


def test_justification_renders():
    b = wb.bound(wb.Candidate.root(wb.kernels.matmul(64, 64, 64)))
    d = b.justification.to_dict()
    json.dumps(d)
    assert d["kind"] == "Bound" and d["children"]
    kinds = {n.kind for n in b.justification.walk()}
    assert {"Bound", "Usage", "Chain", "ParallelismLevel", "Dependency"} <= kinds
    assert "<details" in b._repr_html_()
    assert "ns" in b.justification.render()


def test_cli_bound(tmp_path):
    k = wb.kernels.matmul(64, 64, 64)
    c = wb.Candidate.root(k)
    c = c.apply("cache", next(ch.objects for ch in c.choices() if ch.name == "cache"), "L2")
    trail = tmp_path / "t.json"
    trail.write_text(c.to_json())
    out = subprocess.run([sys.executable, "-m", "workbench", "bound", "--kernel", "matmul",
                          "--sizes", "m=64,n=64,k=64", "--trail", str(trail), "--target",
                          "h200", "--json"], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert set(got) >= {"value_ns", "justification"}
    assert got["value_ns"] == pytest.approx(wb.bound(c, "h200").value_ns)
    bad = subprocess.run([sys.executable, "-m", "workbench", "bound", "--kernel", "matmul",
                          "--sizes", "m=64,n=64,k=64", "--target", "no_such_gpu", "--json"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "no_such_gpu" in bad.stderr
