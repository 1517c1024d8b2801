"""Regenerate every notebook from its jupytext ``.py``, with the outputs of a real run.

    python notebooks/build.py              # all of them
    python notebooks/build.py 01_tour      # one (by stem)

Each ``notebooks/NN_name.py`` (jupytext's percent format: the file to edit and review)
is read, executed top to bottom in a fresh ``python3`` kernel with ``notebooks/`` as its
working directory and the repository root on ``PYTHONPATH``, and written to
``NN_name.ipynb`` with its outputs. Needs ``pip install -e ".[test]"`` (jupytext, nbclient
and ipykernel are in the test extra). ``tests/test_notebooks.py`` checks that the
committed ``.ipynb`` files are what this writes: same cells, and the same printed text
(generated source and numbers) as a fresh run.
"""

import os
import sys
from pathlib import Path

import jupytext
import nbclient
import nbformat

FOLDER = Path(__file__).resolve().parent
ROOT = FOLDER.parent


def sources():
    """The jupytext sources, in order (this script excluded)."""
    return sorted(p for p in FOLDER.glob("[0-9]*.py"))


def execute(nb, cwd=FOLDER):
    """Run all cells of ``nb`` in a fresh python3 kernel; returns ``nb`` with outputs."""
    env_path = [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(env_path)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        record_timing=False,  # no timestamps: a rebuild with equal outputs is an equal file
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()
    return nb


def build(py_path):
    """Execute ``py_path`` and write its ``.ipynb`` beside it."""
    nb = jupytext.read(py_path)
    for number, cell in enumerate(nb.cells):
        cell.id = f"cell-{number:02d}"  # stable ids keep diffs to what changed
    execute(nb)
    out = py_path.with_suffix(".ipynb")
    nbformat.write(nb, out)
    return out


def main(argv):
    wanted = set(argv)
    for path in sources():
        if wanted and path.stem not in wanted:
            continue
        print(f"{path.name} -> {build(path).name}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
