"""Functions whose generated gradients ``tests/test_structure.py`` inspects.

They live in a file because the transpiler reads source. Each ``*_const``
twin takes the value that the original stops with ``stop_gradient`` as an
extra argument, so its gradient is the reference for the stopped version.
"""

import numpy as np

from transpile import stop_gradient

# --------------------------------------------------------------------------
# stop_gradient


def cosh_stopped(x):
    c = stop_gradient(np.cosh(x))
    return np.sum(c * np.sin(x))


def cosh_free(x):
    c = np.cosh(x)
    return np.sum(c * np.sin(x))


def cosh_const(x, c):
    return np.sum(c * np.sin(x))


def exp_stopped(x):
    a = np.exp(x)
    b = stop_gradient(a * 2)
    return np.sum(b * x)


def exp_const(x, b):
    return np.sum(b * x)


def logsumexp_stopped(x):
    m = stop_gradient(np.max(x))
    return m + np.log(np.sum(np.exp(x - m)))


# --------------------------------------------------------------------------
# dead code, names, first writes


def with_unused(x):
    unused = np.sin(x)
    return np.sum(x * np.exp(x))


def mlp(x, W1, b1, W2):
    h = np.tanh(x @ W1 + b1)
    out = np.tanh(h @ W2)
    return np.mean(out * out)


def one_use(x, w):
    z = np.sin(x) * w
    return np.sum(np.exp(z))


def reassigned(x, W):
    h = np.tanh(x @ W)
    h = np.tanh(h @ W)
    h = np.exp(h) * 0.5
    return np.sum(h)


# --------------------------------------------------------------------------
# loops


def tanh_rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def scaled_sum(s, x, n):
    for t in range(n):
        s = s + x[t] * 2.0
    return np.sum(s)


def elman(h0, xs, Wx, Wh, b):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        a = xs[t] @ Wx + h @ Wh + b
        h = np.tanh(a)
        y = h * 2.0
        loss = loss + np.sum(y * y)
    return loss


# --------------------------------------------------------------------------
# array writes in straight-line code


def slot_writes(x):
    buf = np.zeros_like(x)
    buf[0] = x[0] * 2.0
    buf[1:] = np.sin(x[1:])
    return np.sum(buf * x)


def slot_old_value_needed(x):
    y = x.copy()
    a = y * y
    y[0] = 0.0
    return np.sum(a * y)


# --------------------------------------------------------------------------
# calls to user functions


def layer(z, scale=1.0):
    return np.tanh(z) * scale


def calls_layer_once(x):
    return np.sum(layer(x, 3.0) * x)


def calls_layer_twice(x):
    return np.sum(layer(x) * layer(x * 2.0))
