"""Loops and comprehensions over dicts follow Python: ``for k in d`` goes over the
keys in insertion order, ``d.values()`` and ``d.items()`` over the values and pairs,
for a dict the function builds (by a display or a comprehension, keys added later
included) or one it is passed, in every entry point.

Before, ``for k in d`` was lowered as over a sequence (``k = d[i]``: ``KeyError: 0``),
``d.values()`` and ``d.items()`` had no rule, an int-keyed comprehension iterated gave
``unhashable type``, and a key added to a dict built by a comprehension was refused.
References: central differences of the function (first order), of its gradient
(second order); float32 in, float32 out; the arguments unchanged.
"""

import copy

import dict_loop_funcs as funcs
import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import grad, hessian, hvp, jvp, value_and_grad, vjp

X = np.array([0.3, -0.5, 0.7])
V = np.array([0.2, 0.1, -0.4])
ONE = [pytest.param(f, id=f.__name__) for f in funcs.ONE_ARGUMENT]


@pytest.mark.parametrize("f", ONE)
def test_gradient_first_and_later_call(f):
    x = X.copy()
    g = call_twice(grad(f), x)
    np.testing.assert_array_equal(x, X)
    fd.assert_close(g, fd.numeric_grad(f, (X,), (0,))[0], rtol=1e-6, atol=1e-9)
    value, g2 = value_and_grad(f)(X)
    assert value == pytest.approx(f(X))
    fd.assert_close(g2, g, rtol=1e-12, atol=0)


@pytest.mark.parametrize("f", ONE)
def test_vjp_and_jvp_agree_with_differences(f):
    dout = 0.7
    fd.assert_close(vjp(f)(X, dout), dout * fd.numeric_grad(f, (X,), (0,))[0], rtol=1e-6)
    value, tangent = jvp(f)(X, V)
    assert value == pytest.approx(f(X))
    assert tangent == pytest.approx(float(fd.numeric_jvp(f, (X,), (0,), (V,))), rel=1e-6)


@pytest.mark.parametrize("f", ONE)
def test_second_order(f):
    expected = fd.numeric_jvp(grad(f), (X,), (0,), (V,))  # H v, by differences of grad
    fd.assert_close(hvp(f)(X, V), expected, rtol=1e-5, atol=1e-8)
    fd.assert_close(hvp(f, mode="reverse")(X, V), expected, rtol=1e-5, atol=1e-8)
    fd.assert_close(hessian(f)(X) @ V, expected, rtol=1e-5, atol=1e-8)

    df = grad(f)

    def directional(x):
        return np.sum(df(x) * V)

    fd.assert_close(grad(directional)(X), expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("f", ONE)
def test_float32_stays_float32(f):
    g = call_twice(grad(f), X.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, grad(f)(X), rtol=1e-4, atol=1e-5)


def test_insertion_order_not_sorted_order():
    # Python's order: "b" then "a"; sorted order would weight them the other way round
    g = grad(funcs.loop_over_items)(X)
    expected = 1.0 * 2 * X + 2.0 * 2 * np.sin(X) * np.cos(X)
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_dict_parameter_iterated():
    p = {"b": np.array([0.4, -0.2, 0.9]), "a": np.array([1.1, 0.3, -0.6])}
    pristine = copy.deepcopy(p)
    for wrt in (0, 1):
        g = call_twice(grad(funcs.loop_over_dict_param, wrt=wrt), p, X)
        fd.assert_same(p, pristine, path="p")
        expected = fd.numeric_grad(funcs.loop_over_dict_param, (p, X), (wrt,))[0]
        fd.assert_close(g, expected, rtol=1e-6, atol=1e-9)
    assert list(grad(funcs.loop_over_dict_param)(p, X)) == ["b", "a"]
    value, tangent = jvp(funcs.loop_over_dict_param, wrt=1)(p, X, V)
    expected = fd.numeric_jvp(funcs.loop_over_dict_param, (p, X), (1,), (V,))
    assert tangent == pytest.approx(float(expected), rel=1e-6)
    hv = hvp(funcs.loop_over_dict_param, wrt=1)(p, X, V)
    fd.assert_close(hv, fd.numeric_jvp(grad(funcs.loop_over_dict_param, wrt=1), (p, X), (1,), (V,)))
    # second order with respect to the dict itself
    v = {"b": np.array([0.1, 0.2, 0.3]), "a": np.array([-0.3, 0.2, 0.5])}
    g = grad(funcs.loop_over_dict_param)
    expected = {k: fd.numeric_jvp(lambda q, x, k=k: g(q, x)[k], (p, X), (0,), (v,)) for k in p}
    fd.assert_close(hvp(funcs.loop_over_dict_param)(p, X, v), expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("f", [funcs.nested_dict_param, funcs.values_of_dict_param])
def test_nested_and_values_of_parameters(f):
    params = {"enc": {"w": np.array([0.5, -1.0, 0.2]), "b": np.array([0.1, 0.0, 0.3])}}
    if f is funcs.values_of_dict_param:
        params = params["enc"]
    for wrt in (0, 1):
        g = call_twice(grad(f, wrt=wrt), params, X)
        fd.assert_close(g, fd.numeric_grad(f, (params, X), (wrt,))[0], rtol=1e-6, atol=1e-9)


def test_a_list_parameter_still_iterates_its_items():
    def f(ws, x):
        return sum(np.sum(w * x) ** 2 for w in ws)

    ws = [np.array([0.5, 1.0, -1.0]), np.array([2.0, 0.1, 0.3])]
    g = call_twice(grad(f), ws, X)
    assert isinstance(g, list)
    fd.assert_close(g, fd.numeric_grad(f, (ws, X), (0,))[0], rtol=1e-6, atol=1e-9)
    t = tuple(ws)
    assert isinstance(grad(f)(t, X), tuple)
