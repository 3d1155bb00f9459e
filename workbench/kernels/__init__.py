"""Kernel builders. Every kernel has `spec()`; `from_spec` rebuilds it."""

from __future__ import annotations

import json
from collections import OrderedDict

from ..errors import WorkbenchError
from ..validate import check_kernel_spec
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


# Equal specs give the same kernel object (the last few are kept), so a
# kernel rebuilt from data — a candidate's JSON, a CLI call, a worker's task —
# shares its root candidate and its lowered problems with the first one
# (seconds each) instead of computing them again. Kernels are not mutated
# after construction (lowering works on copies), so sharing is safe.
_INTERNED: OrderedDict = OrderedDict()
_KEEP = 16


def _interned(key: str, make):
    kernel = _INTERNED.get(key)
    if kernel is None:
        kernel = _INTERNED[key] = make()
        while len(_INTERNED) > _KEEP:
            _INTERNED.popitem(last=False)
    _INTERNED.move_to_end(key)
    return kernel


def from_spec(spec: dict):
    """Rebuild a kernel from what its `spec()` returned (the same object for
    an equal spec, see above)."""
    if not isinstance(spec, dict) or "builder" not in spec:
        raise WorkbenchError(f"not a kernel spec: {str(spec)[:200]!r}")
    try:
        build = _BUILDERS[spec["builder"]]
    except (KeyError, TypeError):
        raise WorkbenchError(f"unknown kernel builder {str(spec['builder'])[:100]!r}; known: "
                             f"{', '.join(sorted(_BUILDERS))}") from None
    check_kernel_spec(spec)
    try:
        return _interned(json.dumps(spec, sort_keys=True), lambda: build(spec))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise WorkbenchError(f"kernel spec {str(spec)[:200]}: {exc}") from None


def is_loop_nest(kernel) -> bool:
    """Whether `kernel` is a loop nest of the GPU space, not a chapter-2
    basic block (which has no loops, arrays or code)."""
    return getattr(kernel, "space", None) != BasicBlock.space


def require_loop_nest(kernel, what: str) -> None:
    """Refuse a chapter-2 basic block where `what` needs a loop-nest kernel
    of the GPU space (code to generate, inputs to draw, arrays to read)."""
    if not is_loop_nest(kernel):
        raise WorkbenchError(
            f"{what} needs a loop-nest kernel (axpy, matmul, strided_matmul, batched_matmul, "
            "reuse_matmul); a basic block (thesis ch. 2) has no code to generate or run: "
            "take its bound, choices, space-stats or explain")


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
    if name != "basic_block":
        check_kernel_spec({"builder": name, **sizes}, "--sizes")
    elif not isinstance(sizes.get("instructions"), (list, tuple)):
        raise WorkbenchError("kernel basic_block takes a list of instructions (name, latency, "
                             "dependencies), which --sizes cannot give: build it in Python "
                             "(wb.kernels.basic_block([...])), or take random_basic_block "
                             "(--sizes n=8,seed=1)")
    try:
        return _interned(json.dumps({"builder": name, **sizes}, sort_keys=True),
                         lambda: _BY_NAME[name](**sizes))
    except (TypeError, ValueError) as exc:
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
    "is_loop_nest",
    "register",
    "require_loop_nest",
    "reuse_matmul",
    "strided_matmul",
]
