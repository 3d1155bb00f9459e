"""A search killed (SIGKILL) while it evaluates loses no stored record, and
`--resume` continues from them (issue 20). Its own module, so that pytest's
workers (--dist loadfile) run it beside tests/test_faults.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings

from workbench.runtime import RecordStore


def test_records_of_a_killed_search_survive_and_resume(tmp_path):
    store = tmp_path / "runs.jsonl"
    cmd = [sys.executable, "-m", "workbench", "search", "--kernel", "axpy", "--sizes", "n=256",
           "--workers", "0", "--store", str(store), "--no-progress", "--json"]
    proc = subprocess.Popen([*cmd, "--budget", "200"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not store.exists() or
                                           store.read_bytes().count(b"\n") < 3):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    started = proc.stderr.read().decode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a line cut by the kill is skipped, with a warning
        rows = RecordStore(store).rows()
    assert len(rows) >= 3
    sid = rows[0]["search"]["id"]
    assert f"search {sid}" in started  # the id is printed at the start, not only at the end
    out = subprocess.run([*cmd, "--budget", str(len(rows) + 2), "--resume", sid],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    after = RecordStore(store).rows()
    assert after[:len(rows)] == rows and len(after) > len(rows)
