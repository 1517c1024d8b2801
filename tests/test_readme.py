"""The README's Python examples run as they are, and show what the text says."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks():
    text = README.read_text()
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def _run(code, tmp_path, name):
    """Import ``code`` as a module from a file (the transpiler reads function source)."""
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runnable():
    # the before/after pair shows code (the second is generated output), not a script
    return [b for b in _blocks() if "import numpy as np" in b]


def test_readme_has_runnable_examples():
    assert len(_runnable()) >= 3


@pytest.mark.parametrize("index", range(len(_runnable())))
def test_readme_example_runs(index, tmp_path, capsys):
    module = _run(_runnable()[index], tmp_path, f"readme_example_{index}")
    out = capsys.readouterr().out
    if hasattr(module, "dloss"):
        # the usage example: its gradient against central differences
        w, b, x, y = module.w, module.b, module.x, module.y
        h = 1e-6
        dw, db = module.dloss(w, b, x, y)
        for i in range(w.size):
            e = np.zeros_like(w)
            e[i] = h
            numeric = (module.loss(w + e, b, x, y) - module.loss(w - e, b, x, y)) / (2 * h)
            assert abs(dw[i] - numeric) < 1e-6 * max(1.0, abs(numeric))
        numeric_b = (module.loss(w, b + h, x, y) - module.loss(w, b - h, x, y)) / (2 * h)
        assert abs(db - numeric_b) < 1e-6 * max(1.0, abs(numeric_b))
        assert "def dloss" in out
    if hasattr(module, "mlp"):
        assert set(module.g) == {"W1", "b1", "layers"}
        assert np.shape(module.g["W1"]) == (3, 4) and isinstance(module.g["layers"], list)
    if "check_grad" in _runnable()[index]:
        assert "PASSED" in out or "FAILED" in out


def test_wrong_hand_written_gradient_is_reported(tmp_path, capsys):
    """The second check_grad example continues the first: its gradient must FAIL."""
    blocks = _blocks()
    first = next(b for b in blocks if "check_grad" in b and "import numpy" in b)
    second = next(b for b in blocks if "def my_grad" in b)
    _run(first + "\n" + second, tmp_path, "readme_check_grad")
    out = capsys.readouterr().out
    assert out.count("PASSED") >= 1 and "FAILED" in out.split("PASSED")[-1]


def test_loop_example_shows_the_real_generated_source(tmp_path):
    """The README's before/after loop example is what the transpiler prints today."""
    from transpile import grad, source

    blocks = _blocks()
    primal = next(b for b in blocks if b.startswith("def rnn("))
    shown = next(b for b in blocks if b.startswith("def drnn("))
    module = _run("import numpy as np\n\n\n" + primal, tmp_path, "readme_rnn")
    assert source(grad(module.rnn, wrt=("h", "W"))) == shown


def test_readme_specialized_excerpt_matches_generated_code():
    """The excerpt of a shape-specialized variant is what the benchmark's logistic
    loss really gives at batch 64 (lines in order; ``...`` stands for lines left out)."""
    import sys

    sys.path.insert(0, str(README.parent / "benchmarks"))
    try:
        from problems import logreg_inputs, logreg_loss
    finally:
        sys.path.pop(0)
    from transpile import grad, source

    (excerpt,) = [b for b in _blocks() if b.startswith("def dlogreg_loss")]
    args = logreg_inputs(np.random.default_rng(0), 64, 10)
    actual = str(source(grad(logreg_loss, wrt=("w", "b")), *args)).splitlines()
    position = 0
    for line in excerpt.splitlines():
        if line.strip() == "...":
            continue
        assert line in actual[position:], f"{line!r} not in the generated code:\n" + "\n".join(
            actual
        )
        position = actual.index(line, position) + 1
