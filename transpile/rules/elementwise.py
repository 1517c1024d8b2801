"""Elementwise functions: one line each, in terms of the result ``y`` and input ``x``."""

import builtins
import math

import numpy as np

from runtime import ops
from transpile.template import d


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
    d[a] += ops.unbroadcast(d[y] * ops.inside(a, _a_min, _a_max), a)


def exp2(y, x):
    d[x] += d[y] * (y * 0.6931471805599453)


def log2(y, x):
    d[x] += d[y] / (x * 0.6931471805599453)


def log10(y, x):
    d[x] += d[y] / (x * 2.302585092994046)


def arcsin(y, x):
    d[x] += d[y] / np.sqrt(1.0 - x * x)


def arccos(y, x):
    d[x] -= d[y] / np.sqrt(1.0 - x * x)


def arcsinh(y, x):
    d[x] += d[y] / np.sqrt(x * x + 1.0)


def arccosh(y, x):
    d[x] += d[y] / np.sqrt(x * x - 1.0)


def arctanh(y, x):
    d[x] += d[y] / (1.0 - x * x)


def cbrt(y, x):
    d[x] += d[y] / (3.0 * y * y)


def arctan2(z, y, x):
    d[y] += ops.unbroadcast(d[z] * x / (x * x + y * y), y)
    d[x] -= ops.unbroadcast(d[z] * y / (x * x + y * y), x)


def hypot(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.hypot_slope(x, z), x)
    d[y] += ops.unbroadcast(d[z] * ops.hypot_slope(y, z), y)


def logaddexp(z, x, y):
    d[x] += ops.unbroadcast(d[z] * np.exp(x - z), x)
    d[y] += ops.unbroadcast(d[z] * np.exp(y - z), y)


def full(y, _shape, fill_value, _dtype=None, **_kwargs):
    d[fill_value] += ops.unbroadcast(d[y], fill_value)


def full_like(y, _a, fill_value, _dtype=None, **_kwargs):
    d[fill_value] += ops.unbroadcast(d[y], fill_value)


REVERSE = [
    (np.full, full),
    (np.full_like, full_like),
    (np.exp2, exp2),
    (np.log2, log2),
    (np.log10, log10),
    (np.arcsin, arcsin),
    (np.arccos, arccos),
    (np.arcsinh, arcsinh),
    (np.arccosh, arccosh),
    (np.arctanh, arctanh),
    (np.cbrt, cbrt),
    (np.arctan2, arctan2),
    (np.hypot, hypot),
    (np.logaddexp, logaddexp),
    (np.fabs, abs_),
    (np.absolute, abs_),
    (builtins.abs, abs_),
    (builtins.max, maximum),
    (builtins.min, minimum),
    (math.exp, exp),
    (math.log, log),
    (math.sqrt, sqrt),
    (math.sin, sin),
    (math.cos, cos),
    (math.tan, tan),
    (math.tanh, tanh),
    (math.log1p, log1p),
    (math.expm1, expm1),
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
