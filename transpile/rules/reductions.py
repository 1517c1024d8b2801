"""Reductions with ``axis`` and ``keepdims``: the adjoint is broadcast back over the
reduced axes by ``ops.unreduce``."""

import numpy as np

from runtime import ops
from transpile.template import d


def sum_(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unreduce(d[y], a, _axis, _keepdims)


def mean(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unmean(d[y], a, _axis, _keepdims)


def max_(y, a, _axis=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unreduce_extreme(d[y], y, a, _axis, _keepdims)


def prod(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
    d[a] += ops.unreduce_prod(d[y], a, _axis, _keepdims)


def var(y, a, _axis=None, _dtype=None, _out=None, _ddof=0, _keepdims=False, **_kwargs):
    d[a] += ops.unvar(d[y], a, _axis, _ddof, _keepdims)


def std(y, a, _axis=None, _dtype=None, _out=None, _ddof=0, _keepdims=False, **_kwargs):
    d[a] += ops.unvar(d[y] / (2.0 * y), a, _axis, _ddof, _keepdims)


def cumsum(y, a, _axis=None, _dtype=None, _out=None):
    d[a] += ops.uncumsum(d[y], a, _axis)


def norm(y, x, _ord=None, _axis=None, _keepdims=False):
    d[x] += ops.unnorm(d[y], y, x, _ord, _axis, _keepdims)


REVERSE = [
    (np.var, var),
    (np.std, std),
    (np.cumsum, cumsum),
    (np.linalg.norm, norm),
    (np.sum, sum_),
    (np.mean, mean),
    (np.max, max_),
    (np.amax, max_),
    (np.min, max_),
    (np.amin, max_),
    (np.prod, prod),
]
METHODS = {
    "sum": sum_,
    "mean": mean,
    "max": max_,
    "min": max_,
    "prod": prod,
    "var": var,
    "std": std,
    "cumsum": cumsum,
}

# Called with the array alone, these reduce to a scalar (cumsum does not).
FULL_REDUCERS = [
    np.sum,
    np.mean,
    np.max,
    np.amax,
    np.min,
    np.amin,
    np.prod,
    np.var,
    np.std,
    np.linalg.norm,
]
FULL_REDUCER_METHODS = {"sum", "mean", "max", "min", "prod", "var", "std"}
