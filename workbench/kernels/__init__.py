"""Kernel builders. Every kernel has `spec()`; `from_spec` rebuilds it."""

from __future__ import annotations

from ..errors import WorkbenchError
from .basic_block import BasicBlock, Instruction, basic_block, random_basic_block

_BUILDERS = {
    "basic_block": lambda spec: basic_block(spec["instructions"]),
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


BUILDERS = ("basic_block", "random_basic_block")  # what `--kernel` may name

__all__ = ["BUILDERS", 
    "BasicBlock",
    "Instruction",
    "basic_block",
    "from_spec",
    "random_basic_block",
    "register",
]
