"""Calling a generated gradient on both of its paths.

A straight-line gradient runs generic code on the first call with a new
signature (recording shapes as it goes) and a variant specialized for that
signature afterwards. ``call_twice`` makes both calls, checks that they agree
leaf by leaf (type, shape, dtype, values), and returns the specialized result,
which the caller then checks against its independent reference.
"""

import copy

import fd
import numpy as np

from transpile import grad


def call_twice(g, *args):
    first = g(*args)
    second = g(*args)
    a_leaves, _ = fd.flatten(first)
    b_leaves, _ = fd.flatten(second)
    assert type(first) is type(second) and len(a_leaves) == len(b_leaves)
    for i, (a, b) in enumerate(zip(a_leaves, b_leaves)):
        where = f"leaf {i}: first call {a!r}, second call {b!r}"
        assert type(a) is type(b), where
        assert np.shape(a) == np.shape(b), where
        assert getattr(a, "dtype", None) == getattr(b, "dtype", None), where
        tol = 1e-5 if getattr(a, "dtype", None) in (np.float32, np.complex64) else 1e-11
        scale = float(np.max(np.abs(a))) if np.size(a) else 0.0
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * scale, err_msg=where)
    return second


def assert_grad_matches_fd(func, args, wrt, rtol=1e-6, atol=1e-9):
    """``grad(func, wrt)`` on a first and a later call equals central finite
    differences, and leaves ``args`` as they were."""
    pristine = copy.deepcopy(args)
    actual = call_twice(grad(func, wrt=wrt), *args)
    fd.assert_same(list(args), list(pristine), path="argument")
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = fd.numeric_grad(func, args, indices)
    actual = actual if isinstance(wrt, tuple) else (actual,)
    fd.assert_close(actual, expected, rtol=rtol, atol=atol, path=func.__name__)
