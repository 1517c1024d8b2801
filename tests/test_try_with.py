"""try/except/else/finally, with blocks, generators, zip(*rows), helpers updating
their caller's arrays, tuple outputs and docstrings (issue 21, items 4 and 6-10):
realistic programs against central finite differences in float64, on a first and
a later call; what cannot be done exactly is refused by name."""

import linecache

import fd
import numpy as np
import pytest
import try_with_programs as P
from variants import assert_grad_matches_fd

from transpile import TranspileError, grad, hvp, jvp, source, vjp


def _rng(seed):
    return np.random.default_rng(seed)


def _jvp_matches_fd(f, args, v, wrt=0):
    for _ in range(2):
        value, tangent = jvp(f, wrt=wrt)(*args, v)
        np.testing.assert_allclose(value, f(*args), rtol=1e-12)
        expected = fd.numeric_jvp(f, list(args), (wrt,), (v,))
        np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# try/except around a factorization


@pytest.mark.parametrize("shift", [0.0, 5.0], ids=["factorized", "jittered"])
def test_kalman_likelihood_with_a_cholesky_retried_on_linalgerror(shift):
    q, ys = np.array([0.3, 0.06]), _rng(0).normal(size=(6, 2))
    if shift:  # the except clause runs at every even step
        with pytest.raises(np.linalg.LinAlgError):
            np.linalg.cholesky(P.first_innovation(q, shift))
    assert_grad_matches_fd(P.kalman_loglik, (q, ys, shift), 0)
    _jvp_matches_fd(P.kalman_loglik, (q, ys, shift), np.array([1.0, -0.5]))


def test_the_try_block_is_printed_back_and_its_pushes_popped_where_it_raised():
    text = source(grad(P.kalman_loglik))
    assert "try:\n" in text and "except np.linalg.LinAlgError:" in text
    block = text[text.index("try:") : text.index("else:")]
    assert "tape.pop()" in block  # the except clause gives back what the block pushed


@pytest.mark.parametrize("jitter", [-0.1, 0.2], ids=["factorized", "jittered"])
def test_gp_evidence_with_except_as_else_and_finally(jitter):
    X = np.linspace(-1.0, 1.0, 5)
    theta, y = np.array([1.0, 0.3, jitter]), np.sin(3 * X)
    assert_grad_matches_fd(P.gp_evidence, (theta, X, y), 0)
    _jvp_matches_fd(P.gp_evidence, (theta, X, y), np.array([0.5, 1.0, -1.0]))
    v = np.array([1.0, -0.5, 0.25])
    g = grad(P.gp_evidence)
    step = 1e-5
    expected = (g(theta + step * v, X, y) - g(theta - step * v, X, y)) / (2 * step)
    np.testing.assert_allclose(hvp(P.gp_evidence)(theta, X, y, v), expected, rtol=1e-5)


def test_two_except_clauses_under_errstate_raise_in_a_loop():
    x = np.array([0.5, -1.2, 2.0, -0.3])  # both signs: both paths
    assert_grad_matches_fd(P.signed_roots, (x,), 0)
    _jvp_matches_fd(P.signed_roots, (x,), np.array([1.0, 0.5, -1.0, 2.0]))
    assert "ops.except_clause(" in source(grad(P.signed_roots))


# --------------------------------------------------------------------------
# with blocks


def test_poisson_glm_under_errstate_a_lock_and_a_timer():
    rng = _rng(1)
    X, w = rng.normal(size=(8, 3)), 0.3 * rng.normal(size=3)
    y = rng.poisson(1.0, size=8).astype(float)
    assert_grad_matches_fd(P.poisson_glm_loss, (w, X, y), 0)
    _jvp_matches_fd(P.poisson_glm_loss, (w, X, y), np.array([1.0, 0.0, -1.0]))
    text = source(grad(P.poisson_glm_loss))
    assert "with np.errstate(over='ignore', divide='ignore'):" in text
    assert not P._LOCK.locked()  # released by the gradient's with block


# --------------------------------------------------------------------------
# generators, zip(*rows)


@pytest.mark.parametrize("f", [P.residual_flow, P.residual_flow_listed])
def test_an_integrator_consuming_a_generator_of_layers(f):
    params, h0 = 0.4 * _rng(2).normal(size=24), np.array([1.0, -0.5, 0.25])
    assert_grad_matches_fd(f, (params, h0, 0.1), 0)
    assert_grad_matches_fd(f, (params, h0, 0.1), 1)
    _jvp_matches_fd(f, (params, h0, 0.1), np.linspace(-1.0, 1.0, 24))


def test_zip_of_rows_bound_to_one_name_then_iterated_and_indexed():
    points = [_rng(3).normal(size=5), _rng(4).normal(size=5)]
    assert_grad_matches_fd(P.polygon_area, (points,), 0)


# --------------------------------------------------------------------------
# a helper updating its caller's arrays in place


def test_a_helper_updating_in_place_the_arrays_its_caller_made():
    u = np.array([0.3, -0.7, 1.1])
    assert_grad_matches_fd(P.advect, (u, 3), 0)
    _jvp_matches_fd(P.advect, (u, 3), np.array([1.0, 2.0, -1.0]))


def test_a_helper_updating_an_array_read_again_or_the_users_is_still_refused():
    u = np.array([0.3, -0.7, 1.1])
    with pytest.raises(TranspileError, match="and `vx` shares that array and is read"):
        grad(P.advect_reads_stale)(u)
    with pytest.raises(TranspileError, match="the array the caller passed as parameter `vx`"):
        grad(P.advect_users_array)(u, u)


# --------------------------------------------------------------------------
# tuple outputs, docstrings


def test_vjp_of_a_tuple_output_with_a_tuple_dout():
    rng = _rng(5)
    q, p, m = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), np.array([1.0, 2.0, 0.5])
    dout = (1.0, 0.5, 2.0)
    g = vjp(P.hamiltonian_parts, wrt=(0, 1))

    def weighted(q, p, m):
        KE, PE, H = P.hamiltonian_parts(q, p, m)
        return dout[0] * KE + dout[1] * PE + dout[2] * H

    expected = fd.numeric_grad(weighted, [q, p, m], (0, 1))
    for _ in range(2):
        fd.assert_close(g(q, p, m, dout), tuple(expected), rtol=1e-6, atol=1e-9)


def test_nested_functions_with_multi_line_docstrings():
    x = np.linspace(-1.0, 1.0, 4)
    assert_grad_matches_fd(P.smoothed, (x, 0.7), 0)
    penalty = P.make_penalty(0.5)
    for _ in range(2):
        np.testing.assert_allclose(grad(penalty)(x), x, rtol=1e-12)


# --------------------------------------------------------------------------
# refused by name


def returns_in_finally(x):
    try:
        y = np.sin(x)
    finally:
        return np.sum(y)  # noqa: B012  # refused


def loop_in_try(x):
    try:
        for _ in range(2):  # refused
            x = np.sin(x)
    except ValueError:
        pass
    return np.sum(x)


def reads_a_half_assigned_name(x):
    try:
        y = np.sin(x)  # refused
        z = np.linalg.inv(np.outer(y, y))
    except np.linalg.LinAlgError:
        z = np.eye(2)
    return np.sum(y) + np.sum(z)


def returns_inside_with(x):
    with np.errstate(all="ignore"):
        if np.sum(x) > 0.0:
            return np.sum(np.log(x))  # refused
        y = x * 2.0
    return np.sum(y)


def delegating(v):
    yield from P.layers(v, (1, 1))  # refused


def consumes_delegating(v):
    return sum(np.sum(W) for W, _ in delegating(v))


def a_generator(v):
    yield np.sum(v)  # refused


@pytest.mark.parametrize(
    "f, what",
    [
        (returns_in_finally, "`return` in a try statement that has a `finally:` clause"),
        (loop_in_try, "a for statement inside a try block"),
        (reads_a_half_assigned_name, "`y` is assigned in the try block before a later line"),
        (returns_inside_with, "`return` inside a `with` block"),
        (consumes_delegating, "yield from in a generator"),
        (a_generator, "yield is not supported in the function differentiated"),
    ],
    ids=lambda v: getattr(v, "__name__", "")[:30],
)
def test_what_cannot_be_done_exactly_is_refused_at_its_line(f, what):
    x = np.array([0.5, 1.5])
    for entry in (lambda: grad(f)(x), lambda: jvp(f)(x, np.ones(2))):
        with pytest.raises(TranspileError) as info:
            entry()
        assert what in info.value.what, info.value.what
        assert "# refused" in linecache.getline(info.value.filename, info.value.lineno)
