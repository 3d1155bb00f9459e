"""The GPU campaign (issue 21), dry-run on the CPU: `campaign --backend cpu
--quick` goes through every stage end to end, so that the first GPU run
finds working code; resuming skips finished stages; the report's soundness
count, Fig. 5.1 and Table 6.2 read rows; data/gpu/ is read, or said to be
absent. With a GPU, the real campaign's first stages run (skipped cleanly
without one)."""

import json
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter

import pytest

import workbench as wb
from workbench.campaign import (
    NO_GPU_DATA,
    draw_ahead,
    gpu_dirs,
    gpu_rows,
    run_campaign,
    soundness,
    status_line,
    summaries,
)
from workbench.campaign.report import (
    ORIGINS,
    cdf_svg,
    fig_5_1,
    fig_5_1_by_population,
    markdown,
    origin,
    summarize,
    table_6_2,
    write_report,
)
from workbench.campaign.run import STAGES


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    mp = pytest.MonkeyPatch()
    mp.setenv("WORKBENCH_DATA", str(data))
    out = data / "campaign"
    t0 = time.perf_counter()
    summary = run_campaign(backend="cpu", quick=True, out=out, minutes=10)
    elapsed = time.perf_counter() - t0
    yield out, summary, elapsed, data
    mp.undo()


def test_dry_run_every_stage(dry_run):
    out, s, elapsed, _ = dry_run
    assert s["stages"] == {k: "done" for k in STAGES}
    for f in ("records.jsonl", "campaign.json", "summary.json", "report.md", "fig_5_1.svg",
              "bound_vs_measured.svg", "target.json"):
        assert (out / f).exists(), f
    # the folder keeps the table its bounds were taken on (docs/cli.md)
    table = json.loads((out / "target.json").read_text())
    state = json.loads((out / "campaign.json").read_text())
    assert table["name"] == state["stages"]["calibration"]["target"] and table["runs"] == "cpu"
    assert set(s["correctness"]) == {"axpy", "matmul"}
    assert all(c.get("ok") for c in s["correctness"].values())
    assert set(s["random"]) == {"matmul 256", "axpy 2^26"}
    rows = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    stages = {(r.get("x_campaign") or {}).get("stage") for r in rows}
    assert {"correctness", "random"} <= stages
    assert any((r.get("search") or {}).get("id", "").startswith("campaign-") for r in rows)
    # every record a lower bound below its samples (the CPU's table), ptxas facts beside
    assert s["soundness"]["share_sound"] == 1.0 and s["soundness"]["records"] == len(rows)
    from workbench.codegen.compile import nvcc_path
    if nvcc_path() is not None:
        tagged = [r for r in rows if r.get("x_campaign")]
        assert all(r["x_ptxas"]["arch"] == "sm_90" for r in tagged)
        assert all(r["x_occupancy"]["blocks_per_sm"] >= 1 for r in tagged)
    table = {r["kernel"]: r for r in s["table_6_2"]}
    assert table["axpy"]["best_ns"] and table["matmul 256"]["speedup"]
    assert table["matmul 1024"]["thesis_speedup"] == pytest.approx(3.71 / 4.34)
    text = (out / "report.md").read_text()
    assert "Quick dry run" in text and "Table 6.2" in text
    # the forced stage: each plan searched from its recipe's candidate
    forced = {r["plan"]: r for r in s["forced"]}
    assert set(forced) == {"axpy: vector_axpy(threads=16)", "axpy: vector_axpy(threads=None)",
                           "matmul 256: register_tiled_matmul(tm=2, tn=2, threads=4)",
                           "axpy: a TAG search below its best recipe",
                           "matmul 256: a TAG search below its best recipe"}
    assert all(r["best_ns"] and r["evaluations"] >= 1 and not r["error"] for r in forced.values())
    # the searches below the recipes: cut at the best recipe's time, measured below it
    below = forced["matmul 256: a TAG search below its best recipe"]
    assert below["beat_ns"] == forced["matmul 256: register_tiled_matmul(tm=2, tn=2, "
                                      "threads=4)"]["best_ns"]
    ids = {r["search"]["id"] for r in rows if "below" in (r.get("search") or {}).get("id", "")}
    assert ids and all(r["bound_ns"] < below["beat_ns"] for r in rows
                       if (r.get("search") or {}).get("id") in ids
                       and r["kernel"] == "matmul")
    assert forced["axpy: vector_axpy(threads=None)"]["open_choices"] > \
        forced["axpy: vector_axpy(threads=16)"]["open_choices"] > 0
    assert any((r.get("search") or {}).get("id", "").startswith("forced-axpy-vector_axpy-")
               for r in rows)
    assert "| axpy: vector_axpy(threads=16) | 7 |" in text


def test_resume_skips_finished_stages(dry_run):
    out, _, elapsed, _ = dry_run
    n = len((out / "records.jsonl").read_text().splitlines())
    t0 = time.perf_counter()
    s = run_campaign(backend="cpu", quick=True, out=out, minutes=10)
    assert len((out / "records.jsonl").read_text().splitlines()) == n  # nothing re-measured
    assert time.perf_counter() - t0 < max(10.0, elapsed / 3)
    assert len(json.loads((out / "campaign.json").read_text())["runs"]) == 2
    assert s["stages"]["report"] == "done"


def test_cut_stage_resumes_from_records(dry_run, tmp_path):
    """A campaign cut off mid-stage keeps what it measured: marking the
    correctness stage unfinished and asking for one more candidate per
    kernel measures only the missing ones."""
    out, *_ = dry_run
    folder = tmp_path / "c"
    shutil.copytree(out, folder)
    state = json.loads((folder / "campaign.json").read_text())
    state["stages"]["correctness"]["status"] = "partial"
    (folder / "campaign.json").write_text(json.dumps(state))
    before = [json.loads(x) for x in (folder / "records.jsonl").read_text().splitlines()]
    s = run_campaign(backend="cpu", quick=True, out=folder, minutes=10, n_correct=2)
    after = [json.loads(x) for x in (folder / "records.jsonl").read_text().splitlines()]
    new = after[len(before):]
    assert len(new) == 2 and all(r["x_campaign"]["stage"] == "correctness" for r in new)
    assert {r["x_campaign"]["seed"] for r in new} == {1}
    assert s["correctness"]["axpy"]["ok"] == 2


def test_report_only_rebounds_without_rewriting(dry_run, tmp_path):
    """`campaign --report-only` redraws a campaign's report on any machine
    with today's model's bounds beside the recorded ones; the records are
    only read (byte for byte the same after)."""
    from workbench.campaign import report_only
    out, *_ = dry_run
    folder = tmp_path / "r"
    shutil.copytree(out, folder)
    before = (folder / "records.jsonl").read_bytes()
    s = report_only(folder)
    assert (folder / "records.jsonl").read_bytes() == before
    assert s["soundness_now"]["records"] == s["soundness"]["records"] > 0
    assert s["soundness_now"]["share_sound"] == 1.0 and s["soundness_now"]["not_replayed"] == 0
    assert "today's model" in (folder / "report.md").read_text()
    # every record of the dry run keeps its program's digest: all of today's program
    by = s["soundness_now"]["by_program"]
    assert by["same"]["records"] == by["same"]["sound"] == s["soundness_now"]["records"]
    assert by["changed"]["records"] == by["unknown"]["records"] == 0
    assert f"{by['same']['records']} of {by['same']['records']} sound (today's program)" in \
        (folder / "report.md").read_text()
    assert (folder / "fig_5_1_now.svg").exists()
    # the bounds went to the cache the Timings tab reads: a second redraw replays nothing
    from workbench.campaign.bounds import bounds_now
    table = folder / "target.json"
    rows = [json.loads(x) for x in before.decode().splitlines()]
    cached = bounds_now(rows, target=str(table) if table.exists() else None, compute=False)
    assert cached and all("bound_now_ns" in r for r in cached)
    assert report_only(folder)["soundness_now"] == s["soundness_now"]
    with pytest.raises(wb.WorkbenchError, match="no records.jsonl"):
        report_only(tmp_path / "nothing")
    # an edited campaign.json: an error naming it (it was a KeyError, exit 1)
    for bad in ([], {"stages": 3}, {"stages": {"search": "done"}}):
        (folder / "campaign.json").write_text(json.dumps(bad))
        with pytest.raises(wb.WorkbenchError, match="not a campaign state"):
            report_only(folder)


def test_redrawn_pools_the_later_models_figures(dry_run, monkeypatch, tmp_path):
    """`campaign.redrawn()` reads what `--report-only` kept in each summary
    (no replay): the pooled soundness count and measured / bound ratios, and
    when and on which table each folder was bounded again; None before."""
    import workbench.campaign.data as data
    from workbench.campaign import redrawn, report_only
    out, *_ = dry_run
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    monkeypatch.setattr(data, "shipped_data_dir", lambda: tmp_path / "shipped")
    shutil.copytree(out, tmp_path / "gpu" / "dev")
    assert redrawn() is None  # the dry run's report has no later bounds
    s = report_only(tmp_path / "gpu" / "dev")
    got = redrawn()
    assert got["records"] == s["soundness_now"]["records"] and got["sound"] == got["records"]
    assert got["ratios"] == sorted(got["ratios"]) and len(got["ratios"]) == s["fig_5_1_now"]["n"]
    assert got["share_within_10x"] == pytest.approx(s["fig_5_1_now"]["share_within_10x"])
    assert set(got["folders"]) == {"dev"} and got["folders"]["dev"]["written"]


def test_a_failed_stage_is_recorded_and_the_campaign_goes_on(dry_run, tmp_path, monkeypatch):
    """A stage that raises ends only itself: its error and traceback go to
    campaign.json (status failed), the later stages and the report still run,
    and a later run retries it."""
    from workbench.campaign import run as run_mod
    out, *_ = dry_run
    folder = tmp_path / "f"
    shutil.copytree(out, folder)
    state = json.loads((folder / "campaign.json").read_text())
    for stage in ("random", "search"):
        state["stages"][stage]["status"] = "partial"
    (folder / "campaign.json").write_text(json.dumps(state))

    def broken(*args):
        raise RuntimeError("the device fell off the bus")
    monkeypatch.setattr(run_mod, "stage_draw_and_measure", broken)
    s = run_campaign(backend="cpu", quick=True, out=folder, minutes=10)
    st = json.loads((folder / "campaign.json").read_text())["stages"]
    assert st["random"]["status"] == "failed" and "fell off the bus" in st["random"]["error"]
    assert "RuntimeError" in st["random"]["traceback"]
    assert st["search"]["status"] == "done" and s["stages"]["report"] == "done"
    assert "fell off the bus" in (folder / "report.md").read_text()
    monkeypatch.undo()
    run_campaign(backend="cpu", quick=True, out=folder, minutes=10)
    st = json.loads((folder / "campaign.json").read_text())["stages"]
    assert st["random"]["status"] == "done" and "error" not in st["random"]


def test_gpu_data_readers(dry_run, monkeypatch, tmp_path):
    out, *_ = dry_run
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    import workbench.campaign.data as data
    monkeypatch.setattr(data, "shipped_data_dir", lambda: tmp_path / "shipped")
    assert gpu_dirs() == [] and status_line() == NO_GPU_DATA
    shutil.copytree(out, tmp_path / "gpu" / "test_device")
    assert [d.name for d in gpu_dirs()] == ["test_device"]
    rows = gpu_rows(kernel="axpy")
    assert rows and all(r["gpu_dir"] == "test_device" and r["kernel"] == "axpy" for r in rows)
    assert "test_device" in status_line() and "test_device" in summaries()
    from widgets.timings_view import gpu_timing_figures
    from workbench.kernels import build_kernel
    line, figs = gpu_timing_figures(build_kernel("axpy", {"n": 256}), widget=False)
    assert "test_device" in line and figs
    assert all(f.layout.title.text.startswith("GPU test_device") for f in figs)
    # random draws, searches and forced recipes apart, the library's median as a line
    at_256 = [r for r in rows if r["sizes"] == {"builder": "axpy", "n": 256}
              and r["status"] == "ok" and r.get("bound_ns")]
    drawn = {t.name: len(t.x) for t in figs[0].data if t.name in ORIGINS.values()}
    assert drawn == {ORIGINS[k]: v for k, v in
                     Counter(origin(r) for r in at_256).items()}
    assert {"random implementations", "TAG search rollouts", "recipes forced by hand"} <= set(drawn)
    refs = [r["reference_median_ns"] for r in at_256 if r.get("reference_median_ns")]
    name = next(r["reference"] for r in at_256 if r.get("reference"))  # numpy on the CPU
    ref = next(t for t in figs[0].data if t.name == f"{name}, median of {len(refs)}")
    assert list(ref.y) == [pytest.approx(statistics.median(refs) / 1e3)] * 2
    # no annotation on the log axes (plotly would put it at 10^y)
    assert not figs[0].layout.annotations and figs[2].layout.annotations[0].text == ref.name
    line, figs = gpu_timing_figures(build_kernel("axpy", {"n": 512}), widget=False)
    assert not figs and "none of axpy at these sizes" in line
    from workbench.search.thesis import gpu_table_6_2, render
    text = render({"table_6_2": gpu_table_6_2()})
    assert "Table 6.2" in text and "test_device axpy" in text and "test_device" in text
    assert "test_device forced axpy: vector_axpy(threads=16): best" in text


def test_gpu_figures_use_todays_bounds_cached_and_redrawn(dry_run, monkeypatch, tmp_path):
    """The Timings tab draws GPU records against the bound today's model
    gives their trails, the recorded one beside it where the two differ; the
    bounds are cached per engine (a second draw replays nothing); the tab
    draws the cache at once and a thread redraws when the rest is in."""
    out, *_ = dry_run
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    import workbench.campaign.bounds as bounds
    import workbench.campaign.data as data
    monkeypatch.setattr(data, "shipped_data_dir", lambda: tmp_path / "shipped")
    folder = tmp_path / "gpu" / "test_device"
    shutil.copytree(out, folder)
    rows = [json.loads(x) for x in (folder / "records.jsonl").read_text().splitlines()]
    axpy = [r for r in rows if r["kernel"] == "axpy" and r.get("trail") and r["status"] == "ok"
            and r["sizes"] == {"builder": "axpy", "n": 256}]
    assert len(axpy) >= 2
    # a model that has moved since the run: one record's bound as if recorded at a third
    moved = axpy[0]
    moved["bound_ns"] /= 3
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from widgets.timings_view import gpu_timing_figures
    from workbench.kernels import build_kernel
    kernel = build_kernel("axpy", {"n": 256})
    line, figs = gpu_timing_figures(kernel, widget=False, bounds="recorded")
    names = [t.name for t in figs[0].data]
    assert "today's model" not in line and "bound recorded with the run" not in names
    assert "y = x" in names and any(n.startswith("numpy, median of") for n in names)
    assert {n for n in names if n != "y = x" and "median of" not in n} <= set(ORIGINS.values())
    line, figs = gpu_timing_figures(kernel, widget=False, bounds="cached")
    assert "for 0 of" in line and "being computed" in line
    line, figs = gpu_timing_figures(kernel, widget=False, bounds="now")
    n = len([r for r in rows if r["kernel"] == "axpy" and r["sizes"] == kernel.spec()
             and r.get("trail") and r.get("times_ns")])
    assert f"bounds of today's model for {n} of {n} records (1 moved" in line
    was = next(t for t in figs[0].data if t.name == "bound recorded with the run")
    assert list(was.x) == [moved["bound_ns"] / 1e3]
    again = {d: x for t in figs[0].data if t.name in ORIGINS.values()
             for d, x in zip(t.text, t.x)}[moved["digest"][:10]]
    assert again == pytest.approx(3 * moved["bound_ns"] / 1e3)  # today's, as before the edit
    assert (tmp_path / "cache" / "bounds_now").is_dir()

    def replayed(*a, **k):
        raise AssertionError("a cached bound was computed again")
    monkeypatch.setattr(bounds, "current_bounds", replayed)
    assert gpu_timing_figures(kernel, widget=False, bounds="cached")[0] == line
    assert gpu_timing_figures(kernel, widget=False, bounds="now")[0] == line
    monkeypatch.undo()

    # the tab: the recorded bounds at once, today's bounded in a process of
    # its own and drawn by the thread that waits for it
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    monkeypatch.setattr(data, "shipped_data_dir", lambda: tmp_path / "shipped")
    shutil.rmtree(tmp_path / "cache")
    from widgets.explorer import CandidateExplorer, Tab
    before = _bounding_children()
    e = CandidateExplorer(wb.Session(wb.Candidate.root(kernel), store=None), backend="cpu",
                          lookahead="background")
    tab = e.panels[Tab.TIMINGS]

    def here(*a, **k):
        raise AssertionError("the kernel's process replayed")
    monkeypatch.setattr(bounds, "current_bounds", here)  # the spawned process does
    tab.show()
    assert "being computed" in tab.gpu_line and tab.bounding is not None
    tab.bounding.join(120)
    assert not tab.bounding.is_alive()
    assert "(1 moved" in tab.gpu_line and [o.figure for o in tab.box.children[
        -len(tab.gpu_figures):]] == list(tab.gpu_figures)
    # closing the explorer kills the replaying process
    shutil.rmtree(tmp_path / "cache")
    bounds._KNOWN.clear()  # what this process was sent, kept beside the file
    tab.show()  # the same records: nothing is drawn again, no replaying starts
    assert not tab.bounding.is_alive() and "(1 moved" in tab.gpu_line
    tab._drawn = None  # as when a record arrives: drawn again, replayed again
    tab.show()
    assert "being computed" in tab.gpu_line and tab.bounding.is_alive()
    e.close()
    tab.bounding.join(10)
    assert not tab.bounding.is_alive() and "being computed" in tab.gpu_line
    assert not _bounding_children() - before  # what another test's explorer left is its own


def _bounding_children() -> set:
    """This process's live `bound_apart` children (pids): a test counts only
    those it started (another file's explorer may still be bounding in this
    worker)."""
    import multiprocessing
    return {p.pid for p in multiprocessing.active_children() if p.name == "workbench-bounds"}


def test_bound_apart_sends_its_bounds_back(dry_run, tmp_path, monkeypatch):
    """`bound_apart` bounds in a spawned process and hands the bounds back:
    they are read even where the cache cannot be written; stopped, its
    process is killed and it gives none."""

    import workbench.campaign.bounds as bounds
    out, *_ = dry_run
    rows = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    rows = [r for r in bounds.measured(rows) if r["kernel"] == "axpy"][:3]
    assert rows
    (tmp_path / "cache").write_text("a file where the cache folder would go")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    monkeypatch.setattr(bounds, "_KNOWN", {})
    before = _bounding_children()
    assert bounds.bound_apart(rows, stop=lambda: True) is None
    assert not _bounding_children() - before
    got = bounds.bound_apart(rows)
    assert all("bound_now_ns" in r for r in got)
    cached = bounds.bounds_now(rows, compute=False)  # from what the process sent
    assert [r["bound_now_ns"] for r in cached] == [r["bound_now_ns"] for r in got]
    assert [r["bound_now_ns"] for r in got] == [
        r["bound_now_ns"] for r in bounds.current_bounds(rows)]


def test_code_tab_shows_ptxas_facts(tmp_path):
    import random

    import workbench as wb
    from widgets.explorer import CandidateExplorer, Tab
    from workbench.codegen.compile import nvcc_path
    from workbench.descent import random_fixed
    kernel = wb.kernels.build_kernel("axpy", {"n": 256})
    s = wb.Session(wb.Candidate.root(kernel), store=None)
    s.new_branch("fixed", random_fixed(wb.Candidate.root(kernel), random.Random(1)))
    e = CandidateExplorer(s, backend="cpu", lookahead="off")
    want = "registers" if nvcc_path() is not None else "nvcc is not on PATH"
    assert e.panels[Tab.CODE].wait_facts(300)  # ptxas answers in a thread of its own
    assert want in e.code_html.value


def test_soundness_names_counterexamples():
    rows = [{"trail": [1], "times_ns": [100.0, 120.0], "bound_ns": 50.0, "status": "ok",
             "median_ns": 110.0, "kernel": "a", "digest": "x"},
            {"trail": [1], "times_ns": [90.0], "bound_ns": 99.0, "status": "ok",
             "median_ns": 90.0, "kernel": "b", "digest": "y"},
            {"trail": [], "times_ns": [], "bound_ns": None, "status": "reference"}]
    s = soundness(rows)
    assert s["records"] == 2 and s["sound"] == 1 and s["worst"]["digest"] == "y"
    assert s["worst_ratio"] == pytest.approx(1.1) and len(s["counterexamples"]) == 1
    f = fig_5_1(rows)
    assert f["n"] == 2 and f["share_within_10x"] == 1.0
    assert "<polyline" in cdf_svg(f["ratios"]) and "no measured" in cdf_svg([])


def test_fig_5_1_by_population():
    """The thesis's Fig. 5.1 is over uniformly drawn implementations; a
    search's rollouts, steered to low bounds, are counted apart."""
    def rec(t, b, **tag):
        return {"trail": [1], "times_ns": [t], "median_ns": t, "bound_ns": b,
                "status": "ok", "kernel": "k", "digest": str(t), **tag}
    rows = [rec(20.0, 10.0, x_campaign={"stage": "random"}),
            rec(50.0, 1.0, x_campaign={"stage": "correctness"}),
            rec(30.0, 1.0, search={"id": "s"}), rec(5.0, 1.0, search={"id": "s"}),
            rec(9.0, 1.0)]
    by = fig_5_1_by_population(rows)
    assert {k: (v["n"], v["share_within_10x"]) for k, v in by.items()} == {
        "random": (2, 0.5), "search": (2, 0.5), "other": (1, 1.0)}
    md = markdown(summarize(rows, {"device": "d", "backend": "cuda"}))
    assert "| random implementations (uniform descents: the thesis's population) | 2 | " \
           "50.0 % |" in md


def test_origin_tells_random_search_and_forced_records_apart():
    assert origin({"x_campaign": {"stage": "random"}}) == "random"
    assert origin({"x_campaign": {"stage": "correctness"}, "search": {"id": "s"}}) == "random"
    assert origin({"search": {"id": "campaign-axpy-0"}}) == "search"
    assert origin({"search": {"id": "forced-axpy-vector_axpy-df30dc45-0"}}) == "forced"
    # the forced stage's search of the whole space below its recipes is a search
    assert origin({"search": {"id": "forced-axpy-below-8ba8e2e0-0"}}) == "search"
    assert origin({"x_expert": {"label": "matmul 1024"}}) == "forced"
    assert origin({"gpu_file": "expert.jsonl"}) == "forced"
    assert origin({"gpu_file": "records.jsonl"}) == "other"


def test_table_6_2_axpy_bandwidth():
    state = {"stages": {"search": {"kernels": {"axpy": {
        "best_ns": 1e6, "reference_median_ns": 2e6, "sizes": {"n": 2 ** 20},
        "evaluations": 5}}}}}
    rows = {r["kernel"]: r for r in table_6_2(state, {"measured": {"dram_bytes_per_s": 2e10}})}
    assert rows["axpy"]["speedup"] == 2.0
    assert rows["axpy"]["share_of_copy_bandwidth"] == pytest.approx(12 * 2 ** 20 / 1e-3 / 2e10)
    assert rows["matmul 256"]["best_ns"] is None
    assert "| axpy |" in markdown(summarize([], {**state, "device": "d", "backend": "cuda"}))
    # a faster copy timed beside the campaign (benchmarks/gpu_copy.py) is the one held to
    faster = {"measured": {"dram_bytes_per_s": 2e10, "best_copy_bytes_per_s": 4e10}}
    rows = {r["kernel"]: r for r in table_6_2(state, faster)}
    assert rows["axpy"]["share_of_copy_bandwidth"] == pytest.approx(12 * 2 ** 20 / 1e-3 / 4e10)


def test_the_report_reads_the_copies_timed_beside_it(tmp_path):
    state = {"device": "d", "backend": "cuda", "stages": {"search": {"kernels": {"axpy": {
        "best_ns": 1e6, "reference_median_ns": 2e6, "sizes": {"n": 2 ** 20}}}}}}
    (tmp_path / "target.json").write_text(json.dumps({"measured": {"dram_bytes_per_s": 2e10}}))
    row = {"kernel": "copy, cudaMemcpyAsync", "bytes": 8, "median_ns": 1.0, "min_ns": 1.0,
           "bytes_per_s_median": 4e10, "bytes_per_s_best": 4e10, "share_of_best_copy": 1.0,
           "times_ns": [1.0]}
    (tmp_path / "copy_bandwidth.json").write_text(json.dumps(
        {"best_copy_bytes_per_s": 4e10, "rows": [row]}))
    s = write_report(tmp_path, state)
    axpy = next(r for r in s["table_6_2"] if r["kernel"] == "axpy")
    assert axpy["share_of_copy_bandwidth"] == pytest.approx(12 * 2 ** 20 / 1e-3 / 4e10)
    assert s["copy"][0]["kernel"] == "copy, cudaMemcpyAsync" and "times_ns" not in s["copy"][0]
    assert "| copy, cudaMemcpyAsync | 1 ns | 0.04 TB/s | 100.0 % |" in \
        (tmp_path / "report.md").read_text()


def test_a_forced_plan_that_does_not_apply_is_recorded(tmp_path, monkeypatch):
    """A recipe outside the space (here float4 on a strided operand) is a
    row of the report saying why, and the other plans still run."""
    from workbench.campaign import searches
    monkeypatch.setattr(searches, "QUICK_FORCED", {"matmul 256": [
        ("register_tiled_matmul", {"tm": 2, "tn": 2, "threads": 4, "vector": True}),
        ("register_tiled_matmul", {"tm": 2, "tn": 2, "threads": 3})]})
    s = run_campaign(backend="cpu", quick=True, out=tmp_path / "c", minutes=2,
                     stages=("forced",))
    assert s["stages"]["forced"] == "done"
    got = {r["plan"]: r for r in s["forced"]}
    bad = got["matmul 256: register_tiled_matmul(tm=2, tn=2, threads=3)"]
    assert "multiple of the tile" in bad["error"] and bad["best_ns"] is None
    assert got["matmul 256: register_tiled_matmul(tm=2, tn=2, threads=4, vector=True)"]["best_ns"]
    assert "does not apply: m = 16 is not a multiple" in (tmp_path / "c" / "report.md").read_text()


def test_table_6_2_reads_the_reference_over_every_record():
    """One record's reference is one timing of the library: the table's is
    the median over the folder's records of that kernel and sizes, its
    range beside, the best record's own kept."""
    sizes = {"m": 256, "n": 256, "k": 32}
    state = {"stages": {"search": {"kernels": {"matmul 256": {
        "best_ns": 10e3, "reference_median_ns": 30e3, "sizes": sizes, "evaluations": 3}}}}}
    recs = [{"kernel": "matmul", "sizes": {"builder": "matmul", **sizes},
             "reference_median_ns": t} for t in (9e3, 30e3, 10e3, 11e3, 9.5e3)]
    recs.append({"kernel": "matmul", "sizes": {"builder": "matmul", "m": 16, "n": 16, "k": 8},
                 "reference_median_ns": 1.0})  # another size: not this row's
    row = {r["kernel"]: r for r in table_6_2(state, None, recs)}["matmul 256"]
    assert row["reference_ns"] == 10e3 and row["speedup"] == 1.0
    assert row["reference_own_ns"] == 30e3 and row["reference_range_ns"] == (9e3, 30e3)
    assert row["reference_records"] == 5
    md = markdown(summarize(recs, {**state, "device": "d", "backend": "cuda"}))
    assert "(median of 5: 9 µs–30 µs)" in md


def test_cli_campaign_without_gpu():
    from workbench.runtime.cuda import cupy_module
    if cupy_module() is not None:
        pytest.skip("a GPU is present")
    out = subprocess.run([sys.executable, "-m", "workbench", "campaign", "--backend", "cuda",
                          "--minutes", "1"], capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "no CUDA device" in out.stderr


@pytest.mark.gpu
def test_campaign_on_gpu(tmp_path, monkeypatch):
    """With a GPU: calibration, correctness and a few random implementations
    (the full campaign is `make gpu`)."""
    from workbench.runtime.cuda import cupy_module
    if cupy_module() is None:
        pytest.skip("no GPU: cupy is missing or cupy.is_available() is false")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "data"))  # its calibration too
    s = run_campaign(backend="cuda", out=tmp_path / "gpu", minutes=3, n_correct=2, n_random=4,
                     thesis_kernels=("matmul 256",), search_budget=4)
    assert s["soundness"]["records"] > 0
    assert all(c.get("ok") for c in s["correctness"].values())


def test_only_the_stages_and_kernels_asked_for(tmp_path):
    """`--stages search --kernels axpy`: calibration, that one search and
    the report; the other measuring stages are not run. Unknown names are
    errors that list the choices, before anything runs."""
    out = tmp_path / "c"
    s = run_campaign(backend="cpu", quick=True, out=out, minutes=2, stages=("search",),
                     thesis_kernels=("axpy",))
    assert s["stages"] == {"calibration": "done", "search": "done", "report": "done"}
    rows = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert rows and all((r.get("search") or {}).get("id", "").startswith("campaign-axpy")
                        for r in rows)
    for bad, said in (({"stages": ("serch",)}, "unknown stage"),
                      ({"thesis_kernels": ("matmul 2",)}, "unknown thesis kernel")):
        with pytest.raises(wb.WorkbenchError, match=said):
            run_campaign(backend="cpu", quick=True, out=tmp_path / "x", **bad)
        with pytest.raises(wb.WorkbenchError, match=said):  # `campaign --draw-only` too
            draw_ahead(quick=True, drawn=tmp_path / "x", **bad)
    assert not (tmp_path / "x").exists()


def test_a_search_from_an_older_space_starts_afresh(tmp_path):
    """A campaign resumed after the engine changed a kernel's space (the
    H200's third session, a day after the second) finds its search's records
    started from another root: it runs a fresh search named after its own
    start, and the old records stay as they were."""
    out = tmp_path / "c"
    run_campaign(backend="cpu", quick=True, out=out, minutes=2, stages=("search",),
                 thesis_kernels=("axpy",))
    rows = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    for r in rows:  # as an older engine's root would have written them
        r["search"]["start_digest"] = "0" * 64
    (out / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    state = json.loads((out / "campaign.json").read_text())
    state["stages"]["search"] = {"status": "partial"}
    (out / "campaign.json").write_text(json.dumps(state))
    s = run_campaign(backend="cpu", quick=True, out=out, minutes=2, stages=("search",),
                     thesis_kernels=("axpy",))
    assert s["stages"]["search"] == "done"
    after = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert after[:len(rows)] == rows
    ids = {r["search"]["id"] for r in after[len(rows):]}
    assert len(ids) == 1 and ids.pop().startswith("campaign-axpy-0-")


def test_the_report_reads_the_expert_kernels_beside_the_campaign(tmp_path):
    """benchmarks/gpu_expert.py's records (tagged x_expert, or measured
    before tags: one plan per bound) get their own table in report.md."""
    from workbench.campaign.report import expert_table

    def rec(label, tiles, median, bound, ref, status="ok"):
        r = {"kernel": "matmul", "sizes": {"builder": "matmul", "k": 32, "m": 256, "n": 256},
             "status": status, "median_ns": median,
             "times_ns": [median * 0.98, median] if median else [],
             "bound_ns": bound, "reference": "cupy.matmul (cuBLAS)",
             "reference_median_ns": ref}
        if label:
            r["x_expert"] = {"label": label, "tiles": tiles, "seed": 0}
        return r
    rows = [rec("matmul 256", {"tm": 4}, 6400.0, 808.0, 17000.0),
            rec("matmul 256", {"tm": 4}, 6300.0, 808.0, 15000.0),
            rec("matmul 256", {"tm": 4}, None, 808.0, 16000.0, status="timeout"),
            rec(None, None, 9000.0, 900.0, 18000.0)]
    t = expert_table(rows)
    assert len(t) == 2
    a = next(x for x in t if x["label"] == "matmul 256")
    assert (a["records"], a["ok"], a["best_ns"], a["bound_ns"]) == (3, 2, 6300.0, 808.0)
    # the reference: the median over every record of the kernel and sizes (its own runs'
    # 16 µs beside): the library's timing varies from run to run
    assert a["fastest_ns"] == 6300.0 * 0.98 and a["reference_ns"] == 16500.0
    assert a["reference_own_ns"] == 16000.0 and a["reference_records"] == 4
    assert abs(a["speedup"] - 16500.0 / 6300.0) < 1e-9
    b = next(x for x in t if x is not a)
    assert "k=32 m=256 n=256" in b["label"] and b["tiles"] is None
    folder = [{"kernel": "matmul", "sizes": rows[0]["sizes"], "reference_median_ns": 9000.0}] * 5
    c = next(x for x in expert_table(rows, folder) if x["label"] == "matmul 256")
    assert c["reference_ns"] == 9000.0 and c["reference_records"] == 9
    s = summarize([], {"device": "d", "backend": "cuda", "stages": {}})
    assert "| matmul 256 | tm 4 | 2 of 3 |" in markdown({**s, "expert": t})


def test_the_searches_share_one_cluster(tmp_path, monkeypatch):
    """Every search of a campaign rolls out on one LocalCluster, started at
    the first search that needs it and closed at the end (a cluster per
    search cost seconds of a lent GPU's minutes each); a recipe that leaves
    nothing open is measured without one."""
    from workbench.campaign import searches
    from workbench.search import workers
    made: list = []

    class Counted(workers.DaskExecutor):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)
    monkeypatch.setattr(workers, "DaskExecutor", Counted)
    monkeypatch.setattr(searches, "_search_workers", lambda o: 1)
    s = run_campaign(backend="cpu", quick=True, out=tmp_path / "c", minutes=3,
                     stages=("search", "forced"), thesis_kernels=("axpy",))
    assert s["stages"]["search"] == "done" and s["stages"]["forced"] == "done"
    owned = [m for m in made if m._own]  # the others wrap the shared client
    assert len(owned) == 1 and len(made) > 1 and owned[0].client.status == "closed"
    rows = [json.loads(x) for x in (tmp_path / "c" / "records.jsonl").read_text().splitlines()]
    ids = {r["search"]["id"] for r in rows}
    assert any(i.startswith("campaign-axpy") for i in ids) and \
        any(i.startswith("forced-axpy-below") for i in ids)
