"""The package's own sources, read statically (`ast`): which workbench
modules each module imports, and a digest of the sources some modules
depend on.

The graph holds every import a module can run, at module level and inside
functions alike; imports under `if TYPE_CHECKING:` never run and are left
out. An edge goes to the module named, or to the package for a name its
`__init__` defines; the implicit import of parent packages is not an edge
(a package's `__init__` importing its own submodules is no cycle), but
`closure_digest` reads their sources. `tests/test_imports.py` checks the
graph has no cycle; `campaign.bounds.engine_fingerprint` digests what a
bound depends on, so that editing a widget or a report keeps cached bounds.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PKG = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    """Dotted name -> source file of every module of the package."""
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _is_package(name: str) -> bool:
    return modules().get(name, Path()).name == "__init__.py"


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
    mods = modules()
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in mods}
    if node.level:
        base = module.split(".") if _is_package(module) else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        pkg = ".".join(base + ([node.module] if node.module else []))
    else:
        pkg = node.module or ""
    if pkg not in mods:
        return set()
    out = set()
    for a in node.names:
        sub = f"{pkg}.{a.name}"
        out.add(sub if sub in mods else pkg)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the workbench modules it imports (read from the files now)."""
    graph = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = set().union(*(_targets(name, n) for n in _imports(tree))) - {name}
    return graph


def closure(roots, graph: dict[str, set[str]] | None = None) -> set[str]:
    """`roots` and every workbench module they import, directly or not."""
    graph = import_graph() if graph is None else graph
    seen, todo = set(), list(roots)
    while todo:
        m = todo.pop()
        if m not in seen:
            if m not in graph:
                raise ValueError(f"no workbench module {m!r}")
            seen.add(m)
            todo.extend(graph[m])
    return seen


def closure_digest(roots, *, data_suffixes=(".space",)) -> str:
    """A digest of the sources `closure(roots)` runs: its modules, the
    `__init__` of every package above them (importing a module runs them),
    and the data files (`data_suffixes`) under their packages."""
    names = closure(roots)
    for n in list(names):
        parts = n.split(".")
        names |= {".".join(parts[:i]) for i in range(1, len(parts))}
    files = {modules()[n] for n in names}
    for n in names:
        if _is_package(n):
            files |= {p for p in modules()[n].parent.rglob("*") if p.suffix in data_suffixes}
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.relative_to(PKG).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:20]


__all__ = ["closure", "closure_digest", "import_graph", "modules"]
