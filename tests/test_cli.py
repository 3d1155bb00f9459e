"""`python -m workbench` commands."""

from __future__ import annotations

import json
import subprocess
import sys

import workbench as wb
from workbench.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          check=False, text=True, timeout=120)


def test_help():
    r = run("--help")
    assert r.returncode == 0 and "space-stats" in r.stdout
    r = run()  # no command: the list, and a usage exit (it exited 0)
    assert r.returncode == 2 and "space-stats" in r.stderr


def test_space_stats_json(capsys):
    assert main(["space-stats", "--kernel", "random_basic_block", "--sizes", "n=12,seed=7",
                 "--descents", "40", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"descents", "dead_ends", "dead_end_probability", "mean_depth",
                        "log10_space_size", "thesis_dead_ends", "thesis_dead_end_probability",
                        "thesis_log10_space_size"}
    assert out["thesis_dead_ends"] <= out["dead_ends"]
    assert out["descents"] == 40 and out["dead_ends"] == 0
    assert out["mean_depth"] > 0 and out["log10_space_size"] > 0


def test_choices_reads_a_trail(tmp_path, capsys):
    k = wb.kernels.random_basic_block(5, seed=2)
    c = wb.Candidate.root(k)
    ch = c.choices()[0]
    c2 = c.apply(ch.name, ch.objects, ch.values[0])
    f = tmp_path / "trail.json"
    f.write_text(c2.to_json())
    assert main(["choices", "--kernel", "random_basic_block", "--sizes", "n=5,seed=2",
                 "--trail", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["choices"]) == len(c2.choices())


def test_errors_are_messages_not_tracebacks():
    r = run("space-stats", "--kernel", "nope", "--json")
    assert r.returncode == 2 and "unknown kernel" in r.stderr and "Traceback" not in r.stderr
    r = run("check-space", "tests/spaces/missing.space")
    assert r.returncode == 2 and "no decision space" in r.stderr


def test_explain_names_the_culprits(tmp_path, capsys):
    """A trail whose last decision dead-ends: the culprits, checked, as JSON."""
    from helpers import dead_end_decisions
    root = wb.Candidate.root(wb.kernels.build_kernel("matmul", {"m": 16, "n": 16, "k": 8}))
    c, d = dead_end_decisions(root, 1, seed=5)[0]
    trail = [x.to_dict() for x in (*c.trail, d)]
    f = tmp_path / "trail.json"
    f.write_text(json.dumps(trail))
    assert main(["explain", "--kernel", "matmul", "--sizes", "m=16,n=16,k=8",
                 "--trail", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] and out["reasons"] and out["target"].startswith("decision")
    assert all(d in trail for d in out["culprits"])
    # the DESIGN contract's names: the culprits as [choice, [objects], value]
    assert out["dead"] is True and out["constraint"] in out["reasons"][0][1]
    assert out["decisions"] == [[d["choice"], d["objects"], d["value"]]
                                for d in out["culprits"]]
    assert main(["explain", "--kernel", "matmul", "--sizes", "m=16,n=16,k=8",
                 "--trail", str(f), "--ways-out"]) == 0
    text = capsys.readouterr().out  # one line per culprit: where dropping it leads
    drops = [line for line in text.splitlines() if line.startswith("drop `")]
    assert len(drops) == len(out["culprits"])
    assert all(any(why in line for why in ("leads to an implementation", "still", "not settled",
                                           "no longer replay")) for line in drops), drops
    r = run("explain", "--kernel", "matmul", "--sizes", "m=16,n=16,k=8", "--trail", str(f),
            "--choice", "nonsense")
    assert r.returncode != 0 and "Traceback" not in r.stderr


def test_explain_says_why_a_value_was_pruned(tmp_path, capsys):
    """A trail whose last value earlier decisions pruned was refused
    ("size(d13) = 64 is outside its domain"): the case a person most wants
    explained. Two 64-thread strips on distinct thread dimensions leave n's
    THREAD strip at most 16: the three decisions are the culprits."""
    trail = [{"choice": "dim_kind", "objects": ["d10"], "value": "THREAD"},
             {"choice": "size", "objects": ["d10"], "value": "64"},
             {"choice": "dim_kind", "objects": ["d16"], "value": "LOOP"},
             {"choice": "dim_kind", "objects": ["d13"], "value": "THREAD"},
             {"choice": "size", "objects": ["d13"], "value": "64"}]
    f = tmp_path / "t.json"
    f.write_text(json.dumps(trail))
    mm = ["--kernel", "matmul", "--sizes", "m=64,n=64,k=32", "--trail", str(f)]
    assert main(["explain", *mm, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] and len(out["culprits"]) == 3
    assert {c["objects"][0] for c in out["culprits"]} == {"d10", "d13"}
    f.write_text(json.dumps([*trail[:4], {"choice": "size", "objects": ["d13"],
                                           "value": "3"}]))  # the root has no 3
    assert main(["explain", *mm, "--json"]) == 2
    assert "is not a value of size" in json.loads(capsys.readouterr().out)["error"]


def test_explain_checks_a_saved_digest(tmp_path, capsys):
    """A saved candidate whose trail replays to other domains than it was
    saved with is an error naming the digest, as for `run` and `codegen`;
    --allow-other-kernel explains it with a warning."""
    root = wb.Candidate.root(wb.kernels.build_kernel("matmul", {"m": 16, "n": 16, "k": 8}))
    ch = root.choices()[0]
    doc = json.loads(root.apply(ch.name, ch.objects, ch.values[0]).to_json())
    f = tmp_path / "trail.json"
    args = ["explain", "--kernel", "matmul", "--sizes", "m=16,n=16,k=8", "--trail", str(f),
            "--choice", f"{ch.name}:{','.join(ch.objects)}"]
    f.write_text(json.dumps({**doc, "digest": "0" * 64}))
    r = run(*args)
    assert r.returncode == 2 and "digest" in r.stderr and "Traceback" not in r.stderr
    r = run(*args, "--allow-other-kernel")
    assert "warning: --allow-other-kernel" in r.stderr and "digest" in r.stderr
    assert "Traceback" not in r.stderr


def test_space_stats_from_a_trail(tmp_path, capsys):
    """`space-stats --trail` descends from that candidate (docs/cli.md)."""
    k = wb.kernels.random_basic_block(8, seed=3)
    c = wb.Candidate.root(k)
    while len(c.trail) < 3:
        ch = c.choices()[0]
        c = c.apply(ch.name, ch.objects, ch.values[0])
    f = tmp_path / "trail.json"
    f.write_text(c.to_json())
    args = ["space-stats", "--kernel", "random_basic_block", "--sizes", "n=8,seed=3",
            "--descents", "20", "--json"]
    assert main(args) == 0
    root = json.loads(capsys.readouterr().out)
    assert main([*args, "--trail", str(f)]) == 0
    below = json.loads(capsys.readouterr().out)
    assert below["mean_depth"] < root["mean_depth"]  # three decisions fewer to take


def test_reproduce_search_refuses_an_unknown_table(capsys):
    assert main(["reproduce-search", "--tables", "6.3,9.9", "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "WorkbenchError" and "table(s) 9.9;" in out["error"]


def test_search_store_none_keeps_no_record(tmp_path, monkeypatch, capsys):
    """`search --store none`, as `run --store none`: no file named 'none'."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "data"))
    assert main(["search", "--kernel", "axpy", "--sizes", "n=64", "--budget", "2",
                 "--workers", "0", "--store", "none", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["evaluations"] >= 1
    assert not (tmp_path / "none").exists() and not (tmp_path / "data" / "runs").exists()


def test_a_clis_review_bad_inputs(tmp_path, capsys):
    """Found by a review of the command line: an empty --space listed no
    choice and `run` recorded a compile_error for it; a --store under a file
    failed after seconds of measuring, its record lost; --budget 0 passed
    argparse; a trail without its kernel read "for kernel None"; Table 6.2
    ignored --kernels and printed 4.15e+05 ns; a basic block's bound printed
    its cycles as ns."""
    ax = ["--kernel", "axpy", "--sizes", "n=256"]
    empty = tmp_path / "empty.space"
    empty.write_text("")
    afile = tmp_path / "afile"
    afile.write_text("")
    store = tmp_path / "runs.jsonl"
    root = wb.Candidate.root(wb.kernels.axpy(256))
    doc = json.loads(root.to_json())
    del doc["kernel"]
    nokernel = tmp_path / "nokernel.json"
    nokernel.write_text(json.dumps(doc))
    cases = [
        (["choices", *ax, "--space", str(empty)], "does not declare"),
        (["run", *ax, "--space", str(empty), "--random-seed", "0", "--store", str(store)],
         "does not declare"),
        (["run", *ax, "--random-seed", "0", "--store", str(afile / "x.jsonl")],
         "--store"),
        (["climb", *ax, "--out", str(afile / "x.json")], "--out"),
        (["search", *ax, "--budget", "0", "--store", "none"], "--budget: must be at least 1"),
        (["bound", *ax, "--trail", str(nokernel)], "names no kernel"),
        (["choices", "--kernel", "basic_block"], "takes a list of instructions"),
        (["codegen", *ax], "give a complete --trail or --random-seed"),
        (["reproduce-search", "--tables", "6.9"], "unknown table(s) 6.9;"),
        (["campaign", "--draw-only", "--out", str(tmp_path / "c")], "--out names"),
    ]
    for argv, want in cases:
        assert main([*argv, "--json"]) == 2, argv
        got = json.loads(capsys.readouterr().out)
        assert want in got["error"] and got["kind"] != "internal", (argv, got)
    assert not store.exists()  # nothing recorded for the space the engine cannot read
    assert main(["reproduce-search", "--tables", "6.2", "--kernels", "axpy"]) == 0
    text = capsys.readouterr().out
    assert "matmul" not in text and "e+0" not in text
    assert main(["bound", "--kernel", "random_basic_block", "--sizes", "n=5,seed=7"]) == 0
    text = capsys.readouterr().out
    assert "cycles]" in text and " ns]" not in text
    # a bound's headline and its look-ahead print times, the choice in words
    assert main(["bound", "--kernel", "matmul", "--sizes", "m=1024,n=1024,k=1024",
                 "--lookahead", "size:d0"]) == 0
    text = capsys.readouterr().out
    head, _, tail = text.partition("each value of size: ld_a · m · tile 0 (size:d0):")
    assert head.startswith("- lower bound 35.11 µs on h200"), head[:80]
    lines = tail.strip().splitlines()
    assert [x.split(":")[0].strip() for x in lines] == [str(2 ** k) for k in range(3, 11)]
    assert all(x.endswith("µs") for x in lines)


def test_bad_input_is_named_never_a_traceback(tmp_path, capsys):
    """Each of these ended in a traceback (exit 1), was taken silently (exit
    0 with a meaningless answer) or named the wrong thing."""
    bb = ["--kernel", "random_basic_block", "--sizes", "n=5,seed=1"]
    ax = ["--kernel", "axpy", "--sizes", "n=256"]
    cases = [
        (["run", *bb, "--random-seed", "1", "--store", "none"], "needs a loop-nest kernel"),
        (["search", *bb, "--budget", "1", "--workers", "0", "--store", "none"],
         "needs a loop-nest kernel"),
        (["codegen", *bb, "--random-seed", "1"], "needs a loop-nest kernel"),
        (["space-stats", *bb, "--fcg", "--descents", "2"], "needs a loop-nest kernel"),
        (["space-stats", *ax, "--descents", "0"], "--descents: must be at least 1, got 0"),
        (["reproduce-search", "--tables", "6.1", "--kernels", "axpy", "--probes", "0"],
         "--probes: must be at least 1"),
        (["search", *ax, "--time", "-5", "--store", "none"], "--time: must be more than 0"),
        (["search", *ax, "--climb-from-best", "2", "--store", "none"], "at most 1"),
        (["choices", "--kernel", "axpy", "--sizes", "n=256,n=4096"], "n is given twice"),
        (["bound", *bb, "--target", "nosuch"], "no target 'nosuch'"),
        (["campaign", "--target", "h200", "--backend", "cpu"], "with --report-only only"),
        (["volume-regions", "--spec", "examples/volume/pad_elementwise.json", "--output",
          "nosuch"], "no value of that name; its values: p, q, x, y, zero"),
        (["volume-regions", "--spec", "examples/volume/pad_elementwise.json", "--tile", "0=0"],
         "tile size of dimension 0 must be at least 1"),
        (["choices", *ax, "--space", "basic_block"], "does not fit this kernel"),
    ]
    for argv, want in cases:
        assert main([*argv, "--json"]) == 2, argv
        got = json.loads(capsys.readouterr().out)
        assert want in got["error"] and got["kind"] != "internal", (argv, got)
    assert main(["choices", "--kernel", "nosuch", "--jso"]) == 2  # an abbreviation: JSON too
    assert json.loads(capsys.readouterr().out)["kind"] == "WorkbenchError"
    for order in ("compute", "outer"):  # a basic block's fixed order
        assert main(["space-stats", *bb, "--order", order, "--descents", "2", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["descents"] == 2
    assert main(["check-space", "gpu.space"]) == 0  # as trail files name the space
    capsys.readouterr()
    # --allow-other-kernel lets a trail that replays to other domains through, saying so
    root = wb.Candidate.root(wb.kernels.axpy(256))
    ch = root.choices()[0]
    doc = json.loads(root.apply(ch.name, ch.objects, ch.values[0]).to_json())
    f = tmp_path / "t.json"
    f.write_text(json.dumps({**doc, "digest": "0" * 64}))
    assert main(["choices", *ax, "--trail", str(f), "--json"]) == 2
    assert "other domains" in capsys.readouterr().out
    assert main(["choices", *ax, "--trail", str(f), "--allow-other-kernel", "--json"]) == 0
    got = capsys.readouterr()
    assert "other domains" in got.err and json.loads(got.out)["choices"]
