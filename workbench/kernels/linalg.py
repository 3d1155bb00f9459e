"""The thesis §6.2 kernels, built instruction by instruction.

As in the thesis, every instruction starts in its own loop nest and reads its
operands through point-to-point communication, so fusion, interchange,
distribution and register or shared-memory communication are all decisions.
Matrices are column-major (thesis §6.2.1). Strip-mining intervals are the
thesis's; a factor of 1 (no strip-mining) is always allowed (Table 4.1).
"""

from __future__ import annotations

import numpy as np

from ..errors import WorkbenchError
from .ir import Kernel, Operand


def pow2_factors(lo: int, hi: int) -> tuple[int, ...]:
    """1 (no strip-mining) and the powers of two in [lo, hi]."""
    out, f = [1], 1
    while f * 2 <= hi:
        f *= 2
        if f >= lo:
            out.append(f)
    return tuple(out)


def _positive(**sizes) -> None:
    for k, v in sizes.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise WorkbenchError(f"size {k} must be a positive integer, got {v!r}")


class LinalgKernel(Kernel):
    """A kernel with a numpy reference: `make_inputs(rng)` and `reference(inputs)`;
    `baseline(inputs, xp)` is the same computation by the library of the
    field (numpy on CPU, CuPy/cuBLAS on GPU) in float32, the peer timings
    are compared against. `compute(d, xp, dtype)` serves both."""

    def __init__(self, name, spec, compute, scalars=(), target="h200"):
        super().__init__(name, spec, target)
        self._compute = compute
        self.scalars = tuple(scalars)

    def make_inputs(self, rng: np.random.Generator) -> dict:
        data = {a.name: rng.uniform(-1, 1, a.length).astype(np.float32) for a in self.inputs()}
        for s in self.scalars:
            data[s] = np.float32(rng.uniform(0.5, 2.0))
        return data

    def reference(self, inputs: dict) -> dict:
        """Expected outputs (flat, in the arrays' layouts), computed by numpy
        with float64 accumulation."""
        out = self._compute(inputs, np, np.float64)
        return {k: v.astype(np.float32) for k, v in out.items()}

    def baseline(self, inputs: dict, xp=np) -> dict:
        """The library's own float32 implementation (timed as the reference)."""
        return self._compute(inputs, xp, xp.float32)


def axpy(n: int, target: str = "h200") -> LinalgKernel:
    """z = alpha * x + y over vectors of size n; n strip-mined twice with
    factors in [2, 1024] and [2, 4] (inner)."""
    _positive(n=n)

    def ref(d, xp, dtype):
        # copy=False: the float32 baseline times the axpy alone (two copies
        # of x and y made CuPy's reference half as fast, 1.28 ms for 0.64 ms)
        return {"z": (dtype(d["alpha"]) * d["x"].astype(dtype, copy=False)
                      + d["y"].astype(dtype, copy=False))}
    k = LinalgKernel("axpy", {"builder": "axpy", "n": n}, ref, ("alpha",), target)
    ln = k.logical_dim("n", n, (pow2_factors(2, 1024), pow2_factors(2, 4)))
    x = k.array("x", n, {"n": 1}, "input")
    y = k.array("y", n, {"n": 1}, "input")
    z = k.array("z", n, {"n": 1}, "output")
    dx, dy, df, dz = (k.nest(p, ln) for p in ("x", "y", "f", "z"))
    k.inst("ld_x", "load", dx, array=x)
    k.inst("ld_y", "load", dy, array=y)
    k.inst("fma", "fma", df, [Operand("param", "alpha"),
                              Operand("inst", "ld_x", k.pair(dx, df, ln)),
                              Operand("inst", "ld_y", k.pair(dy, df, ln))])
    k.inst("st_z", "store", dz, [Operand("inst", "fma", k.pair(df, dz, ln))], z)
    return k


def _matmul_like(name, spec, b, m, n, k, a_stride, batched_b, mk_factors, b_factors, target):
    """C[b] = A[b] · B[b] (or B shared when not batched_b), column-major."""
    def ref(d, xp, dtype):
        # column-major A (m×k), B (k×n) read row-major are Aᵀ and Bᵀ, so
        # Cᵀ = Bᵀ·Aᵀ is C column-major: one GEMM on contiguous operands, no
        # transposed copy before or after (what cuBLAS is timed on); only
        # the strided A is gathered first
        A = d["A"][::a_stride] if a_stride > 1 else d["A"]
        At = A.reshape((b, k, m) if b > 1 else (k, m)).astype(dtype, copy=False)
        Bt = d["B"].reshape((b if batched_b else 1, n, k) if b > 1 else (n, k))
        return {"C": xp.matmul(Bt.astype(dtype, copy=False), At).reshape(-1)}

    kern = LinalgKernel(name, spec, ref, (), target)
    lb = kern.logical_dim("b", b, b_factors) if b > 1 or b_factors else None
    lm = kern.logical_dim("m", m, mk_factors[0])
    ln = kern.logical_dim("n", n, mk_factors[1])
    lk = kern.logical_dim("k", k, mk_factors[2], reduced=True)
    bb = (lb,) if lb is not None else ()
    A = kern.array("A", b * m * k * a_stride,
                   {"m": a_stride, "k": m * a_stride, **({"b": m * k * a_stride} if lb else {})},
                   "input")
    B = kern.array("B", (b if batched_b else 1) * k * n,
                   {"k": 1, "n": k, **({"b": k * n} if lb and batched_b else {})}, "input")
    C = kern.array("C", b * m * n, {"m": 1, "n": m, **({"b": m * n} if lb else {})}, "output")
    da = kern.nest("a", *bb, lm, lk)
    db = kern.nest("b", *(bb if batched_b else ()), lk, ln)
    dc = kern.nest("c", *bb, lm, ln)
    dr = kern.nest("c", lk)
    ds = kern.nest("s", *bb, lm, ln)
    # the initialisation has a nest of its own (made last, so that the other
    # dims keep their names): paired with the output dims of the reduction,
    # it may fuse with them or run before the reduction loops, the
    # accumulators then staying in registers (unrolled) or threads across k
    di = kern.nest("i", *bb, lm, ln)
    kern.inst("ld_a", "load", da, array=A)
    kern.inst("ld_b", "load", db, array=B)
    kern.inst("init", "mov", di, [Operand("const", value=0.0)])
    mad_dims = dc + dr
    b_logical = (*(bb if batched_b else ()), lk, ln)
    kern.inst("mad", "fma", mad_dims, [
        Operand("inst", "ld_a", kern.pair(da, mad_dims, *bb, lm, lk)),
        Operand("inst", "ld_b", kern.pair(db, mad_dims, *b_logical)),
        Operand("reduce", "init", kern.pair(di, dc, *bb, lm, ln), dims=tuple(dr))])
    kern.inst("st_c", "store", ds, [Operand("inst", "mad", kern.pair(dc, ds, *bb, lm, ln))], C)
    return kern


def matmul(m: int, n: int, k: int, target: str = "h200") -> LinalgKernel:
    """C = A·B, A m×k, B k×n; m and n strip-mined twice with factors in
    [2, 32] and [2, 4] (inner), k once with factors in [2, 32]."""
    _positive(m=m, n=n, k=k)
    mk = ((pow2_factors(2, 32), pow2_factors(2, 4)),) * 2 + ((pow2_factors(2, 32),),)
    return _matmul_like("matmul", {"builder": "matmul", "m": m, "n": n, "k": k},
                        1, m, n, k, 1, True, mk, (), target)


def strided_matmul(m: int, n: int, k: int, stride: int = 32,
                   target: str = "h200") -> LinalgKernel:
    """matmul with consecutive elements of A `stride` apart (one per cache line)."""
    _positive(m=m, n=n, k=k, stride=stride)
    mk = ((pow2_factors(2, 32), pow2_factors(2, 4)),) * 2 + ((pow2_factors(2, 32),),)
    return _matmul_like("strided_matmul", {"builder": "strided_matmul", "m": m, "n": n,
                                           "k": k, "stride": stride},
                        1, m, n, k, stride, True, mk, (), target)


def batched_matmul(b: int, m: int, n: int, k: int, target: str = "h200") -> LinalgKernel:
    """b independent matmuls; b strip-mined once in [2, 128], m, n, k in [2, 64]."""
    _positive(b=b, m=m, n=n, k=k)
    mk = ((pow2_factors(2, 64),),) * 3
    return _matmul_like("batched_matmul", {"builder": "batched_matmul", "b": b, "m": m,
                                           "n": n, "k": k},
                        b, m, n, k, 1, True, mk, (pow2_factors(2, 128),), target)


def reuse_matmul(b: int, m: int, n: int, k: int, target: str = "h200") -> LinalgKernel:
    """batched_matmul where every multiplication reuses the same B."""
    _positive(b=b, m=m, n=n, k=k)
    mk = ((pow2_factors(2, 64),),) * 3
    return _matmul_like("reuse_matmul", {"builder": "reuse_matmul", "b": b, "m": m,
                                         "n": n, "k": k},
                        b, m, n, k, 1, False, mk, (pow2_factors(2, 128),), target)


# The five kernels at sizes small enough to run every fixed candidate on the
# CPU reference executor (tests, audits of the bound).
SMALL_SIZES = {
    "axpy": {"n": 256},
    "matmul": {"m": 16, "n": 16, "k": 8},
    "strided_matmul": {"m": 16, "n": 16, "k": 8, "stride": 4},
    "batched_matmul": {"b": 4, "m": 8, "n": 8, "k": 4},
    "reuse_matmul": {"b": 4, "m": 8, "n": 8, "k": 4},
}
