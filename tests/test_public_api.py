"""The public API a notebook user finds by tab completion, and the notebooks
keep to it: `workbench` (as wb), its subpackages' own exports
(`workbench.volume`, `workbench.poly`, …) and `widgets` — never a module
inside them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import workbench as wb

REPO = Path(__file__).parent.parent
PACKAGES = {p.name for p in (REPO / "workbench").iterdir() if (p / "__init__.py").exists()}


def test_the_verbs_a_notebook_needs():
    for name in ("explore", "Session", "search", "generate", "evaluate", "lookahead",
                 "load_records", "bound", "random_fixed", "Candidate", "kernels", "data_dir"):
        assert name in dir(wb) and name in wb.__all__, name
    for name in wb.__all__:
        assert getattr(wb, name) is not None
    assert callable(wb.search) and wb.search.thesis and wb.search.Search is wb.Search


def _imports(code: str):
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module


def _public(module: str) -> bool:
    parts = module.split(".")
    if parts[0] == "widgets":
        return len(parts) == 1
    if parts[0] == "workbench":
        return len(parts) == 1 or (len(parts) == 2 and parts[1] in PACKAGES)
    return True  # third-party


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_notebooks_use_only_the_public_api(path):
    nb = json.loads(path.read_text())
    bad = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            src = "\n".join(line for line in src.splitlines() if not line.startswith(("%", "!")))
            bad += [m for m in _imports(src) if not _public(m)]
    assert not bad, f"{path.name} imports private modules: {bad}"
