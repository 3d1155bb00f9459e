"""The audit of stored measurements (`workbench.campaign.audit`,
`python -m workbench audit`): every record a backend writes carries the
digest of the program it timed; today's bound of each stored trail is
compared with its fastest sample, and the records whose program today's
code generator no longer prints, or that carry no digest, are counted
apart — never dropped, never rewritten."""

from __future__ import annotations

import json
import random

import pytest
from gpu_cases import build, cpu_records, fixed_candidates, n_drawn

import workbench as wb
from workbench.campaign.audit import audit, audit_rows
from workbench.campaign.bounds import CHANGED, SAME, UNKNOWN, programs_now
from workbench.cli import main
from workbench.codegen import generate
from workbench.runtime import RecordStore

NAME = "matmul"


@pytest.fixture(scope="module")
def records():
    fixed_candidates(NAME, n_drawn())
    return [r.to_dict() for r in cpu_records(NAME, n_drawn())]


def test_one_trail_one_program_digest():
    """The digest reads the printed program, whatever name the batch gave it."""
    root = wb.Candidate.root(build(NAME))
    a = wb.descent.random_fixed(root, random.Random(1))
    b = wb.descent.random_fixed(root, random.Random(2))
    assert generate(a, "wb_0").source_digest("c") == generate(a, "wb_17").source_digest("c")
    assert generate(a, "kernel").source_digest("cuda") == \
        generate(a, "wb_3").source_digest("cuda")
    assert generate(a).source_digest("c") != generate(b).source_digest("c")
    assert generate(a).source_digest("c") != generate(a).source_digest("cuda")


def test_programs_now_tells_today_s_program_from_another(records):
    changed = {**records[0], "x_source_digest": "0" * 32}
    unknown = {k: v for k, v in records[1].items() if k != "x_source_digest"}
    cut = {**records[2], "trail": records[2]["trail"][:3]}  # a trail today's space leaves open
    got = programs_now([records[0], changed, unknown, cut])
    assert [r["source_now"] for r in got] == [SAME, CHANGED, UNKNOWN, CHANGED]
    assert "source_now" not in records[0]  # the rows given are not changed


def test_audit_counts_each_program_apart(records, tmp_path):
    """A record of today's program above today's bound would be a model
    defect; one of another program is counted, not taken as one."""
    fast = {**records[1], "x_source_digest": "f" * 32,
            "times_ns": [r / 1e6 for r in records[1]["times_ns"]]}  # faster than any bound
    old = {k: v for k, v in records[2].items() if k != "x_source_digest"}
    path = tmp_path / "runs.jsonl"
    RecordStore(path).append([records[0], fast, old])
    before = path.read_bytes()
    got = audit([path])[str(path)]
    assert got["records"] == 3 and got["not_replayed"] == 0
    assert (got[SAME]["records"], got[SAME]["sound"]) == (1, 1)
    assert (got[CHANGED]["records"], got[CHANGED]["sound"]) == (1, 0)
    assert got[CHANGED]["worst_ratio"] > 1
    assert got[UNKNOWN]["records"] == 1
    assert got["all"]["records"] == 3
    assert path.read_bytes() == before  # records are never rewritten
    assert audit_rows([records[0]], target="h200")[SAME]["records"] == 1


def test_cli_audit(records, tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    RecordStore(path).append(records[:2])
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: 2 measured records" in out and "today's program: 2 of 2 sound" in out
    assert main(["audit", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[str(path)][SAME]["sound"] == 2
    assert main(["audit", str(tmp_path / "none.jsonl")]) != 0
    assert "no record file" in capsys.readouterr().err
    assert main(["audit", str(path), "--target", "no_such_table"]) != 0
    assert "no_such_table" in capsys.readouterr().err
