"""Gradients of the corpus functions against float64 central finite differences.

For each ``Case`` in ``tests/corpus_straight.py`` and ``tests/corpus_control.py``:
``grad(case.func, wrt=case.wrt)(*args)`` must match ``tests/fd.numeric_grad``
(and a closed form, where the case gives one), must have the structure of the
differentiated arguments, must keep each array's dtype (float32 in, float32
out), and must leave the arguments untouched. ``vjp`` is checked with the
inner-product identity ``<dout, J v> == <J^T dout, v>``.
"""

import copy
import inspect
import zlib

import corpus_control
import corpus_straight
import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import CutGradientWarning, grad, vjp


def _rng(case):
    return np.random.default_rng(zlib.crc32(case.id.encode()))


def _wrt_indices(func, wrt):
    """Positional indices named by ``wrt``, and whether ``grad`` returns a tuple."""
    names = list(inspect.signature(func).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    indices = tuple(names.index(w) if isinstance(w, str) else w for w in items)
    return indices, isinstance(wrt, tuple)


def _check_dtypes(gradient, argument, path="grad"):
    """Every array leaf of the gradient has the dtype of the matching argument leaf."""
    g_leaves, _ = fd.flatten(gradient)
    a_leaves, _ = fd.flatten(argument)
    for i, (g, a) in enumerate(zip(g_leaves, a_leaves)):
        if isinstance(a, np.ndarray):
            assert isinstance(g, np.ndarray), (
                f"{path} leaf {i}: argument is an array, gradient is {type(g).__name__}"
            )
            assert g.dtype == a.dtype, f"{path} leaf {i}: dtype {g.dtype}, argument {a.dtype}"


def _check_case(case):
    args = case.make_args(_rng(case))
    pristine = copy.deepcopy(args)
    indices, as_tuple = _wrt_indices(case.func, case.wrt)

    if case.allow_unused:  # a wrt argument cut on purpose: grad says so unless told
        with pytest.warns(CutGradientWarning, match="has no path to the output"):
            grad(case.func, wrt=case.wrt)
    actual = call_twice(grad(case.func, wrt=case.wrt, allow_unused=case.allow_unused), *args)

    fd.assert_same(list(args), list(pristine), path="argument")
    if not as_tuple:
        actual = (actual,)
    assert isinstance(actual, tuple) and len(actual) == len(indices), (
        f"grad returned {type(actual).__name__} for wrt={case.wrt!r}"
    )
    for i, g in zip(indices, actual):
        _check_dtypes(g, args[i], path=f"grad[{i}]")
    if case.fd:
        expected = fd.numeric_grad(case.func, args, indices)
        fd.assert_close(actual, expected, rtol=case.rtol, atol=case.atol, path="grad vs fd")
    if case.expected is not None:
        closed = case.expected(*copy.deepcopy(args))
        closed = closed if as_tuple else (closed,)
        fd.assert_close(
            actual, tuple(closed), rtol=case.rtol, atol=case.atol, path="grad vs closed form"
        )


@pytest.mark.parametrize("case", corpus_straight.CASES, ids=lambda c: c.id)
def test_straight(case):
    _check_case(case)


@pytest.mark.parametrize("case", corpus_control.CASES, ids=lambda c: c.id)
def test_control(case):
    _check_case(case)


@pytest.mark.parametrize("case", corpus_straight.VJP_CASES, ids=lambda c: c.id)
def test_vjp_inner_product(case):
    rng = _rng(case)
    args = case.make_args(rng)
    pristine = copy.deepcopy(args)
    indices, as_tuple = _wrt_indices(case.func, case.wrt)
    out = np.asarray(case.func(*copy.deepcopy(args)))
    dout = rng.standard_normal(out.shape)
    tangents = [
        fd.flatten(args[i])[1](
            [rng.standard_normal(np.shape(leaf)) for leaf in fd.flatten(args[i])[0]]
        )
        for i in indices
    ]

    cotangent = call_twice(
        vjp(case.func, wrt=case.wrt, allow_unused=case.allow_unused), *args, dout
    )

    fd.assert_same(list(args), list(pristine), path="argument")
    cotangent = cotangent if as_tuple else (cotangent,)
    for i, g in zip(indices, cotangent):
        _check_dtypes(g, args[i], path=f"vjp[{i}]")
    lhs = float(np.sum(dout * fd.numeric_jvp(case.func, args, indices, tangents)))
    rhs = fd.inner(tuple(cotangent), tuple(tangents))
    assert abs(lhs - rhs) <= 1e-7 * (1.0 + abs(lhs)), f"<dout, J v> = {lhs!r}, <vjp, v> = {rhs!r}"


def test_case_ids_are_unique():
    ids = [c.id for c in corpus_straight.CASES + corpus_control.CASES + corpus_straight.VJP_CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_corpus_sizes():
    straight = {c.func for c in corpus_straight.CASES}
    control = {c.func for c in corpus_control.CASES}
    assert len(straight) >= 70 and len(control) >= 45


# --------------------------------------------------------------------------
# The reference itself


def test_fd_matches_closed_forms():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    params = {"w": [rng.standard_normal(3), 0.5], "b": (rng.standard_normal(2),)}

    def f(p, x):
        return np.sum(np.sin(x) * p["w"][1]) + np.sum(p["w"][0] ** 3) + np.sum(np.exp(p["b"][0]))

    gp, gx = fd.numeric_grad(f, (params, x), (0, 1))
    fd.assert_close(gx, np.cos(x) * 0.5, rtol=1e-7, atol=1e-8)
    fd.assert_close(
        gp,
        {"w": [3 * params["w"][0] ** 2, float(np.sum(np.sin(x)))], "b": (np.exp(params["b"][0]),)},
        rtol=1e-7,
        atol=1e-8,
    )


def test_fd_promotes_float32():
    x = np.linspace(0.5, 1.5, 5).astype(np.float32)
    (g,) = fd.numeric_grad(lambda x: np.sum(np.log(x)), (x,), (0,))
    assert g.dtype == np.float64
    fd.assert_close(g, 1.0 / x.astype(np.float64), rtol=1e-9, atol=0)


def test_assert_close_reports_location():
    with pytest.raises(AssertionError, match=r"grad\['a'\]\[1\].*1 of 3"):
        fd.assert_close(
            {"a": [0.0, np.array([1.0, 2.0, 3.5])]}, {"a": [0.0, np.array([1.0, 2.0, 3.0])]}
        )
    with pytest.raises(AssertionError, match="expected a tuple, got list"):
        fd.assert_close([1.0], (1.0,))


def test_numeric_jvp_is_directional_derivative():
    rng = np.random.default_rng(1)
    a, v = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    jv = fd.numeric_jvp(lambda a: np.tanh(a) * 2.0, (a,), (0,), (v,))
    fd.assert_close(jv, 2.0 * (1 - np.tanh(a) ** 2) * v, rtol=1e-8, atol=1e-10)
