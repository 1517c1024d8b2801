"""A free name that denotes nothing: the gradient raises the ``NameError`` the function
raises, at call time, and is made once the name is defined.

Before, in a module without ``import numpy as np``, ``np.sum(np.tanh(x) ** 2)`` read the
generated code's own ``np`` (numpy) and its gradient was silently zero. Each module here
is written to a fresh file and imported anew, so that defining its names later changes
no other test.
"""

import importlib.util
import textwrap

import numpy
import pytest

from transpile import TranspileError, grad, hessian, hvp, jacobian, jvp, source, value_and_grad, vjp

MODULE = """
import numpy


def no_np(x):
    return np.sum(np.tanh(x) ** 2)


def no_helper(x):
    y = missing_helper(x)
    return numpy.sum(y)


def no_scale(x):
    return numpy.sum(x * SCALE)


def calls_no_np(x):
    return no_np(x) * 2.0


def spread(x, *rest):
    return numpy.sum(np.tanh(x) * rest[0])


def in_a_branch(x):
    if x[0] > 10.0:
        return numpy.sum(np.tanh(x))
    return numpy.sum(x * 2.0)
"""

X = numpy.array([0.3, -0.5])

ENTRIES = {
    "grad": lambda f: grad(f)(X),
    "value_and_grad": lambda f: value_and_grad(f)(X),
    "vjp": lambda f: vjp(f)(X, 1.0),
    "jvp": lambda f: jvp(f)(X, X),
    "hvp": lambda f: hvp(f)(X, X),
    "hvp_reverse": lambda f: hvp(f, mode="reverse")(X, X),
    "hvp_has_grad": lambda f: hvp(f, has_grad=True)(X, X),
    "hessian": lambda f: hessian(f)(X),
    "jacobian": lambda f: jacobian(f)(X),
}

MISSING = {"no_np": "np", "no_helper": "missing_helper", "no_scale": "SCALE", "calls_no_np": "np"}


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "names_module.py"
    path.write_text(textwrap.dedent(MODULE))
    spec = importlib.util.spec_from_file_location("names_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=ENTRIES.keys())
@pytest.mark.parametrize("fname", MISSING)
def test_the_gradient_raises_the_functions_name_error(module, fname, entry):
    f = getattr(module, fname)
    with pytest.raises(NameError, match=f"name '{MISSING[fname]}' is not defined") as raised:
        f(X)
    python_says = str(raised.value)
    for _ in range(2):  # the first call and a later one
        with pytest.raises(NameError) as raised:
            entry(f)
        assert str(raised.value) == python_says
        assert not isinstance(raised.value, TranspileError)  # the function's own error


def expected(fname, x):
    """The gradients once ``np = numpy``, ``SCALE = 3.0``, ``missing_helper = numpy.sin``."""
    t = numpy.tanh(x)
    return {
        "no_np": 2.0 * t * (1.0 - t * t),
        "no_helper": numpy.cos(x),
        "no_scale": numpy.full_like(x, 3.0),
        "calls_no_np": 4.0 * t * (1.0 - t * t),
    }[fname]


@pytest.mark.parametrize("fname", MISSING)
def test_the_gradient_is_made_once_the_name_is_defined(module, fname):
    f = getattr(module, fname)
    made = {"grad": grad(f), "vjp": vjp(f), "jvp": jvp(f), "hvp": hvp(f, mode="reverse")}
    with pytest.raises(NameError):
        made["grad"](X)
    module.np, module.SCALE, module.missing_helper = numpy, 3.0, numpy.sin
    for _ in range(2):
        assert made["grad"](X) == pytest.approx(expected(fname, X), rel=1e-12)
        assert made["vjp"](X, 1.0) == pytest.approx(expected(fname, X), rel=1e-12)
        assert made["jvp"](X, X)[1] == pytest.approx(expected(fname, X) @ X, rel=1e-12)
    step = 1e-6
    fd_hvp = (expected(fname, X + step * X) - expected(fname, X - step * X)) / (2 * step)
    assert made["hvp"](X, X) == pytest.approx(fd_hvp, rel=1e-6, abs=1e-9)
    assert "def d" in source(made["grad"])


def test_a_name_in_a_branch_not_taken(module):
    f = module.in_a_branch
    assert f(X) == pytest.approx(numpy.sum(X * 2.0))  # Python never reads np here
    with pytest.raises(NameError, match="'np' is not defined") as raised:
        grad(f)(X)
    assert isinstance(raised.value, TranspileError)  # located, with what to do
    assert "names_module.py:" in str(raised.value)
    module.np = numpy
    assert grad(f)(X) == pytest.approx(numpy.full(2, 2.0))


def test_source_of_a_gradient_waiting_for_a_name(module):
    g = grad(module.no_np)
    with pytest.raises(NameError, match="'np' is not defined"):
        source(g)
    module.np = numpy
    assert "np.tanh" in source(g)


def test_a_function_with_varargs(module):
    f = module.spread
    for make in (grad, value_and_grad):
        with pytest.raises(NameError, match="name 'np' is not defined") as raised:
            make(f)(X, X)
        assert not isinstance(raised.value, TranspileError)  # the function's own error
    module.np = numpy
    t = numpy.tanh(X)
    assert grad(f)(X, X) == pytest.approx((1.0 - t * t) * X, rel=1e-12)
