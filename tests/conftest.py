"""Two test tiers. `make test` (plain pytest): every law and every component,
on few random candidates. `make audit` (pytest --audit -m audit): the long
random-candidate audits — 200 fixed candidates per thesis kernel checked
against numpy, bounded along their descents and run — due before a change
to the space, model, codegen or runtime is called done.

`make test` runs two pytest-xdist workers (`-n 2 --dist loadfile`): the
drawn candidates' tests are all in test_drawn.py, so one worker draws them.

Hypothesis profiles: `dev` (the default), `ci` (derandomized: the same
examples on every run, so a red CI is reproducible) and `audit` (many more
examples); pick one with HYPOTHESIS_PROFILE=..."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

import gpu_cases  # noqa: E402  (after the path above)

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, **_COMMON)
settings.register_profile("ci", max_examples=30, derandomize=True, **_COMMON)
settings.register_profile("audit", max_examples=300, **_COMMON)


def pytest_addoption(parser):
    parser.addoption("--audit", action="store_true",
                     help="the long random-candidate audits (200 candidates per kernel)")


def pytest_configure(config):
    config.addinivalue_line("markers", "audit: a long audit, run only with --audit (make audit)")
    config.addinivalue_line("markers", "drawn: checks the shared random fixed candidates "
                                       "(few in make test, 200 per kernel with --audit)")
    config.addinivalue_line("markers", "law: a hypothesis property test (ten times the examples "
                                       "with --audit)")
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skips cleanly without one)")
    config.addinivalue_line("markers", "browser: drives JupyterLab in Chromium")
    audit = config.getoption("--audit")
    gpu_cases.AUDIT = audit
    default = "audit" if audit else ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


def pytest_collection_modifyitems(config, items):
    audit = config.getoption("--audit")
    skip = pytest.mark.skip(reason="a long audit: run `make audit`")
    for item in items:
        if "drawn" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.drawn)
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.law)
        if "audit" in item.keywords and not audit:
            item.add_marker(skip)
