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
_BY_NAME = {"basic_block": basic_block, "random_basic_block": random_basic_block, **_LINALG}
BUILDERS = tuple(_BY_NAME)


def build_kernel(name: str, sizes: dict):
    """The kernel of builder `name` (one of BUILDERS) with `sizes` as its
    arguments, e.g. `build_kernel("matmul", {"m": 256, "n": 256, "k": 32})`."""
    if name not in _BY_NAME:
        raise WorkbenchError(f"unknown kernel {name!r}; known: {', '.join(BUILDERS)}")
    try:
        return _BY_NAME[name](**sizes)
    except TypeError as exc:
        raise WorkbenchError(f"kernel {name}: {exc}") from None

__all__ = [
    "BUILDERS",
    "BasicBlock",
    "Instruction",
    "Kernel",
    "axpy",
    "basic_block",
    "batched_matmul",
    "build_kernel",
    "from_spec",
    "matmul",
    "random_basic_block",
    "register",
    "reuse_matmul",
    "strided_matmul",
]
