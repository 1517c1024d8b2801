"""Functions whose compilation ``tests/test_stages.py`` inspects stage by stage.

They live in a file because the transpiler reads source. Each is as small as it
can be while still showing what one stage does; the sections follow
``transpile.pipeline.STAGES``. The last section is a varied set of functions for
the normal-form test.
"""

import functools

import numpy as np

from transpile import checkpointed, stop_gradient

# --------------------------------------------------------------------------
# parse


def unchanged(func):
    """A decorator that returns the function itself: what runs is what was written."""
    return func


@unchanged
def decorated(x):
    return np.sum(x * x)


def wrapping(func):
    @functools.wraps(func)
    def wrapper(x):
        return func(x) * 2.0

    return wrapper


@wrapping
def wrapped(x):
    return np.sum(x * x)


def pass_at_the_end(x):
    y = np.sum(np.sin(x))
    return y
    pass  # noqa: PIE790  (no code: the code object's lines end above)


# --------------------------------------------------------------------------
# fence, inplace


def uses_with(x):
    with np.errstate(all="ignore"):
        if x[0] > 0.0:
            return np.sum(x)  # refused
        y = np.log(x)
    return np.sum(y)


def updates_alias(x):
    y = x * 2.0
    z = y
    z -= 1.0  # refused
    return np.sum(y * z)


# --------------------------------------------------------------------------
# names (plain is also the function of ownership, final and entry)


def plain(x):
    return np.sum(x * x)


def takes_names(x, dx):
    ops = np.sin(x)
    tape = ops * dx
    return np.sum(tape)


# --------------------------------------------------------------------------
# anf


def nested(x, y):
    return np.sum(np.sin(x * y) + y)


def returns_early(x):
    if np.sum(x) > 0:
        return np.sum(x * x)
    return np.sum(x)


def unpacks(x):
    a, b = x * 2.0, x
    a += b
    return np.sum(a)


# --------------------------------------------------------------------------
# snapshot


def appends_after_stack(x):
    hs = [x]
    s = np.sum(np.stack(hs))
    hs.append(x * 2.0)
    return s + np.sum(hs[1])


def appends_before_stack(xs):
    hs = []
    for v in xs:
        hs.append(v * 2.0)
    return np.sum(np.stack(hs))


# --------------------------------------------------------------------------
# kinds


def sequences(x, ys):
    a = [x, x]
    b = a + [x]
    t = tuple(b)
    c = b[1:]
    z = x + ys
    return np.sum(t[0]) + np.sum(c[0]) + np.sum(z)


# --------------------------------------------------------------------------
# activity


def partly_active(x, y):
    c = stop_gradient(np.cosh(x))  # varied, but stopped
    n = x.shape[0]  # an integer
    s = np.sin(y)  # useful, not varied: y is not differentiated
    u = np.cos(x)  # varied, not useful
    return np.sum(c * np.sin(x) * s) / n


# --------------------------------------------------------------------------
# aliasing


def reads_stale_view(x):
    out = np.zeros(x.shape)
    row = out[0]
    out[0] = x
    return np.sum(row * x)  # refused: out[0] may be a number


# --------------------------------------------------------------------------
# retake


def reads_late_transpose(x):
    out = np.zeros((2, 3))
    cols = out.T
    out[0] = x
    return np.sum(cols * x[0])


# --------------------------------------------------------------------------
# raw, seed (sum_sin is also the function of assemble and shapes)


def sum_sin(x):
    return np.sum(np.sin(x))


def first_item(x):
    return x[0] * 2.0


# --------------------------------------------------------------------------
# zeros (log_sigmoid is also the function of inline)


def both_branches(x, c):
    if c:
        y = np.sin(x)
    else:
        y = np.cos(x)
    return np.sum(y)


def log_sigmoid(z):
    p = 1.0 / (1.0 + np.exp(-z))
    return np.sum(np.log(p))


# --------------------------------------------------------------------------
# copies, signs


def renames(x):
    y = x
    return np.sum(np.sin(y))


def sigmoid(z):
    return np.sum(1.0 / (1.0 + np.exp(-z)))


# --------------------------------------------------------------------------
# record


def loop_sin(x):
    for i in range(3):
        x = np.sin(x) + 1.0
    return np.sum(x)


def rnn(h, W, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def residual_loop(h, W, ys):
    s = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h @ W)
        d = h - ys[t]
        s = s + np.sum(d * d)
    return s


# --------------------------------------------------------------------------
# dead, tidy, ownership


def unused(x):
    u = np.cos(x)
    return np.sum(x * x)


def times_one(x):
    return np.sum(x * 1.0)


def plain_sum(x):
    return np.sum(x)


# --------------------------------------------------------------------------
# specializable (plain and loop_sin too)


def rows(x, n):
    return np.sum(np.reshape(x, (n, -1)) ** 2)


# --------------------------------------------------------------------------
# the normal form: a varied set


def helper(a, b):
    return a * b + 1.0


def branches(x, c):
    assert x.ndim == 1, "a vector"
    if np.any(np.isnan(x)):
        raise ValueError(f"nan in {x.shape}")
    if c > 0 and np.sum(x) < 10.0:
        y = np.sin(x)
    elif not c:
        y = -x
    else:
        return np.sum(x)
    return np.sum(y if c else y * 2.0)


def loops(xs, w):
    s = 0.0
    for i, v in enumerate(xs):
        if i > 2:
            break
        s = s + np.sum(v * w)
    for a, b in zip(xs, xs[1:]):
        s += np.dot(a, b)
    k = 0
    while k < 3:
        k += 1
        if k == 2:
            continue
        s = s * 0.5
    return s


def containers(x, d):
    hs = [x, x * 2.0]
    hs.append(np.tanh(hs[-1]))
    p = {"a": x, "b": d["w"] * x}
    p["c"] = p["a"] + 1.0
    first, last = hs[0], hs[-1]
    return np.sum(np.stack(hs)) + np.sum(p["c"]) + np.sum(first * last)


def calls(x, m):
    y = helper(x, 2.0)
    z = np.clip(x.T @ m, a_min=-1.0, a_max=1.0).reshape(-1)
    w = np.linalg.norm(z, ord=2) ** 2
    order = stop_gradient(sorted(range(len(z)), key=lambda i: z[i]))
    return np.sum(y) + w * z[order[0]]


def subscripts(x):
    out = np.zeros((3, 4))
    out[1:, ::2] = x[:2, None, 0]
    y = x[..., 1] + x[0, :3] - out[x.shape[0] - 3, 1:]
    return np.sum(y * y) - 0.5 < 1.0 or np.sum(y)


def loop_copy(x):
    h = x
    for _ in range(2):
        v = np.sin(h)
        h = 0.5 * (v + h)
    return np.sum(h)


def value_and_aux(x):
    h = np.tanh(x)
    return np.sum(h), h


def loop_scale(x, n):
    """A loop variant: its tape records a shape that the variant writes in."""
    s = 0.0
    for i in range(n):
        y = x * i
        s = s + np.sum(np.sin(y))
    return s


def cross_entropy(w, x, y):
    """The log-sigmoid composites meet as y - p (``algebra.complements``)."""
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def tanh_layer(x, W, b, t):
    """Large enough temporaries (with REUSE_SIZE lowered) are written into dead buffers."""
    a = x @ W + b
    h = np.tanh(a)
    return np.sum((h - t) ** 2)


def product_sum(a, b):
    return np.sum(a * b)


class Scale:
    def __init__(self, k):
        self.k = k

    def apply(self, v):
        return self.k * v


def makes_an_object(x):
    """An object made in the function: its method call is rewritten (``objects``)."""
    s = Scale(2.0)
    return np.sum(s.apply(x) ** 2)


def pairs(v):
    for i in range(0, v.shape[0], 2):
        yield v[i], v[i + 1]


def factored(S, y):
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError as err:
        print(err)
        L = np.linalg.cholesky(S + np.eye(2))
    with np.errstate(divide="ignore"):
        r = np.linalg.solve(L, y)
    return np.sum(r * r)


def _halve(v):
    v *= 0.5
    return v


def halves_in_a_helper(x):
    """A helper's in-place update of an array the caller made, followed (``inplace``)."""
    v = x * 2.0
    v = _halve(v)
    return np.sum(v * v)


def checkpointed_loop(w, h, n):
    s = 0.0
    for t in checkpointed(range(n), snapshots=4):
        h = np.tanh(h * w) + t
        s = s + np.sum(h)
    return s


def _scaled_tanh(h, x, scale=2.0):
    z = x * scale
    return np.tanh(z + h)


def calls_a_helper(x, h):
    h = _scaled_tanh(h, x[0])
    return np.sum(h) + np.sum(_scaled_tanh(h, x, scale=0.5))
