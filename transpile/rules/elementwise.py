"""Elementwise functions: one line each, in terms of the result ``y`` and input ``x``."""

import numpy as np


def exp(y, x):
    d[x] += d[y] * y


def log(y, x):
    d[x] += d[y] / x


def sqrt(y, x):
    d[x] += d[y] / (2.0 * y)


def sin(y, x):
    d[x] += d[y] * np.cos(x)


def cos(y, x):
    d[x] -= d[y] * np.sin(x)


def tan(y, x):
    d[x] += d[y] * (1.0 + y * y)


def tanh(y, x):
    d[x] += d[y] * (1.0 - y * y)


def sinh(y, x):
    d[x] += d[y] * np.cosh(x)


def cosh(y, x):
    d[x] += d[y] * np.sinh(x)


def arctan(y, x):
    d[x] += d[y] / (1.0 + x * x)


def abs_(y, x):
    d[x] += d[y] * np.sign(x)


def square(y, x):
    d[x] += d[y] * (2.0 * x)


def reciprocal(y, x):
    d[x] -= d[y] * (y * y)


def log1p(y, x):
    d[x] += d[y] / (1.0 + x)


def expm1(y, x):
    d[x] += d[y] * (y + 1.0)


def negative(y, x):
    d[x] -= d[y]


def maximum(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.winner(x, y), x)
    d[y] += ops.unbroadcast(d[z] * ops.winner(y, x), y)


def minimum(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.winner(y, x), x)
    d[y] += ops.unbroadcast(d[z] * ops.winner(x, y), y)


def where(z, _condition, x, y):
    d[x] += ops.unbroadcast(ops.select(_condition, d[z], 0.0), x)
    d[y] += ops.unbroadcast(ops.select(_condition, 0.0, d[z]), y)


def clip(y, a, _a_min, _a_max, **_kwargs):
    d[a] += d[y] * ops.inside(a, _a_min, _a_max)


REVERSE = [
    (np.exp, exp),
    (np.log, log),
    (np.sqrt, sqrt),
    (np.sin, sin),
    (np.cos, cos),
    (np.tan, tan),
    (np.tanh, tanh),
    (np.sinh, sinh),
    (np.cosh, cosh),
    (np.arctan, arctan),
    (np.abs, abs_),
    (np.square, square),
    (np.reciprocal, reciprocal),
    (np.log1p, log1p),
    (np.expm1, expm1),
    (np.negative, negative),
    (np.maximum, maximum),
    (np.minimum, minimum),
    (np.where, where),
    (np.clip, clip),
]
METHODS = {"clip": clip}
