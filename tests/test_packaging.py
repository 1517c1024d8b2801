"""What installing the project puts in site-packages, and what its distributions hold.

The runtime lives in the repository's ``runtime/`` folder but installs as
``transpile_runtime``: a top-level package named ``runtime`` would collide with any
other distribution that has one. Building the sdist and the wheel and installing
into fresh virtual environments takes a minute, so those tests run with ``-m slow``
(``.ci/run`` runs them).
"""

import subprocess
import sys
import tarfile
import textwrap
import venv
from pathlib import Path

import pytest

import transpile
import transpile_runtime

ROOT = Path(__file__).resolve().parent.parent
# modules of tests/ that test files import: an sdist without them cannot run its tests
TEST_HELPERS = ["corpus_control.py", "corpus_straight.py", "fd.py", "rule_funcs.py", "variants.py"]


def test_runtime_is_imported_under_its_installed_name():
    assert Path(transpile_runtime.__file__).resolve().parent == ROOT / "runtime"
    from transpile import stop_gradient

    assert stop_gradient is transpile_runtime.stop_gradient


def _fresh_env(path):
    venv.create(path, with_pip=True)
    return path / "bin"


def _run(cmd, cwd, check=True):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if check:
        assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done


@pytest.mark.slow
def test_wheel_and_sdist(tmp_path):
    """The sdist builds the wheel (python -m build makes the wheel from the sdist); the
    wheel installs without extras into a fresh environment, where the console script
    and the demo run from another folder; the sdist carries the license, the notebooks
    and the tests with their helper modules, and its tests run against the wheel."""
    pytest.importorskip("build")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=tmp_path)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    assert wheel.name == f"transpile-{transpile.__version__}-py3-none-any.whl"

    bin_ = _fresh_env(tmp_path / "env")
    _run([bin_ / "python", "-m", "pip", "install", "-q", str(wheel)], cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    demo = _run([bin_ / "python", "-m", "transpile", "--demo"], cwd=elsewhere)
    assert "-> OK" in demo.stdout, demo.stdout
    version = _run([bin_ / "transpile", "--version"], cwd=elsewhere)
    assert version.stdout.strip() == f"transpile {transpile.__version__}"
    check = "import importlib.util, transpile; print(importlib.util.find_spec('runtime'))"
    found = _run([bin_ / "python", "-c", check], cwd=elsewhere)
    assert found.stdout.strip() == "None", "a top-level runtime was installed"
    installed = _run([bin_ / "python", "-m", "pip", "list", "--format=freeze"], cwd=elsewhere)
    names = {line.split("==")[0].lower() for line in installed.stdout.split()}
    assert {"scipy", "dask", "numexpr", "pytest"}.isdisjoint(names)  # no extras

    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    top = tmp_path / "unpacked" / sdist.name.removesuffix(".tar.gz")
    for needed in ["LICENSE", "README.md", "notebooks/01_tour.ipynb"]:
        assert (top / needed).is_file(), needed
    for helper in TEST_HELPERS:
        assert (top / "tests" / helper).is_file(), helper
    _run([bin_ / "python", "-m", "pip", "install", "-q", "pytest"], cwd=tmp_path)
    # the pytest script, not python -m pytest: the unpacked folder is then not on
    # sys.path, so the tests import the installed wheel
    tests = _run([bin_ / "pytest", "-q", "-p", "no:cacheprovider", "tests/test_corpus.py"], cwd=top)
    assert " passed" in tests.stdout and "failed" not in tests.stdout, tests.stdout


@pytest.mark.slow
def test_editable_install_has_no_top_level_runtime(tmp_path):
    bin_ = _fresh_env(tmp_path / "env")
    _run([bin_ / "python", "-m", "pip", "install", "-q", "-e", str(ROOT)], cwd=tmp_path)
    check = textwrap.dedent(
        """
        import importlib.util
        import numpy as np
        import transpile, transpile_runtime
        from transpile import grad
        assert importlib.util.find_spec("runtime") is None, "a top-level runtime was installed"
        def f(x):
            return np.sum(x * x)
        print(grad(f)(np.array([1.0, 2.0])))
        """
    )
    script = tmp_path / "check_install.py"
    script.write_text(check)
    done = _run([bin_ / "python", str(script)], cwd=tmp_path)
    assert "[2. 4.]" in done.stdout
