"""Elementwise functions: one line each, in terms of the result ``y`` and input ``x``,
declared with the functions (and methods) they differentiate."""

import builtins
import math

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, ELEMENTWISE, FILL, rule
from transpile_runtime import ops


@rule(np.exp, math.exp, shape=ELEMENTWISE)
def exp(y, x):
    d[x] += d[y] * y


@rule(np.log, math.log, shape=ELEMENTWISE)
def log(y, x):
    d[x] += d[y] / x


@rule(np.sqrt, math.sqrt, shape=ELEMENTWISE)
def sqrt(y, x):
    d[x] += d[y] / (2.0 * y)


@rule(np.sin, shape=ELEMENTWISE)
def sin(y, x):
    d[x] += d[y] * np.cos(x)


@rule(np.cos, shape=ELEMENTWISE)
def cos(y, x):
    d[x] -= d[y] * np.sin(x)


# math.sin(s) is a Python float, weak beside float32 arrays; np.cos(s) is a float64
# numpy scalar, which would widen them: the slope is cast to y's type
@rule(math.sin, shape=ELEMENTWISE)
def math_sin(y, x):
    d[x] += d[y] * ops.cast_like(np.cos(x), y)


@rule(math.cos, shape=ELEMENTWISE)
def math_cos(y, x):
    d[x] -= d[y] * ops.cast_like(np.sin(x), y)


@rule(np.tan, math.tan, shape=ELEMENTWISE)
def tan(y, x):
    d[x] += d[y] * (1.0 + y * y)


@rule(np.tanh, math.tanh, shape=ELEMENTWISE)
def tanh(y, x):
    d[x] += d[y] * (1.0 - y * y)


@rule(np.sinh, shape=ELEMENTWISE)
def sinh(y, x):
    d[x] += d[y] * np.cosh(x)


@rule(np.cosh, shape=ELEMENTWISE)
def cosh(y, x):
    d[x] += d[y] * np.sinh(x)


@rule(np.arctan, shape=ELEMENTWISE)
def arctan(y, x):
    d[x] += d[y] / (1.0 + x * x)


@rule(np.fabs, shape=ELEMENTWISE)  # of real values only (np.abs: complex_numbers.py)
def fabs(y, x):
    d[x] += d[y] * np.sign(x)


@rule(np.square, shape=ELEMENTWISE)
def square(y, x):
    d[x] += d[y] * (2.0 * x)


@rule(np.reciprocal, shape=ELEMENTWISE)
def reciprocal(y, x):
    d[x] -= d[y] * (y * y)


@rule(np.log1p, math.log1p, shape=ELEMENTWISE)
def log1p(y, x):
    d[x] += d[y] / (1.0 + x)


@rule(np.expm1, math.expm1, shape=ELEMENTWISE)
def expm1(y, x):
    d[x] += d[y] * (y + 1.0)


@rule(np.negative, shape=ELEMENTWISE)
def negative(y, x):
    d[x] -= d[y]


@rule(np.maximum, shape=ELEMENTWISE)
@rule(builtins.max, shape=ELEMENTWISE, shares=True)  # it returns one of its arguments
def maximum(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.winner(x, y), x)
    d[y] += ops.unbroadcast(d[z] * ops.winner(y, x), y)


@rule(np.minimum, shape=ELEMENTWISE)
@rule(builtins.min, shape=ELEMENTWISE, shares=True)
def minimum(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.winner(y, x), x)
    d[y] += ops.unbroadcast(d[z] * ops.winner(x, y), y)


@rule(np.where, shape=ELEMENTWISE)
def where(z, _condition, x, y):
    d[x] += ops.unbroadcast(ops.select(_condition, d[z], 0.0), x)
    d[y] += ops.unbroadcast(ops.select(_condition, 0.0, d[z]), y)


@rule(np.clip, methods=("clip",), shape=ELEMENTWISE)
def clip(y, a, _a_min, _a_max, **_kwargs):
    d[a] += ops.unbroadcast(d[y] * ops.inside(a, _a_min, _a_max), a)


@rule(np.exp2, shape=ELEMENTWISE)
def exp2(y, x):
    d[x] += d[y] * (y * 0.6931471805599453)


@rule(np.log2, shape=ELEMENTWISE)
def log2(y, x):
    d[x] += d[y] / (x * 0.6931471805599453)


@rule(np.log10, shape=ELEMENTWISE)
def log10(y, x):
    d[x] += d[y] / (x * 2.302585092994046)


@rule(np.arcsin, shape=ELEMENTWISE)
def arcsin(y, x):
    d[x] += d[y] / np.sqrt(1.0 - x * x)


@rule(np.arccos, shape=ELEMENTWISE)
def arccos(y, x):
    d[x] -= d[y] / np.sqrt(1.0 - x * x)


@rule(np.arcsinh, shape=ELEMENTWISE)
def arcsinh(y, x):
    d[x] += d[y] / np.sqrt(x * x + 1.0)


@rule(np.arccosh, shape=ELEMENTWISE)
def arccosh(y, x):
    d[x] += d[y] / np.sqrt(x * x - 1.0)


@rule(np.arctanh, shape=ELEMENTWISE)
def arctanh(y, x):
    d[x] += d[y] / (1.0 - x * x)


@rule(np.cbrt, shape=ELEMENTWISE)
def cbrt(y, x):
    d[x] += d[y] / (3.0 * y * y)


@rule(np.arctan2, shape=ELEMENTWISE)
def arctan2(z, y, x):
    d[y] += ops.unbroadcast(d[z] * x / (x * x + y * y), y)
    d[x] -= ops.unbroadcast(d[z] * y / (x * x + y * y), x)


@rule(np.hypot, shape=ELEMENTWISE)
def hypot(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.hypot_slope(x, z), x)
    d[y] += ops.unbroadcast(d[z] * ops.hypot_slope(y, z), y)


@rule(np.logaddexp, shape=ELEMENTWISE)
def logaddexp(z, x, y):
    d[x] += ops.unbroadcast(d[z] * np.exp(x - z), x)
    d[y] += ops.unbroadcast(d[z] * np.exp(y - z), y)


@rule(np.logaddexp2, shape=ELEMENTWISE)
def logaddexp2(z, x, y):
    d[x] += ops.unbroadcast(d[z] * np.exp2(x - z), x)
    d[y] += ops.unbroadcast(d[z] * np.exp2(y - z), y)


@rule(np.sinc, shape=ELEMENTWISE)
def sinc(y, x):
    d[x] += d[y] * ops.sinc_slope(x, y)


@rule(np.fmax, shape=ELEMENTWISE)
def fmax(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.fwinner(x, y), x)
    d[y] += ops.unbroadcast(d[z] * ops.fwinner(y, x), y)


@rule(np.fmin, shape=ELEMENTWISE)
def fmin(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.fwinner(-x, -y), x)
    d[y] += ops.unbroadcast(d[z] * ops.fwinner(-y, -x), y)


@rule(np.copysign, shape=ELEMENTWISE)  # the sign of _y: a constant almost everywhere
def copysign(z, x, _y):
    d[x] += ops.unbroadcast(d[z] * (np.sign(x) * np.sign(z)), x)


@rule(np.deg2rad, np.radians, shape=ELEMENTWISE)
def deg2rad(y, x):
    d[x] += d[y] * 0.017453292519943295


@rule(np.rad2deg, np.degrees, shape=ELEMENTWISE)
def rad2deg(y, x):
    d[x] += d[y] * 57.29577951308232


@rule(np.float_power, shape=ELEMENTWISE)  # computes in float64: the adjoints take x's, y's type
def float_power(z, x, y):
    d[x] += ops.cast_like(ops.unbroadcast(d[z] * ops.pow_slope(x, y), x), x)
    d[y] += ops.cast_like(ops.unbroadcast(d[z] * ops.pow_log(z, x), y), y)
    t[z] += ops.cast_like(t[x] * ops.pow_slope(x, y), z)
    t[z] += ops.cast_like(t[y] * ops.pow_log(z, x), z)


@rule(np.full, shape=FILL, fresh=True)
def full(y, _shape, fill_value, _dtype=None, **_kwargs):
    d[fill_value] += ops.unbroadcast(d[y], fill_value)
    t[y] += np.full_like(y, t[fill_value])


@rule(np.full_like, shape=ALL_DATA, fresh=True)
def full_like(y, _a, fill_value, _dtype=None, **_kwargs):
    d[fill_value] += ops.unbroadcast(d[y], fill_value)
    t[y] += np.full_like(y, t[fill_value])
