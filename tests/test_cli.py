"""The command line as a user meets it: ``transpile`` (the console script) and
``python -m transpile``: usage under the name it was run by, ``--version``, every
transform by ``--mode``, one-line errors with exit status 2 for a target that names no
file or function, and a quiet exit when the reader of its output goes away."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import transpile
from transpile.__main__ import MODES, main

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = shutil.which("transpile", path=str(Path(sys.executable).parent))

LOSS = """\
import numpy as np

def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)

NOT_A_FUNCTION = 3
"""


def run(*args, script=False, **kwargs):
    command = [SCRIPT] if script else [sys.executable, "-m", "transpile"]
    return subprocess.run(
        [*command, *args], cwd=ROOT, capture_output=True, text=True, check=False, **kwargs
    )


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "cli_loss.py"
    path.write_text(LOSS)
    return path


needs_script = pytest.mark.skipif(SCRIPT is None, reason="the console script is not installed")


@needs_script
def test_usage_names_the_console_script():
    done = run("--help", script=True)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: transpile [-h]")
    assert "--mode {grad,value_and_grad,vjp,jvp,hvp}" in done.stdout


def test_usage_names_the_module_when_run_as_one():
    done = run("--help")
    assert done.stdout.startswith("usage: python -m transpile [-h]")


@pytest.mark.parametrize("script", [False, pytest.param(True, marks=needs_script)])
def test_version(script):
    done = run("--version", script=script)
    assert (done.returncode, done.stdout) == (0, f"transpile {transpile.__version__}\n")


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_prints_source_that_compiles_and_runs(target, mode, capsys):
    assert main([f"{target}:loss", "--mode", mode, "--wrt", "w"]) == 0
    printed = capsys.readouterr().out
    assert "def " in printed
    expected = transpile.source(MODES[mode](_load_loss(target), wrt="w"))
    assert printed == expected + "\n"


def _load_loss(path):
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["loss"]


def test_hvp_mode_prints_the_code_of_a_hessian_vector_product(target, capsys):
    main([f"{target}:loss", "--mode", "hvp"])
    printed = capsys.readouterr().out
    namespace = {"np": np}
    exec(compile(textwrap.dedent(printed), "<hvp>", "exec"), namespace)  # it defines functions
    rng = np.random.default_rng(0)
    w, x, v = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=3)
    # against the closed form: loss = sum(tanh(x w)^2)
    t = np.tanh(x @ w)
    s = 1 - t**2
    h = x.T @ ((2 * s**2 - 4 * t**2 * s)[:, None] * x)
    assert np.allclose(transpile.hvp(_load_loss(target))(w, x, v), h @ v, rtol=1e-10)


@pytest.mark.parametrize(
    "given,said",
    [
        ("no_such_file.py:loss", "no_such_file.py: no such file"),
        ("{target}:nope", "{target} has no function 'nope'"),
        ("{target}:NOT_A_FUNCTION", "{target}: 'NOT_A_FUNCTION' is not a function"),
        ("{target}:", "'{target}:' is not path/to/file.py:function"),
    ],
)
def test_a_target_that_names_nothing_is_one_line_and_status_2(target, given, said):
    done = run(given.format(target=target))
    assert done.returncode == 2
    assert done.stderr == f"python -m transpile: error: {said.format(target=target)}\n"
    assert done.stdout == ""


def test_rules_into_a_closed_pipe_ends_quietly():
    # as in `transpile --rules | head` when head has gone before the listing is written:
    # the reading end is closed before the command starts, so every write fails
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "transpile", "--rules"],
            cwd=ROOT,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


def test_rules_are_one_per_line_kind_first(capsys):
    assert main(["--rules"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line[:1] != "#"]
    kinds = {line.split(None, 1)[0] for line in lines}
    assert kinds == {"differentiated", "constant", "unsupported"}
    assert "differentiated  numpy.tanh" in lines
    assert "constant        numpy.argmax" in lines
