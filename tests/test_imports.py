"""No import cycles among `workbench.*` modules.

The graph is read statically (`ast`), so it holds every import a module can
run: at module level and inside functions alike. A function-level import
that only hides a cycle is still a cycle (it breaks when the import order
changes); imports under `if TYPE_CHECKING:` never run and are left out.
An edge goes to the module named, or to the package for a name its
`__init__` defines; the implicit import of parent packages is left out (a
package's `__init__` importing its own submodules is no cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import workbench

PKG = Path(workbench.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _type_checking_only(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            yield from (n for b in node.orelse for n in _imports_in(b))
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST):
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    elif not (isinstance(node, ast.If) and _type_checking_only(node)):
        yield from _imports(node)


def _targets(module: str, node) -> set[str]:
    """The workbench modules an import statement runs."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
        return {n for n in names if n in MODULES}
    if node.level:
        base = module.split(".") if _is_package(module) else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        pkg = ".".join(base + ([node.module] if node.module else []))
    else:
        pkg = node.module or ""
    if pkg not in MODULES:
        return set()
    out = set()
    for a in node.names:
        sub = f"{pkg}.{a.name}"
        out.add(sub if sub in MODULES else pkg)
    return out


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = set().union(*(_targets(name, n) for n in _imports(tree))) - {name}
    return graph


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
