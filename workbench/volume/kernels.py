"""Volume programs of workbench kernels, and the tiles a candidate's `size`
decisions imply — the link between the explorer and the sparsity regions:
the tile sizes a person chooses decide which tiles are dense."""

from __future__ import annotations

from ..errors import WorkbenchError


def volume_spec(kernel) -> dict:
    """The volume spec (format: docs/volume-spec.md) of a linear-algebra kernel."""
    s = kernel.spec()
    b = s.get("builder")
    if b in ("matmul", "strided_matmul"):  # the stride is layout, not dependence
        return {"inputs": {"A": [s["m"], s["k"]], "B": [s["k"], s["n"]]},
                "ops": [{"result": "C", "op": "matmul", "lhs": "A", "rhs": "B"}],
                "output": "C"}
    if b in ("batched_matmul", "reuse_matmul"):
        bshape = [s["k"], s["n"]] if b == "reuse_matmul" else [s["b"], s["k"], s["n"]]
        return {"inputs": {"A": [s["b"], s["m"], s["k"]], "B": bshape},
                "ops": [{"result": "C", "op": "matmul", "lhs": "A", "rhs": "B"}],
                "output": "C"}
    if b == "axpy":
        return {"inputs": {"alpha": [], "x": [s["n"]], "y": [s["n"]]},
                "ops": [{"result": "z", "op": "elementwise", "operands": ["alpha", "x", "y"]}],
                "output": "z"}
    raise WorkbenchError(f"no volume program for kernel builder {b!r}")


def conv_spec(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int, low=(1, 1),
              high=(2, 2), strides=(2, 2), dilations=(1, 1)) -> dict:
    """A padded convolution with an element-wise activation (the paper's
    example with its defaults for 1×3×512×512 and 8×3×5×5)."""
    return {"inputs": {"ifm": [n, c, h, w], "wgt": [f, c, kh, kw]}, "constants": ["cst0"],
            "ops": [{"result": "pad0", "op": "pad", "source": "ifm", "low": [0, 0, *low],
                     "high": [0, 0, *high], "value": "cst0"},
                    {"result": "conv0", "op": "conv2d_nchw_fchw", "input": "pad0",
                     "filter": "wgt", "strides": list(strides), "dilations": list(dilations)},
                    {"result": "act0", "op": "elementwise", "operands": ["conv0"]}],
            "output": "act0"}


def logical_tiles(cand, inst) -> dict:
    """Tile of instruction `inst` (an instruction of the root's kernel) per
    logical dimension, implied by the candidate's `size` decisions: the
    logical size over its outermost level's size (the smallest tile still
    possible while that size is open), and whether that size is decided:
    {logical name: (tile, fixed)}."""
    out: dict = {}
    for d in inst.dims:
        if d.level == 0:
            dom = [int(v) for v in cand.domain("size", (d.name,))]
            out[d.logical.name] = (d.logical.size // max(dom), len(dom) == 1)
    return out


def tile_sizes(cand) -> tuple[dict, bool]:
    """Tile of the output per output dimension (`logical_tiles` of the
    store's dimensions), and whether every one of those sizes is decided."""
    kernel = cand.problem.root_problem.kernel
    store = next((i for i in kernel.instructions() if i.op == "store"), None)
    if store is None:
        raise WorkbenchError("the kernel has no store: no output to tile")
    order = _output_order(kernel)
    tiles = logical_tiles(cand, store)
    sizes, fixed = {}, True
    for d in store.dims:
        if d.level == 0:
            tile, known = tiles[d.logical.name]
            fixed &= known
            sizes[order.index(d.logical.name)] = tile
    return sizes, fixed


def _output_order(kernel) -> list:
    """Output dimensions in the volume spec's order (batch, m, n / n)."""
    names = [ld.name for ld in kernel.logical_dims()]
    return [x for x in ("b", "m", "n") if x in names] if "m" in names else \
        [x for x in names if x != "k"]


__all__ = ["conv_spec", "logical_tiles", "tile_sizes", "volume_spec"]
