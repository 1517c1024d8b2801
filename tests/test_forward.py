"""Forward mode (``jvp``) on the corpora, against reverse mode and finite differences.

For each ``Case`` of ``tests/corpus_straight.py`` and ``tests/corpus_control.py``
(and the non-scalar ``VJP_CASES``): ``jvp(case.func, wrt=case.wrt)(*args, v)`` on a
first and a later call returns ``f(*args)`` and a tangent ``J v`` that satisfies the
inner-product identity ``<dout, J v> == <J^T dout, v>`` with ``vjp``, and matches
``tests/fd.numeric_jvp`` (where the case allows finite differences: not across a
``stop_gradient``; there the closed-form gradient gives ``<grad, v>``). A case whose
function uses a rule without a forward twin is skipped with the rule named (the
count is in the skip reasons: ``pytest -rs``). The same for every row of the rule
table of ``tests/test_rules.py``; then the generated code (``stop_gradient`` gives no
tangent code), a rule without a forward twin refused by name, and ``jacobian`` in both
modes against finite differences.
"""

import copy
import inspect
import zlib

import corpus_control
import corpus_straight
import fd
import forward_funcs as F
import numpy as np
import pytest
from test_corpus import _wrt_indices
from test_rules import ROWS, _cases
from variants import call_twice

from transpile import TranspileError, grad, hessian, hvp, jacobian, jvp, source, vjp

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
    cotangent = vjp(case.func, wrt=case.wrt, allow_unused=case.allow_unused)(*args, dout)
    cotangent = cotangent if as_tuple else (cotangent,)
    lhs = float(np.sum(dout * np.asarray(tangent_out, np.float64)))
    rhs = fd.inner(tuple(cotangent), tangents)
    scale = 1e-4 if case.rtol > 1e-5 else 1e-7
    assert abs(lhs - rhs) <= scale * (1.0 + abs(lhs)), (
        f"<dout, J v> = {lhs!r}, <J^T dout, v> = {rhs!r}"
    )


# --------------------------------------------------------------------------
# The rule table of test_rules.py: every rule with a forward twin, against finite
# differences


def _rule_cases():
    return [p for p in _cases(ROWS) if not p.marks]


@pytest.mark.parametrize("r,wrt", _rule_cases())
def test_rule_jvp(r, wrt):
    rng = np.random.default_rng(zlib.crc32(("jvp " + r.id).encode()))
    args = _all_arguments(r.func, r.make(rng, np.float64))
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    tangents = tuple(_random_like(rng, args[i]) for i in indices)
    tangent = tangents if isinstance(wrt, tuple) else tangents[0]
    try:
        g = jvp(r.func, wrt=wrt)
        out, tangent_out = call_twice(g, *args, copy.deepcopy(tangent))
    except TranspileError as exc:
        if "no forward-mode rule" in str(exc):
            pytest.skip(f"refused: {exc.what.split(' (rule')[0]}")
        raise
    expected = fd.numeric_jvp(r.func, args, indices, tangents)
    fd.assert_close(np.asarray(tangent_out, np.float64), expected, rtol=r.rtol, atol=r.atol)


# --------------------------------------------------------------------------
# Generated code, refusals, jacobian


def test_stop_gradient_gets_no_tangent_code():
    x, v = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0])
    g = jvp(F.scaled_by_constant)
    out, tangent = call_twice(g, x, v)
    c = np.exp(x) * 2.0
    assert np.isclose(tangent, np.sum(np.cos(x) * c * v))  # c held constant
    text = source(g)
    assert text.count("np.exp") == 1  # the value, and no tangent of it
    assert "c_dot" not in text and "# tangent of: c = " not in text
    assert "# tangent of: return np.sum(np.sin(x) * c)" in text and "x_dot" in text


def test_loop_with_branches_matches_finite_differences():
    x, v = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0])
    for n in (0, 1, 4):
        out, tangent = call_twice(jvp(F.running_sum), x, n, v)
        expected = fd.numeric_jvp(F.running_sum, (x, n), (0,), (v,))
        assert np.isclose(out, F.running_sum(x, n)) and np.isclose(tangent, expected)


def test_rule_without_forward_twin_is_refused_by_name():
    # every built-in rule has forward lines; a defvjp rule is reverse mode only
    import user_rule_funcs as u

    from transpile import defvjp

    defvjp(u.erf, u.erf_adjoint)
    with pytest.raises(TranspileError, match=r"rule given for erf\(\) by defvjp is for reverse"):
        jvp(u.erf_loss)


def test_softmax_has_a_forward_rule():
    x, v = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0])
    _, tangent = call_twice(jvp(F.uses_softmax), x, v)
    fd.assert_close(tangent, fd.numeric_jvp(F.uses_softmax, (x,), (0,), (v,)))


def test_array_writes():
    x, v = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0])
    out, tangent = call_twice(jvp(F.written), x, v)
    fd.assert_close(tangent, fd.numeric_jvp(F.written, (x,), (0,), (v,)))


@pytest.mark.parametrize("mode", [None, "forward", "reverse"])
def test_jacobian(mode):
    x, y = np.array([0.3, -1.2, 0.7]), np.array([0.5, 2.0])
    jac = jacobian(F.grid, wrt=(0, 1), mode=mode)(x, y)
    for j, arg in enumerate((x, y)):
        assert jac[j].shape == (3, 2) + arg.shape
        for k in range(arg.size):
            v = np.zeros(arg.size)
            v[k] = 1.0
            col = fd.numeric_jvp(F.grid, (x, y), (j,), (v.reshape(arg.shape),))
            fd.assert_close(jac[j][..., k], col, rtol=1e-6, atol=1e-8)
    single = jacobian(F.grid, mode=mode)(x, y)
    fd.assert_close(single, jac[0])


def test_jacobian_modes_agree_and_scalar_output_is_the_gradient():
    x, y = np.array([0.3, -1.2, 0.7]), np.array([0.5, 2.0])
    forward = jacobian(F.grid, mode="forward")(x, y)
    reverse = jacobian(F.grid, mode="reverse")(x, y)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-12)
    jac = jacobian(F.scaled_by_constant)(x)
    assert jac.shape == (3,)
    with pytest.raises(ValueError, match="mode"):
        jacobian(F.grid, mode="sideways")


def test_tangent_code_leaves_numpy_defaults_unwritten():
    w, x = np.linspace(0.1, 0.3, 3), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    v = np.array([1.0, -2.0, 0.5])
    g = jvp(F.reduced)
    value, tangent = g(w, x, v)
    expected = fd.numeric_jvp(F.reduced, (w, x), (0,), [v])
    np.testing.assert_allclose(tangent, expected, rtol=1e-7)
    text = source(g)
    assert "axis=None" not in text and "keepdims=False" not in text, text
    assert "axis=1" in text


FORWARD_CALLS = [
    F.mutual_recursion,
    F.recursion_swapping_arguments,
    F.varargs_helper,
    F.kwargs_helper,
    F.keyword_skipping_a_default,
    F.method_calling_a_method,
    F.object_made_inside,
]


@pytest.mark.parametrize("f", FORWARD_CALLS, ids=lambda f: f.__name__)
def test_jvp_through_recursion_varargs_and_methods(f):
    # (issue 19) forward mode refused recursion, *args/**kwargs helpers and self.apply()
    x = np.array([0.6, -0.4, 0.9])
    forward = jvp(f)
    for call, v in (("first call", np.array([0.3, 0.8, -0.5])), ("later call", x[::-1].copy())):
        value, tangent = forward(x.copy(), v)
        fd.assert_close(value, f(x.copy()), rtol=1e-12, atol=1e-14, path=call)
        fd.assert_close(tangent, fd.numeric_jvp(f, (x,), (0,), (v,)), rtol=1e-6, path=call)
    assert np.array_equal(x, [0.6, -0.4, 0.9])


@pytest.mark.parametrize("f", FORWARD_CALLS[:4] + FORWARD_CALLS[5:], ids=lambda f: f.__name__)
def test_hvp_through_recursion_varargs_and_methods(f):
    # forward over reverse: the gradient's recursive pair and its *args callee, in tangent
    # mode; against central differences of the gradient
    x, v = np.array([0.6, -0.4, 0.9]), np.array([0.3, 0.8, -0.5])
    first = grad(f)
    expected = fd.numeric_jvp(lambda a: first(a), (x,), (0,), (v,))
    for _ in range(2):
        fd.assert_close(hvp(f)(x.copy(), v), expected, rtol=1e-5, atol=1e-7)
        fd.assert_close(hvp(f, has_grad=True)(x.copy(), v)[1], expected, rtol=1e-5, atol=1e-7)
        fd.assert_close(hessian(f)(x.copy()) @ v, expected, rtol=1e-5, atol=1e-7)
