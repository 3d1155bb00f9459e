"""Every notebook runs top to bottom on a CPU-only machine, with its data
folder (WORKBENCH_DATA) in a temporary directory so that a notebook's
autosave or records never touch the repository; the notebooks carry their
own `assert`s on the numbers they teach, and key outputs are checked here."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

REPO = Path(__file__).parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# what a reader must see in each notebook's outputs
EXPECT = {
    "00_explorer": ["bound", "open choices"],
    "01_basic_block_scheduling": ["InvalidDecision", "valid schedules"],
    "03_matmul_by_hand": ["ok median", "error vs numpy"],
    "04_reading_the_bound": ["limited by", "kepler_k4000"],
    "05_sparsity_padded_conv": ["516128", "tiles touch the padding"],
    "06_bound_accuracy": ["samples faster than their bound: 0", "GPU data"],
    "07_fusion_and_mars": ["S1.i ✗ S2.i", "consumer tiles"],
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    for sub in ("targets", "runs"):  # read-only inputs the notebooks use
        (d / sub).symlink_to(REPO / "data" / sub, target_is_directory=True)
    return d


def _text(nb) -> str:
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            out.append(o.get("text", ""))
            for v in o.get("data", {}).values():
                out.append(v if isinstance(v, str) else "")
    return "\n".join(out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, data_dir, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA", str(data_dir))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     store_widget_state=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # the kernel inherits WORKBENCH_DATA
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors, errors[0].get("evalue")
    text = _text(nb)
    for want in EXPECT.get(path.stem, []):
        assert want in text, f"{path.name}: no {want!r} in the outputs"
