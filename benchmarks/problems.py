"""Benchmark problems: a function, its hand-written gradient, and inputs.

Each function here is plain numpy code of the kind a user would hand to
``transpile.grad``; next to it is the gradient a competent person would write
by hand in numpy. Both take the same arguments; the gradient returns a tuple,
one entry per name in the problem's ``wrt``. Everything is float64.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from transpile import stop_gradient

# --- 1. logistic regression -------------------------------------------------


def logreg_loss(w, b, x, y):
    """Mean binary cross-entropy of a logistic model."""
    z = x @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logreg_grad(w, b, x, y):
    """Hand-written gradient of ``logreg_loss`` w.r.t. ``(w, b)``."""
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    r = (p - y) / x.shape[0]
    return x.T @ r, np.sum(r)


def logreg_inputs(rng, n, d):
    """Weights, a float bias, features and 0/1 labels."""
    w = rng.normal(scale=1.0 / np.sqrt(d), size=d)
    x = rng.normal(size=(n, d))
    y = (rng.random(n) < 0.5).astype(np.float64)
    return (w, 0.1, x, y)


# --- 2. two-layer MLP with softmax cross-entropy ------------------------------


def mlp_loss(W1, b1, W2, b2, x, y):
    """Mean softmax cross-entropy of a tanh MLP; ``y`` is one-hot."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    m = stop_gradient(np.max(logits, axis=1, keepdims=True))
    s = logits - m
    logp = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def mlp_grad(W1, b1, W2, b2, x, y):
    """Hand-written backprop for ``mlp_loss`` w.r.t. all four parameters."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    e = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    dlogits = (e / np.sum(e, axis=1, keepdims=True) - y) / x.shape[0]
    dz = (dlogits @ W2.T) * (1.0 - h * h)
    return x.T @ dz, np.sum(dz, axis=0), h.T @ dlogits, np.sum(dlogits, axis=0)


def mlp_shift_loss(W1, b1, W2, b2, x, y):
    """``mlp_loss`` with the max shift written as most people write it: no
    ``stop_gradient`` on ``m`` (log-softmax does not depend on it)."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def mlp_inputs(rng, n, d, hidden, classes):
    """Glorot-scaled weights, small biases, inputs and one-hot labels."""
    W1 = rng.normal(scale=1.0 / np.sqrt(d), size=(d, hidden))
    b1 = rng.normal(scale=0.1, size=hidden)
    W2 = rng.normal(scale=1.0 / np.sqrt(hidden), size=(hidden, classes))
    b2 = rng.normal(scale=0.1, size=classes)
    x = rng.normal(size=(n, d))
    y = np.eye(classes)[rng.integers(0, classes, size=n)]
    return (W1, b1, W2, b2, x, y)


# --- 3. recurrent network -----------------------------------------------------


def rnn_loss(Wx, Wh, b, x, h0):
    """Sum of squares of the last state of a tanh RNN run over ``x[t]``."""
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
    return np.sum(h**2)


def rnn_grad(Wx, Wh, b, x, h0):
    """Hand-written backprop through time for ``rnn_loss`` w.r.t. ``(Wx, Wh, b)``."""
    hs = [h0]
    for t in range(x.shape[0]):
        hs.append(np.tanh(x[t] @ Wx + hs[-1] @ Wh + b))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = 2.0 * hs[-1]
    for t in reversed(range(x.shape[0])):
        dz = dh * (1.0 - hs[t + 1] * hs[t + 1])
        dWx += x[t].T @ dz
        dWh += hs[t].T @ dz
        db += np.sum(dz, axis=0)
        dh = dz @ Wh.T
    return dWx, dWh, db


def rnn_inputs(rng, steps, batch, d, hidden):
    """Weights scaled to keep the recurrence stable, inputs and a zero state."""
    Wx = rng.normal(scale=1.0 / np.sqrt(d), size=(d, hidden))
    Wh = rng.normal(scale=0.5 / np.sqrt(hidden), size=(hidden, hidden))
    b = rng.normal(scale=0.1, size=hidden)
    x = rng.normal(size=(steps, batch, d))
    return (Wx, Wh, b, x, np.zeros((batch, hidden)))


# --- 4. scalar loop -----------------------------------------------------------


def scalar_loop(x, a):
    """Run a thousand steps of a scalar recurrence on Python floats."""
    for _ in range(1000):
        x = x * a + np.sin(x) * 0.1
    return x


def scalar_loop_grad(x, a):
    """Hand-written reverse sweep for ``scalar_loop`` w.r.t. ``(x, a)``."""
    xs = []
    for _ in range(1000):
        xs.append(x)
        x = x * a + np.sin(x) * 0.1
    dx, da = 1.0, 0.0
    for xi in reversed(xs):
        da += dx * xi
        dx *= a + np.cos(xi) * 0.1
    return dx, da


def scalar_loop_inputs(rng):
    """Draw a starting point and a contracting multiplier, as Python floats."""
    return (float(rng.uniform(0.5, 1.5)), float(rng.uniform(0.8, 0.9)))


# --- 5. reaction-diffusion (heat equation) simulation: a loop-heavy memory row ---


def heat_loss(u, k, steps):
    """Mean square of a field after ``steps`` explicit steps of a periodic heat equation
    with a cubic reaction term (``u_t = k * laplacian(u) - 0.1 * u**3``)."""
    for _ in range(steps):
        lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4.0 * u
        u = u + k * lap - 0.1 * u**3
    return np.mean(u**2)


def _laplacian(u):
    return np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4.0 * u


def heat_grad(u, k, steps):
    """Hand-written reverse sweep for ``heat_loss`` w.r.t. ``(u, k)``: the states and
    their Laplacians are kept (the adjoint of ``k * lap`` reads ``lap``); the periodic
    Laplacian is its own adjoint."""
    states, laps = [], []
    for _ in range(steps):
        lap = _laplacian(u)
        states.append(u)
        laps.append(lap)
        u = u + k * lap - 0.1 * u**3
    du = (2.0 / u.size) * u
    dk = 0.0
    for u, lap in zip(reversed(states), reversed(laps)):
        dk += np.sum(du * lap)
        du = du + k * _laplacian(du) - 0.3 * u**2 * du
    return du, dk


def heat_inputs(rng, n, steps):
    """A smooth random field on an ``n`` x ``n`` periodic grid, a stable diffusion
    coefficient and the step count."""
    u = rng.normal(size=(n, n))
    u = 0.25 * (u + np.roll(u, 1, 0) + np.roll(u, 1, 1) + np.roll(u, 1, (0, 1)))
    return (u, float(rng.uniform(0.1, 0.2)), steps)


# --- 6. a chain of elementwise ufuncs on a large array (fuse=True: in blocks) ---


def ufunc_chain(x):
    """Sum of a chain of 14 elementwise ufuncs of one array (sin, exp, tanh, multiply,
    log1p, add, sqrt, cos, multiply, subtract, arctan, multiply, add, divide)."""
    a = np.sin(x)
    b = np.exp(a)
    c = np.tanh(b)
    d = np.log1p(x * x)
    e = np.sqrt(d + 1.0)
    f = np.cos(e) * c
    g = np.arctan(f - x)
    return np.sum(g / (1.0 + a * a))


def ufunc_chain_grad(x):
    """Hand-written gradient of ``ufunc_chain``: the forward values it needs, then the
    chain rule backwards, one numpy operation at a time."""
    a = np.sin(x)
    b = np.exp(a)
    c = np.tanh(b)
    xx = x * x
    e = np.sqrt(np.log1p(xx) + 1.0)
    cos_e = np.cos(e)
    u = cos_e * c - x
    g = np.arctan(u)
    s = 1.0 + a * a
    du = 1.0 / (s * (1.0 + u * u))
    de = -du * c * np.sin(e)
    dx = de * x / (e * (1.0 + xx)) - du
    da = du * cos_e * (1.0 - c * c) * b - 2.0 * g * a / (s * s)
    return (dx + da * np.cos(x),)


def ufunc_chain_inputs(rng, n):
    """One float64 array of ``n`` values in [-1, 1]."""
    return (rng.uniform(-1.0, 1.0, size=n),)


# --- the table of benchmarks --------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One benchmark row: a function, its hand gradient and how to build inputs.

    ``make(rng)`` builds the timed inputs; ``tiny(rng)`` builds a small instance
    on which the hand-written gradient is checked against finite differences.
    ``target`` is the largest acceptable generated / hand-written time ratio,
    ``memory_target`` the largest acceptable ratio of their peak memory; ``fuse``
    times ``grad(func, fuse=True)``.
    """

    name: str
    size: str
    func: Callable
    hand_grad: Callable
    wrt: tuple
    make: Callable
    tiny: Callable
    target: float
    memory_target: float = 1.2
    fuse: bool = False  # grad(func, fuse=True): elementwise regions evaluated in blocks


PROBLEMS = [
    Problem(
        "logreg",
        "small",
        logreg_loss,
        logreg_grad,
        ("w", "b"),
        lambda r: logreg_inputs(r, 64, 10),
        lambda r: logreg_inputs(r, 5, 3),
        1.2,
    ),
    Problem(
        "logreg",
        "large",
        logreg_loss,
        logreg_grad,
        ("w", "b"),
        lambda r: logreg_inputs(r, 8192, 100),
        lambda r: logreg_inputs(r, 5, 3),
        1.2,
    ),
    Problem(
        "mlp",
        "small",
        mlp_loss,
        mlp_grad,
        ("W1", "b1", "W2", "b2"),
        lambda r: mlp_inputs(r, 32, 20, 64, 10),
        lambda r: mlp_inputs(r, 4, 3, 5, 3),
        1.2,
    ),
    Problem(
        "mlp",
        "large",
        mlp_loss,
        mlp_grad,
        ("W1", "b1", "W2", "b2"),
        lambda r: mlp_inputs(r, 4096, 64, 256, 10),
        lambda r: mlp_inputs(r, 4, 3, 5, 3),
        1.2,
    ),
    Problem(
        "mlp_shift",
        "small",
        mlp_shift_loss,
        mlp_grad,
        ("W1", "b1", "W2", "b2"),
        lambda r: mlp_inputs(r, 32, 20, 64, 10),
        lambda r: mlp_inputs(r, 4, 3, 5, 3),
        1.1,
    ),
    Problem(
        "mlp_shift",
        "large",
        mlp_shift_loss,
        mlp_grad,
        ("W1", "b1", "W2", "b2"),
        lambda r: mlp_inputs(r, 4096, 64, 256, 10),
        lambda r: mlp_inputs(r, 4, 3, 5, 3),
        1.1,
    ),
    Problem(
        "rnn",
        "T50 h32 b16",
        rnn_loss,
        rnn_grad,
        ("Wx", "Wh", "b"),
        lambda r: rnn_inputs(r, 50, 16, 16, 32),
        lambda r: rnn_inputs(r, 4, 2, 2, 3),
        1.1,
    ),
    Problem(
        "scalar_loop",
        "1000 iters",
        scalar_loop,
        scalar_loop_grad,
        ("x", "a"),
        scalar_loop_inputs,
        scalar_loop_inputs,
        1.3,
    ),
    Problem(
        "heat",
        "110x110, 100 steps",
        heat_loss,
        heat_grad,
        ("u", "k"),
        lambda r: heat_inputs(r, 110, 100),
        lambda r: heat_inputs(r, 5, 4),
        1.1,
    ),
    Problem(
        "ufunc_chain",
        "1e6",
        ufunc_chain,
        ufunc_chain_grad,
        ("x",),
        lambda r: ufunc_chain_inputs(r, 1_000_000),
        lambda r: ufunc_chain_inputs(r, 5),
        1.1,
    ),
    Problem(
        "ufunc_chain",
        "1e6, fuse=True",
        ufunc_chain,
        ufunc_chain_grad,
        ("x",),
        lambda r: ufunc_chain_inputs(r, 1_000_000),
        lambda r: ufunc_chain_inputs(r, 5),
        0.5,
        fuse=True,
    ),
]
