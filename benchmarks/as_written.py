"""Benchmark problems written as users write them, next to today's rows.

The rows of ``problems.py`` are written one way; the same models are often written
another: ``np.dot`` instead of ``@``, a loss summed as the loop runs or kept in a list of
per-step losses, a state made inside the function or passed in, the step as a helper
function, a constant ``m = 1.0``, a multiplication by ``1.0`` and a division by a Python
float, an elementwise chain written as it comes. Each function has its hand-written
gradient beside it, as in ``problems.py``; everything is float64.
"""

import numpy as np
from problems import Problem

# --- 1. an elementwise chain written as it comes --------------------------------


def chain_written(x):
    """Sum of a chain of 17 elementwise ufuncs, with ``* 1.0`` and ``/ 2.0`` in it."""
    a = np.sin(x) * np.cos(x)
    b = np.exp(-(x * x) / 2.0)
    c = np.tanh(a + b)
    d = np.sqrt(1.0 + c * c)
    e = np.log1p(d) - x
    g = np.arctan(e) * 1.0
    return np.sum(g * d)


def chain_written_grad(x):
    """Hand-written gradient of ``chain_written``: the forward values it needs (the sine
    and cosine kept), then the chain rule backwards."""
    sx, cx = np.sin(x), np.cos(x)
    b = np.exp(-(x * x) / 2.0)
    c = np.tanh(sx * cx + b)
    d = np.sqrt(1.0 + c * c)
    e = np.log1p(d) - x
    de = d / (1.0 + e * e)
    dd = np.arctan(e) + de / (1.0 + d)
    ds = dd * c / d * (1.0 - c * c)
    return (ds * (cx * cx - sx * sx) - ds * b * x - de,)


# --- 2. tanh RNNs with a loss at every step -------------------------------------


def rnn_dot(Wx, Wh, b, xs, ys):
    """A tanh RNN written with ``np.dot``, its state made inside, and a running loss
    ``loss = loss + np.sum(d * d)`` against a target at every step."""
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], Wx) + np.dot(h, Wh) + b)
        d = h - ys[t]
        loss = loss + np.sum(d * d)
    return loss


def rnn_dot_grad(Wx, Wh, b, xs, ys):
    """Hand-written backprop through time for ``rnn_dot`` w.r.t. ``(Wx, Wh, b)``."""
    hs = [np.zeros((xs.shape[1], Wh.shape[0]))]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(np.dot(xs[t], Wx) + np.dot(hs[-1], Wh) + b))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = np.zeros_like(hs[0])
    for t in reversed(range(xs.shape[0])):
        h = hs[t + 1]
        dh = dh + 2.0 * (h - ys[t])
        dz = dh * (1.0 - h * h)
        dWx += np.dot(xs[t].T, dz)
        dWh += np.dot(hs[t].T, dz)
        db += np.sum(dz, axis=0)
        dh = np.dot(dz, Wh.T)
    return dWx, dWh, db


def rnn_list(Wx, Wh, b, xs, ys, h0):
    """A tanh RNN written with ``@``, its state passed in, and a list of per-step mean
    squared errors averaged at the end."""
    h = h0
    losses = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        losses.append(np.mean((h - ys[t]) ** 2))
    return sum(losses) / len(losses)


def _step(h, x, Wx, Wh, b):
    return np.tanh(x @ Wx + h @ Wh + b)


def rnn_step(Wx, Wh, b, xs, ys, h0):
    """``rnn_list`` with the step as a helper function and a running loss."""
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = _step(h, xs[t], Wx, Wh, b)
        loss = loss + np.mean((h - ys[t]) ** 2)
    return loss / xs.shape[0]


def rnn_mean_grad(Wx, Wh, b, xs, ys, h0):
    """Hand-written backprop through time for ``rnn_list`` and ``rnn_step`` (the mean over
    steps of each step's mean squared error) w.r.t. ``(Wx, Wh, b)``."""
    steps = xs.shape[0]
    hs = [h0]
    for t in range(steps):
        hs.append(np.tanh(xs[t] @ Wx + hs[-1] @ Wh + b))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = np.zeros_like(h0)
    scale = 2.0 / (steps * h0.size)
    for t in reversed(range(steps)):
        h = hs[t + 1]
        dh = dh + scale * (h - ys[t])
        dz = dh * (1.0 - h * h)
        dWx += xs[t].T @ dz
        dWh += hs[t].T @ dz
        db += np.sum(dz, axis=0)
        dh = dz @ Wh.T
    return dWx, dWh, db


def rnn_inputs(rng, steps, batch, d, hidden, h0=False):
    """Weights that keep the recurrence stable, inputs, targets (and a zero state)."""
    Wx = rng.normal(scale=1.0 / np.sqrt(d), size=(d, hidden))
    Wh = rng.normal(scale=0.5 / np.sqrt(hidden), size=(hidden, hidden))
    b = rng.normal(scale=0.1, size=hidden)
    xs = rng.normal(size=(steps, batch, d))
    ys = rng.normal(scale=0.5, size=(steps, batch, hidden))
    return (Wx, Wh, b, xs, ys) + ((np.zeros((batch, hidden)),) if h0 else ())


# --- 3. Python floats: two steps of a damped oscillator --------------------------


def oscillator(x, v, k, c):
    """Energy after two semi-implicit Euler steps of a damped oscillator, in 25
    operations on Python floats (the mass ``m = 1.0`` divides the force)."""
    m = 1.0
    dt = 0.05
    a = -(k * x + c * v) / m
    v1 = v + dt * a
    x1 = x + dt * v1
    a1 = -(k * x1 + c * v1) / m
    v2 = v1 + dt * a1
    x2 = x1 + dt * v2
    return 0.5 * m * v2 * v2 + 0.5 * k * x2 * x2


def oscillator_grad(x, v, k, c):
    """Hand-written reverse sweep for ``oscillator`` w.r.t. ``(x, v, k, c)``."""
    m = 1.0
    dt = 0.05
    a = -(k * x + c * v) / m
    v1 = v + dt * a
    x1 = x + dt * v1
    a1 = -(k * x1 + c * v1) / m
    v2 = v1 + dt * a1
    x2 = x1 + dt * v2
    dv2 = m * v2
    dx2 = k * x2
    dk = 0.5 * x2 * x2
    dx1 = dx2
    dv2 = dv2 + dt * dx2
    da1 = dt * dv2
    dk -= da1 * x1 / m
    dc = -da1 * v1 / m
    dx1 -= da1 * k / m
    dv1 = dv2 - da1 * c / m + dt * dx1
    da = dt * dv1
    dk -= da * x / m
    dc -= da * v / m
    return dx1 - da * k / m, dv1 - da * c / m, dk, dc


# --- 4. a 2-layer MLP written with np.dot and a mean squared error -------------------


def mlp_dot(W1, b1, W2, b2, x, y):
    """Mean squared error of a tanh MLP written with ``np.dot``."""
    h = np.tanh(np.dot(x, W1) + b1)
    out = np.dot(h, W2) + b2
    return np.mean((out - y) ** 2)


def mlp_dot_grad(W1, b1, W2, b2, x, y):
    """Hand-written backprop for ``mlp_dot`` w.r.t. all four parameters."""
    h = np.tanh(np.dot(x, W1) + b1)
    out = np.dot(h, W2) + b2
    dout = (2.0 / out.size) * (out - y)
    dz = np.dot(dout, W2.T) * (1.0 - h * h)
    return np.dot(x.T, dz), np.sum(dz, axis=0), np.dot(h.T, dout), np.sum(dout, axis=0)


def mlp_inputs(rng, n, d, hidden, outputs):
    """Glorot-scaled weights, small biases, inputs and real targets."""
    W1 = rng.normal(scale=1.0 / np.sqrt(d), size=(d, hidden))
    b1 = rng.normal(scale=0.1, size=hidden)
    W2 = rng.normal(scale=1.0 / np.sqrt(hidden), size=(hidden, outputs))
    b2 = rng.normal(scale=0.1, size=outputs)
    return (W1, b1, W2, b2, rng.normal(size=(n, d)), rng.normal(size=(n, outputs)))


def _oscillator_inputs(rng):
    return tuple(float(v) for v in rng.uniform(0.2, 1.5, 4))


PROBLEMS = [
    Problem(
        "chain_written",
        "1e6",
        chain_written,
        chain_written_grad,
        ("x",),
        lambda r: (r.uniform(-1.0, 1.0, 1_000_000),),
        lambda r: (r.uniform(-1.0, 1.0, 5),),
        1.1,
    ),
    Problem(
        "rnn_dot",
        "T50 h32 b16",
        rnn_dot,
        rnn_dot_grad,
        ("Wx", "Wh", "b"),
        lambda r: rnn_inputs(r, 50, 16, 16, 32),
        lambda r: rnn_inputs(r, 4, 2, 2, 3),
        1.1,
    ),
    Problem(
        "rnn_list",
        "T50 h32 b16",
        rnn_list,
        rnn_mean_grad,
        ("Wx", "Wh", "b"),
        lambda r: rnn_inputs(r, 50, 16, 16, 32, h0=True),
        lambda r: rnn_inputs(r, 4, 2, 2, 3, h0=True),
        1.1,
    ),
    Problem(
        "rnn_step",
        "T50 h32 b16",
        rnn_step,
        rnn_mean_grad,
        ("Wx", "Wh", "b"),
        lambda r: rnn_inputs(r, 50, 16, 16, 32, h0=True),
        lambda r: rnn_inputs(r, 4, 2, 2, 3, h0=True),
        1.1,
    ),
    Problem(
        "oscillator",
        "25 float ops",
        oscillator,
        oscillator_grad,
        ("x", "v", "k", "c"),
        _oscillator_inputs,
        _oscillator_inputs,
        1.3,
    ),
    Problem(
        "mlp_dot",
        "small",
        mlp_dot,
        mlp_dot_grad,
        ("W1", "b1", "W2", "b2"),
        lambda r: mlp_inputs(r, 32, 20, 64, 10),
        lambda r: mlp_inputs(r, 4, 3, 5, 3),
        1.1,
    ),
]
