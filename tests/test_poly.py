"""Dependences of kernels as islpy relations, the fusion conflict graph and
its colouring (pluto-lp-dfp §3), Affine-MARS partitions (checked by
enumeration against a plain-Python trace of the dependences)."""

from __future__ import annotations

import itertools
import random

import islpy as isl
import pytest
from gpu_cases import examples

import workbench as wb
from workbench.descent import random_fixed
from workbench.errors import WorkbenchError
from workbench.poly import PolyProgram, from_kernel, input_dependences
from workbench.poly.fcg import build_fcg, colour, fusable
from workbench.poly.mars import mars
from workbench.poly.tiles import tile_footprints


def _square(*names):
    return {s: f"[N] -> {{ {s}[i, j] : 0 <= i < N and 0 <= j < N }}" for s in names}


def figure1():
    """Seed Figure 1: S2 reads S1's array transposed and S3 reads S2's
    transposed; fusing as written breaks S1 -> S2, interchanging S2 fuses all."""
    return PolyProgram.from_isl(_square("S1", "S2", "S3"), {
        "S1->S2": "[N] -> { S1[a, b] -> S2[i, j] : a = j and b = i }",
        "S2->S3": "[N] -> { S2[p, q] -> S3[i, j] : i = q and j = p }"})


def test_figure1_colouring_interchanges_s2_and_fuses_everything():
    prog = figure1()
    g = build_fcg(prog)
    assert {tuple(sorted(e["between"])) for e in g.to_dict()["edges"]} == {
        ("S1.i", "S2.i"), ("S1.j", "S2.j"), ("S2.i", "S3.i"), ("S2.j", "S3.j")}
    assert not any(g.permute_preventing(v) for v in g.vertices)  # no intra deps
    assert "S1->S2" in g.why(("S1", 0), ("S2", 0))
    c = colour(prog)
    assert c.permutation("S1") == ["i", "j"] and c.permutation("S3") == ["i", "j"]
    assert c.permutation("S2") == ["j", "i"]  # loop interchange
    assert c.fused(0) == [["S1.i", "S2.j", "S3.i"]] and c.fused(1) == [["S1.j", "S2.i", "S3.j"]]
    assert c.cuts == []


def test_permute_preventing_dependence_gets_a_self_edge():
    prog = PolyProgram.from_isl(_square("S"), {"d": "[N] -> { S[i, j] -> S[i + 1, j - 1] }"})
    g = build_fcg(prog)
    assert g.permute_preventing(("S", 1)) and not g.permute_preventing(("S", 0))
    c = colour(prog)
    # j cannot go outermost; once i carries the dependence, j is free
    assert c.permutation("S") == ["i", "j"]


def test_fusion_preventing_dependence_cuts():
    prog = PolyProgram.from_isl(
        {"S1": "[N] -> { S1[i] : 0 <= i < N }", "S2": "[N] -> { S2[i] : 0 <= i < N }"},
        {"rev": "[N] -> { S1[a] -> S2[i] : a = N - 1 - i }"})  # S2 reads S1 reversed
    g = build_fcg(prog)
    assert g.conflict(("S1", 0), ("S2", 0)) and "rev" in g.why(("S1", 0), ("S2", 0))
    c = colour(prog)
    assert c.cuts == [(0, ["S1"], ["S2"])] and c.fused(0) == [["S1.i"], ["S2.i"]]
    # a forward shift is no conflict: a constant shift absorbs it
    shifted = PolyProgram.from_isl(
        {"S1": "[N] -> { S1[i] : 0 <= i < N }", "S2": "[N] -> { S2[i] : 0 <= i < N }"},
        {"next": "[N] -> { S1[a] -> S2[i] : a = i + 1 }"})
    assert fusable(shifted.dependences, {"S1": 0, "S2": 0})
    assert not build_fcg(shifted).edges


def test_matmul_producer_consumer_chain():
    kernel = wb.kernels.matmul(m=16, n=16, k=8)
    prog = from_kernel(kernel)
    names = {d.name for d in prog.dependences}
    assert names == {"ld_a->mad", "ld_b->mad", "init->mad", "mad->st_c", "mad reduction"}
    dep = {d.name: d for d in prog.dependences}
    # the store reads the last step of the reduction, for every (m, n)
    fixed = dep["mad->st_c"].relation.fix_val(isl.dim_type.param, 0, 8) \
        .fix_val(isl.dim_type.param, 1, 16).fix_val(isl.dim_type.param, 2, 16)
    pts = []
    fixed.wrap().foreach_point(lambda p: pts.append(p))
    assert len(pts) == 16 * 16
    g = build_fcg(prog)
    # producer and consumer fuse on the same logical dimension, never across
    assert not g.conflict(("ld_a", 0), ("mad", 0)) and g.conflict(("ld_a", 0), ("mad", 1))
    assert g.conflict(("mad", 2), ("st_c", 0))  # the store waits for the last k
    assert not g.permute_preventing(("mad", 2))  # the reduction is forward along k
    c = colour(prog)
    assert c.permutation("mad") == ["m", "n", "k"]
    assert ["mad.m", "st_c.m"] in c.fused(0)
    # input dependences: two loads of one element (none here: each input is read once)
    assert input_dependences(kernel) == []


def test_bad_programs_are_named_errors():
    with pytest.raises(WorkbenchError, match="domain of S"):
        PolyProgram.from_isl({"S": "{ S[i] : 0 <= i < }"}, {})
    with pytest.raises(WorkbenchError, match="relates S and T"):
        PolyProgram.from_isl({"S": "{ S[i] : 0 <= i < 4 }"}, {"d": "{ S[i] -> T[i] }"})


# --------------------------------------------------------------- Affine-MARS
def _trace_partition(m, tile_points, deps_py):
    """Plain Python: every footprint element with the set of other tiles
    (distinct footprints) that also read it."""
    def fp(points):
        return {y for x in points for f in deps_py for y in [f(*x)]}
    mine = fp(tile_points(m.tile))
    readers = {y: frozenset() for y in mine}
    for t, _ in m.consumers:
        theirs = fp(tile_points(t))
        for y in mine & theirs:
            readers[y] = readers[y] | {t}
    return mine, readers


def _points(s: isl.Set) -> set:
    out = []
    n = s.dim(isl.dim_type.set)
    s.foreach_point(lambda q: out.append(tuple(
        q.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(n))))
    return set(out)


def _check_partition(m, tile_points, deps_py):
    mine, readers = _trace_partition(m, tile_points, deps_py)
    parts = [_points(p) for p, _ in m.parts]
    flat = [y for s in parts for y in s]
    assert sorted(flat) == sorted(mine)  # a partition: each element in exactly one MARS
    for s in parts:  # atomic: one set of readers per MARS
        assert len({readers[y] for y in s}) == 1
    assert len({readers[next(iter(s))] for s in parts}) == len(parts)  # maximal
    return parts


def _rotated_tile(s, n, m):
    def points(t):
        i0, i1 = t
        return [(i, j) for i in range(n) for j in range(m)
                if s * i0 <= i + j < s * (i0 + 1) and s * i1 <= j - i < s * (i1 + 1)]
    return points


def test_mars_single_affine_dependence_matches_the_seed():
    s, n, (i0, i1) = 8, 64, (8, 1)
    dom = isl.Set(f"{{ S[i, j] : 0 <= i < {n} and 0 <= j < {n} }}")
    m = mars(dom, [isl.Map("{ S[i, j] -> A[i] }")], [(1, 1), (-1, 1)], [s, s], (i0, i1))
    # seed §4.3.1: three MARS, and the footprint s(i0-i1-1) < 2i < s(i0-i1+1)
    want = [f"{s * (i0 - i1)} < 2i < {s * (i0 - i1 + 1)}",
            f"{s * (i0 - i1 - 1)} < 2i < {s * (i0 - i1)}", f"{s * (i0 - i1)} = 2i"]
    assert len(m.parts) == 3
    for w in want:
        assert any(p.is_equal(isl.Set(f"{{ A[i] : {w} }}")) for p, _ in m.parts), w
    assert m.footprint.is_equal(isl.Set(
        f"{{ A[i] : {s * (i0 - i1 - 1)} < 2i < {s * (i0 - i1 + 1)} }}"))
    # three families of consumer tiles: north-west, north-east, above (§4.3.1)
    offsets = {(t[0] - i0) - (t[1] - i1) for t, _ in m.consumers}
    assert offsets == {-1, 0, 1} and len(m.consumers) == 3
    _check_partition(m, _rotated_tile(s, n, n), [lambda i, j: (i,)])


def test_mars_jacobi_1d_consumer_tiles_match_the_seed():
    s, n, t0 = 6, 60, (10, 1)
    dom = isl.Set(f"{{ S[i, j] : 0 <= i < {n} and 0 <= j < {n} }}")
    maps = [isl.Map("{ S[i, j] -> A[i - 1, j - 1] }"), isl.Map("{ S[i, j] -> A[i, j - 1] }"),
            isl.Map("{ S[i, j] -> A[i + 1, j - 1] }")]
    m = mars(dom, maps, [(1, 1), (-1, 1)], [s, s], t0)
    # §4.4.2: P(t) = {(0,0), (-1,0), (0,1), (-1,1), (1,0), (0,-1), (1,-1)}
    assert {(a - t0[0], b - t0[1]) for (a, b), _ in m.consumers} == \
        {(-1, 0), (0, 1), (-1, 1), (1, 0), (0, -1), (1, -1)}
    _check_partition(m, _rotated_tile(s, n, n), [lambda i, j: (i - 1, j - 1),
                                                 lambda i, j: (i, j - 1),
                                                 lambda i, j: (i + 1, j - 1)])


@pytest.mark.parametrize("seed", range(4))
def test_mars_random_uniform_dependences_partition_by_enumeration(seed):
    rng = random.Random(seed)
    s = rng.choice([3, 4, 5])
    vecs = {(rng.randint(-2, 2), rng.randint(-2, 2)) for _ in range(rng.randint(1, 4))}
    dom = isl.Set("{ S[i, j] : 0 <= i < 30 and 0 <= j < 30 }")
    maps = [isl.Map(f"{{ S[i, j] -> A[i + {a}, j + {b}] }}") for a, b in vecs]
    m = mars(dom, maps, [(1, 0), (0, 1)], [s, s], (3, 3))

    def points(t):
        return [(i, j) for i, j in itertools.product(range(30), range(30))
                if t[0] * s <= i < t[0] * s + s and t[1] * s <= j < t[1] * s + s]
    _check_partition(m, points, [lambda i, j, a=a, b=b: (i + a, j + b) for a, b in vecs])


def test_tile_footprints_of_a_fixed_matmul():
    kernel = wb.kernels.matmul(m=64, n=64, k=32)
    cand = random_fixed(wb.Candidate.root(kernel), random.Random(3))
    fps = {f.dependence: f for f in tile_footprints(cand)}
    a = fps["ld_a->mad"]
    assert a.mars.footprint_size == a.tile["m"] * a.tile["k"]  # one tile of A
    assert a.bytes == 4 * a.tile["m"] * a.tile["k"]
    # every tile along n reads the same A tile: one MARS, the whole footprint
    assert a.mars.sizes() == [a.mars.footprint_size]
    b = fps["ld_b->mad"]
    assert b.mars.footprint_size == b.tile["k"] * b.tile["n"]
    st = fps["mad->st_c"]
    assert st.mars.footprint_size == st.tile["m"] * st.tile["n"] and not st.mars.consumers


# --------------------------------------------------------------- propagator
def _scale_by_last(n: int):
    """z[i] = x[i] * x[n-1]: the product reads the load's last iteration."""
    from workbench.kernels.ir import Operand
    from workbench.kernels.linalg import LinalgKernel

    def ref(d, xp, dtype):
        return {"z": d["x"].astype(dtype) * dtype(d["x"][-1])}
    k = LinalgKernel("scale_by_last", {"builder": "scale_by_last", "n": n}, ref, (), "h200")
    # no level can have size 1 (a one-iteration loop merges harmlessly)
    ln = k.logical_dim("n", n, ((4, 8, 16), (2, 4)))
    x, z = k.array("x", n, {"n": 1}, "input"), k.array("z", n, {"n": 1}, "output")
    dx, df, dz = (k.nest(p, ln) for p in ("x", "f", "z"))
    k.inst("ld_x", "load", dx, array=x)
    k.inst("mul", "mul", df, [Operand("inst", "ld_x", k.pair(dx, df, ln)),
                              Operand("inst", "ld_x", ())])
    k.inst("st_z", "store", dz, [Operand("inst", "mul", k.pair(df, dz, ln))], z)
    return k


def test_fcg_verdicts_agree_with_the_space_on_a_last_value_read():
    """The FCG proves ld_x.n and mul.n unfusable (mul reads x[n-1]); the GPU
    space already removes those merges, so the extra propagator is sound and
    finds nothing left to remove."""
    from workbench.poly import fcg_prune
    kernel = _scale_by_last(256)
    prog = from_kernel(kernel)
    g = build_fcg(prog)
    assert g.conflict(("ld_x", 0), ("mul", 0)) and not g.conflict(("mul", 0), ("st_z", 0))
    plain = wb.Candidate.root(kernel)
    proposed = fcg_prune(kernel)
    # every level of ld_x's n against every level of mul's n; nothing with st_z
    assert {objs for _, objs, _, _ in proposed} == {(f"d{a}", f"d{b}") for a in range(3)
                                                     for b in range(3, 6)}
    for _, objs, _values, why in proposed:
        assert "ld_x" in why and "mul" in why
        assert "MERGED" not in plain.domain("order", objs)
    pruned = wb.Candidate.root(kernel, prune=fcg_prune)
    assert pruned.digest() == plain.digest()


def test_extra_propagator_mechanism_records_why():
    kernel = wb.kernels.matmul(m=16, n=16, k=8)

    def no_merge(k):
        return [("order", ("d0", "d10"), ("MERGED",), "test: never merge d0 and d10")]
    root = wb.Candidate.root(kernel, prune=no_merge)
    assert "MERGED" not in root.domain("order", ("d0", "d10"))
    assert "MERGED" in wb.Candidate.root(kernel).domain("order", ("d0", "d10"))
    assert any(p.by == "test: never merge d0 and d10" for p in root.pruned())
    with pytest.raises(wb.InvalidDecision):
        root.apply("order", ("d0", "d10"), "MERGED")


def test_fcg_propagator_keeps_every_implementation_found_without_it():
    from workbench.poly import fcg_prune
    kernel = wb.kernels.matmul(m=16, n=16, k=8)
    root = wb.Candidate.root(kernel, prune=fcg_prune)
    for seed in range(examples(2)):
        fixed = random_fixed(wb.Candidate.root(kernel), random.Random(seed))
        again = wb.Candidate.replay(kernel, fixed.trail, prune=fcg_prune)
        assert again.is_fixed and again.digest() == fixed.digest()
    assert root.log10_size() == wb.Candidate.root(kernel).log10_size()


def test_space_stats_cli_with_the_fcg_propagator():
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "workbench", "space-stats", "--kernel", "axpy",
                          "--sizes", "n=256", "--descents", "5", "--fcg", "--json"],
                         capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["descents"] == 5 and 0 <= got["dead_end_probability"] <= 1


# ------------------------------------------------------------------ figures
def _segments(trace):
    """The polylines of a None-separated scatter trace."""
    out, cur = [], []
    for x, y in zip(trace.x, trace.y):
        if x is None:
            out.append(cur)
            cur = []
        else:
            cur.append((x, y))
    return out + ([cur] if cur else [])


def test_fcg_figure_edges_miss_other_nodes_and_the_legend_names_levels():
    """Straight edges passed through the nodes between their ends (ld_a.k to
    mad.n through ld_b.n and init.n): which nodes an edge joined was
    ambiguous; the third colour (mad's k, level 2) was in no legend."""
    pytest.importorskip("plotly")
    from widgets.poly_view import fcg_figure
    prog = from_kernel(wb.kernels.matmul(m=256, n=256, k=64))
    g, c = build_fcg(prog), colour(prog)
    fig = fcg_figure(g, c)
    stmts = list(g.dims)
    nodes = {(k, -r) for r, s in enumerate(stmts) for k in range(len(g.dims[s]))}
    edges = _segments(fig.data[0])
    assert len(edges) == sum(len(e) == 2 for e in g.edges)
    for pts in edges:
        ends = {tuple(pts[0]), tuple(pts[-1])}
        assert ends <= nodes
        for node in nodes - ends:  # nowhere within a node's radius (x stretched ×2)
            assert min(((x - node[0]) * 2) ** 2 + (y - node[1]) ** 2
                       for x, y in pts) > 0.3 ** 2, (pts[0], pts[-1], node)
    names = [tr.name for tr in fig.data]
    assert {"loop level 0 (outermost)", "loop level 1", "loop level 2 (innermost)"} <= \
        set(names)
    blue = next(tr for tr in fig.data if tr.name == "loop level 2 (innermost)")
    assert list(blue.text) == ["k"]  # mad's reduction, alone at the third level
    assert all(tr.textfont.color == "white" for tr in fig.data
               if (tr.name or "").startswith("loop"))
    assert any("cut at level 0" in a.text for a in fig.layout.annotations)


def test_mars_figure_gives_every_mars_its_own_colour_and_axes():
    pytest.importorskip("plotly")
    from widgets.poly_view import level_colour, mars_figure
    dom = isl.Set("{ S[i, j] : 0 <= i < 64 and 0 <= j < 64 }")
    jac = mars(dom, [isl.Map("{ S[i, j] -> A[i - 1, j - 1] }"),
                     isl.Map("{ S[i, j] -> A[i, j - 1] }"),
                     isl.Map("{ S[i, j] -> A[i + 1, j - 1] }")], [(1, 1), (-1, 1)], [6, 6],
               (10, 1))
    fig = mars_figure(jac)
    fills = [tr.fillcolor for tr in fig.data if tr.fill == "toself"]
    assert len(fills) == len(jac.parts) == 11 and len(set(fills)) == 11
    assert fig.layout.xaxis.title.text == "A index 1" and fig.layout.yaxis.title.text == \
        "A index 0"
    # each element is numbered by its MARS
    numbers = [t for tr in fig.data if tr.mode == "text" for t in tr.text]
    assert len(numbers) == jac.footprint_size and set(numbers) == {str(k) for k in range(11)}
    assert len({level_colour(k) for k in range(100)}) == 100  # any count
