"""The basic-block kernel and its idealised machine (thesis eq. 2.1–2.4)."""

from __future__ import annotations

import pytest

import workbench as wb


def test_execution_time_by_hand():
    """a (lat 4) and b (lat 4) feed c (lat 3); d (lat 1) is independent.
    Order a, b, d, c: a@0, b@1, d@2, c waits for b: 1+4=5, ends 8.
    Order a, b, c, d: c@5, d@6 (in order, after c), end max(8, 7) = 8.
    Order d, a, b, c: d@0, a@1, b@2, c@6, end 9."""
    k = wb.kernels.basic_block([("a", 4, ()), ("b", 4, ()), ("c", 3, ("a", "b")), ("d", 1, ())])
    assert k.execution_time(["a", "b", "d", "c"]) == 8
    assert k.execution_time(["a", "b", "c", "d"]) == 8
    assert k.execution_time(["d", "a", "b", "c"]) == 9


@pytest.mark.parametrize("insts, fragment", [
    ([("a", 1, ("b",)), ("b", 1, ("a",))], "cycle"),
    ([("a", 1, ("zz",))], "unknown"),
    ([("a", 1, ()), ("a", 1, ())], "two instructions"),
    ([("a", 0, ())], "latency"),
])
def test_bad_blocks_are_refused(insts, fragment):
    with pytest.raises(wb.WorkbenchError, match=fragment):
        wb.kernels.basic_block(insts)


def test_spec_round_trip():
    k = wb.kernels.random_basic_block(7, seed=4)
    k2 = wb.kernels.from_spec(k.spec())
    assert k2.spec() == k.spec()
    with pytest.raises(wb.WorkbenchError, match="unknown kernel builder"):
        wb.kernels.from_spec({"builder": "nope"})
