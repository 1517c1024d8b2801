"""Calls to the user's helpers bound as Python binds them, through every entry point.

A keyword that skips a defaulted parameter (``h(x, off=y)`` for ``def h(x, scale=2.0,
off=0.0)``), directly or through ``functools.partial``; ``*args`` with ``**kwargs``; a
default computed from a global rebound after the ``def`` (the default is the value
Python evaluated then). Each result is compared with central differences in float64
(``tests/fd.py``): ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hvp`` in its three
forms, ``hessian`` and ``grad(grad(f))``, each called twice (the later call may run a
shape-specialized variant).
"""

import functools

import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import grad, hessian, hvp, jvp, value_and_grad, vjp


def shifted(x, scale=2.0, off=0.0):
    return np.tanh(x * scale + off)


def skip_direct(x, y):
    return np.sum(shifted(y, off=x) ** 2)


def skip_partial(x, y):
    p = functools.partial(shifted, off=x)
    return np.sum(p(y) ** 2)


def skip_both_given(x, y):
    return np.sum(shifted(y, off=x, scale=x * 0.5) ** 2)


def skip_to_first(x, y):
    return np.sum(shifted(off=y, x=x) ** 2)


def spread_both(*args, **kw):
    return args[0] * args[1] + np.sin(args[1]) * kw["s"]


def spread_call(x, y):
    return np.sum(spread_both(y, x, s=y * x) ** 2)


def keywords_after_a_default(x, s=2.0, **kw):
    return x * s + kw["t"] ** 2


def keyword_spread_call(x, y):
    return np.sum(np.sin(keywords_after_a_default(y, t=x)))


def rest_after_a_default(x, scale=2.0, *rest):
    return x * scale + np.cos(rest[0])


def rest_spread_call(x, y):
    return np.sum(rest_after_a_default(y, x * 0.5, x) ** 2)


def no_rest(x, scale=2.0, *rest):
    return x * scale + len(rest)


def no_rest_call(x, y):
    return np.sum(np.tanh(no_rest(y, scale=x)))


class Shifter:
    def __init__(self, w):
        self.w = w

    def apply(self, x, scale=2.0, off=0.0):
        return np.tanh(x * scale * self.w + off)


SHIFTER = Shifter(1.5)


def skip_in_a_method(x, y):
    return np.sum(SHIFTER.apply(y, off=x) ** 2)


SCALAR_FUNCS = [skip_direct, skip_partial, skip_both_given, skip_to_first, skip_in_a_method]
SCALAR_FUNCS.append(spread_call)  # last: forward mode refuses *args helpers (see test_jvp)
SPREAD_FUNCS = [keyword_spread_call, rest_spread_call, no_rest_call]

X = np.array([0.3, -0.5, 0.8])
Y = np.array([0.2, 0.1, -0.3])
V = np.array([1.0, 0.5, -2.0])


def fd_grad(f, args, i):
    return fd.numeric_grad(f, list(args), (i,))[0]


def fd_hvp(f, args, i, v, step=1e-3):
    """Directional difference (Richardson-extrapolated) of the finite-difference
    gradient."""

    def at(t):
        moved = list(args)
        moved[i] = args[i] + t * v
        return fd_grad(f, moved, i)

    def central(h):
        return (at(h) - at(-h)) / (2 * h)

    return (4 * central(step / 2) - central(step)) / 3


@pytest.mark.parametrize("f", SCALAR_FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_grad_and_value_and_grad(f, wrt):
    expected = fd_grad(f, (X, Y), wrt)
    fd.assert_close(call_twice(grad(f, wrt=wrt), X, Y), expected, rtol=1e-6)
    value, g = call_twice(value_and_grad(f, wrt=wrt), X, Y)
    assert value == pytest.approx(f(X, Y), rel=1e-12)
    fd.assert_close(g, expected, rtol=1e-6)


@pytest.mark.parametrize("f", SPREAD_FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_defaults_beside_spread_parameters(f, wrt):
    expected = fd_grad(f, (X, Y), wrt)
    fd.assert_close(call_twice(grad(f, wrt=wrt), X, Y), expected, rtol=1e-6)
    fd.assert_close(call_twice(hvp(f, wrt=wrt), X, Y, V), fd_hvp(f, (X, Y), wrt, V), rtol=1e-5)


@pytest.mark.parametrize("f", SCALAR_FUNCS[:-1], ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_jvp(f, wrt):
    out, tangent = call_twice(jvp(f, wrt=wrt), X, Y, V)
    assert out == pytest.approx(f(X, Y), rel=1e-12)
    assert tangent == pytest.approx(float(fd_grad(f, (X, Y), wrt) @ V), rel=1e-6)


@pytest.mark.parametrize("f", SCALAR_FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("form", ["forward", "reverse", "has_grad"])
def test_hvp(f, form):
    options = {"forward": {}, "reverse": {"mode": "reverse"}, "has_grad": {"has_grad": True}}
    got = call_twice(hvp(f, **options[form]), X, Y, V)
    if form == "has_grad":
        fd.assert_close(got[0], fd_grad(f, (X, Y), 0), rtol=1e-6)
        got = got[1]
    fd.assert_close(got, fd_hvp(f, (X, Y), 0, V), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", SCALAR_FUNCS, ids=lambda f: f.__name__)
def test_hessian(f):
    H = call_twice(hessian(f), X, Y)
    assert H.shape == (3, 3)
    fd.assert_close(H @ V, fd_hvp(f, (X, Y), 0, V), rtol=1e-5, atol=1e-6)


def shifted_vector(x, y):
    return shifted(y, off=x) * x


def test_vjp_of_a_vector_valued_function():
    dout = np.array([0.7, -1.1, 0.4])
    got = call_twice(vjp(shifted_vector), X, Y, dout)

    def projected(x, y):
        return np.sum(shifted_vector(x, y) * dout)

    fd.assert_close(got, fd_grad(projected, (X, Y), 0), rtol=1e-6)


def one_number(s):
    return shifted(1.5, off=s) ** 2


def one_number_partial(s):
    return functools.partial(shifted, off=s)(1.5) ** 2


@pytest.mark.parametrize("f", [one_number, one_number_partial], ids=lambda f: f.__name__)
def test_grad_of_grad(f):
    # f(s) = tanh(3 + s)^2: f'' = 2 sech^4 - 4 tanh^2 sech^2 at 3 + s
    t = np.tanh(3.0 + 0.3)
    sech2 = 1.0 - t * t
    assert call_twice(grad(f), 0.3) == pytest.approx(2 * t * sech2, rel=1e-12)
    assert call_twice(grad(grad(f)), 0.3) == pytest.approx(
        2 * sech2 * sech2 - 4 * t * t * sech2, rel=1e-10
    )


# --------------------------------------------------------------------------
# defaults are the values Python evaluated at the ``def``

SCALE = 1.5


def scaled_by_global(x, scale=SCALE * 2.0):
    return np.sum(x * scale)


def calls_scaled(x):
    return scaled_by_global(x) + 0.0


def own_default(x, s=SCALE * 2.0):
    return np.sum(np.sin(x) * s)


def one_sine_default(x, s=SCALE * 2.0):
    return np.sin(x) * s


SCALE = 10.0  # rebound after the defs: their defaults stay 3.0


@pytest.mark.parametrize("f", [scaled_by_global, calls_scaled], ids=lambda f: f.__name__)
def test_default_from_a_rebound_global(f):
    assert f(X) == pytest.approx(3.0 * np.sum(X))
    fd.assert_close(call_twice(grad(f), X), np.full(3, 3.0))
    value, g = call_twice(value_and_grad(f), X)
    assert value == pytest.approx(3.0 * np.sum(X))
    fd.assert_close(g, np.full(3, 3.0))


def test_callees_default_from_a_rebound_global_in_forward_mode():
    # jvp and hvp ask for every argument before the tangent: a default is in a callee
    assert call_twice(jvp(calls_scaled), X, V)[1] == pytest.approx(3.0 * np.sum(V))
    fd.assert_close(call_twice(hvp(calls_scaled, mode="reverse"), X, V), np.zeros(3))


def test_own_default_from_a_rebound_global():
    fd.assert_close(call_twice(grad(own_default), X), 3.0 * np.cos(X))
    value, g = call_twice(value_and_grad(own_default), X)
    assert value == pytest.approx(own_default(X))
    fd.assert_close(g, 3.0 * np.cos(X))
    fd.assert_close(call_twice(grad(grad(one_sine_default)), 0.4), -3.0 * np.sin(0.4))


def make_with_local_default(k):
    def inner(x, c=float(k) * 2.0):
        return np.sum(x * c)

    return inner


def test_default_from_the_enclosing_functions_local():
    f = make_with_local_default(4)
    fd.assert_close(call_twice(grad(f), X), np.full(3, 8.0))
