"""Functions that call ``scipy.integrate.odeint``, for ``tests/test_odeint.py`` (kept out
of the test module, whose asserts pytest rewrites)."""

import numpy as np
from scipy.integrate import odeint

TOL = 1e-11  # odeint's rtol and atol, forward and backward
TIMES = np.linspace(0.0, 1.5, 7)


def decay(y, t, k):
    return -k * y


def decay_loss(y0, k):
    ys = odeint(decay, y0, TIMES, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(ys**2)


def decay_closed_form(y0, k):
    """The gradient of ``decay_loss``: ``ys[i] = y0 exp(-k t_i)``."""
    e = np.exp(-2.0 * k * TIMES)
    return 2.0 * y0 * np.sum(e), -2.0 * np.sum(y0**2) * np.sum(TIMES * e)


def oscillator(state, t, theta):
    """A damped, driven oscillator: theta = (stiffness, damping, drive)."""
    x, v = state[0], state[1]
    return [v, -theta[0] * x - theta[1] * v + theta[2] * np.sin(2.0 * t)]


def oscillator_loss(y0, theta):
    ys = odeint(oscillator, y0, TIMES, args=(theta,), rtol=TOL, atol=TOL)
    return np.sum(ys[:, 0] ** 3) + np.sum(ys[-1] ** 2)


def oscillator_tfirst(t, state, theta):
    return oscillator(state, t, theta)


def oscillator_tfirst_loss(y0, theta):
    ys = odeint(oscillator_tfirst, y0, TIMES, args=(theta,), rtol=TOL, atol=TOL, tfirst=True)
    return np.sum(ys[:, 0] ** 3) + np.sum(ys[-1] ** 2)


def neural(y, t, W, b):
    return np.tanh(W @ y + b)


def neural_loss(y0, W, b, target):
    ys = odeint(neural, y0, TIMES, args=(W, b), rtol=TOL, atol=TOL)
    return np.mean((ys[-1] - target) ** 2) + 0.1 * np.mean(ys**2)


def scaled_times_loss(y0, k, horizon):
    """The times depend on a differentiated value."""
    ys = odeint(decay, y0, horizon * TIMES + 0.2 * horizon, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(np.sin(ys))


def passed_loss(y0, k, dynamics):
    """The right-hand side is an argument."""
    ys = odeint(dynamics, y0, TIMES, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(ys**2)


def scalar_loss(y0, k):
    ys = odeint(decay, y0, TIMES, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(ys)


def full_output_loss(y0, k):
    ys, info = odeint(decay, y0, TIMES, args=(k,), full_output=True)
    return np.sum(ys)


def decay_written_again(y, t, k):
    """``decay`` as another function object (the gradient follows the one passed)."""
    return -(y * k)


def trajectory(y0, k):
    return odeint(decay, y0, TIMES, args=(k,), rtol=TOL, atol=TOL)


def lambda_loss(y0, k):
    ys = odeint(lambda y, t: -k * y, y0, TIMES, rtol=TOL, atol=TOL)
    return np.sum(ys**2)
