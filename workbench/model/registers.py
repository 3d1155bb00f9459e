"""The bound of a fixed candidate with its compiled registers in μ (issue 21).

Once every choice is fixed, `ptxas -v` says how many registers a thread of
the compiled kernel uses (`workbench.codegen.compile.ptxas_report`). An SM
holds at most ⌊registers_per_sm / registers per warp⌋ warps (registers are
allocated per warp in units of 256), so at most that many of the kernel's
blocks run at once on it: the compiled kernel cannot run more threads than
its registers allow. `bound_with_registers` lowers the target's threads per
SM to that figure, which caps μ_2^max (blocks at once) in eq. 5.27, and
bounds the candidate again. It is sound for the kernel whose registers were
given: a run compiled differently (NVRTC at run time, another ptxas) may
use other registers, which is why records keep both the plain bound and
this one, and the registers the device reported.

Kept apart from `bound.py` on purpose: the model itself reads domains only;
this is the one place a compiler's output reaches it.
"""

from __future__ import annotations

import dataclasses
import math

from ..target import load_target
from .base import Bound
from .bound import bound
from .hardware import hardware


def register_threads_per_sm(registers: int, threads_per_block: int, target=None) -> int | None:
    """Threads of one SM that `registers` per thread allow, in whole blocks
    of `threads_per_block` (None: the target gives no register file)."""
    t = load_target(target or "h200")
    par = t.raw.get("model", {}).get("parallelism", {})
    regs_per_sm = par.get("registers_per_sm")
    if not regs_per_sm or registers <= 0:
        return None
    warp = int(t.limits.get("warp_size", 32))
    unit = int(par.get("register_unit", 256))
    per_warp = -(-registers * warp // unit) * unit
    warps = int(regs_per_sm) // per_warp
    blocks = warps // max(1, -(-threads_per_block // warp))
    return max(1, blocks) * threads_per_block


def bound_with_registers(cand, registers: int, target=None, parent: Bound | None = None
                         ) -> Bound:
    """The bound of fixed `cand` on `target` (default: the kernel's) with
    threads per SM limited by `registers` per thread (see the module)."""
    from ..codegen import generate
    target = target or cand.kernel.target.name
    hw = hardware(target)
    if not cand.is_fixed:
        return bound(cand, hw, parent)
    threads = math.prod(generate(cand).launch["block"])
    limit = register_threads_per_sm(registers, threads, target)
    if limit is None or (hw.max_threads_per_sm is not None and limit >= hw.max_threads_per_sm):
        return bound(cand, hw, parent)
    return bound(cand, dataclasses.replace(hw, max_threads_per_sm=limit), parent)


__all__ = ["bound_with_registers", "register_threads_per_sm"]
