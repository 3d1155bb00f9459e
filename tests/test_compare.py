"""Two branches compared (issue 22): the decision sets, recomputed here from
the trails, are right and swap symmetrically; identical branches compare
equal with an empty code diff; the Compare panel draws."""

from __future__ import annotations

import dataclasses
import json
import random
from types import SimpleNamespace

import pytest

import workbench as wb
from workbench.compare import compare, compare_candidates, decision_sets, diff_counts
from workbench.descent import random_fixed
from workbench.runtime.records import RecordStore
from workbench.session import Session


@pytest.fixture(scope="module")
def root():
    return wb.Candidate.root(wb.kernels.axpy(n=256))


@pytest.fixture(scope="module")
def fixed(root):
    a = random_fixed(root, random.Random(1))
    b = random_fixed(root, random.Random(2))
    assert a.digest() != b.digest()
    return a, b


def _session(root, fixed, store=None) -> Session:
    s = Session(root, target="h200", store=store)
    s.new_branch("one", cand=fixed[0])
    s.new_branch("two", cand=fixed[1])
    return s  # branches: main (the root), one, two; current: two


def _expected(ta, tb):
    """The sets, recomputed directly: keyed by choice instance."""
    sa, sb = set(ta), set(tb)
    ka = {(d.choice, d.objects): d for d in ta if d not in sb}
    kb = {(d.choice, d.objects): d for d in tb if d not in sa}
    both = ka.keys() & kb.keys()
    differ = {(k[0], k[1], "|".join(ka[k].values), "|".join(kb[k].values)) for k in both}
    only_a = {d for d in sa - sb if (d.choice, d.objects) not in both}
    only_b = {d for d in sb - sa if (d.choice, d.objects) not in both}
    return len(sa & sb), only_a, only_b, differ


def test_decision_sets_match_the_trails(root, fixed):
    s = _session(root, fixed)
    c = compare(s, 1, 2)
    common, only_a, only_b, differ = _expected(fixed[0].trail, fixed[1].trail)
    assert c.names == ("one", "two")
    assert c.common == common and set(c.only_a) == only_a and set(c.only_b) == only_b
    assert set(c.differ) == differ and c.differ  # two random descents disagree somewhere
    # every decision of either trail is accounted for once
    assert c.common + len(c.only_a) + len(c.differ) == len(set(fixed[0].trail))
    assert c.common + len(c.only_b) + len(c.differ) == len(set(fixed[1].trail))
    assert c.bounds == (s.bound(fixed[0]).value_ns, s.bound(fixed[1]).value_ns)
    assert c.measured == (None, None) and not c.same
    # against the root: every decision of `one` is its own
    r = compare(s, 1, 0)
    assert r.common == 0 and not r.differ and set(r.only_a) == set(fixed[0].trail)
    assert r.code_diff is None and "main is not fixed" in r.code_note


def test_swap_is_symmetric(root, fixed):
    s = _session(root, fixed)
    ab, ba = compare(s, 1, 2), compare(s, 2, 1)
    assert ab.common == ba.common
    assert set(ab.only_a) == set(ba.only_b) and set(ab.only_b) == set(ba.only_a)
    assert {(c, o, vb, va) for c, o, va, vb in ab.differ} == set(ba.differ)
    assert ab.bounds == ba.bounds[::-1] and ab.names == ba.names[::-1]
    # the other way round: as many lines more on one side (difflib's greedy
    # matching may pair one line differently each way, so not the counts)
    (add_ab, rem_ab), (add_ba, rem_ba) = diff_counts(ab.code_diff), diff_counts(ba.code_diff)
    assert add_ab - rem_ab == rem_ba - add_ba and add_ab and add_ba
    assert sum(diff_counts(ab.code_diff)) > 0


def test_identical_branches_compare_equal(root, fixed):
    s = Session(root, store=None)
    s.new_branch("x", cand=fixed[0])
    s.new_branch("y", cand=fixed[0])
    c = compare(s, 1, 2)
    assert c.same and c.common == len(set(fixed[0].trail))
    assert not c.only_a and not c.only_b and not c.differ
    assert c.code_diff == "" and c.code_note == "the same CUDA"
    assert dataclasses.replace(compare(s, 2, 1), names=("x", "y")) == c
    assert c.bounds[0] == c.bounds[1]
    assert "the same candidate" in c.text


def test_code_diff_and_measured_times(root, fixed, tmp_path):
    from workbench.codegen import generate
    store = RecordStore(tmp_path / "runs.jsonl")
    spec = root.kernel.spec()
    a, b = fixed
    store.append([
        {"sizes": spec, "digest": a.digest(), "status": "ok", "median_ns": 900.0,
         "target": "h200"},
        {"sizes": spec, "digest": a.digest(), "status": "ok", "median_ns": 700.0,
         "target": "h200"},
        {"sizes": spec, "digest": a.digest(), "status": "ok", "median_ns": 5.0,
         "target": "cpu_reference"},  # another target: not this session's
        {"sizes": spec, "digest": b.digest(), "status": "wrong_result", "median_ns": 1.0,
         "target": "h200"},
    ])
    s = _session(root, fixed, store=store)
    c = compare(s, 1, 2)
    assert c.measured == (700.0, None)
    assert generate(a).cuda != generate(b).cuda
    assert c.code_diff.startswith("--- one.cu\n+++ two.cu\n")
    assert "lines added" in c.code_note
    d = json.loads(json.dumps(c.to_dict()))
    assert d["names"] == ["one", "two"] and d["measured_ns"] == [700.0, None]
    assert len(d["differ"]) == len(c.differ) and d["code_diff"] == c.code_diff
    text = c.text
    assert "one against two" in text and "bound:" in text and "measured:" in text
    # without a Session: the same sets; any target when none is named
    free = compare_candidates(a, b, store=store, names=("one", "two"))
    assert (free.common, free.only_a, free.only_b, free.differ) == \
        (c.common, c.only_a, c.only_b, c.differ)
    assert free.measured == (5.0, None) and free.code_diff == c.code_diff
    assert compare_candidates(a, b, target="h200", store=store).measured == (700.0, None)
    with pytest.raises(wb.WorkbenchError, match="no branch 3"):
        compare(s, 1, 3)


def test_same_instance_decided_twice_pairs_the_last():
    D = wb.Decision
    wide, a, b = D("c", ("x",), ("1", "2")), D("c", ("x",), ("1",)), D("c", ("x",), ("2",))
    other = D("k", ("y",), ("A",))
    common, only_a, only_b, differ = decision_sets((wide, a, other), (wide, b))
    assert common == 1 and differ == (("c", ("x",), "1", "2"),)
    assert only_a == (other,) and only_b == ()


def test_panel_builds_and_shows(root, fixed):
    pytest.importorskip("ipywidgets")
    from widgets.compare_view import ONE_BRANCH, ComparePanel
    s = Session(root, target="h200", store=None)
    ex = SimpleNamespace(session=s, backend="cpu")
    p = ComparePanel(ex)
    p.refresh()
    p.show()
    assert p.message.value == ONE_BRANCH and "Branch" in ONE_BRANCH and p.comparison is None
    s.new_branch("one", cand=fixed[0])
    s.new_branch("two", cand=fixed[1])
    p.refresh()
    assert (p.a_pick.value, p.b_pick.value) == (2, 1)  # the current one against the previous
    c = p.show()
    assert c is p.comparison and c.names == ("two", "one")
    assert "<table" in p.table.value and "bound" in p.table.value
    for _, _, va, vb in c.differ:
        assert va in p.table.value and vb in p.table.value
    assert "background:#e6ffec" in p.code_html.value  # added lines coloured
    assert "background:#ffebe9" in p.code_html.value  # removed lines coloured
    p.b_pick.value = 0  # a pick redraws: the root is not fixed, so no code
    assert p.comparison.names == ("two", "main") and "not fixed" in p.code_html.value
    p.refresh()
    assert p.b_pick.value == 0  # a pick is kept across refreshes
    assert p.pick(1, 1).same and "same branch" in p.message.value
