"""Every transform of a ``functools.partial``, a bound method, a callable instance, a
staticmethod and a classmethod (``transpile/front/callables.py``), against central differences
of the same callable, on a first and a later call."""

import functools

import callable_funcs as cf
import fd
import numpy as np
import pytest

from transpile import grad, hessian, hvp, jacobian, jvp, source, value_and_grad, vjp
from transpile.front import callables

RNG = np.random.default_rng(2)
W, X = RNG.standard_normal(3) * 0.5, RNG.standard_normal((5, 3))
MODEL = cf.Model(0.3)


def _x_bound(f):
    return functools.partial(f, x=X)


CALLABLES = {
    "partial-keyword": (cf.with_flag, (W, X)),
    "partial-scale": (cf.with_scale, (W, X)),
    "partial-of-partial": (cf.nested, (W, X)),
    "partial-positional": (functools.partial(cf.scaled_loss, W * 2.0), (X,)),
    "bound-method": (MODEL.loss, (W, X)),
    "callable-instance": (MODEL, (W, X)),
    "staticmethod": (cf.Model.penalty, (W,)),
    "classmethod": (cf.Model.scaled, (W, X)),
}


@pytest.mark.parametrize("key", sorted(CALLABLES))
def test_grad(key):
    f, args = CALLABLES[key]
    wrt = 0
    expected = fd.numeric_grad(f, list(args), (wrt,))[0]
    g = grad(f, wrt=wrt)
    for _ in range(2):
        np.testing.assert_allclose(g(*args), expected, rtol=1e-6, atol=1e-8)
        value, gradient = value_and_grad(f)(*args)
        np.testing.assert_allclose(value, f(*args), rtol=1e-13)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


def _every_positional(f, args):
    """``args`` and the defaults of the positional parameters after them: jvp and hvp
    take the tangent last, so they ask for every argument (of the function they see: a
    partial's parameters after one it bound by keyword stay positional there)."""
    import inspect

    rest = [
        p.default
        for p in list(inspect.signature(callables.plain(f)).parameters.values())[len(args) :]
        if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    return (*args, *rest)


@pytest.mark.parametrize("key", sorted(CALLABLES))
def test_forward_and_second_order(key):
    f, args = CALLABLES[key]
    args = _every_positional(f, args)
    f = callables.plain(f)  # called with every argument by position, as the transforms are
    v = RNG.standard_normal(np.shape(args[0]))
    expected_jv = fd.numeric_jvp(f, args, (0,), [v])
    value, tangent = jvp(f)(*args, v)
    np.testing.assert_allclose(tangent, expected_jv, rtol=1e-6, atol=1e-8)
    g = grad(f)
    expected_hv = fd.numeric_jvp(g, args, (0,), [v])
    for form in (hvp(f), hvp(f, mode="reverse")):
        for _ in range(2):
            np.testing.assert_allclose(form(*args, v), expected_hv, rtol=1e-5, atol=1e-7)
    h = hessian(f)(*args)
    hv = np.tensordot(h, v, axes=v.ndim)
    np.testing.assert_allclose(hv, expected_hv, rtol=1e-5, atol=1e-7)


def test_vjp_and_jacobian_of_a_partial():
    def residuals(w, x, shift):
        return np.tanh(x @ w) - shift

    f = functools.partial(residuals, shift=0.25)
    dout = RNG.standard_normal(5)
    expected = fd.numeric_jvp(lambda w: np.sum(f(w, X) * dout), (W,), (0,), [np.eye(3)[0]])
    got = vjp(f)(W, X, dout)
    np.testing.assert_allclose(got[0], expected, rtol=1e-6, atol=1e-8)
    for mode in ("forward", "reverse"):
        jac = jacobian(f, mode=mode)(W, X)
        columns = [fd.numeric_jvp(f, (W, X), (0,), [e]) for e in np.eye(3)]
        np.testing.assert_allclose(jac, np.stack(columns, axis=1), rtol=1e-6, atol=1e-8)


def test_the_source_reads_as_the_call():
    text = source(grad(MODEL.loss))
    assert "def dloss(w, x)" in text and "loss_fwd(self_bound, w, x)" in text


def test_a_dropped_bound_object_is_freed_with_its_gradient():
    import gc
    import weakref

    model = cf.Model(0.1)
    ref = weakref.ref(model)
    g = grad(model.loss)
    g(W, X)
    del model
    gc.collect()
    assert ref() is not None  # the gradient holds it, as the bound method did
    del g
    gc.collect()
    assert ref() is None
