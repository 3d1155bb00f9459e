"""Kernel builders. Every kernel has `spec()`; `from_spec` rebuilds it."""

from __future__ import annotations

from ..errors import WorkbenchError
from .basic_block import BasicBlock, Instruction, basic_block, random_basic_block
from .ir import Kernel
from .linalg import axpy, batched_matmul, matmul, reuse_matmul, strided_matmul

_LINALG = {"axpy": axpy, "matmul": matmul, "strided_matmul": strided_matmul,
           "batched_matmul": batched_matmul, "reuse_matmul": reuse_matmul}


def _linalg(spec: dict):
    args = {k: v for k, v in spec.items() if k != "builder"}
    return _LINALG[spec["builder"]](**args)


_BUILDERS = {
    "basic_block": lambda spec: basic_block(spec["instructions"]),
    **{name: _linalg for name in _LINALG},
}


def from_spec(spec: dict):
    """Rebuild a kernel from what its `spec()` returned."""
    if not isinstance(spec, dict) or "builder" not in spec:
        raise WorkbenchError(f"not a kernel spec: {spec!r}")
    try:
        build = _BUILDERS[spec["builder"]]
    except KeyError:
        raise WorkbenchError(f"unknown kernel builder {spec['builder']!r}; known: "
                             f"{', '.join(sorted(_BUILDERS))}") from None
    return build(spec)


def register(name: str, build) -> None:
    """Make `from_spec` know a kernel builder (used by tests and extensions)."""
    _BUILDERS[name] = build


# what `--kernel` may name
BUILDERS = ("basic_block", "random_basic_block", *_LINALG)

__all__ = [
    "BUILDERS",
    "BasicBlock",
    "Instruction",
    "Kernel",
    "axpy",
    "basic_block",
    "batched_matmul",
    "from_spec",
    "matmul",
    "random_basic_block",
    "register",
    "reuse_matmul",
    "strided_matmul",
]
