"""Small helpers and the functions that call them, for ``tests/test_inlined_helpers.py``."""

import inline_other as other
import numpy as np
from inline_other import act, layer, softplus

from transpile import checkpoint, defvjp, stop_gradient

SCALE = 0.5  # inline_other has a SCALE of its own


def _step(h, x, Wx, Wh, b):
    return np.tanh(x @ Wx + h @ Wh + b)


def rnn(Wx, Wh, b, xs, ys, h0):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = _step(h, xs[t], Wx, Wh, b)
        loss = loss + np.mean((h - ys[t]) ** 2)
    return loss / xs.shape[0]


def _damped(x, rate=0.25):
    decay = np.exp(-rate * x)
    return x * decay


def with_default(x):
    return np.sum(_damped(x)) + np.sum(_damped(x, rate=2.0)) + np.sum(_damped(x, 0.5))


def _square_sin(x):
    s = np.sin(x)
    return s * s


def twice_in_one_expression(x):
    return np.sum(_square_sin(x) * _square_sin(2.0 * x) + _square_sin(x[::-1]))


def in_a_branch_and_a_loop(x, n):
    y = x
    for _ in range(n):
        if np.sum(y) > 0.0:
            y = _square_sin(y) + 0.5 * y
        else:
            y = _damped(y, rate=-0.5)
    return np.sum(y * y)


def _inner(x):
    return np.cos(x) * x


def _outer(x, w):
    u = _inner(x * w)
    return u + _inner(u)


def nested(x, w):
    return np.sum(_outer(x, w))


def stopped_argument(w, x):
    return np.sum(_square_sin(stop_gradient(w) * x) * w)


def _through(x):
    return np.clip(x, -1.0, 1.0)


defvjp(_through, lambda g, ans, x: g)  # straight through: the rule, not the clip's


def with_rule(x):
    return np.sum(_through(x * 3.0) * x)


@checkpoint
def _marked(x):
    return np.tanh(x) * x


def with_marked(x):
    return np.sum(_marked(x) * x)


def _halving(x, n):
    return x if n == 0 else _halving(x * 0.5, n - 1) + x


def recursive(x, n):
    return np.sum(_halving(x, n) ** 2)


def _zeroes_first(x):
    y = x.copy()
    y[0] = 0.0
    return y * x  # writes into an array: not inlined


def writes_into_an_array(x):
    return np.sum(_zeroes_first(x) * x)


def other_module_data(x):
    return np.sum(other.scaled(x) * x) + SCALE * np.sum(x)


def other_module_code(x):
    return np.sum(layer(x) * softplus(x)) + np.sum(act(x))


def make_closure_helper(c):
    def helper(x):
        return np.sin(x) * c  # a closure: not inlined

    def f(x):
        return np.sum(helper(x) * x)

    return f


def pops_in_order(x):
    items = [x, 2.0 * x]
    return np.sum(items.pop() * _square_sin(items.pop()))


def in_a_try(x):
    try:
        y = _square_sin(x) * 2.0 + _damped(x)
    except ValueError:
        y = x
    return np.sum(y)


def _apply(f, x):
    y = x * 2.0
    return np.sum(f(y))  # calls a parameter: not inlined


def functions_passed(x):
    return _apply(np.tanh, x) + _apply(lambda z: z * z, x)
