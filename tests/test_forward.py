"""Forward mode (``jvp``) on the corpora, against reverse mode and finite differences.

For each ``Case`` of ``tests/corpus_straight.py`` and ``tests/corpus_control.py``
(and the non-scalar ``VJP_CASES``): ``jvp(case.func, wrt=case.wrt)(*args, v)`` on a
first and a later call returns ``f(*args)`` and a tangent ``J v`` that satisfies the
inner-product identity ``<dout, J v> == <J^T dout, v>`` with ``vjp``, and matches
``tests/fd.numeric_jvp`` (where the case allows finite differences: not across a
``stop_gradient``; there the closed-form gradient gives ``<grad, v>``). A case whose
function uses a rule without a forward twin is skipped with the rule named (the
count is in the skip reasons: ``pytest -rs``).
"""

import copy
import inspect
import zlib

import corpus_control
import corpus_straight
import fd
import numpy as np
import pytest
from test_corpus import _wrt_indices
from variants import call_twice

from transpile import TranspileError, jvp, vjp

CASES = corpus_straight.CASES + corpus_control.CASES + corpus_straight.VJP_CASES


def _rng(case):
    return np.random.default_rng(zlib.crc32(("jvp " + case.id).encode()))


def _random_like(rng, arg):
    leaves, rebuild = fd.flatten(arg)
    return rebuild(
        [
            rng.standard_normal(np.shape(leaf)).astype(getattr(leaf, "dtype", np.float64))
            if isinstance(leaf, np.ndarray)
            else float(rng.standard_normal())
            for leaf in leaves
        ]
    )


def _all_arguments(func, args):
    """``args`` with the defaults of the parameters not given: the tangent comes last,
    so a jvp asks for every argument."""
    bound = inspect.signature(func).bind(*args)
    bound.apply_defaults()
    return tuple(bound.args)


def _jvp_or_skip(case, args, tangent):
    try:
        g = jvp(case.func, wrt=case.wrt)
        return call_twice(g, *args, tangent)
    except TranspileError as exc:
        if "no forward-mode rule" in str(exc):
            pytest.skip(f"refused: {exc.what.split(' (rule')[0]}")
        raise


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_jvp(case):
    rng = _rng(case)
    args = _all_arguments(case.func, case.make_args(rng))
    pristine = copy.deepcopy(args)
    indices, as_tuple = _wrt_indices(case.func, case.wrt)
    tangents = tuple(_random_like(rng, args[i]) for i in indices)
    tangent = tangents if as_tuple else tangents[0]

    out, tangent_out = _jvp_or_skip(case, args, copy.deepcopy(tangent))

    fd.assert_same(list(args), list(pristine), path="argument")
    expected_out = case.func(*copy.deepcopy(args))
    fd.assert_close(out, expected_out, rtol=1e-6, atol=1e-8, path="value")
    assert np.shape(tangent_out) == np.shape(expected_out), "tangent shaped like the output"
    tol = dict(rtol=case.rtol, atol=case.atol)
    if case.fd:
        expected = fd.numeric_jvp(case.func, args, indices, tangents)
        fd.assert_close(np.asarray(tangent_out, np.float64), expected, **tol, path="jvp vs fd")
    elif case.expected is not None:
        closed = case.expected(*copy.deepcopy(args))
        closed = closed if as_tuple else (closed,)
        expected = fd.inner(tuple(closed), tangents)
        fd.assert_close(float(tangent_out), expected, **tol, path="jvp vs <grad, v>")
    dout = rng.standard_normal(np.shape(expected_out))
    cotangent = vjp(case.func, wrt=case.wrt)(*args, dout)
    cotangent = cotangent if as_tuple else (cotangent,)
    lhs = float(np.sum(dout * np.asarray(tangent_out, np.float64)))
    rhs = fd.inner(tuple(cotangent), tangents)
    scale = 1e-4 if case.rtol > 1e-5 else 1e-7
    assert abs(lhs - rhs) <= scale * (1.0 + abs(lhs)), (
        f"<dout, J v> = {lhs!r}, <J^T dout, v> = {rhs!r}"
    )
