"""The volume model against brute force: every element map and region is
checked by tracing, element by element in plain Python, which operand
elements each output element reads."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.errors import WorkbenchError
from workbench.volume import Program, count, hyperrectangles, match_slice, regions, tile
from workbench.volume.ops import PAD_TAG

isl = pytest.importorskip("islpy")

PAPER = {"inputs": {"ifm": [1, 3, 512, 512], "wgt": [8, 3, 5, 5]},
         "constants": ["cst0"],
         "ops": [{"result": "pad0", "op": "pad", "source": "ifm", "low": [0, 0, 1, 1],
                  "high": [0, 0, 2, 2], "value": "cst0"},
                 {"result": "conv0", "op": "conv2d_nchw_fchw", "input": "pad0",
                  "filter": "wgt", "strides": [2, 2], "dilations": [1, 1]},
                 {"result": "act0", "op": "elementwise", "operands": ["conv0"]}],
         "output": "act0"}


def test_the_papers_example_exactly():
    from workbench.volume.kernels import conv_spec
    assert conv_spec(1, 3, 512, 512, 8, 5, 5) == PAPER  # the builder writes the DESIGN spec
    t0 = time.perf_counter()
    reg = regions(Program.from_spec(PAPER))
    took = time.perf_counter() - t0
    c = reg.counts()
    assert c == {"dense": 516128, "constant_dependent": 8160, "static": 0,
                 "sparse_edges": 8128, "sparse_corners": 32}
    dense = isl.Set("{ act0[n, f, h, w] : n = 0 and 0 <= f < 8 and 0 < h <= 254 "
                    "and 0 < w <= 254 }")
    assert reg.dense.is_equal(dense)
    t0 = time.perf_counter()
    tl = tile(reg, {2: 16, 3: 16}, {2: "QH", 3: "QW"})
    took_tile = time.perf_counter() - t0
    assert tl.dense_tiles.is_equal(isl.Set("[QH, QW] -> { : 0 < QH < 15 and 0 < QW < 15 }"))
    assert tl.tiles.is_equal(isl.Set("[QH, QW] -> { : 0 <= QH < 16 and 0 <= QW < 16 }"))
    print(f"regions {took * 1e3:.0f} ms, tiles {took_tile * 1e3:.1f} ms")


def test_cli_volume_regions(tmp_path, capsys):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(PAPER))
    assert main(["volume-regions", "--spec", str(spec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["output"] == "act0" and out["counts"]["dense"] == 516128
    assert set(out["regions"]) == {"dense", "constant_dependent", "static", "sparse_edges",
                                   "sparse_corners"}
    assert isl.Set(out["regions"]["sparse_corners"]).count_val().to_python() == 32
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**PAPER, "ops": [{**PAPER["ops"][0], "op": "fft"}]}))
    assert main(["volume-regions", "--spec", str(bad)]) == 2
    assert "unknown volume op 'fft'" in capsys.readouterr().err


# ------------------------------------------------------------ brute force
def trace(spec: dict) -> dict:
    """name → array of frozensets of (volume, index) each element reads;
    constants through a padding carry the padded dimension: (c, d)."""
    prov: dict = {}
    for name, shape in spec["inputs"].items():
        arr = np.empty(shape, dtype=object)
        for idx in itertools.product(*map(range, shape)):
            arr[idx] = frozenset({(name, idx)})
        prov[name] = arr
    consts = spec.get("constants", [])
    for c, shape in (consts.items() if isinstance(consts, dict) else ((c, []) for c in consts)):
        if shape:  # a shaped constant: its elements are read like an input's
            arr = np.empty(shape, dtype=object)
            for idx in itertools.product(*map(range, shape)):
                arr[idx] = frozenset({(c, idx)})
        else:
            arr = np.empty((), dtype=object)
            arr[()] = frozenset({(c, None)})
        prov[c] = arr
    for op in spec["ops"]:
        prov[op["result"]] = _trace_op(op, prov)
    return prov


def _new(shape):
    return np.empty(tuple(shape), dtype=object)


def _union(*sets):
    return frozenset().union(*sets)


def _trace_pad(op: dict, P: dict):
    src = P[op["source"]]
    lo, hi = op["low"], op["high"]
    shape = [s + a + b for s, a, b in zip(src.shape, lo, hi)]
    out = _new(shape)
    for idx in itertools.product(*map(range, shape)):
        j = tuple(i - a for i, a in zip(idx, lo))
        inside = all(0 <= x < s for x, s in zip(j, src.shape))
        if op.get("mode") == "periodic":
            out[idx] = src[tuple(x % s for x, s in zip(j, src.shape))]
        elif inside:
            out[idx] = src[j]
        else:
            out[idx] = frozenset((op["value"], d) for d, (x, s) in enumerate(zip(j, src.shape))
                                 if not 0 <= x < s)
    return out


def _trace_conv2d(op: dict, P: dict):
    inp, F = P[op["input"]], P[op["filter"]]
    (sh, sw), (dh, dw) = op.get("strides", [1, 1]), op.get("dilations", [1, 1])
    n, c, h, w = inp.shape
    f, _, kh, kw = F.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    out = _new([n, f, oh, ow])
    for b, ff, y, x in itertools.product(range(n), range(f), range(oh), range(ow)):
        out[b, ff, y, x] = _union(*(inp[b, cc, sh * y + dh * a, sw * x + dw * bb]
                                    | F[ff, cc, a, bb]
                                    for cc in range(c) for a in range(kh)
                                    for bb in range(kw)))
    return out


def _trace_elementwise(op: dict, P: dict):
    ops = [P[o] for o in op["operands"]]
    shape = next((o.shape for o in ops if o.ndim), ())
    out = _new(shape)
    for idx in itertools.product(*map(range, shape)):
        out[idx] = _union(*(o[idx] if o.ndim else o[()] for o in ops))
    return out


def _trace_matmul(op: dict, P: dict):
    A, B = P[op["lhs"]], P[op["rhs"]]
    shape = [*A.shape[:-1], B.shape[-1]]
    out = _new(shape)
    for idx in itertools.product(*map(range, shape)):
        *bt, i, j = idx
        out[idx] = _union(*(A[(*bt, i, k)] | B[(*bt, k, j)] for k in range(A.shape[-1])))
    return out


def _trace_outer(op: dict, P: dict):
    A, B = P[op["lhs"]], P[op["rhs"]]
    out = _new([*A.shape, *B.shape])
    for idx in itertools.product(*map(range, out.shape)):
        out[idx] = A[idx[:A.ndim]] | B[idx[A.ndim:]]
    return out


def _trace_reduce(op: dict, P: dict):
    S = P[op["source"]]
    axes = sorted(op["axes"])
    shape = [s for k, s in enumerate(S.shape) if k not in axes]
    out = _new(shape)
    for idx in itertools.product(*map(range, shape)):
        cells = []
        for rest in itertools.product(*(range(S.shape[a]) for a in axes)):
            it, rt = iter(idx), iter(rest)
            full = tuple(next(rt) if k in axes else next(it) for k in range(S.ndim))
            cells.append(S[full])
        out[idx] = _union(*cells)
    return out


def _trace_slice(op: dict, P: dict):
    S = P[op["source"]]
    strides = op.get("strides", [1] * S.ndim)
    out = _new(op["sizes"])
    for idx in itertools.product(*map(range, op["sizes"])):
        out[idx] = S[tuple(o + s * i for o, s, i in zip(op["offsets"], strides, idx))]
    return out


def _trace_transpose(op: dict, P: dict):
    return np.transpose(P[op["source"]], op["permutation"]).copy()


def _trace_diagonal(op: dict, P: dict):
    S, s, t = P[op["source"]], op["s"], op["t"]
    shape = [x for k, x in enumerate(S.shape) if k != t]
    out = _new(shape)
    for idx in itertools.product(*map(range, shape)):
        if idx[s] >= S.shape[t]:
            out[idx] = frozenset()
            continue
        full = list(idx)
        full.insert(t, idx[s])
        out[idx] = S[tuple(full)]
    return out


def _trace_insert_slice(op: dict, P: dict):
    D, S = P[op["dest"]], P[op["source"]]
    strides = op.get("strides", [1] * D.ndim)
    out = D.copy()
    for idx in itertools.product(*map(range, S.shape)):
        out[tuple(o + s * i for o, s, i in zip(op["offsets"], strides, idx))] = S[idx]
    return out


_TRACE_OPS = {
    "pad": _trace_pad,
    "conv2d_nchw_fchw": _trace_conv2d,
    "elementwise": _trace_elementwise,
    "matmul": _trace_matmul,
    "outer": _trace_outer,
    "reduce": _trace_reduce,
    "slice": _trace_slice,
    "transpose": _trace_transpose,
    "diagonal": _trace_diagonal,
    "insert_slice": _trace_insert_slice,
}


def _trace_op(op: dict, P: dict):
    kind = op["op"]
    if kind not in _TRACE_OPS:
        raise AssertionError(kind)
    return _TRACE_OPS[kind](op, P)


def _isl_reads(m, point) -> set:
    """What the element map says `point` of its domain reads."""
    name = m.domain().get_set_list().get_at(0).get_tuple_name()
    pt = isl.UnionSet(f"{{ {name}[{', '.join(map(str, point))}] }}")
    got = set()
    rng = m.intersect_domain(pt).range()
    sl = rng.get_set_list()
    for k in range(sl.n_set()):
        s = sl.get_at(k)
        t = s.get_tuple_name()
        n = s.dim(isl.dim_type.set)
        s.foreach_point(lambda p, t=t, n=n: got.add(
            (t, tuple(p.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(n)))))
    return got


def _expected(reads) -> set:
    out = set()
    for name, idx in reads:
        if idx is None:
            out.add((name, ()))
        elif isinstance(idx, int):  # a padding constant through dimension idx
            out.add((f"{name}{PAD_TAG}{idx}", ()))
        else:
            out.add((name, idx))
    return out


def _constants(spec) -> dict:
    consts = spec.get("constants", [])
    return dict(consts) if isinstance(consts, dict) else {c: [] for c in consts}


def _region_of(reads, constants: dict) -> str:
    """The regions as the paper reads them: static = only constants (any
    shape); otherwise a scalar constant (padding or operand) makes it
    constant-dependent; shaped constants alone (weights) leave it dense."""
    if reads and all(r[0] in constants for r in reads):
        return "static"
    scalar = [r for r in reads if r[0] in constants and not constants[r[0]]]
    if not scalar:
        return "dense"
    dims = {d for _, d in scalar if isinstance(d, int)}
    return "corner" if len(dims) >= 2 else "edge" if dims else "constant"


PROGRAMS = {
    "pad-conv-stride": {
        "inputs": {"ifm": [1, 2, 6, 6], "wgt": [2, 2, 3, 3]}, "constants": ["cst0"],
        "ops": [{"result": "pad0", "op": "pad", "source": "ifm", "low": [0, 0, 1, 1],
                 "high": [0, 0, 2, 2], "value": "cst0"},
                {"result": "conv0", "op": "conv2d_nchw_fchw", "input": "pad0",
                 "filter": "wgt", "strides": [2, 2], "dilations": [1, 1]},
                {"result": "act0", "op": "elementwise", "operands": ["conv0"]}],
        "output": "act0"},
    "conv-dilated-strided": {
        "inputs": {"ifm": [1, 1, 9, 8], "wgt": [2, 1, 2, 3]}, "constants": ["cst0"],
        "ops": [{"result": "pad0", "op": "pad", "source": "ifm", "low": [0, 0, 3, 0],
                 "high": [0, 0, 0, 2], "value": "cst0"},
                {"result": "out", "op": "conv2d_nchw_fchw", "input": "pad0", "filter": "wgt",
                 "strides": [1, 2], "dilations": [3, 2]}],
        "output": "out"},
    "slice-transpose-matmul": {
        "inputs": {"a": [6, 5], "b": [3, 4]},
        "ops": [{"result": "s", "op": "slice", "source": "a", "offsets": [1, 0],
                 "sizes": [3, 3], "strides": [2, 2]},
                {"result": "t", "op": "transpose", "source": "s", "permutation": [1, 0]},
                {"result": "c", "op": "matmul", "lhs": "t", "rhs": "b"}],
        "output": "c"},
    "periodic-pad-reduce": {
        "inputs": {"x": [3, 4]},
        "ops": [{"result": "p", "op": "pad", "source": "x", "low": [2, 1], "high": [1, 3],
                 "mode": "periodic"},
                {"result": "r", "op": "reduce", "source": "p", "axes": [0]}],
        "output": "r"},
    "static-slice-of-padding": {
        "inputs": {"x": [4], "y": [6]}, "constants": ["c"],
        "ops": [{"result": "p", "op": "pad", "source": "x", "low": [2], "high": [0],
                 "value": "c"},
                {"result": "e", "op": "elementwise", "operands": ["p", "y"]},
                {"result": "s", "op": "slice", "source": "p", "offsets": [0], "sizes": [3]},
                {"result": "o", "op": "outer", "lhs": "s", "rhs": "y"}],
        "output": "o"},
    "insert-diagonal": {
        "inputs": {"d": [5, 5], "s": [2, 2]}, "constants": ["k"],
        "ops": [{"result": "i", "op": "insert_slice", "dest": "d", "source": "s",
                 "offsets": [1, 0], "strides": [2, 3]},
                {"result": "g", "op": "diagonal", "source": "i", "s": 0, "t": 1},
                {"result": "w", "op": "elementwise", "operands": ["g", "k"]}],
        "output": "w"},
    "conv-weights-constant": {  # static windows: wholly in the padding, weights constant
        "inputs": {"ifm": [1, 1, 4, 5]}, "constants": {"cst0": [], "wgt": [2, 1, 2, 3]},
        "ops": [{"result": "pad0", "op": "pad", "source": "ifm", "low": [0, 0, 2, 1],
                 "high": [0, 0, 1, 3], "value": "cst0"},
                {"result": "out", "op": "conv2d_nchw_fchw", "input": "pad0", "filter": "wgt",
                 "strides": [1, 2], "dilations": [1, 1]}],
        "output": "out"},
    "matmul-constant-matrix": {
        "inputs": {"a": [3, 4]}, "constants": {"z": [], "w": [5, 2], "bias": [2]},
        "ops": [{"result": "p", "op": "pad", "source": "a", "low": [1, 0], "high": [1, 1],
                 "value": "z"},
                {"result": "c", "op": "matmul", "lhs": "p", "rhs": "w"},
                {"result": "t", "op": "transpose", "source": "c", "permutation": [1, 0]},
                {"result": "s", "op": "slice", "source": "t", "offsets": [0, 0],
                 "sizes": [2, 5]},
                {"result": "o", "op": "outer", "lhs": "s", "rhs": "bias"}],
        "output": "o"},
    "shaped-constant-alone": {  # no padding: static only where just the table is read
        "inputs": {"x": [4]}, "constants": {"table": [6], "k": []},
        "ops": [{"result": "u", "op": "insert_slice", "dest": "table", "source": "x",
                 "offsets": [1], "strides": [1]},
                {"result": "v", "op": "elementwise", "operands": ["u", "table"]}],
        "output": "v"},
    "batched-matmul": {
        "inputs": {"a": [2, 3, 2], "b": [2, 2, 3]},
        "ops": [{"result": "c", "op": "matmul", "lhs": "a", "rhs": "b"}], "output": "c"},
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_element_map_and_regions_against_brute_force(name):
    spec = PROGRAMS[name]
    prog = Program.from_spec(spec)
    brute = trace(spec)[spec["output"]]
    assert list(brute.shape) == prog.shapes[spec["output"]]
    m = prog.element_map()
    reg = regions(prog)
    sets = {"dense": reg.dense, "static": reg.static, "edge": reg.sparse_edges,
            "corner": reg.sparse_corners}
    tally: dict = {}
    constants = _constants(spec)
    for idx in itertools.product(*map(range, brute.shape)):
        reads = brute[idx]
        assert _isl_reads(m, idx) == _expected(reads), (name, idx)
        kind = _region_of(reads, constants)
        tally[kind] = tally.get(kind, 0) + 1
        pt = isl.Set(f"{{ {spec['output']}[{', '.join(map(str, idx))}] }}")
        for region, s in sets.items():
            assert pt.is_subset(s) == (kind == region), (name, idx, region, kind)
        assert pt.is_subset(reg.constant_dependent) == (kind != "dense")
    counts = reg.counts()
    assert counts["dense"] == tally.get("dense", 0)
    assert counts["static"] == tally.get("static", 0)
    assert counts["sparse_edges"] == tally.get("edge", 0)
    assert counts["sparse_corners"] == tally.get("corner", 0)
    assert counts["constant_dependent"] == sum(v for k, v in tally.items() if k != "dense")


def test_static_regions_exist_where_only_constants_are_read():
    reg = regions(Program.from_spec(PROGRAMS["static-slice-of-padding"]))
    assert count(reg.static) == 0  # outer with y: never only constants
    spec = {"inputs": {"x": [4]}, "constants": ["c"],
            "ops": [{"result": "p", "op": "pad", "source": "x", "low": [2], "high": [1],
                     "value": "c"}], "output": "p"}
    reg = regions(Program.from_spec(spec))
    assert reg.counts()["static"] == 3 and reg.counts()["dense"] == 4


def test_hyperrectangles_partition_the_regions():
    reg = regions(Program.from_spec(PROGRAMS["pad-conv-stride"]))
    for s in (reg.sparse_edges, reg.sparse_corners, reg.dense, reg.constant_dependent):
        boxes = hyperrectangles(s)
        total = sum(count(b) for b in boxes)
        assert total == count(s)
        for a, b in itertools.combinations(boxes, 2):
            assert a.intersect(b).is_empty()
        union = boxes[0]
        for b in boxes[1:]:
            union = union.union(b)
        assert union.is_equal(isl.Set(str(s)))


def test_match_slice_recovers_offset_stride_size():
    s = isl.Set("[QH] -> { ifm[n, c, y] : n = 0 and 0 <= c < 3 and "
                "exists (t : y = 32QH - 1 + 2t and 0 <= t < 17) }")
    got = match_slice(s)
    assert got.strides == (1, 1, 2) and got.sizes == (1, 3, 17)
    assert "32QH" in got.offsets[2].replace(" ", "").replace("*", "")
    with pytest.raises(WorkbenchError, match="not a slice"):
        match_slice(isl.Set("{ a[i] : i = 0 or i = 1 or i = 5 }"))


def test_bad_specs_are_named():
    with pytest.raises(WorkbenchError, match="not defined before it"):
        Program.from_spec({"inputs": {"x": [3]}, "ops": [
            {"result": "y", "op": "elementwise", "operands": ["z"]}], "output": "y"})
    with pytest.raises(WorkbenchError, match="missing field 'axes'"):
        Program.from_spec({"inputs": {"x": [3]}, "ops": [
            {"result": "y", "op": "reduce", "source": "x"}], "output": "y"})
    with pytest.raises(WorkbenchError, match="do not chain"):
        Program.from_spec({"inputs": {"a": [2, 3], "b": [2, 3]}, "ops": [
            {"result": "c", "op": "matmul", "lhs": "a", "rhs": "b"}], "output": "c"})


def test_region_heatmap_shows_the_regions_of_a_slice():
    widgets = pytest.importorskip("widgets")
    pytest.importorskip("plotly")
    reg = regions(Program.from_spec(PAPER))
    fig = widgets.region_heatmap(reg, {0: 0, 1: 3}, tile_sizes={2: 16, 3: 16})
    z = np.array(fig.data[0].z)
    assert z.shape == (256, 256)
    # one channel of the paper's regions: 254² dense, 4·254 edges, 4 corners
    assert (z == 0).sum() == 254 * 254 and (z == 1).sum() == 4 * 254 and (z == 2).sum() == 4
    grid = fig.data[1]  # the 16×16 tile grid: one trace of None-separated segments
    assert grid.name == "tiles 16×16" and list(grid.x).count(None) == 2 * 15  # inner lines
    # one element wide edges are a pixel at this scale: outlined in their colour,
    # the four single-element corners marked (one box each)
    by_name = {tr.name: tr for tr in fig.data}
    assert list(by_name["edge outline"].x).count(None) == 4
    assert len(by_name["corner"].x) == 4 and by_name["corner"].mode == "markers"
    # and a zoom of the corner around the rarest region, element by element
    zoom = by_name["zoom"]
    assert np.array(zoom.z).shape == (24, 24) and zoom.xaxis == "x2"
    assert np.array(zoom.z)[0, 0] == 2 and (np.array(zoom.z)[0, 1:] == 1).all()
    assert len(fig.layout.shapes) == 2  # the slice's frame, the zoomed window
    # the axes fit the data (no empty band from the aspect ratio), named
    assert fig.layout.xaxis.constrain == "domain" and fig.layout.xaxis.range[1] < 270
    assert "dim 3" in fig.layout.xaxis.title.text and "dim 2" in fig.layout.yaxis.title.text
    # the legend: the regions of the slice with their counts here; the title
    # says the whole tensor's are the tensor's
    legend = [tr.name for tr in fig.data if tr.showlegend is not False and tr.x == (None,)]
    assert legend == [f"dense ({254 * 254:,}): only real data",
                      f"edge ({4 * 254:,}): padding along one dimension",
                      "corner (4): padding along two or more"]
    assert fig.layout.title.text.startswith("act0[0, 3, :, :]") and "whole act0" in \
        fig.layout.title.text
    named = widgets.region_heatmap(reg, {0: 0, 1: 3}, dim_names={2: "output row"})
    assert named.layout.yaxis.title.text == "output row (act0 dim 2)"
    # a slice small enough to see every element: no zoom panel
    from workbench.volume.kernels import conv_spec
    small = regions(Program.from_spec(conv_spec(1, 3, 32, 32, 2, 5, 5)))
    fig = widgets.region_heatmap(small, {0: 0, 1: 0})
    assert "zoom" not in {tr.name for tr in fig.data} and len(fig.layout.shapes) == 1


def test_volume_programs_of_workbench_kernels_and_candidate_tiles():
    import random

    import workbench as wb
    from workbench.descent import random_fixed
    from workbench.volume.kernels import conv_spec, tile_sizes, volume_spec
    k = wb.kernels.matmul(m=64, n=32, k=16)
    reg = regions(Program.from_spec(volume_spec(k)))
    assert reg.counts()["dense"] == 64 * 32 and count(reg.constant_dependent) == 0
    m = reg.element_map
    assert _isl_reads(m, (3, 5)) == {("A", (3, kk)) for kk in range(16)} | \
        {("B", (kk, 5)) for kk in range(16)}
    reuse = Program.from_spec(volume_spec(wb.kernels.reuse_matmul(b=2, m=4, n=4, k=2)))
    assert ("B", (1, 3)) in _isl_reads(reuse.element_map(), (1, 0, 3))  # B shared by batches
    root = wb.Candidate.root(k)
    assert tile_sizes(root) == ({0: 1, 1: 1}, False)  # sizes open: the smallest tile
    fixed = random_fixed(root, random.Random(3))
    sizes, done = tile_sizes(fixed)
    assert done and 64 % sizes[0] == 0 and 32 % sizes[1] == 0
    tl = tile(reg, sizes)
    assert tl.dense_tiles.is_equal(tl.tiles)  # no constants: every tile dense
    conv = regions(Program.from_spec(conv_spec(1, 3, 64, 64, 8, 5, 5)))
    assert conv.counts() == {"dense": 8 * 30 * 30, "constant_dependent": 8 * (32 * 32 - 30 * 30),
                             "static": 0, "sparse_edges": 8 * 4 * 30, "sparse_corners": 32}


# ------------------------------------------------ shaped constants, examples
EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples" / "volume").glob("*.json"))


def test_weights_as_constants_static_region_by_hand_written_isl():
    """The static region of examples/volume/conv_weights_constant.json from
    the two ops' maps written out here: an output element is static when its
    5-D window (through the padding) reaches no ifm element — it always reads
    wgt, a constant, so its footprint is then cst0 and wgt only."""
    prog = Program.from_spec(EXAMPLES[0].parent / "conv_weights_constant.json")
    # pad low [4, 3], high [2, 3] of a 1×2×16×16 ifm: 1×2×22×22
    pad_to_ifm = isl.Map("{ pad0[n, c, h, w] -> ifm[n, c, h - 4, w - 3] : n = 0 and "
                         "0 <= c < 2 and 4 <= h < 20 and 3 <= w < 19 }")
    pad_to_cst = isl.Map("{ pad0[n, c, h, w] -> cst0[] : n = 0 and 0 <= c < 2 and 0 <= h < 22 "
                         "and 0 <= w < 22 and (h < 4 or h >= 20 or w < 3 or w >= 19) }")
    # 3×3 stride 1 over 2 channels, 4 filters: 1×4×20×20
    window = isl.Map("{ act0[n, f, y, x] -> pad0[n, c, h, w] : n = 0 and 0 <= f < 4 and "
                     "0 <= y < 20 and 0 <= x < 20 and 0 <= c < 2 and y <= h < y + 3 and "
                     "x <= w < x + 3 }")
    dom = isl.Set("{ act0[n, f, y, x] : n = 0 and 0 <= f < 4 and 0 <= y < 20 and 0 <= x < 20 }")
    reads_ifm = window.apply_range(pad_to_ifm).domain()
    reads_cst = window.apply_range(pad_to_cst).domain()
    static = dom.subtract(reads_ifm)
    assert static.is_subset(reads_cst)  # each static window is padding (and weights) only
    assert static.is_equal(isl.Set(
        "{ act0[0, f, y, x] : 0 <= f < 4 and 0 <= y < 20 and 0 <= x < 20 and "
        "(y <= 1 or x = 0 or x = 19) }"))
    reg = regions(prog)
    assert reg.static.is_equal(static) and count(static) == 4 * (2 * 20 + 2 * 18)
    assert reg.dense.is_equal(dom.subtract(reads_cst))  # the weights leave the interior dense
    # the same program with the weights as an input has no static element
    as_input = json.loads((EXAMPLES[0].parent / "conv_weights_constant.json").read_text())
    as_input["inputs"]["wgt"] = as_input["constants"].pop("wgt")
    reg_in = regions(Program.from_spec(as_input))
    assert count(reg_in.static) == 0 and reg_in.dense.is_equal(reg.dense)


def test_scalar_constants_in_either_form_give_the_same_program():
    as_dict = {**PAPER, "constants": {"cst0": []}}
    a, b = Program.from_spec(PAPER), Program.from_spec(as_dict)
    assert a.constants == b.constants == {"cst0": []} and a.maps == b.maps
    assert regions(a).counts() == regions(b).counts()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_specs_load_and_their_regions_partition_the_output(path):
    prog = Program.from_spec(path)
    reg = regions(prog)
    parts = reg.partition()
    union = reg.domain.subtract(reg.domain)
    for (ka, a), (kb, b) in itertools.combinations(parts.items(), 2):
        assert a.intersect(b).is_empty(), (path.name, ka, kb)
    for s in parts.values():
        union = union.union(s)
    assert union.is_equal(reg.domain), path.name
    assert sum(count(s) for s in parts.values()) == count(reg.domain)
    assert sum(1 for s in parts.values() if not s.is_empty()) >= 2, path.name  # non-trivial
    for k in ("static", "sparse_edges", "sparse_corners"):
        assert getattr(reg, k).is_subset(reg.constant_dependent)


def test_example_regions_of_the_papers_layer():
    by = {p.stem: p for p in EXAMPLES}
    fig1 = regions(Program.from_spec(by["paper_fig1_padded_conv"]))
    old = regions(Program.from_spec(by["paper_padded_conv_weights_input"]))
    # constant weights change nothing here: every window reads some ifm (§5.3: I_St = ∅)
    assert fig1.counts() == old.counts() == regions(Program.from_spec(PAPER)).counts()
    assert fig1.dense.is_equal(old.dense) and fig1.sparse_corners.is_equal(old.sparse_corners)


@pytest.mark.parametrize("spec, message", [
    ({"constants": {"w": [3, -1]}}, r"constant 'w' has shape \[3, -1\]; dimension\(s\) \[-1\]"),
    ({"constants": {"w": [0]}}, "not positive"),
    ({"constants": {"w": "3x3"}}, "constant 'w' has shape '3x3'; a shape is a list of integers"),
    ({"constants": {"w": [3, 2.5]}}, "a shape is a list of integers"),
    ({"constants": {"w": [True]}}, "a shape is a list of integers"),
    ({"constants": {"w": None}}, "a shape is a list of integers"),
    ({"inputs": {"x": [3, "4"]}}, "input 'x' has shape"),
    ({"constants": 7}, "'constants' must map names to shapes"),
    ({"constants": {"x": [3]}}, r"\['x'\] declared both as input and constant"),
    ({"constants": {"c]; x[": []}}, "constant name 'c]; x\\[' is not an identifier"),
    ({"constants": ["__import__('os')"]}, "is not an identifier"),
    ({"constants": {"c__pad0": []}}, "is not an identifier"),
    ({"inputs": {"and": [3]}}, "input name 'and' is not an identifier"),
    ({"ops": [{"result": "y", "op": "elementwise", "operands": ["x", "nope"]}]},
     "op 'y' \\(elementwise\\) reads 'nope', which is not defined before it"),
    ({"ops": [{"result": "y", "op": "matmul", "lhs": "x", "rhs": "W"}]},
     "reads 'W', which is not defined"),
    ({"ops": [{"result": "y", "op": "elementwise", "operands": "x"}]},
     "operands must be a non-empty list"),
    ({"ops": [{"result": "y", "op": "pad", "source": "x", "low": ["1 or 1"], "high": [0],
               "value": "c"}]}, "low must be a list of integers"),
    ({"ops": [{"result": "y", "op": "pad", "source": "x", "low": [1], "high": [0],
               "value": "w"}]}, "value 'w' has shape \\[2\\]; a padding value must be a scalar"),
    ({"ops": [{"result": "y", "op": "pad", "source": "x", "low": [1], "high": [0]}]},
     "needs a constant 'value'"),
    ({"ops": [{"result": "y", "op": "pad", "source": "x", "low": [1], "high": [0],
               "value": "q"}]}, "value 'q' is not a declared constant"),
    ({"ops": [{"result": "y", "op": "elementwise", "operands": ["x", "c"]}], "output": "w"},
     "output 'w' is not the result of an op"),
])
def test_bad_shaped_constant_specs_are_named(spec, message):
    base = {"inputs": {"x": [3]}, "constants": {"c": [], "w": [2]},
            "ops": [{"result": "y", "op": "elementwise", "operands": ["x", "c"]}], "output": "y"}
    with pytest.raises(WorkbenchError, match=message):
        Program.from_spec({**base, **spec})


def test_a_spec_is_data_only(tmp_path, monkeypatch):
    """Strings of a spec reach isl text only after validation, never Python:
    a spec smuggling code is an error, and nothing it names runs."""
    import builtins
    calls = []
    monkeypatch.setattr(builtins, "eval", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(builtins, "exec", lambda *a, **k: calls.append(a))
    evil = {"inputs": {"x": [3]}, "constants": {"c": []},
            "ops": [{"result": "y", "op": "__import__('os').system('touch pwned')",
                     "operands": ["x"]}], "output": "y"}
    with pytest.raises(WorkbenchError, match="unknown volume op"):
        Program.from_spec(evil)
    spec = tmp_path / "evil.json"
    spec.write_text(json.dumps({**evil, "ops": [{"result": "y", "op": "slice", "source": "x",
                                                 "offsets": ["0) or (1"], "sizes": [1]}]}))
    with pytest.raises(WorkbenchError, match="offsets must be a list of integers"):
        Program.from_spec(spec)
    assert not calls and not (tmp_path / "pwned").exists()
