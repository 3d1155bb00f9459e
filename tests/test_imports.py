"""No import cycles among `workbench.*` modules (`workbench.sources` reads
the graph statically: a function-level import that only hides a cycle is
still a cycle, it breaks when the import order changes), and what the
graph's closure says a bound depends on."""

from __future__ import annotations

import pytest

from workbench.sources import closure, closure_digest, import_graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None (iterative DFS: white/grey/black)."""
    colour = dict.fromkeys(graph, 0)
    for root in sorted(graph):
        if colour[root]:
            continue
        stack = [(root, iter(sorted(graph[root])))]
        colour[root] = 1
        while stack:
            node, kids = stack[-1]
            nxt = next(kids, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
            elif colour.get(nxt) == 1:
                path = [n for n, _ in stack]
                return path[path.index(nxt):] + [nxt]
            elif colour.get(nxt) == 0:
                colour[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def test_the_graph_is_read():
    g = import_graph()
    assert "workbench.candidate" in g["workbench"]  # `from .candidate import ...`
    assert "workbench.kernels" in g["workbench"]  # `from . import kernels`
    assert "workbench.errors" in g["workbench.runtime.records"]  # `from ..errors import`


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set()}, None),
])
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_a_bound_depends_on_the_engine_not_on_its_views():
    """The bounds cache is keyed by the sources a bound runs: the space, the
    model, the kernels; not the campaign's report, the search or the
    runtime, whose edits must keep today's cached bounds."""
    from workbench.campaign.bounds import BOUND_MODULES
    got = closure(BOUND_MODULES)
    for m in ("workbench.model.bound", "workbench.model.memory", "workbench.space.problem",
              "workbench.space.lowering", "workbench.kernels.linalg", "workbench.candidate"):
        assert m in got
    for m in ("workbench.campaign.report", "workbench.campaign.bounds", "workbench.search.mcts",
              "workbench.runtime.cpu", "workbench.session", "workbench.sources"):
        assert m not in got
    with pytest.raises(ValueError, match="no workbench module 'workbench.nope'"):
        closure(["workbench.nope"])


def test_the_digest_follows_every_source_it_covers(tmp_path, monkeypatch):
    """A copy of the package: editing a module the closure holds, a package
    `__init__` above it or a .space file changes the digest; editing
    another module does not."""
    import shutil

    import workbench.sources as sources
    pkg = tmp_path / "workbench"
    shutil.copytree(sources.PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sources, "PKG", pkg)
    sources.modules.cache_clear()
    try:
        roots = ["workbench.model"]
        first = closure_digest(roots)
        edits = {"campaign/report.py": False, "model/bound.py": True, "__init__.py": True,
                 "space/spaces/gpu.space": True, "search/mcts.py": False}
        for rel, moves in edits.items():
            f = pkg / rel
            f.write_text(f.read_text() + "\n# edited\n")
            now = closure_digest(roots)
            assert (now != first) == moves, rel
            first = now
    finally:
        sources.modules.cache_clear()


def test_every_registration_a_bound_reads_is_in_its_sources():
    """A model or kernel builder registered at import time by a module the
    bound's sources do not hold would change bounds without changing
    `engine_fingerprint`: every module-level `register_model(…)` and
    `register(…)` call of the package must lie in that closure."""
    import ast

    from workbench.campaign.bounds import BOUND_MODULES
    from workbench.sources import modules
    inside = closure(BOUND_MODULES)
    found = []
    for name, path in modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            call = node.value if isinstance(node, ast.Expr) else None
            if isinstance(call, ast.Call):
                f = call.func
                called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
                if called in ("register_model", "register"):
                    found.append(name)
                    assert name in inside, f"{name} registers {called} outside the closure"
    assert {"workbench.model.bound", "workbench.model.schedule"} <= set(found)
