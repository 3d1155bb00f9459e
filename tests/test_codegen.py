"""Every fixed candidate a test draws is checked: its reference C (the same
control-flow tree as the CUDA) matches numpy from poisoned outputs, and its
CUDA compiles with nvcc (skipped only where nvcc is absent)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gpu_cases import SMALL, build, fixed_candidates, n_drawn

import workbench as wb
from workbench.codegen import generate
from workbench.codegen.compile import compile_c, compile_cuda, nvcc_path, run_reference


@pytest.fixture(scope="module", params=sorted(SMALL))
def drawn(request):
    return request.param, fixed_candidates(request.param, n_drawn())


def test_reference_matches_numpy(drawn, tmp_path):
    name, cands = drawn
    kernel = build(name)
    lib = compile_c([c for _, _, c, _, _, _ in cands], str(tmp_path))
    rng = np.random.default_rng(0)
    failures = []
    for seed, text, _, _, _, _ in cands:
        inputs = kernel.make_inputs(rng)
        expected = kernel.reference(inputs)
        got = run_reference(lib, f"k_{name}_{seed}", kernel, inputs)
        for out, want in expected.items():
            # normwise relative error (float32 sums near cancellation make an
            # elementwise one meaningless); a NaN (never written) fails too
            err = np.max(np.abs(got[out] - want)) / max(float(np.max(np.abs(want))), 1e-30)
            if not err < 1e-4:
                failures.append((seed, out, float(err), text))
    assert not failures, f"{len(failures)} of {len(cands)} wrong; first: {failures[0]}"
    assert len(cands) >= n_drawn()


def test_cuda_compiles(drawn, tmp_path):
    if nvcc_path() is None:
        pytest.skip("nvcc is not installed")
    name, cands = drawn
    ptx = compile_cuda([cu for _, _, _, cu, _, _ in cands], workdir=str(tmp_path))
    text = "".join(p.read_text() for p in ptx)
    for seed, *_ in cands:
        assert f".entry k_{name}_{seed}" in text


def test_launch_respects_target(drawn):
    name, cands = drawn
    t = build(name).target
    for _, _, _, _, launch, _ in cands:
        assert np.prod(launch["block"]) <= t.max_threads_per_block
        assert launch["shared_bytes"] <= build(name).shared_memory_elements() * 4
        # above the static limit the kernel asks for dynamic shared memory
        assert launch["dynamic_shared_bytes"] in (0, launch["shared_bytes"])
        assert launch["dynamic_shared_bytes"] == 0 or launch["shared_bytes"] > t.shared_memory_bytes
        assert all(g >= 1 for g in launch["grid"])


def test_candidates_replay(drawn):
    name, cands = drawn
    for _, text, c_src, _, _, _ in cands[:1]:  # a replay pays for its lowered problems
        cand = wb.Candidate.from_json(text)
        assert cand.is_fixed
        assert json.loads(text)["kernel"]["builder"] == name
        # generation is a function of the decisions
        seed_name = c_src.split("(", 1)[0].split()[-1]
        assert generate(cand, seed_name).c == c_src


def test_codegen_needs_fixed_candidate():
    root = wb.Candidate.root(build("axpy"))
    with pytest.raises(wb.WorkbenchError, match="fixed candidate"):
        generate(root)
