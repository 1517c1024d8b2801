"""Functions differentiated twice by tests/test_higher_order.py (the transpiler reads
their source, so they live in a file)."""

import numpy as np

from transpile import grad, stop_gradient
from transpile_runtime import complex_ops, ops

# --------------------------------------------------------------------------
# Scalar functions, each with its second derivative in closed form


def sine(x):
    return np.sin(x)


def sine_dd(x):
    return -np.sin(x)


def poly(x):
    return 3.0 * x**4 - 2.0 * x**3 + x * x - 5.0 * x + 1.0


def poly_dd(x):
    return 36.0 * x**2 - 12.0 * x + 2.0


def exp_log(x):
    return np.exp(np.log(1.0 + x * x) * 0.5) + np.log(np.exp(x) + 1.0)


def exp_log_dd(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return (1.0 + x * x) ** -1.5 + s * (1.0 - s)


def branch(x, a):
    if x > 0:
        y = np.exp(x) * a
    else:
        y = np.log(1.0 + x * x)
    return y


def branch_dd(x, a):
    if x > 0:
        return np.exp(x) * a
    return 2.0 * (1.0 - x * x) / (1.0 + x * x) ** 2


def helper(u):
    return np.tanh(u) * u


def with_helper(x):
    return helper(2.0 * x) + np.exp(-x)


def with_helper_dd(x):
    t = np.tanh(2.0 * x)
    # d/du [tanh(u) u] = (1 - t^2) u + t; second: -2 t (1 - t^2) u + 2 (1 - t^2)
    second = -2.0 * t * (1.0 - t * t) * (2.0 * x) + 2.0 * (1.0 - t * t)
    return 4.0 * second + np.exp(-x)


def stopped(a):
    return np.sin(a) * stop_gradient(a * a)


def stopped_dd(a):
    return -np.sin(a) * a * a


def indexed(x):
    """Reads entries and a slice: its gradient adds into a buffer (ops.add_at)."""
    return x[0] * x[1] ** 2 + np.sum(x[1:] ** 3) + np.sin(x[0])


def indexed_hessian(x):
    h = np.zeros((3, 3))
    h[0, 0] = -np.sin(x[0])
    h[0, 1] = h[1, 0] = 2.0 * x[1]
    h[1, 1] = 2.0 * x[0] + 6.0 * x[1]
    h[2, 2] = 6.0 * x[2]
    return h


def looped(x):
    s = 0.0
    for _ in range(3):
        s = s + np.sin(x * s + x)
    return s


def vector_poly(x):
    return np.sum(x**3) + x[0] * x[2]


def matrix_poly(x):
    return np.sum(x**3 * np.sum(x, axis=0)) + np.sum(np.tanh(x @ x.T))


# --------------------------------------------------------------------------
# A function calling a gradient made by this library


def energy(x):
    return np.sum(np.cos(x) * x)


denergy = grad(energy)


def force_norm(x):
    """The squared norm of a gradient: differentiating it differentiates denergy."""
    f = denergy(x)
    return 0.5 * np.sum(f * f)


dlooped = grad(looped)


def calls_looped_gradient(x):
    return dlooped(x) * 2.0


# --------------------------------------------------------------------------
# Hessian-vector products with closed forms


def quadratic(x, A):
    return 0.5 * x @ A @ x


def logistic(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logistic_hvp(w, X, y, v):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p * (1.0 - p) * (X @ v)) / X.shape[0]


def softmax_xent(z, y):
    """Cross-entropy of the softmax of logits ``z`` against a one-hot ``y``."""
    m = stop_gradient(np.max(z))
    return np.log(np.sum(np.exp(z - m))) + m - np.sum(y * z)


def softmax_xent_hvp(z, y, v):
    p = np.exp(z - np.max(z))
    p = p / np.sum(p)
    return p * v - p * np.sum(p * v)


def softmax_regression(W, X, Y):
    Z = X @ W
    m = stop_gradient(np.max(Z, axis=1, keepdims=True))
    lse = np.log(np.sum(np.exp(Z - m), axis=1)) + m[:, 0]
    return np.mean(lse - np.sum(Y * Z, axis=1))


def mlp(W1, b1, w2, x):
    h = np.tanh(x @ W1 + b1)
    return np.mean((h @ w2) ** 2)


def two_args(x, y):
    return np.sum(np.sin(x)) * np.sum(y**2) + np.sum(x * x) * np.sum(y * y * y)


# --------------------------------------------------------------------------
# The runtime helpers called directly: one function per rule of rules/runtime_ops.py


def h_unbroadcast(g, x):
    return np.sum(ops.unbroadcast(g, x) ** 2)


def h_unreduce(g, x):
    return np.sum(ops.unreduce(g, x, 1) ** 3)


def h_unreduce_all(g, x):
    return np.sum(np.sin(ops.unreduce(g, x)))


def h_unmean(g, x):
    return np.sum(ops.unmean(g, x, 0, True) ** 3)


def h_matmul_left(g, x, y):
    return np.sum(np.sin(ops.matmul_left(g, x, y)))


def h_matmul_right(g, x, y):
    return np.sum(np.sin(ops.matmul_right(g, x, y)))


def h_owned(a, b):
    return np.sum(ops.owned(a * b, a) ** 2)


def h_real_only(a):
    return np.sum(np.sin(ops.real_only(a, a)))


def h_complex_real_only(a):
    return np.sum(np.sin(complex_ops.real_only(a, "np.linalg.svd")))


def h_real_like(g, buf):
    return np.sum(np.sin(complex_ops.real_like(g, buf)))


def h_cotangent(dout, out):
    return np.sum(ops.cotangent(dout, out) ** 3)


def h_contribution(g, x):
    return np.sum(ops.contribution(g * x, x, "rule", "x") ** 3)


def h_copy(a):
    return np.sum(np.sin(ops.copy(a)))


def h_like(a):
    return np.sum(ops.like(a, a) ** 2)


def h_cast_like(a, b):
    return np.sum(ops.cast_like(a, b) ** 2)


def h_add(a, b):
    return np.sum(np.sin(ops.add(a, b)))


def h_select(c, a, b):
    return np.sum(ops.select(c, a, b) ** 3)


def h_untake(g, a, indices):
    return np.sum(np.sin(ops.untake(g, a, indices)))


def h_pow_slope(x, y):
    return np.sum(ops.pow_slope(x, y) ** 2)


def h_pow_log(z, x):
    return np.sum(np.sin(ops.pow_log(z, x)))


def h_hypot_slope(x, z):
    return np.sum(np.sin(ops.hypot_slope(x, z)))


def h_constants(x):
    """The helpers that make constants: no adjoint flows through them."""
    g = ops.seed(np.sum(x)) + ops.zeros_like(x) + ops.reduced_size(x) * 0.0
    share = ops.winner(x, 0.5) + ops.inside(x, 0.0, 1.0) * 0.0
    return np.sum(g * np.sin(x) + share * x)


def h_iterated(a):
    """What a loop goes over (the rows of an array here; a dict's keys)."""
    rows = ops.iterated(a)
    return np.sum(np.sin(rows[0]) * rows[1])


def h_uniterated(g, a):
    return np.sum(np.sin(ops.uniterated(g, a)) * ops.iterated_tangent(g, a))


def h_keys(x):
    d = {"b": x, "a": x * 2.0}
    return sum(np.sum(np.sin(d[k])) for k in ops.keys(d))


# --------------------------------------------------------------------------
# Gradients with a tape (loops), differentiated again by reverse over forward


def power_loop(x):
    """sum(x**4), through a loop: the Hessian is diag(12 x**2)."""
    y = x
    for _ in range(3):
        y = y * x
    return np.sum(y)


def while_break(x, a):
    y = x
    i = 0
    while i < 10:
        y = np.sin(y) * a + x
        if np.sum(y) > 4.0:
            break
        i += 1
    return np.sum(y * y)


def rnn_loss(x, W):
    h = x
    for _ in range(4):
        h = np.tanh(W @ h)
    return np.sum(h**2)


def early_in_loop(x):
    s = 0.0
    for k in range(5):
        s = s + np.sum(np.cos(x * k))
        if s < -2.0:
            return s * s
    return s


dwhile_break = grad(while_break)


def calls_while_break_gradient(x, a):
    g = dwhile_break(x, a)
    return np.sum(g * g)


# --------------------------------------------------------------------------
# Second derivatives through the adjoints of max, transpose and indexing


def with_max(x):
    return np.sum(np.max(x, axis=1) ** 2) + np.max(x) * np.sum(x)


def with_transpose(x):
    return np.sum(np.tanh(x.transpose(1, 0)) * x.T**2)


def with_fancy_index(x):
    idx = np.array([0, 2, 2, 1])
    return np.sum(x[idx] ** 3) + np.sum(np.sin(x[x > 0.0]))


def with_negative_index(x):
    return np.sum(x[-1] * x[-2] ** 2)


def _loop_helper(h):
    for _ in range(3):
        h = np.sin(h) * h
    return h


def calls_loop_helper(x):
    return np.sum(_loop_helper(x) ** 2)


def h_unreduce_extreme(g, x):
    return np.sum(np.sin(ops.unreduce_extreme(g, np.max(x, axis=0), x, 0)))


def h_unreduce_prod(g, x):
    return np.sum(np.sin(ops.unreduce_prod(g, x, 1)))


def h_untranspose(g):
    return np.sum(np.sin(ops.untranspose(g, (1, 0, 2))) * np.arange(24.0).reshape(3, 2, 4))


def h_retranspose(g):
    return np.sum(np.sin(ops.retranspose(g, ((1, 0, 2),))) * np.arange(24.0).reshape(3, 2, 4))


def h_scatter_added(buf, g):
    return np.sum(np.sin(ops.scatter_added(buf, np.array([0, 2, 2]), g)))


def h_gather(a):
    return np.sum(np.sin(ops.gather(a, np.array([1, 1, 3]))))


def dict_layer(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h**2)


def list_weights(ws, x):
    return np.sum(np.tanh(ws[0] * x) * ws[1])


def h_inner(a, b):
    return np.sin(ops.inner(a, b))


def h_scaled(tree, s):
    return np.sum(np.sin(ops.scaled(tree, s)))
