"""What installing the project puts in site-packages.

The runtime lives in the repository's ``runtime/`` folder but installs as
``transpile_runtime``: a top-level package named ``runtime`` would collide with any
other distribution that has one. The install itself is slow (a fresh virtual
environment), so it runs with ``-m slow``.
"""

import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

import transpile_runtime

ROOT = Path(__file__).resolve().parent.parent


def test_runtime_is_imported_under_its_installed_name():
    assert Path(transpile_runtime.__file__).resolve().parent == ROOT / "runtime"
    from transpile import stop_gradient

    assert stop_gradient is transpile_runtime.stop_gradient


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "editable"])
def test_fresh_install_has_no_top_level_runtime(tmp_path, editable):
    env = tmp_path / "env"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    target = ["-e", str(ROOT)] if editable else [str(ROOT)]
    subprocess.run([python, "-m", "pip", "install", "-q", *target], check=True)
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
    done = subprocess.run(
        [python, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "[2. 4.]" in done.stdout
    assert sys.executable != str(python)
