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
from test_strict_arrays import _methods_called, _run

from transpile import grad


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
    _run(grad(r.func, wrt=wrt), args, strict(args), f"grad wrt={wrt}", tol, allowed)
