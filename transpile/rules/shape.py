"""Shape changes and copies: reshape, transpose, .T, copy, astype, stacking."""

import builtins

import numpy as np

from runtime import ops
from transpile.template import d


def reshape(y, a, *_shape, **_kwargs):
    d[a] += np.reshape(d[y], np.shape(a))


def transpose(y, a, _axes=None):
    d[a] += ops.untranspose(d[y], _axes)


def transpose_method(y, a, *_axes):
    d[a] += ops.untranspose(d[y], _axes)


def attr_T(y, a):
    d[a] += np.transpose(d[y])


def copy(y, a, *_args, **_kwargs):
    d[a] += d[y]


def astype(y, a, *_args, **_kwargs):
    d[a] += ops.cast_like(d[y], a)


def ravel(y, a, *_args, **_kwargs):
    d[a] += np.reshape(d[y], np.shape(a))


def dot(z, x, y):
    d[x] += ops.dot_left(d[z], x, y)
    d[y] += ops.dot_right(d[z], x, y)


def matmul(z, x, y):
    d[x] += ops.matmul_left(d[z], x, y)
    d[y] += ops.matmul_right(d[z], x, y)


def vstack(y, tup, **_kwargs):
    d[tup] += ops.unvstack(d[y], tup)


def stack(y, arrays, _axis=0, **_kwargs):
    d[arrays] += ops.unstack(d[y], arrays, _axis)


def concatenate(y, arrays, _axis=0, **_kwargs):
    d[arrays] += ops.unconcatenate(d[y], arrays, _axis)


def sum_list(y, iterable, start=0):
    d[iterable] += ops.spread(d[y], iterable)
    d[start] += ops.unbroadcast(d[y], start)


def array(y, a, *_args, **_kwargs):
    d[a] += ops.unarray(d[y], a)


def float_(y, x):
    d[x] += ops.cast_like(d[y], x)


def broadcast_to(y, a, _shape, **_kwargs):
    d[a] += ops.unbroadcast(d[y], a)


def flip(y, a, _axis=None):
    d[a] += np.flip(d[y], _axis)


def roll(y, a, _shift, _axis=None):
    d[a] += ops.unroll(d[y], _shift, _axis)


def triu(y, a, _k=0):
    d[a] += np.triu(d[y], _k)


def tril(y, a, _k=0):
    d[a] += np.tril(d[y], _k)


REVERSE = [
    (np.squeeze, reshape),
    (np.expand_dims, reshape),
    (np.atleast_1d, reshape),
    (np.atleast_2d, reshape),
    (np.broadcast_to, broadcast_to),
    (np.flip, flip),
    (np.roll, roll),
    (np.triu, triu),
    (np.tril, tril),
    (np.reshape, reshape),
    (np.transpose, transpose),
    (np.copy, copy),
    (np.ravel, ravel),
    (np.dot, dot),
    (np.matmul, matmul),
    (np.stack, stack),
    (np.vstack, vstack),
    (np.concatenate, concatenate),
    (np.array, array),
    (np.asarray, array),
    (builtins.sum, sum_list),
    (builtins.list, copy),
    (builtins.tuple, copy),
    (builtins.float, float_),
]
METHODS = {
    "reshape": reshape,
    "transpose": transpose_method,
    "copy": copy,
    "astype": astype,
    "ravel": ravel,
    "flatten": ravel,
    "dot": dot,
    "squeeze": reshape,
}
ATTRIBUTES = {"T": attr_T}
