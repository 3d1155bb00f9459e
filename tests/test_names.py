"""Names people can read (workbench.names): no raw dimension id in what a
person reads — choice labels, groups, repr, the CLI, explanations."""

from __future__ import annotations

import json
import re
import time

import pytest
from helpers import dead_end_decisions

import workbench as wb
from workbench.cli import main
from workbench.explain import describe, explain
from workbench.names import _CACHE

BARE = re.compile(r"\bd\d+\b")  # a raw dimension id


@pytest.fixture(scope="module")
def matmul():
    # the kernel the CLI test builds from the same sizes (one root for both)
    return wb.Candidate.root(wb.kernels.build_kernel("matmul", {"m": 64, "n": 64, "k": 32}))


@pytest.fixture(scope="module")
def axpy():
    return wb.Candidate.root(wb.kernels.axpy(n=1024))


@pytest.fixture(scope="module")
def lowered(matmul):
    lab = matmul.kernel.dims_by_label()
    return matmul.apply("dim_map", (lab["a_m0"], lab["c_m0"]), "MEMORY")


def _check_labels(cand):
    labels = {}
    for ch in cand.choices():
        text = wb.choice_label(cand, ch.name, ch.objects)
        group = wb.choice_group(cand, ch.name, ch.objects)
        assert not BARE.search(text), (text, ch)
        assert not BARE.search(group) and group, (group, ch)
        key = (ch.name, ch.objects)
        assert labels.setdefault(text, key) == key, f"{text!r} names {labels[text]} and {key}"
        assert wb.raw(ch.name, ch.objects) == f"{ch.name}({', '.join(ch.objects)})"
    return labels


@pytest.mark.parametrize("which", ["matmul", "axpy", "lowered"])
def test_every_open_choice_has_a_distinct_readable_label(which, request):
    cand = request.getfixturevalue(which)
    labels = _check_labels(cand)
    assert len(labels) == len(cand.choices()) > 0


def test_dimensions_instructions_and_lowered_objects_in_words(matmul, lowered):
    lab = matmul.kernel.dims_by_label()
    assert wb.object_label(matmul, lab["c_n0"]) == "mad · n · tile 0"
    assert wb.object_label(matmul, lab["a_k1"]) == "ld_a · k · tile 1"
    assert wb.object_label(matmul, "ld_a") == "ld_a"
    assert wb.object_label(matmul, "nope") == "nope"  # unknown: its id
    assert wb.choice_label(matmul, "size", lab["c_n0"]) == "size: mad · n · tile 0"
    assert wb.choice_label(matmul, "order", ("ld_a", lab["c_n0"])) == \
        "order: ld_a vs mad · n · tile 0"
    assert wb.choice_label(matmul, "dim_map", (lab["a_m0"], lab["c_m0"])) == \
        "dim map: ld_a · m · tile 0 → mad · m · tile 0"
    assert wb.choice_group(matmul, "order", (lab["c_n0"], "ld_a")) == "ld_a ↔ mad"
    assert wb.choice_group(matmul, "size", [lab["c_n0"]]) == "mad"
    assert wb.object_label(lowered, "st_ld_a_mad") == "store of ld_a for mad"
    assert wb.object_label(lowered, "ld_ld_a_mad") == "load of ld_a for mad"
    assert wb.choice_label(lowered, "mem_space", "tmp_ld_a_mad") == \
        "memory space: temporary of ld_a for mad"
    assert wb.choice_group(lowered, "mem_space", "tmp_ld_a_mad") == "ld_a ↔ mad"
    assert wb.choice_group(lowered, "cache", "ld_ld_a_mad") == "mad"
    d = wb.Decision("dim_kind", (lab["c_n0"],), ("BLOCK",))
    assert wb.decision_label(matmul, d) == describe(d, matmul) == \
        "dim kind: mad · n · tile 0 = BLOCK"
    assert describe(d) == f"dim_kind({lab['c_n0']}) = BLOCK"  # raw without a candidate


def test_repr_names_objects_and_html_keeps_raw_ids(lowered):
    lab = lowered.kernel.dims_by_label()
    c = lowered.apply("dim_kind", lab["c_n0"], "BLOCK").apply("cache", "st_ld_a_mad", "L2")
    text = repr(c)
    assert "store of ld_a for mad" in text and "mad · n · tile 0" in text
    assert not BARE.search(text), text
    page = c._repr_html_()
    assert f"title='dim_kind({lab['c_n0']}) = BLOCK'" in page
    assert not BARE.search(re.sub(r"title='[^']*'", "", page)), page


def test_cli_choices_text_and_json_labels(matmul, capsys):
    args = ["choices", "--kernel", "matmul", "--sizes", "m=64,n=64,k=32"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "mad · n · tile 0" in out and not BARE.search(out)
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ch = data["choices"][0]
    assert set(ch) == {"name", "objects", "values", "label"}
    assert not BARE.search(ch["label"]) and BARE.search(", ".join(ch["objects"]))


def test_explanations_name_objects(matmul):
    cand, d = dead_end_decisions(matmul, 1, seed=5)[0]
    ex = explain(cand, decision=d)
    assert not BARE.search(ex.text), ex.text
    assert not BARE.search(ex.target) and ex.target.startswith("decision ")
    assert ex.to_dict()["culprits"] == [x.to_dict() for x in ex.culprits]  # raw: they replay


def test_label_cost(matmul):
    """Printed, not asserted: the explorer labels ~12 choices per click."""
    chs = matmul.choices()[:12]
    _CACHE.pop(matmul.problem, None)  # as on a problem not labelled yet
    t = time.perf_counter()
    wb.choice_label(matmul, chs[0].name, chs[0].objects)  # builds the problem's names
    first_ms = (time.perf_counter() - t) * 1e3
    calls, t = 0, time.perf_counter()
    for _ in range(500):
        for ch in chs:
            wb.choice_label(matmul, ch.name, ch.objects)
            wb.choice_group(matmul, ch.name, ch.objects)
            calls += 2
    per_ms = (time.perf_counter() - t) / calls * 1e3
    print(f"\nnames: first call on a problem {first_ms:.3f} ms, then {per_ms * 1e3:.2f} µs a call")
