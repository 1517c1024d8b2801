"""Reductions with ``axis`` and ``keepdims``: the adjoint is broadcast back over the
reduced axes by ``ops.unreduce``. ``reduces``: called with the array alone, the
result is a scalar. Also the nan reductions, ptp, median (a subgradient where entries
tie, as for sort) and trapezoid."""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import FIRST_DATA, TWO_DATA, rule
from transpile_runtime import forward_ops, ops


@rule(np.sum, methods=("sum",), shape=FIRST_DATA, reduces=True)
def sum_(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unreduce(d[y], a, _axis, _keepdims)
    t[y] += np.sum(t[a], axis=_axis, keepdims=_keepdims)


@rule(np.mean, methods=("mean",), shape=FIRST_DATA, reduces=True)
def mean(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unmean(d[y], a, _axis, _keepdims)
    t[y] += np.mean(t[a], axis=_axis, keepdims=_keepdims)


@rule(np.max, np.amax, np.min, np.amin, methods=("max", "min"), shape=FIRST_DATA, reduces=True)
def max_(y, a, _axis=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unreduce_extreme(d[y], y, a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unreduce_extreme(np.ones_like(y), y, a, _axis, _keepdims) * t[a],
        axis=_axis,
        keepdims=_keepdims,
    )


@rule(np.prod, methods=("prod",), shape=FIRST_DATA, reduces=True)
def prod(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unreduce_prod(d[y], a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unreduce_prod(np.ones_like(y), a, _axis, _keepdims) * t[a],
        axis=_axis,
        keepdims=_keepdims,
    )


@rule(np.var, methods=("var",), shape=FIRST_DATA, reduces=True)
def var(y, a, _axis=None, _dtype=None, _out=None, _ddof=0, _keepdims=False, **_kwargs):
    # of a complex a, mean(|a - mean(a)|^2): conj(a - mean(a)) times the real part of d[y]
    d[a] += np.conj(ops.unvar(np.real(d[y]), a, _axis, _ddof, _keepdims))
    t[y] += np.real(
        np.sum(
            np.conj(ops.unvar(np.ones_like(y), a, _axis, _ddof, _keepdims)) * t[a],
            axis=_axis,
            keepdims=_keepdims,
        )
    )


@rule(np.std, methods=("std",), shape=FIRST_DATA, reduces=True)
def std(y, a, _axis=None, _dtype=None, _out=None, _ddof=0, _keepdims=False, **_kwargs):
    d[a] += np.conj(ops.unvar(np.real(d[y]) / (2.0 * y), a, _axis, _ddof, _keepdims))
    t[y] += np.real(
        np.sum(
            np.conj(ops.unvar(np.ones_like(y), a, _axis, _ddof, _keepdims)) * t[a],
            axis=_axis,
            keepdims=_keepdims,
        )
    ) / (2.0 * y)


@rule(np.cumsum, methods=("cumsum",), shape=FIRST_DATA)
def cumsum(y, a, _axis=None, _dtype=None, _out=None):
    d[a] += ops.uncumsum(d[y], a, _axis)
    t[y] += np.cumsum(t[a], axis=_axis)


@rule(np.cumprod, methods=("cumprod",), shape=FIRST_DATA)
def cumprod(y, a, _axis=None, _dtype=None, _out=None):
    d[a] += ops.uncumprod(d[y], y, a, _axis)
    t[y] += forward_ops.cumprod(t[a], y, a, _axis)


@rule(np.nansum, shape=FIRST_DATA, reduces=True)
def nansum(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.select(np.isnan(a), 0.0, ops.unreduce(d[y], a, _axis, _keepdims))
    t[y] += np.sum(ops.select(np.isnan(a), 0.0, t[a]), axis=_axis, keepdims=_keepdims)


@rule(np.nanmean, shape=FIRST_DATA, reduces=True)
def nanmean(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unnanmean(d[y], a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unnanmean(np.ones_like(y), a, _axis, _keepdims) * t[a], axis=_axis, keepdims=_keepdims
    )


@rule(np.average, shape=FIRST_DATA, reduces=True)
def average(y, a, _axis=None, weights=None, _returned=False, *, _keepdims=False):
    d[a] += ops.unaverage(d[y], a, _axis, weights, _keepdims, _returned)
    d[weights] += ops.unaverage_weights(d[y], y, a, _axis, weights, _keepdims, _returned)
    t[y] += forward_ops.average_a(t[a], a, _axis, weights, _keepdims, _returned)
    t[y] += forward_ops.average_w(t[weights], y, a, _axis, weights, _keepdims, _returned)


@rule(np.linalg.norm, shape=FIRST_DATA, reduces=True)
def norm(y, x, _ord=None, _axis=None, _keepdims=False):
    # of a complex x, a norm of |x|: conj of the real rule's, by the real part of d[y]
    d[x] += np.conj(ops.unnorm_ord(np.real(d[y]), y, x, _ord, _axis, _keepdims))
    t[y] += np.real(
        np.sum(
            np.conj(ops.unnorm_ord(np.ones_like(y), y, x, _ord, _axis, _keepdims)) * t[x],
            axis=_axis,
            keepdims=_keepdims,
        )
    )


@rule(np.nanmax, np.nanmin, shape=FIRST_DATA, reduces=True)
def nanmax(y, a, _axis=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unnan_extreme(d[y], y, a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unnan_extreme(np.ones_like(y), y, a, _axis, _keepdims) * t[a],
        axis=_axis,
        keepdims=_keepdims,
    )


@rule(np.nanprod, shape=FIRST_DATA, reduces=True)
def nanprod(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unnanprod(d[y], a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unnanprod(np.ones_like(y), a, _axis, _keepdims) * t[a], axis=_axis, keepdims=_keepdims
    )


@rule(np.nanvar, shape=FIRST_DATA, reduces=True)
def nanvar(y, a, _axis=None, _dtype=None, _out=None, _ddof=0, _keepdims=False, **_kwargs):
    d[a] += ops.unnanvar(d[y], a, _axis, _ddof, _keepdims)
    t[y] += np.sum(
        ops.unnanvar(np.ones_like(y), a, _axis, _ddof, _keepdims) * t[a],
        axis=_axis,
        keepdims=_keepdims,
    )


@rule(np.nanstd, shape=FIRST_DATA, reduces=True)
def nanstd(y, a, _axis=None, _dtype=None, _out=None, _ddof=0, _keepdims=False, **_kwargs):
    d[a] += ops.unnanvar(d[y] / (2.0 * y), a, _axis, _ddof, _keepdims)
    t[y] += np.sum(
        ops.unnanvar(np.ones_like(y), a, _axis, _ddof, _keepdims) * t[a],
        axis=_axis,
        keepdims=_keepdims,
    ) / (2.0 * y)


@rule(np.ptp, shape=FIRST_DATA, reduces=True)
def ptp(y, a, _axis=None, _out=None, _keepdims=False):
    d[a] += ops.unptp(d[y], a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unptp(np.ones_like(y), a, _axis, _keepdims) * t[a], axis=_axis, keepdims=_keepdims
    )


@rule(np.median, shape=FIRST_DATA, reduces=True)
def median(y, a, _axis=None, _out=None, _overwrite_input=False, _keepdims=False):
    d[a] += ops.unmedian(d[y], a, _axis, _keepdims)
    t[y] += np.sum(
        ops.unmedian(np.ones_like(y), a, _axis, _keepdims) * t[a], axis=_axis, keepdims=_keepdims
    )


@rule(np.trapezoid, shape=TWO_DATA)  # y, x data; dx may be data too (a keyword)
def trapezoid(z, y, x=None, dx=1.0, _axis=-1):
    d[y] += ops.untrapezoid(d[z], y, x, dx, _axis, 0)
    d[x] += ops.untrapezoid(d[z], y, x, dx, _axis, 1)
    d[dx] += ops.untrapezoid(d[z], y, x, dx, _axis, 2)
    t[z] += np.trapezoid(t[y], x, dx, _axis)  # bilinear in (y, x) and in (y, dx)
    t[z] += np.trapezoid(y, t[x], dx, _axis)
    t[z] += forward_ops.trapezoid_dx(t[dx], y, x, _axis)


@rule(np.nancumsum, shape=FIRST_DATA)
def nancumsum(y, a, _axis=None, _dtype=None, _out=None):
    d[a] += ops.select(np.isnan(a), 0.0, ops.uncumsum(d[y], a, _axis))
    t[y] += np.cumsum(ops.select(np.isnan(a), 0.0, t[a]), axis=_axis)
