"""The public API: grad, value_and_grad, vjp, stop_gradient, source, and the CLI.

Every gradient is checked against an independent reference: a closed form or
central finite differences in float64 (``tests/fd.py``). The functions being
differentiated are defined in this file (the transpiler reads source).
"""

import copy
import inspect
import linecache
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import fd
import numpy as np
import numpy as onp
import pytest

import transpile
import transpile_runtime as runtime
from transpile import grad, source, stop_gradient, value_and_grad, vjp
from transpile import stop_gradient as sg

ROOT = Path(__file__).resolve().parent.parent


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# Functions to differentiate


def three(a, b, c):
    return np.sum(a * b + np.sin(c) * a)


def three_grads(a, b, c):
    """Closed form of the gradient of ``three`` w.r.t. (a, b, c)."""
    return b + np.sin(c), a, np.cos(c) * a


def with_default(x, w, scale=2.0):
    return np.sum(np.tanh(x * w)) * scale


def vector_valued(x, W):
    return np.tanh(W @ x) * x[0]


def names_like_adjoints(x, W):
    out = np.tanh(W @ x)
    dout = out * 2.0
    return dout * x[0]


def tanh_mlp(x, W1, W2):
    h = np.tanh(x @ W1)
    return np.mean(np.tanh(h @ W2) ** 2)


def aliased(x):
    return onp.sum(onp.exp(x) * onp.cos(x))


def stopped_plain(x):
    c = stop_gradient(np.cosh(x))
    return np.sum(c * np.sin(x))


def stopped_alias(x):
    c = sg(np.cosh(x))
    return np.sum(c * np.sin(x))


def stopped_module(x):
    c = transpile.stop_gradient(np.cosh(x))
    return np.sum(c * np.sin(x))


def stopped_runtime(x):
    c = runtime.stop_gradient(np.cosh(x))
    return np.sum(c * np.sin(x))


def stopped_as_argument(x, c):
    return np.sum(c * np.sin(x))


def writes_buffers(x, w):
    buf = np.zeros_like(x)
    buf[0] = x[0] * w[0]
    buf[1:] = np.sin(x[1:]) * w[1:]
    y = x.copy()
    y[1] = 3.0
    z = w.copy()
    z *= 2.0
    return np.sum(buf * y * x) + np.sum(z * z)


def loop_writes(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i]) * (i + 1.0)
    return np.sum(out * out)


def params_dict(p, x):
    h = np.tanh(x @ p["W"] + p["b"])
    return np.sum(h) * p["scale"]


def params_list(p, x):
    return np.sum(np.tanh(x @ p[0]) * p[1]) + p[2] * np.sum(x)


def params_nested(p, x):
    h = x
    layers = p["layers"]
    for i in range(len(layers)):
        h = np.tanh(h @ layers[i]["W"] + layers[i]["b"])
    return np.sum(h * h) * p["scale"]


def bad_shapes(a, b):
    c = a * b
    return np.sum(np.sin(c))


# --------------------------------------------------------------------------
# grad: call forms and wrt


def test_grad_as_function():
    a, b, c = rng().standard_normal((3, 5))
    g = grad(three)
    np.testing.assert_allclose(g(a, b, c), three_grads(a, b, c)[0], rtol=1e-12)


def test_grad_as_decorator():
    @grad
    def dsquare(x):
        return np.sum(x * x * 0.5)

    x = rng().standard_normal(4)
    np.testing.assert_allclose(dsquare(x), x, rtol=1e-12)
    assert "def " in source(dsquare)


def test_grad_as_decorator_with_wrt():
    @grad(wrt=1)
    def dweighted(x, w):
        return np.sum(np.sin(x) * w * w)

    x, w = rng().standard_normal((2, 4))
    np.testing.assert_allclose(dweighted(x, w), 2 * np.sin(x) * w, rtol=1e-12)

    @grad(wrt=("x", "w"))
    def dboth(x, w):
        return np.sum(np.sin(x) * w * w)

    gx, gw = dboth(x, w)
    np.testing.assert_allclose(gx, np.cos(x) * w * w, rtol=1e-12)
    np.testing.assert_allclose(gw, 2 * np.sin(x) * w, rtol=1e-12)


@pytest.mark.parametrize(
    "wrt, which", [(0, 0), (1, 1), (2, 2), (-1, 2), (-3, 0), ("a", 0), ("b", 1), ("c", 2)]
)
def test_wrt_single(wrt, which):
    a, b, c = rng(1).standard_normal((3, 4))
    got = grad(three, wrt=wrt)(a, b, c)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, three_grads(a, b, c)[which], rtol=1e-12)


@pytest.mark.parametrize(
    "wrt, which",
    [
        ((0,), (0,)),
        ((0, 2), (0, 2)),
        (("c", "a"), (2, 0)),
        ((-1, "b"), (2, 1)),
        ([0, 1, 2], (0, 1, 2)),
    ],
)
def test_wrt_tuple_gives_tuple(wrt, which):
    a, b, c = rng(2).standard_normal((3, 4))
    got = grad(three, wrt=wrt)(a, b, c)
    assert isinstance(got, tuple) and len(got) == len(which)
    closed = three_grads(a, b, c)
    for g, i in zip(got, which):
        np.testing.assert_allclose(g, closed[i], rtol=1e-12)


def test_wrt_agrees_with_finite_differences():
    a, b, c = rng(3).standard_normal((3, 4))
    got = grad(three, wrt=(0, 1, 2))(a, b, c)
    fd.assert_close(got, fd.numeric_grad(three, (a, b, c), (0, 1, 2)), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("wrt", [3, -4, "d", (0, 0), (0, "a"), (), 1.0, None])
def test_bad_wrt_is_rejected(wrt):
    with pytest.raises((ValueError, TypeError)):
        grad(three, wrt=wrt)


# --------------------------------------------------------------------------
# value_and_grad, vjp


def test_value_and_grad():
    a, b, c = rng(4).standard_normal((3, 6))
    value, g = value_and_grad(three)(a, b, c)
    assert value == pytest.approx(three(a, b, c), rel=1e-14)
    np.testing.assert_allclose(g, three_grads(a, b, c)[0], rtol=1e-12)
    value, (ga, gc) = value_and_grad(three, wrt=(0, "c"))(a, b, c)
    assert value == pytest.approx(three(a, b, c), rel=1e-14)
    np.testing.assert_allclose(ga, three_grads(a, b, c)[0], rtol=1e-12)
    np.testing.assert_allclose(gc, three_grads(a, b, c)[2], rtol=1e-12)


def test_value_and_grad_decorator():
    @value_and_grad(wrt=1)
    def vg(x, w):
        return np.sum(x * w * w)

    x, w = rng(5).standard_normal((2, 3))
    value, g = vg(x, w)
    assert value == pytest.approx(np.sum(x * w * w))
    np.testing.assert_allclose(g, 2 * x * w, rtol=1e-12)


@pytest.mark.parametrize("wrt", [0, 1, (0, 1)])
def test_vjp_inner_product(wrt):
    r = rng(6)
    x, W = r.standard_normal(3), r.standard_normal((4, 3))
    dout = r.standard_normal(4)
    indices = (wrt,) if isinstance(wrt, int) else wrt
    got = vjp(vector_valued, wrt=wrt)(x, W, dout)
    got = got if isinstance(wrt, tuple) else (got,)
    assert len(got) == len(indices)
    args = (x, W)
    for trial in range(3):
        v = tuple(r.standard_normal(np.shape(args[i])) for i in indices)
        jv = fd.numeric_jvp(vector_valued, args, indices, v)
        lhs = float(np.sum(dout * jv))
        rhs = fd.inner(got, v)
        assert lhs == pytest.approx(rhs, rel=1e-7, abs=1e-10)


def test_vjp_when_user_names_look_like_adjoints():
    """Variables named ``out`` and ``dout`` must not collide with the cotangent argument."""
    r = rng(20)
    x, W, dout = r.standard_normal(3), r.standard_normal((4, 3)), r.standard_normal(4)
    got = vjp(names_like_adjoints, wrt=(0, 1))(x, W, dout)
    for trial in range(3):
        v = (r.standard_normal(3), r.standard_normal((4, 3)))
        jv = fd.numeric_jvp(names_like_adjoints, (x, W), (0, 1), v)
        assert float(np.sum(dout * jv)) == pytest.approx(fd.inner(got, v), rel=1e-7, abs=1e-10)


def test_vjp_of_scalar_function_scales_gradient():
    a, b, c = rng(7).standard_normal((3, 4))
    got = vjp(three)(a, b, c, 2.5)
    np.testing.assert_allclose(got, 2.5 * three_grads(a, b, c)[0], rtol=1e-12)


def test_grad_of_nonscalar_output_points_to_vjp():
    x, W = rng(8).standard_normal(3), rng(9).standard_normal((4, 3))
    with pytest.raises((ValueError, TypeError, transpile.TranspileError)) as info:
        grad(vector_valued)(x, W)
    assert "vjp" in str(info.value)


# --------------------------------------------------------------------------
# source, verbose, caching


def test_verbose_prints_source(capsys):
    def verbose_target(x):
        return np.sum(np.exp(x) * 3.0)

    g = grad(verbose_target, verbose=True)
    printed = capsys.readouterr().out
    assert "def " in printed
    assert source(g) in printed
    x = rng().standard_normal(3)
    np.testing.assert_allclose(g(x), 3.0 * np.exp(x), rtol=1e-12)


def test_source_is_str_with_def():
    text = source(grad(tanh_mlp))
    assert isinstance(text, str)
    assert "def " in text
    compile(str(text), "<check>", "exec")  # it is valid Python


def test_source_rejects_plain_function():
    with pytest.raises(TypeError):
        source(three)


def test_grad_is_cached():
    assert grad(three) is grad(three)
    assert grad(three, wrt=1) is grad(three, wrt=1)
    assert grad(three, wrt=(0, 2)) is grad(three, wrt=(0, 2))
    assert grad(three, wrt=1) is not grad(three, wrt=0)
    assert grad(three, wrt=(0,)) is not grad(three, wrt=0)  # tuple vs single result
    assert value_and_grad(three) is value_and_grad(three)
    assert vjp(vector_valued) is vjp(vector_valued)


# --------------------------------------------------------------------------
# calling conventions and dtypes


def test_keyword_arguments_and_defaults():
    x, w = rng(10).standard_normal((2, 4))
    g = grad(with_default, wrt="w")

    def closed(scale):
        return x * (1.0 - np.tanh(x * w) ** 2) * scale

    np.testing.assert_allclose(g(x, w), closed(2.0), rtol=1e-12)
    np.testing.assert_allclose(g(x, w, 3.0), closed(3.0), rtol=1e-12)
    np.testing.assert_allclose(g(x, w, scale=0.5), closed(0.5), rtol=1e-12)
    np.testing.assert_allclose(g(x=x, w=w), closed(2.0), rtol=1e-12)
    np.testing.assert_allclose(g(w=w, x=x, scale=-1.0), closed(-1.0), rtol=1e-12)


def test_default_argument_can_be_differentiated():
    x, w = rng(11).standard_normal((2, 4))
    g = grad(with_default, wrt="scale")
    assert float(g(x, w)) == pytest.approx(np.sum(np.tanh(x * w)), rel=1e-12)
    assert float(g(x, w, scale=5.0)) == pytest.approx(np.sum(np.tanh(x * w)), rel=1e-12)


def test_float32_in_float32_out():
    r = rng(12)
    x = r.standard_normal((5, 4)).astype(np.float32)
    W1 = r.standard_normal((4, 3)).astype(np.float32)
    W2 = r.standard_normal((3, 2)).astype(np.float32)
    got = grad(tanh_mlp, wrt=(0, 1, 2))(x, W1, W2)
    for g in got:
        assert g.dtype == np.float32
    expected = fd.numeric_grad(tanh_mlp, (x, W1, W2), (0, 1, 2))
    fd.assert_close(got, expected, rtol=1e-3, atol=1e-5)


# --------------------------------------------------------------------------
# inputs are never mutated


@pytest.mark.parametrize("make", [grad, value_and_grad])
def test_inputs_not_mutated(make):
    x, w = rng(13).standard_normal((2, 5))
    args = (x, w)
    pristine = copy.deepcopy(args)
    got = make(writes_buffers, wrt=(0, 1))(*args)
    fd.assert_same(list(args), list(pristine))
    g = got[1] if make is value_and_grad else got
    fd.assert_close(g, fd.numeric_grad(writes_buffers, pristine, (0, 1)), rtol=1e-7, atol=1e-10)
    # calling twice gives the same answer (no hidden state was disturbed)
    again = make(writes_buffers, wrt=(0, 1))(*args)
    again = again[1] if make is value_and_grad else again
    fd.assert_close(again, g, rtol=0, atol=0)


def test_inputs_not_mutated_loop_writes_and_vjp():
    x = rng(14).standard_normal(6)
    pristine = x.copy()
    g = grad(loop_writes)(x)
    np.testing.assert_array_equal(x, pristine)
    i = np.arange(6) + 1.0
    np.testing.assert_allclose(g, 2 * np.tanh(x) * i * i * (1 - np.tanh(x) ** 2), rtol=1e-12)
    dx = vjp(loop_writes)(x, 1.0)
    np.testing.assert_array_equal(x, pristine)
    np.testing.assert_allclose(dx, g, rtol=1e-12)


def test_structure_inputs_not_mutated():
    p, x = nested_params()
    pristine = copy.deepcopy((p, x))
    grad(params_nested, wrt=(0, 1))(p, x)
    fd.assert_same([p, x], list(pristine))


# --------------------------------------------------------------------------
# stop_gradient, imported every way


@pytest.mark.parametrize(
    "func",
    [stopped_plain, stopped_alias, stopped_module, stopped_runtime],
    ids=lambda f: f.__name__,
)
def test_stop_gradient_import_forms(func):
    assert stop_gradient is transpile.stop_gradient is runtime.stop_gradient is sg
    x = rng(15).standard_normal(5)
    got = grad(func)(x)
    reference = grad(stopped_as_argument)(x, np.cosh(x))
    np.testing.assert_allclose(got, reference, rtol=1e-14)
    np.testing.assert_allclose(got, np.cosh(x) * np.cos(x), rtol=1e-12)
    assert "sinh" not in source(grad(func))
    assert func(x) == stopped_as_argument(x, np.cosh(x))  # identity at run time


# --------------------------------------------------------------------------
# tracebacks and imports


def test_traceback_shows_generated_line():
    g = grad(bad_shapes)
    try:
        g(np.ones(3), np.ones(4))
    except ValueError as error:
        text = traceback.format_exc()
        frames = traceback.extract_tb(error.__traceback__)
    else:
        pytest.fail("mismatched shapes should raise")
    # the innermost frame is in generated code (the generic gradient, or the run that
    # records shapes for a specialized variant), registered with linecache
    filename = frames[-1].filename
    assert filename.startswith("<transpile "), frames
    assert filename in text
    generated = linecache.getlines(filename)
    assert generated, "the generated file is not in linecache"
    # the failing line of the generated source is printed in the traceback
    failing = [line.strip() for line in str(source(g)).splitlines() if "a * b" in line]
    assert failing, source(g)
    assert any(line in text for line in failing), text
    assert any(line in "".join(generated) for line in failing)


def test_aliased_numpy_import():
    x = rng(16).standard_normal(5)
    got = grad(aliased)(x)
    np.testing.assert_allclose(got, np.exp(x) * (np.cos(x) - np.sin(x)), rtol=1e-12)


# --------------------------------------------------------------------------
# parameter structures


def nested_params():
    r = rng(17)
    p = {
        "layers": [
            {"W": r.standard_normal((3, 4)) * 0.5, "b": r.standard_normal(4) * 0.1},
            {"W": r.standard_normal((4, 2)) * 0.5, "b": r.standard_normal(2) * 0.1},
        ],
        "scale": 1.5,
    }
    return p, r.standard_normal((5, 3))


def test_dict_parameters():
    r = rng(18)
    p = {"W": r.standard_normal((3, 4)), "b": r.standard_normal(4), "scale": 0.7}
    x = r.standard_normal((2, 3))
    got = grad(params_dict)(p, x)
    assert isinstance(got, dict) and set(got) == set(p)
    fd.assert_close(got, fd.numeric_grad(params_dict, (p, x), (0,))[0], rtol=1e-7, atol=1e-10)


def test_list_parameters():
    r = rng(19)
    p = [r.standard_normal((3, 2)), r.standard_normal(2), 0.3]
    x = r.standard_normal((4, 3))
    got = grad(params_list)(p, x)
    assert isinstance(got, list) and len(got) == 3
    fd.assert_close(got, fd.numeric_grad(params_list, (p, x), (0,))[0], rtol=1e-7, atol=1e-10)


def test_nested_parameters():
    p, x = nested_params()
    got_p, got_x = grad(params_nested, wrt=("p", "x"))(p, x)
    assert isinstance(got_p, dict) and set(got_p) == {"layers", "scale"}
    assert isinstance(got_p["layers"], list) and len(got_p["layers"]) == 2
    expected = fd.numeric_grad(params_nested, (p, x), (0, 1))
    fd.assert_close((got_p, got_x), expected, rtol=1e-6, atol=1e-10)


# --------------------------------------------------------------------------
# command line


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "transpile", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_prints_source(tmp_path):
    path = tmp_path / "cli_target.py"
    path.write_text(
        textwrap.dedent("""\
        import numpy as np

        def loss(w, b, x):
            return np.sum(np.tanh(x @ w + b) ** 2)
        """)
    )
    done = run_cli(f"{path}:loss")
    assert done.returncode == 0, done.stderr
    assert "def dloss(w, b, x):" in done.stdout
    compile(done.stdout, "<cli>", "exec")
    done = run_cli(f"{path}:loss", "--wrt", "w,b")
    assert done.returncode == 0, done.stderr
    assert "def dloss(w, b, x):" in done.stdout
    assert "return (dw, db)" in done.stdout


def test_cli_reports_transpile_error(tmp_path):
    path = tmp_path / "cli_bad.py"
    path.write_text(
        "import numpy as np\n\ndef f(x):\n    try:\n        return np.sum(x)\n"
        "    finally:\n        return 0.0\n"
    )
    done = run_cli(f"{path}:f")
    assert done.returncode != 0
    assert f"{path}:5" in done.stderr  # the return in a try statement with finally
    assert "Traceback" not in done.stderr


def test_cli_demo():
    done = run_cli("--demo")
    assert done.returncode == 0, done.stderr
    assert "def " in done.stdout


def test_cli_lists_every_rule():
    from transpile.rules import registry

    done = run_cli("--rules")
    assert done.returncode == 0, done.stderr
    rows = [line.split(None, 1) for line in done.stdout.splitlines() if line[:1] != "#"]
    listed = {name: kind for kind, name in rows}
    assert len(listed) == len(rows)  # one line per rule
    for spelled, obj in [("numpy.tanh", np.tanh), ("numpy.linalg.solve", np.linalg.solve)]:
        assert listed[spelled] == "differentiated"
        assert registry().declaration(obj) is not None
    assert listed["x.sum()"] == listed["@"] == "differentiated"
    assert listed["numpy.argmax"] == "constant"
    assert set(listed.values()) == {"differentiated", "constant", "unsupported"}
    try:
        import scipy.special  # noqa: F401
    except ImportError:
        return
    assert "scipy.special.logsumexp" in listed and "scipy.stats.norm.logpdf" in listed


def test_module_globals_are_read_live(tmp_path):
    """Like the user's own function, the gradient sees a module global's current value."""
    import importlib.util

    path = tmp_path / "live_globals.py"
    path.write_text("import numpy as np\n\nK = 2.0\n\n\ndef f(x):\n    return np.sum(K * x * x)\n")
    spec = importlib.util.spec_from_file_location("live_globals", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([0.5, -1.0])
    g = grad(module.f)
    np.testing.assert_allclose(g(x), 2 * 2.0 * x)
    module.K = 3.0
    np.testing.assert_allclose(g(x), 2 * 3.0 * x)


def _powered(x, y, power=3):
    return x * y**power


def test_vjp_of_a_function_with_defaults_asks_for_every_argument():
    """dout comes last: f's defaults must not slide onto it (g(x, y, dout) would pass
    dout as power)."""
    g = vjp(_powered, wrt=(0, 1))
    assert list(inspect.signature(g).parameters) == ["x", "y", "power", "dout"]
    assert all(p.default is p.empty for p in inspect.signature(g).parameters.values())
    x, y, dout = np.array([1.0, 2.0]), np.array([0.5, 1.5]), np.array([1.0, -2.0])
    dx, dy = g(x, y, 3, dout)
    np.testing.assert_allclose(dx, dout * y**3)
    np.testing.assert_allclose(dy, dout * 3 * x * y**2)
    with pytest.raises(TypeError, match="dout"):
        g(x, y, dout)
