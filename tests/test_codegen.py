"""Code generation's own contract (the random fixed candidates' checks
against numpy and nvcc are in test_drawn.py)."""

from __future__ import annotations

import pytest
from gpu_cases import build

import workbench as wb
from workbench.codegen import generate


def test_codegen_needs_fixed_candidate():
    root = wb.Candidate.root(build("axpy"))
    with pytest.raises(wb.WorkbenchError, match="fixed candidate"):
        generate(root)


def test_the_reference_c_keeps_every_loop(tmp_path):
    """The CPU bound counts a back-edge for every C loop of 2 iterations or
    more (`hardware.loop_min_trip` 2 on `cpu_reference`). gcc -O1 completely
    unrolls trips of 2 when its estimate says the code does not grow (20 of
    20 batched-matmul descents had one); the reference C's flags
    (`compile.KEEP_LOOPS`) stop it. Asked what it optimised, the compiler
    names no completely unrolled loop in 8 random implementations of each
    kernel, compiled as the executor compiles them."""
    import random
    import re
    import subprocess

    from workbench.codegen.compile import C_PRELUDE, _cc, fma_flags, keep_loops_flags
    from workbench.descent import descend
    from workbench.kernels.linalg import SMALL_SIZES
    from workbench.model import hardware
    if not keep_loops_flags():
        pytest.skip("the C compiler does not take --param max-completely-peeled-insns")
    assert hardware("cpu_reference").loop_min_trip == 2
    pattern = r"loop with \d+ iterations completely unrolled"

    def unrolled(path, flags):
        got = subprocess.run([_cc(), "-O1", *flags, "-ffp-contract=off", *fma_flags(),
                              "-fopt-info-loop-optimized", "-c", "-o", str(tmp_path / "a.o"),
                              str(path)], capture_output=True, text=True, check=True)
        return re.findall(pattern, got.stderr)

    # the control: without the flags, a loop of 2 is unrolled and reported
    (tmp_path / "two.c").write_text("void f(float* z) { for (int i = 0; i < 2; ++i) "
                                    "z[i] = 1.0f; }\n")
    if not unrolled(tmp_path / "two.c", []):
        pytest.skip("this compiler does not report complete unrolling in these words")
    assert not unrolled(tmp_path / "two.c", keep_loops_flags())
    for name, sizes in SMALL_SIZES.items():
        root = wb.Candidate.root(getattr(wb.kernels, name)(**sizes))
        src = [generate(descend(root, random.Random(seed), backtrack=True).candidate,
                        f"k{seed}").c for seed in range(8)]
        (tmp_path / f"{name}.c").write_text(C_PRELUDE + "\n".join(src))
        assert not unrolled(tmp_path / f"{name}.c", keep_loops_flags()), name
