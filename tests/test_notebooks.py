"""Execute every notebook in notebooks/ in a fresh kernel; a failing cell fails the test.

Each notebook ends with an assertion cell comparing generated and numeric
gradients, so running it is the check. The kernel is the interpreter running
the tests (the ``python3`` kernelspec resolves to it), with the repository root
on ``PYTHONPATH`` so ``transpile`` imports whether or not it is installed.

The committed outputs must be today's: every ``.ipynb`` holds the cells of its
jupytext ``.py``, and every generated source it prints is what a fresh run prints
(``python notebooks/build.py`` rewrites them all).
"""

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REBUILD = "run `python notebooks/build.py` to rewrite the notebooks from their .py files"


@pytest.fixture
def kernel_env(monkeypatch):
    """Run kernels with the repository importable and matplotlib off-screen."""
    path = [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")


def execute(nb, cwd: Path):
    """Run all cells of ``nb`` in a fresh python3 kernel with working directory ``cwd``."""
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return nb


def test_kernel_is_this_interpreter(kernel_env, tmp_path):
    cell = nbformat.v4.new_code_cell("import sys, transpile; print(sys.prefix)")
    nb = execute(nbformat.v4.new_notebook(cells=[cell]), tmp_path)
    assert nb.cells[0].outputs[0]["text"].strip() == sys.prefix


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS][:4] == [
        "01_tour.ipynb",
        "02_em_gaussian_mixture.ipynb",
        "03_rbm_contrastive_divergence.ipynb",
        "04_adversarial_training.ipynb",
    ]


def printed_sources(nb):
    """Per code cell, the generated sources it printed or displayed: the outputs with a
    line starting ``def`` (timings and other run-dependent text are left out)."""
    cells = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        texts = []
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            text = "".join(text)
            if text.startswith("def ") or "\ndef " in text:
                texts.append(text)
        cells.append(texts)
    return cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_env):
    committed = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    execute(nb, path.parent)
    last_code = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert "assert" in last_code.source, f"{path.name} must end with an assertion cell"
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert any(c.get("outputs") for c in code), (
        f"{path.name} is committed without outputs; {REBUILD}"
    )
    assert printed_sources(nb) == printed_sources(committed), (
        f"{path.name}: the generated source it shows is not what a fresh run prints; {REBUILD}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_matches_its_py(path):
    jupytext = pytest.importorskip("jupytext")
    committed = nbformat.read(path, as_version=4)
    expected = jupytext.read(path.with_suffix(".py"))
    pairs = [(c.cell_type, c.source) for c in committed.cells]
    assert pairs == [(c.cell_type, c.source) for c in expected.cells], (
        f"{path.name} does not hold the cells of {path.with_suffix('.py').name}; {REBUILD}"
    )
