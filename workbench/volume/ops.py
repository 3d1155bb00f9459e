"""Operations and their volume element maps (volume-model paper §4.2 and
appendix A.2): for each result element, the operand elements it depends on,
as an isl map from the result's index domain.

Every builder returns (result shape, map text). Index offsets are written as
existential constraints (isl wants affine tuple entries). A padding's
constant operand is split per padded dimension (`cst0__pad2`), so that the
regions can tell which padded dimensions a dependence on constants came
through (edges: one, corners: two or more); `Program` folds them back.
"""

from __future__ import annotations

from ..errors import WorkbenchError

PAD_TAG = "__pad"


def _idx(prefix: str, rank: int) -> list:
    return [f"{prefix}{k}" for k in range(rank)]


def _box(names, shape) -> list:
    return [f"0 <= {v} < {s}" for v, s in zip(names, shape)]


def _map(result: str, rvars, operand: str, ovars, conds, exists=()) -> str:
    body = " and ".join(conds)
    if exists:
        body = f"exists ({', '.join(exists)} : {body})" if body else ""
    return (f"{result}[{', '.join(rvars)}] -> {operand}[{', '.join(ovars)}]"
            + (f" : {body}" if body else ""))


def _check_rank(what: str, shape, rank: int) -> None:
    if len(shape) != rank:
        raise WorkbenchError(f"{what} needs a rank-{rank} operand, got shape {list(shape)}")


def elementwise(result: str, operands: dict) -> tuple:
    """R[i] ← f(O_1[i], …); rank-0 operands (scalars) are broadcast."""
    shapes = {tuple(s) for s in operands.values() if len(s)}
    if len(shapes) > 1:
        raise WorkbenchError(f"elementwise operands disagree on shape: {sorted(shapes)}")
    shape = next(iter(shapes)) if shapes else ()
    r = _idx("i", len(shape))
    parts = [_map(result, r, name, r if len(s) else [], _box(r, shape))
             for name, s in operands.items()]
    return shape, "; ".join(parts)


def pad(result: str, source: str, shape, low, high, value: str | None) -> tuple:
    """Padding with a constant volume `value` or, when value is None, periodic."""
    rank = len(shape)
    if len(low) != rank or len(high) != rank or any(x < 0 for x in (*low, *high)):
        raise WorkbenchError(f"pad of a rank-{rank} volume needs {rank} non-negative low and "
                             f"high widths, got {list(low)} and {list(high)}")
    out = [s + lo + hi for s, lo, hi in zip(shape, low, high)]
    r, o = _idx("i", rank), _idx("j", rank)
    dom = _box(r, out)
    if value is None:  # periodic boundary: A[(i - low) mod s]
        ks = _idx("k", rank)
        conds = [*dom, *(f"{j} = {i} - {lo} - {s}*{k}" for i, j, k, lo, s in
                         zip(r, o, ks, low, shape)), *_box(o, shape)]
        return out, _map(result, r, source, o, conds, ks)
    inside = [f"{lo} <= {i} < {lo + s}" for i, lo, s in zip(r, low, shape)]
    parts = [_map(result, r, source, [f"{i} - {lo}" for i, lo in zip(r, low)],
                  [*dom, *inside])]
    for d, (i, lo, s) in enumerate(zip(r, low, shape)):
        if low[d] or high[d]:
            parts.append(f"{_map(result, r, f'{value}{PAD_TAG}{d}', [], dom)} and "
                         f"({i} < {lo} or {i} >= {lo + s})")
    return out, "; ".join(parts)


def conv2d_nchw_fchw(result: str, inp: str, ishape, flt: str, fshape, strides,
                     dilations) -> tuple:
    _check_rank("conv2d_nchw_fchw input", ishape, 4)
    _check_rank("conv2d_nchw_fchw filter", fshape, 4)
    n, c, h, w = ishape
    f, fc, kh, kw = fshape
    if fc != c:
        raise WorkbenchError(f"conv2d_nchw_fchw: filter has {fc} channels, input {c}")
    (sh, sw), (dh, dw) = strides, dilations
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise WorkbenchError(f"conv2d_nchw_fchw: a {kh}×{kw} filter (dilations {dilations}) "
                             f"does not fit a {h}×{w} input")
    out = [n, f, oh, ow]
    r = ["n", "f", "y", "x"]
    dom = _box(r, out)
    m1 = _map(result, r, inp, ["n", "c", "hh", "ww"],
              [*dom, f"0 <= c < {c}", f"hh = {sh}*y + {dh}*a", f"ww = {sw}*x + {dw}*b",
               f"0 <= a < {kh}", f"0 <= b < {kw}"], ["a", "b"])
    m2 = _map(result, r, flt, ["f", "c", "a", "b"],
              [*dom, f"0 <= c < {c}", f"0 <= a < {kh}", f"0 <= b < {kw}"])
    return out, f"{m1}; {m2}"


def matmul(result: str, lhs: str, lshape, rhs: str, rshape) -> tuple:
    """[.., M, K] × [.., K, N] (batch dimensions equal, or a rank-2 right-hand
    side shared by every batch): a contraction."""
    shared = len(rshape) == 2 and len(lshape) > 2
    if len(lshape) < 2 or len(rshape) < 2 or lshape[-1] != rshape[-2] or (
            not shared and (len(lshape) != len(rshape) or lshape[:-2] != rshape[:-2])):
        raise WorkbenchError(f"matmul shapes do not chain: {list(lshape)} × {list(rshape)}")
    batch = _idx("b", len(lshape) - 2)
    out = [*lshape[:-1], rshape[-1]]
    r = [*batch, "i", "j"]
    dom = [*_box(r, out), f"0 <= k < {lshape[-1]}"]
    return out, (f"{_map(result, r, lhs, [*batch, 'i', 'k'], dom)}; "
                 f"{_map(result, r, rhs, [*(() if shared else batch), 'k', 'j'], dom)}")


def outer(result: str, a: str, ashape, b: str, bshape) -> tuple:
    ra, rb = _idx("i", len(ashape)), _idx("j", len(bshape))
    out = [*ashape, *bshape]
    dom = _box([*ra, *rb], out)
    return out, f"{_map(result, [*ra, *rb], a, ra, dom)}; {_map(result, [*ra, *rb], b, rb, dom)}"


def reduce(result: str, source: str, shape, axes) -> tuple:
    axes = sorted(set(axes))
    if any(not 0 <= a < len(shape) for a in axes):
        raise WorkbenchError(f"reduce axes {axes} outside a rank-{len(shape)} volume")
    full = _idx("i", len(shape))
    kept = [v for k, v in enumerate(full) if k not in axes]
    out = [s for k, s in enumerate(shape) if k not in axes]
    return out, _map(result, kept, source, full, _box(full, shape))


def diagonal(result: str, source: str, shape, s: int, t: int) -> tuple:
    if not 0 <= s < t < len(shape):
        raise WorkbenchError(f"diagonal needs 0 <= s < t < rank, got s={s}, t={t}")
    full = _idx("i", len(shape))
    kept = [v for k, v in enumerate(full) if k != t]
    out = [x for k, x in enumerate(shape) if k != t]
    src = [full[s] if k == t else v for k, v in enumerate(full)]
    return out, _map(result, kept, source, src, [*_box(kept, out), f"{full[s]} < {shape[t]}"])


def slice_(result: str, source: str, shape, offsets, sizes, strides) -> tuple:
    rank = len(shape)
    if not len(offsets) == len(sizes) == len(strides) == rank:
        raise WorkbenchError(f"slice of a rank-{rank} volume needs {rank} offsets, sizes and "
                             "strides")
    for o, n, st, s in zip(offsets, sizes, strides, shape):
        if st < 1 or o < 0 or n < 1 or o + (n - 1) * st >= s:
            raise WorkbenchError(f"slice offsets {list(offsets)}, sizes {list(sizes)}, strides "
                                 f"{list(strides)} leave a volume of shape {list(shape)}")
    r = _idx("i", rank)
    src = [f"{o} + {st}*{i}" for i, o, st in zip(r, offsets, strides)]
    return list(sizes), _map(result, r, source, src, _box(r, sizes))


def transpose(result: str, source: str, shape, permutation) -> tuple:
    if sorted(permutation) != list(range(len(shape))):
        raise WorkbenchError(f"{list(permutation)} is not a permutation of the "
                             f"{len(shape)} dimensions")
    r = _idx("i", len(shape))
    out = [shape[p] for p in permutation]
    src = [None] * len(shape)
    for k, p in enumerate(permutation):
        src[p] = r[k]
    return out, _map(result, r, source, src, _box(r, out))


def insert_slice(result: str, dest: str, dshape, source: str, sshape, offsets,
                 strides) -> tuple:
    """R = dest with source written at offsets/strides (a view insertion)."""
    rank = len(dshape)
    r, o = _idx("i", rank), _idx("j", rank)
    inside = [*(f"{i} = {off} + {st}*{j}" for i, j, off, st in zip(r, o, offsets, strides)),
              *_box(o, sshape)]
    dom = _box(r, dshape)
    m1 = _map(result, r, source, o, [*dom, *inside])
    m2 = (f"{result}[{', '.join(r)}] -> {dest}[{', '.join(r)}] : {' and '.join(dom)} and "
          f"not (exists ({', '.join(o)} : {' and '.join(inside)}))")
    return list(dshape), f"{m1}; {m2}"


__all__ = ["PAD_TAG", "conv2d_nchw_fchw", "diagonal", "elementwise", "insert_slice", "matmul",
           "outer", "pad", "reduce", "slice_", "transpose"]
