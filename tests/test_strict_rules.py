"""The rule table of ``tests/test_rules.py`` on the strict NEP-18 array type.

Each row of ``ROWS`` (its wrapper function and argument makers, every ``wrt``
variant) goes through ``grad`` on ``StrictArray`` arguments (``tests/strict_array.py``,
which refuses what cupy refuses), on a first call (the generic gradient, recording
shapes) and a later one (the variant specialized for the signature), and is checked
as the corpus is in ``tests/test_strict_arrays.py``: StrictArrays (or numbers where
the argument is one) equal to numpy's gradient, fresh, the arguments untouched, no
ufunc method that only numpy has. A row whose forward function itself fails on the
strict type is skipped, its reason given; a row with a known numpy bug (an
``xfail`` row of the table) is skipped too.
"""

import copy
import zlib

import numpy as np
import pytest
from strict_array import StrictArray, strict
from test_rules import ROWS, _cases
from test_strict_arrays import _leaves, _methods_called, _random_like, _run, _with_defaults

from transpile import grad, jvp


def _has_array(value):
    if isinstance(value, (list, tuple)):
        return any(_has_array(v) for v in value)
    if isinstance(value, dict):
        return any(_has_array(v) for v in value.values())
    return isinstance(value, np.ndarray)


@pytest.mark.parametrize(
    "r,wrt", [p.values for p in _cases(ROWS)], ids=[p.id for p in _cases(ROWS)]
)
def test_rule_on_strict_arrays(r, wrt):
    if r.xfail and (r.xfail_wrt is None or wrt in r.xfail_wrt):
        pytest.skip(f"known bug on numpy: {r.xfail}")
    args = r.make(np.random.default_rng(zlib.crc32(r.id.encode())))
    if not _has_array(args):
        pytest.skip("no array argument: nothing runs on StrictArray")
    StrictArray.calls.clear()
    try:
        r.func(*copy.deepcopy(strict(args)))
    except Exception as error:  # the reason is reported as the skip
        pytest.skip(f"forward fails on StrictArray: {type(error).__name__}: {error}")
    allowed = _methods_called()
    tol = max(1e-9, r.rtol * 1e-3)
    # rows differentiate arguments a rule holds constant (copysign's sign): zeros, checked
    made = grad(r.func, wrt=wrt, allow_unused=True)
    _run(made, args, strict(args), f"grad wrt={wrt}", tol, allowed)


@pytest.mark.parametrize(
    "r,wrt", [p.values for p in _cases(ROWS)], ids=[p.id for p in _cases(ROWS)]
)
def test_rule_in_forward_mode_on_strict_arrays(r, wrt):
    """jvp of the row on StrictArrays, first and later call, against numpy's jvp."""
    if r.xfail and (r.xfail_wrt is None or wrt in r.xfail_wrt):
        pytest.skip(f"known bug on numpy: {r.xfail}")
    if r.id in _MIXED_BY_THE_FUNCTION:
        pytest.skip(_MIXED_BY_THE_FUNCTION[r.id])
    rng = np.random.default_rng(zlib.crc32(("jvp " + r.id).encode()))
    args = tuple(r.make(rng))
    if not _has_array(args):
        pytest.skip("no array argument: nothing runs on StrictArray")
    StrictArray.calls.clear()
    try:
        out = r.func(*copy.deepcopy(strict(args)))
    except Exception as error:  # the reason is reported as the skip
        pytest.skip(f"forward fails on StrictArray: {type(error).__name__}: {error}")
    if any(isinstance(leaf, (np.ndarray, np.generic)) for leaf in _leaves(out)):
        pytest.skip("the function's own result is a numpy value")
    args = _with_defaults(r.func, args)
    tangent = _tangent(rng, args, wrt)
    allowed = _methods_called()
    tol = max(1e-9, r.rtol * 1e-3)
    forward = jvp(r.func, wrt=wrt)
    _run(
        lambda *a: forward(*a)[1],
        args + (tangent,),
        strict(args) + (strict(tangent),),
        f"jvp wrt={wrt}",
        tol,
        allowed,
    )


# rows whose function itself makes a numpy array next to StrictArrays: their tangents
# mix the two as the function's own values do, which cupy refuses in the same way
_MIXED_BY_THE_FUNCTION = {
    "sh_atleast_2d_two(normal:float,normal[2,2,2])": (
        "np.atleast_2d of a Python number is a numpy array, next to a StrictArray"
    ),
}


def _tangent(rng, args, wrt):
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    parts = tuple(_random_like(rng, args[i]) for i in indices)
    return parts if isinstance(wrt, tuple) else parts[0]
