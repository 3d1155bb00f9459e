"""Code generation from fixed candidates (thesis §4.4): the control-flow tree
(`tree`), CUDA and reference-C printers (`printer`), compilers (`compile`)."""

from __future__ import annotations

import hashlib
import re
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

    def source_digest(self, language: str) -> str:
        """`program_digest` of its reference C (`language` "c") or CUDA ("cuda")."""
        return program_digest(self.c if language == "c" else self.cuda, self.name)


def program_digest(source: str, name: str) -> str:
    """A digest of the program a backend compiled: the printed source with
    its function's `name` (a batch's `wb_<i>`) read as `kernel`, so that one
    trail printed by one code generator has one digest wherever it ran. A
    record keeps it (`x_source_digest`): a stored time is checked against
    today's bound only as a time of the program today's printer writes."""
    text = re.sub(rf"\b{re.escape(name)}\b", "kernel", source)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def generate(cand, name: str = "kernel") -> Generated:
    """CUDA C, reference C and launch configuration of a fixed candidate."""
    impl = Implementation(cand)
    return Generated(name, CudaPrinter(impl, name).source(), Printer(impl, name).source(),
                     launch_config(impl), impl)


__all__ = ["Generated", "Implementation", "Leaf", "Loop", "generate", "program_digest"]
