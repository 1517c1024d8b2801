"""hvp over the straight-line and control-flow corpora (issue 9): for every case with
a scalar output, the Hessian-vector product against central differences of the
generated gradient along the same direction (float64), on a first and a later call,
forward over reverse (the default, with and without the gradient) and reverse over
reverse.
A case the gradient itself cannot be differentiated again for is skipped with the
compiler's reason, which names what is missing; float32 cases and cases with a
differentiated argument that is not a float array or number are left out (the
difference of a gradient is not a reliable reference there).
"""

import copy
import inspect
import zlib

import corpus_control
import corpus_straight
import fd
import numpy as np
import pytest

from transpile import TranspileError, grad, hvp

CASES = [
    c
    for c in corpus_straight.CASES + corpus_control.CASES
    if not isinstance(c.wrt, tuple) and getattr(c, "fd", True)
]


def _float_argument(value):
    if isinstance(value, float):
        return True
    return isinstance(value, np.ndarray) and value.dtype == np.float64 and value.size > 0


def _index(case):
    if isinstance(case.wrt, str):
        return list(inspect.signature(case.func).parameters).index(case.wrt)
    return case.wrt


@pytest.mark.parametrize(
    "has_grad, mode",
    [(False, "forward"), (True, "forward"), (False, "reverse")],
    ids=["hvp", "grad_and_hvp", "reverse_over_reverse"],
)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hvp_matches_differences_of_the_gradient(case, has_grad, mode):
    rng = np.random.default_rng(zlib.crc32(("hvp " + case.id).encode()))
    args = tuple(case.make_args(rng))
    params = list(inspect.signature(case.func).parameters.values())[len(args) :]
    args += tuple(p.default for p in params if p.default is not p.empty)  # v comes last
    i = _index(case)
    if not _float_argument(args[i]) or np.ndim(case.func(*copy.deepcopy(args))) != 0:
        pytest.skip("not a scalar function of a float64 argument")
    first = grad(case.func, wrt=case.wrt)
    try:
        product = hvp(case.func, wrt=case.wrt, has_grad=has_grad, mode=mode)
        v = rng.standard_normal(np.shape(args[i])) if np.ndim(args[i]) else 0.7
        product(*copy.deepcopy(args), v)
    except TranspileError as error:
        pytest.skip(f"refused: {error.what}")
    tol = dict(rtol=max(case.rtol, 1e-5), atol=1e-6)
    for call in ("first call", "later call"):
        v = rng.standard_normal(np.shape(args[i])) if np.ndim(args[i]) else 0.7
        expected = fd.numeric_jvp(lambda *a: first(*a), args, (i,), (v,))
        got = product(*copy.deepcopy(args), v)
        if has_grad:  # (gradient, H v), forward over reverse
            fd.assert_close(got[0], first(*copy.deepcopy(args)), rtol=1e-12, atol=1e-14)
            got = got[1]
        fd.assert_close(np.asarray(got, np.float64), expected, path=call, **tol)
