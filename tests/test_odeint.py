"""``scipy.integrate.odeint`` differentiated by the adjoint method
(``transpile/rules/scipy_integrate.py``, ``scipy_ops.odeint_adjoint``).

Each gradient is compared, on a first and a later call, with central finite
differences of the whole function (odeint run with rtol = atol = 1e-11, so the
differences are good to about 1e-6), and where there is one with the closed form.
The functions are in ``tests/odeint_funcs.py``.
"""

import fd
import numpy as np
import pytest

pytest.importorskip("scipy")

import odeint_funcs as F

from transpile import TranspileError, grad, source, vjp
from transpile_runtime import scipy_ops

FD_RTOL, FD_ATOL = 2e-5, 1e-7


def check(f, args, wrt, expected=None):
    numeric = fd.numeric_grad(f, args, wrt)
    g = grad(f, wrt=wrt)
    for _ in range(2):  # the first call and a later one
        got = g(*args)
        fd.assert_close(got, numeric, rtol=FD_RTOL, atol=FD_ATOL)
        if expected is not None:
            fd.assert_close(got, expected, rtol=1e-8, atol=1e-10)
    return got


def test_exponential_decay_against_closed_form():
    y0, k = np.array([1.0, -0.5, 2.0]), 0.8
    check(F.decay_loss, (y0, k), (0, 1), F.decay_closed_form(y0, k))


def test_exponential_decay_of_a_number():
    """A float ``y0`` (odeint makes it a vector of one) gets a float gradient."""
    got = check(F.scalar_loss, (0.7, 0.8), (0, 1))
    e = np.exp(-0.8 * F.TIMES)
    fd.assert_close(got, (np.sum(e), -0.7 * np.sum(F.TIMES * e)), rtol=1e-8)
    assert isinstance(got[0], float)


def test_damped_oscillator_with_parameters():
    """The right-hand side returns a list; the parameters are one array argument."""
    y0, theta = np.array([1.0, -0.3]), np.array([2.0, 0.3, 0.5])
    check(F.oscillator_loss, (y0, theta), (0, 1))
    check(F.oscillator_loss, (y0, theta), (1,))


def test_tfirst_gives_the_same_gradient():
    y0, theta = np.array([1.0, -0.3]), np.array([2.0, 0.3, 0.5])
    expected = grad(F.oscillator_loss, wrt=(0, 1))(y0, theta)
    got = check(F.oscillator_tfirst_loss, (y0, theta), (0, 1))
    fd.assert_close(got, expected, rtol=1e-8, atol=1e-10)


def test_neural_ode():
    r = np.random.default_rng(3)
    y0, W, b, target = r.normal(size=3), r.normal(size=(3, 3)), r.normal(size=3), r.normal(size=3)
    check(F.neural_loss, (y0, W, b, target), (0, 1, 2))
    check(F.neural_loss, (y0, W, b, target), (1,))


def test_times_that_depend_on_a_parameter():
    """The adjoint of ``t``: each output time, and the start."""
    check(F.scaled_times_loss, (np.array([0.5, -1.0]), 0.8, 1.3), (0, 1, 2))


def test_the_right_hand_side_passed_in():
    y0, k = np.array([1.0, -0.5]), 0.8
    numeric = fd.numeric_grad(lambda y0, k: F.passed_loss(y0, k, F.decay), (y0, k), (0, 1))
    g = grad(F.passed_loss, wrt=(0, 1))
    for dynamics in (F.decay, F.decay, F.decay_written_again):
        fd.assert_close(g(y0, k, dynamics), numeric, rtol=FD_RTOL, atol=FD_ATOL)


def test_vjp_of_the_trajectory():
    """``vjp`` of the whole trajectory: ``<dout, J v>`` from finite differences."""
    y0, k = np.array([1.0, -0.5]), 0.8
    dout = np.random.default_rng(1).normal(size=(len(F.TIMES), 2))
    v = (np.array([0.3, -0.7]), 0.4)
    lhs = fd.inner(dout, fd.numeric_jvp(F.trajectory, (y0, k), (0, 1), v))
    h = vjp(F.trajectory, wrt=(0, 1))
    for _ in range(2):
        rhs = fd.inner(list(h(y0, k, dout)), list(v))
        assert abs(lhs - rhs) <= 1e-6 * (1.0 + abs(lhs))


def test_one_backward_integration_serves_every_argument(monkeypatch):
    calls = []
    real = scipy_ops.odeint_adjoint

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy_ops, "odeint_adjoint", counted)
    g = grad(F.scaled_times_loss, wrt=(0, 1, 2))
    for n in (1, 2):
        g(np.array([0.5, -1.0]), 0.8, 1.3)
        assert len(calls) == n


def test_generated_code_calls_the_adjoint_helpers_with_vjp():
    text = source(grad(F.decay_loss, wrt=(0, 1)))
    assert "scipy_ops.odeint_adjoint_y0(dys, ys, decay, y0, TIMES, _t1, vjp," in text
    assert "scipy_ops.odeint_adjoint_args(" in text
    assert "odeint_adjoint_t(" not in text  # the times are constants here
    assert "odeint_adjoint_args(" not in source(grad(F.decay_loss, wrt=0))


def test_refusals():
    with pytest.raises(TranspileError, match="lambda"):
        grad(F.lambda_loss, wrt=1)  # a silent zero otherwise: k is read by the lambda
    with pytest.raises(TranspileError, match="full_output"):
        grad(F.full_output_loss)
    # a lambda reading no differentiated value is fine
    fd.assert_close(
        grad(F.lambda_loss)(np.array([1.0, 2.0]), 0.8),
        fd.numeric_grad(F.lambda_loss, (np.array([1.0, 2.0]), 0.8), (0,))[0],
        rtol=FD_RTOL,
    )
