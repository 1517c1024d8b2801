"""The max shift of log-softmax and logsumexp, written out without ``stop_gradient``
(``transpile/analysis/composites.py``, ``shifts``): its adjoint sums to zero, so none is made.

Where the composite applies, the gradient must equal the one the ordinary rules give
(a twin of the function that reads ``m`` once more, ``+ 0.0 * np.sum(m)``) to
rounding, and central finite differences, on the first call (generic code) and a
later one (the shape-specialized variant), in float64 and float32; the generated
source must hold no adjoint of the max. Where it must not apply, the gradient
still matches finite differences and the max keeps its adjoint.
"""

import composite_funcs as cf
import fd
import numpy as np
import pytest

from transpile import grad, source, vjp


def _normal(rng, *shape):
    return 3.0 * rng.normal(size=shape)


# name -> (arguments from a generator, wrt)
INPUTS = {
    "log_softmax": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
    "log_softmax_named": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
    "logsumexp": (lambda r: (_normal(r, 4, 3), r.random((1, 3))), 0),
    "logsumexp_then_log_softmax": (
        lambda r: (_normal(r, 6, 3), np.eye(3)[r.integers(0, 3, size=6)]),
        0,
    ),
    "softmax_cross_entropy": (
        lambda r: (
            r.normal(size=(3, 4)),
            r.normal(size=4),
            r.normal(size=(6, 3)),
            r.random((6, 4)),
        ),
        (0, 1),
    ),
    "through_helper": (
        lambda r: (r.normal(size=(3, 4)), _normal(r, 6, 3), r.random((6, 4))),
        0,
    ),
    "m_used_elsewhere": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
    "m_rebound": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
    "z_rebound": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
    "axis_mismatch": (lambda r: (_normal(r, 4, 4), r.random((4, 4))), 0),
    "exp_used_elsewhere": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
    "logsumexp_minus_m": (lambda r: (_normal(r, 5, 4), r.random((5, 1))), 0),
    "shift_of_other_array": (
        lambda r: (_normal(r, 4, 4), _normal(r, 4, 4), r.random((4, 4))),
        (0, 1),
    ),
    "shift_in_loop": (lambda r: (_normal(r, 5, 4), r.random((5, 4))), 0),
}


def _args(func, dtype=np.float64):
    make, wrt = INPUTS[func.__name__]
    args = make(np.random.default_rng(len(func.__name__)))
    return tuple(np.asarray(a, dtype) for a in args), wrt


def _indices(wrt):
    return wrt if isinstance(wrt, tuple) else (wrt,)


def _as_tuple(g, wrt):
    return g if isinstance(wrt, tuple) else (g,)


def _no_max_adjoint(text):
    return "unreduce_extreme" not in text and "dm " not in text and "dm=" not in text


@pytest.mark.parametrize("func, ref", cf.APPLIES, ids=lambda f: f.__name__)
def test_applies_equal_to_ordinary_rules_and_finite_differences(func, ref):
    args, wrt = _args(func)
    g, plain = grad(func, wrt=wrt), grad(ref, wrt=wrt)
    numeric = fd.numeric_grad(func, args, _indices(wrt))
    for _ in ("first call", "later call"):
        got = _as_tuple(g(*args), wrt)
        fd.assert_close(got, _as_tuple(plain(*args), wrt), rtol=1e-12, atol=1e-14)
        fd.assert_close(got, numeric, rtol=1e-6, atol=1e-9)
        assert all(d.dtype == np.float64 for d in got)


@pytest.mark.parametrize("func, ref", cf.APPLIES, ids=lambda f: f.__name__)
def test_applies_in_float32(func, ref):
    args, wrt = _args(func, np.float32)
    g, plain = grad(func, wrt=wrt), grad(ref, wrt=wrt)
    numeric = fd.numeric_grad(func, args, _indices(wrt))
    for _ in ("first call", "later call"):
        got = _as_tuple(g(*args), wrt)
        assert all(d.dtype == np.float32 for d in got)
        fd.assert_close(got, _as_tuple(plain(*args), wrt), rtol=1e-5, atol=1e-6)
        fd.assert_close(got, numeric, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("func, ref", cf.APPLIES, ids=lambda f: f.__name__)
def test_no_adjoint_of_the_max(func, ref):
    args, wrt = _args(func)
    g = grad(func, wrt=wrt)
    g(*args), g(*args)
    assert _no_max_adjoint(source(g)), source(g)
    assert _no_max_adjoint(source(g, *args)), source(g, *args)
    # the twin, which reads m once more, keeps it: what the composite saves
    assert "unreduce_extreme" in source(grad(ref, wrt=wrt))


@pytest.mark.parametrize("func", cf.NOT_APPLIES, ids=lambda f: f.__name__)
def test_does_not_apply(func):
    args, wrt = _args(func)
    g = grad(func, wrt=wrt)
    numeric = fd.numeric_grad(func, args, _indices(wrt))
    for _ in ("first call", "later call"):
        fd.assert_close(_as_tuple(g(*args), wrt), numeric, rtol=1e-6, atol=1e-9)
    assert "unreduce_extreme" in source(g), source(g)


def test_vjp_of_log_softmax():
    rng = np.random.default_rng(7)
    z, dout = _normal(rng, 5, 4), rng.normal(size=(5, 4))
    g, plain = vjp(cf.log_softmax_vector), vjp(cf.log_softmax_vector_ref)
    for _ in ("first call", "later call"):
        fd.assert_close(g(z, dout), plain(z, dout), rtol=1e-12, atol=1e-14)
    # the adjoint of log-softmax: dout - softmax(z) * sum(dout)
    p = np.exp(z - np.max(z, axis=1, keepdims=True))
    p /= np.sum(p, axis=1, keepdims=True)
    expected = dout - p * np.sum(dout, axis=1, keepdims=True)
    fd.assert_close(g(z, dout), expected, rtol=1e-12, atol=1e-14)
    assert _no_max_adjoint(source(g))
