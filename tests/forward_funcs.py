"""Functions for tests/test_forward.py (the transpiler reads their source)."""

import numpy as np
from scipy import special

from transpile import stop_gradient


def scaled_by_constant(x):
    c = stop_gradient(np.exp(x) * 2.0)
    return np.sum(np.sin(x) * c)


def running_sum(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + np.sum(np.tanh(x) * i)
        else:
            s = s - np.sum(x * x)
    return s


def uses_softmax(x):
    return np.sum(special.softmax(x) * x)


def grid(x, y):
    return np.tanh(np.outer(x, y)) + x[:, None] ** 2


def written(x):
    out = np.zeros((2, x.shape[0]))
    out[0] = np.sin(x)
    out[1, 1:] = x[:-1] * 3.0
    return out


def reduced(w, x):
    h = np.tanh(x @ w)
    return np.sum(h**2) + np.mean(w) + np.sum(np.max(x * w, axis=1))


# Forward mode through recursion, *args and **kwargs helpers, and methods calling methods


def _even(x, n):
    if n == 0:
        return x
    return _odd(np.sin(x) * 1.1, n - 1)


def _odd(x, n):
    if n == 0:
        return x * x
    return _even(np.cos(x) + x, n - 1)


def mutual_recursion(x):
    return np.sum(_even(x, 3) ** 2)


def _power_tower(x, y, n):
    if n == 0:
        return x * y
    return _power_tower(y, np.tanh(x * y), n - 1) + x


def recursion_swapping_arguments(x):
    return np.sum(_power_tower(x, 1.0, 3))


def _sum_of_squares(*xs):
    out = 0.0
    for v in xs:
        out = out + np.sum(v**2)
    return out


def varargs_helper(x):
    return _sum_of_squares(x, np.sin(x), x * x[0])


def _scaled_exp(x, **options):
    return np.sum(np.exp(x * options["a"])) * options["b"]


def kwargs_helper(x):
    return _scaled_exp(x, a=0.5, b=x[1])


def _shifted(x, scale=2.0, off=0.0):
    return x * scale + off


def keyword_skipping_a_default(x):
    return np.sum(_shifted(np.sin(x), off=x**2) ** 2)


class _Layer:
    def __init__(self, W):
        self.W = W

    def apply(self, x):
        return np.tanh(self.W @ x)

    def __call__(self, x):
        return self.apply(x) * x


_LAYER = _Layer(np.array([[0.5, 1.2, -0.3], [0.7, -0.4, 0.8], [0.2, 0.6, 1.1]]))


def method_calling_a_method(x):
    return np.sum(_LAYER(x) ** 2)


def object_made_inside(x):
    layer = _Layer(np.outer(x, x) * 0.3)
    return np.sum(layer(x) ** 2)
