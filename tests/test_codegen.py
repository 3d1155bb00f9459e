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

