"""Code generation from fixed candidates (thesis §4.4): the control-flow tree
(`tree`), CUDA and reference-C printers (`printer`), compilers (`compile`)."""

from __future__ import annotations

from dataclasses import dataclass

from .printer import CudaPrinter, Printer, launch_config
from .tree import Implementation, Leaf, Loop


@dataclass(frozen=True)
class Generated:
    name: str
    cuda: str  # CUDA C of the kernel
    c: str  # the same tree as sequential C (the CPU reference)
    launch: dict  # grid, block, shared_bytes, dynamic_shared_bytes, scratch_floats
    implementation: Implementation


def generate(cand, name: str = "kernel") -> Generated:
    """CUDA C, reference C and launch configuration of a fixed candidate."""
    impl = Implementation(cand)
    return Generated(name, CudaPrinter(impl, name).source(), Printer(impl, name).source(),
                     launch_config(impl), impl)


__all__ = ["Generated", "Implementation", "Leaf", "Loop", "generate"]
