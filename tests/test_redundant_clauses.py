"""Redundant clauses of gpu.space remove no solution: each is implied by the
rest of the space and only says it sooner. Checked against the space without
it: every candidate met by random-order descents
there, replayed in the real space, has domains no larger (or is a dead end
seen sooner); every fixed candidate found there (witnesses from several
starts) replays in the real space to the same fixed domains; and a known
example is strictly smaller with the clause (it is not vacuous)."""

from __future__ import annotations

import random

import pytest

import workbench as wb
from workbench.kernels.linalg import SMALL_SIZES
from workbench.space.space import Space, load_space
from workbench.witness import find_witness

# the first comment line of each redundant clause's block (up to a blank line),
# and decisions after which the clause prunes more on matmul 16×16×8 (None:
# none known at this size)
REDUNDANT = {
    "vector producer": ("// Implied by the requirements of dim_map's values", None),
    # the mad's m dim inside its k loop: its value cannot reach st_c through memory
    "last value through memory": ("// Through memory, the store runs in the producer's dims",
                                  [("order", ("d10", "d16"), "IN")]),
    # an UNROLL consumer of a reduction's initialisation (which never goes
    # through memory): the init's dim is UNROLL or VECTOR too
    "one class of kinds per pair": ("// Unless through memory, both ends of a pair",
                                    [("dim_kind", ("d10",), "UNROLL")]),
}


def without(text: str, head: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return "\n".join(lines[:start] + lines[end:])


def _domains(c):
    return {(ch.name, ch.objects): frozenset(ch.values) for ch in c.choices(include_fixed=True)}


@pytest.mark.parametrize("clause", sorted(REDUNDANT))
def test_redundant_clause_removes_no_solution(clause):
    kernel = wb.kernels.build_kernel("matmul", SMALL_SIZES["matmul"])
    text = load_space("gpu").text
    head, example = REDUNDANT[clause]
    weak = Space.from_text(without(text, head), f"gpu without {clause}")
    weak_root = wb.Candidate.root(kernel, weak)

    def no_larger(c) -> int:
        """Replays c's trail in the real space: how many domains are smaller."""
        try:
            strong = wb.Candidate.replay(kernel, c.trail)
        except wb.DeadEnd:
            return 1
        plain = _domains(c)
        for key, values in _domains(strong).items():
            assert values <= plain.get(key, values), key
        return sum(values < plain.get(key, values) for key, values in _domains(strong).items())

    if example is not None:
        c = weak_root
        for name, objects, value in example:
            c = c.apply(name, objects, value)
        assert no_larger(c) > 0, "the clause pruned nothing more: vacuous"
    rng = random.Random(3)
    starts = [weak_root] * 3  # three seeds from the root, then along random paths
    for _ in range(4):
        c = weak_root
        while not c.is_fixed:
            if len(c.trail) in (5, 12):
                starts.append(c)
            ch = rng.choice(c.choices())
            try:
                c = c.apply(ch.name, ch.objects, rng.choice(ch.values))
            except wb.DeadEnd:
                break
            no_larger(c)
    found = 0
    for seed, start in enumerate(starts):  # random paths may hold none: not counted
        w = find_witness(start, rng=random.Random(seed), budget_s=20).witness
        if w is None:
            continue
        found += 1
        strong = wb.Candidate.replay(kernel, w.trail)  # DeadEnd here: a solution lost
        assert strong.is_fixed and _domains(strong) == _domains(w)
    assert found >= 3
