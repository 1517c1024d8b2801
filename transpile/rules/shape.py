"""Shape changes, copies, joins, splits and gathers: reshape, transpose, .T, copy, astype,
stacking, split, repeat, tile, pad, take, take_along_axis, sort, swapaxes, moveaxis,
rot90, fliplr, flipud, diff, append."""

import builtins

import numpy as np

from transpile.core.template import d, position, t
from transpile.rules.declare import (
    ALL_DATA,
    FIRST_DATA,
    SEQUENCE_FIRST,
    TWO_DATA,
    VARIES,
    no_rule,
    rule,
)
from transpile_runtime import forward_ops, ops


@rule(
    np.reshape,
    np.squeeze,
    np.expand_dims,
    methods=("reshape", "squeeze"),
    shape=FIRST_DATA,
    passes=True,
)
def reshape(y, a, *_shape, **_kwargs):
    d[a] += np.reshape(d[y], np.shape(a))
    t[y] += ops.copy(np.reshape(t[a], np.shape(y)))  # flatten's result may be written into


@rule(
    np.atleast_1d, np.atleast_2d, np.atleast_3d, shape=ALL_DATA, passes=True, sequence_result=True
)
def atleast(y, *arys):
    d[arys] += ops.unatleast(d[y], arys, position)
    t[y] += forward_ops.atleast(t[arys], y, arys, position)


@rule(np.transpose, shape=FIRST_DATA, passes=True)
def transpose(y, a, _axes=None):
    d[a] += ops.untranspose(d[y], _axes)
    t[y] += np.transpose(t[a], _axes)


@rule(methods=("transpose",), shape=FIRST_DATA, passes=True)
def transpose_method(y, a, *_axes):
    d[a] += ops.untranspose(d[y], _axes)
    t[y] += t[a].transpose(*_axes)


@rule(attributes=("T",), shape=FIRST_DATA, passes=True)
def attr_T(y, a):
    d[a] += np.transpose(d[y])
    t[y] += np.transpose(t[a])


@rule(np.copy, methods=("copy",), shape=ALL_DATA, fresh=True)
@rule(builtins.list, builtins.tuple, shape=ALL_DATA, passes=True)
def copy(y, a, *_args, **_kwargs):
    d[a] += d[y]
    t[y] += ops.like(ops.copy(t[a]), y)


@rule(methods=("astype",), shape=FIRST_DATA, fresh=True, copy_keyword=True)
def astype(y, a, *_args, **_kwargs):
    d[a] += ops.uncast(d[y], y, a)  # zero for a cast to ints or bools
    t[y] += ops.uncast(t[a], y, y)  # zero for a cast to ints or bools


@rule(np.ravel, methods=("ravel",), shape=FIRST_DATA, passes=True)
@rule(methods=("flatten",), shape=FIRST_DATA, fresh=True)
def ravel(y, a, *_args, **_kwargs):
    d[a] += np.reshape(d[y], np.shape(a))
    t[y] += ops.copy(np.reshape(t[a], np.shape(y)))  # flatten: a fresh array


@rule(np.dot, methods=("dot",), shape=ALL_DATA)
def dot(z, x, y):
    d[x] += ops.dot_left(d[z], x, y)
    d[y] += ops.dot_right(d[z], x, y)
    t[z] += np.dot(t[x], y)
    t[z] += np.dot(x, t[y])


@rule(np.matmul, np.linalg.matmul, shape=ALL_DATA)
def matmul(z, x, y):
    d[x] += ops.matmul_left(d[z], x, y)
    d[y] += ops.matmul_right(d[z], x, y)
    t[z] += np.matmul(t[x], y)
    t[z] += np.matmul(x, t[y])


@rule(np.vstack, shape=SEQUENCE_FIRST)
def vstack(y, tup, **_kwargs):
    d[tup] += ops.unvstack(d[y], tup)
    t[y] += np.vstack(t[tup])


@rule(np.hstack, shape=SEQUENCE_FIRST)
def hstack(y, tup, **_kwargs):
    d[tup] += ops.unjoin(d[y], tup, "h")
    t[y] += np.hstack(t[tup])


@rule(np.dstack, shape=SEQUENCE_FIRST)
def dstack(y, tup, **_kwargs):
    d[tup] += ops.unjoin(d[y], tup, "d")
    t[y] += np.dstack(t[tup])


@rule(np.column_stack, shape=SEQUENCE_FIRST)
def column_stack(y, tup):
    d[tup] += ops.unjoin(d[y], tup, "column")
    t[y] += np.column_stack(t[tup])


@rule(
    np.split, np.array_split, shape=FIRST_DATA, shares=True, sequence_result=True
)  # a list of views
def split(y, ary, _indices_or_sections, _axis=0):
    d[ary] += np.concatenate(d[y], _axis)
    t[y] += np.array_split(t[ary], _indices_or_sections, _axis)  # as np.split where it splits


@rule(np.stack, shape=SEQUENCE_FIRST)
def stack(y, arrays, _axis=0, **_kwargs):
    d[arrays] += ops.unstack(d[y], arrays, _axis)
    t[y] += np.stack(t[arrays], _axis)


@rule(np.concatenate, shape=SEQUENCE_FIRST)
def concatenate(y, arrays, _axis=0, **_kwargs):
    d[arrays] += ops.unconcatenate(d[y], arrays, _axis)
    t[y] += np.concatenate(t[arrays], _axis)


@rule(builtins.sum, shape=ALL_DATA)
def sum_list(y, iterable, start=0):
    d[iterable] += ops.spread(d[y], iterable)
    d[start] += ops.unbroadcast(d[y], start)
    t[y] += sum(t[iterable])
    t[y] += t[start]


@rule(np.array, shape=ALL_DATA, fresh=True, copy_keyword=True)
@rule(np.asarray, shape=ALL_DATA, passes=True)
def array(y, a, *_args, **_kwargs):
    d[a] += ops.unarray_cast(d[y], y, a)  # zero for dtype=int or bool
    t[y] += ops.unarray_cast(np.array(t[a]), y, y)  # zero for dtype=int or bool


@rule(builtins.float, shape=ALL_DATA)
def float_(y, x):
    d[x] += ops.cast_like(d[y], x)
    t[y] += float(t[x])


@rule(np.broadcast_to, shape=FIRST_DATA, shares=True)  # a read-only view
def broadcast_to(y, a, _shape, **_kwargs):
    d[a] += ops.unbroadcast(d[y], a)
    t[y] += np.broadcast_to(t[a], np.shape(y))


@rule(np.flip, shape=FIRST_DATA, passes=True)
def flip(y, a, _axis=None):
    d[a] += np.flip(d[y], _axis)
    t[y] += np.flip(t[a], _axis)


@rule(np.roll, shape=FIRST_DATA)
def roll(y, a, _shift, _axis=None):
    d[a] += ops.unroll(d[y], _shift, _axis)
    t[y] += np.roll(t[a], _shift, _axis)


@rule(np.triu, shape=FIRST_DATA)
def triu(y, a, _k=0):
    d[a] += np.triu(d[y], _k)
    t[y] += np.triu(t[a], _k)


@rule(np.tril, shape=FIRST_DATA)
def tril(y, a, _k=0):
    d[a] += np.tril(d[y], _k)
    t[y] += np.tril(t[a], _k)


@rule(np.take, methods=("take",), shape=TWO_DATA)  # the shapes of a and indices fix y's
def take(y, a, indices, _axis=None, _out=None, _mode="raise"):
    d[a] += ops.untake(d[y], a, indices, _axis, _mode)
    t[y] += np.take(t[a], indices, axis=_axis, mode=_mode)


@rule(np.take_along_axis, shape=TWO_DATA)
def take_along_axis(y, arr, indices, _axis=-1):
    d[arr] += ops.untake_along_axis(d[y], arr, indices, _axis)
    t[y] += np.take_along_axis(t[arr], indices, _axis)


@rule(np.sort, shape=FIRST_DATA)
def sort(y, a, _axis=-1, **_kwargs):
    d[a] += ops.unsort(d[y], a, _axis)
    t[y] += np.take_along_axis(t[a], np.argsort(a, axis=_axis), _axis)


@rule(np.repeat, methods=("repeat",), shape=FIRST_DATA)
def repeat(y, a, _repeats, _axis=None):
    d[a] += ops.unrepeat_array(d[y], a, _repeats, _axis)
    t[y] += np.repeat(t[a], _repeats, _axis)


@rule(np.tile, shape=FIRST_DATA)
def tile(y, A, _reps):
    d[A] += ops.untile(d[y], A, _reps)
    t[y] += np.tile(t[A], _reps)


@rule(np.pad, shape=FIRST_DATA)
def pad(y, array, _pad_width, _mode="constant", constant_values=0, **_kwargs):
    d[array] += ops.unpad(d[y], array, _pad_width, _mode)
    d[constant_values] += ops.unpad_fill(d[y], array, _pad_width, _mode, constant_values)
    t[y] += np.pad(t[array], _pad_width, _mode)
    t[y] += np.pad(ops.zeros_like(array), _pad_width, constant_values=t[constant_values])


@rule(np.swapaxes, methods=("swapaxes",), shape=FIRST_DATA, passes=True)
def swapaxes(y, a, _axis1, _axis2):
    d[a] += np.swapaxes(d[y], _axis1, _axis2)
    t[y] += np.swapaxes(t[a], _axis1, _axis2)


@rule(np.moveaxis, shape=FIRST_DATA, passes=True)
def moveaxis(y, a, _source, _destination):
    d[a] += np.moveaxis(d[y], _destination, _source)
    t[y] += np.moveaxis(t[a], _source, _destination)


@rule(np.rot90, shape=FIRST_DATA, passes=True)
def rot90(y, m, _k=1, _axes=(0, 1)):
    d[m] += np.rot90(d[y], -_k, _axes)
    t[y] += np.rot90(t[m], _k, _axes)


@rule(np.fliplr, shape=FIRST_DATA, passes=True)
def fliplr(y, m):
    d[m] += np.flip(d[y], 1)
    t[y] += np.flip(t[m], 1)


@rule(np.flipud, shape=FIRST_DATA, passes=True)
def flipud(y, m):
    d[m] += np.flip(d[y], 0)
    t[y] += np.flip(t[m], 0)


@rule(np.diff, shape=FIRST_DATA, passes=True)  # n=0 returns a itself
def diff(y, a, _n=1, _axis=-1, prepend=None, append=None):
    d[a] += ops.undiff(d[y], a, _n, _axis, prepend, append, 0)
    d[prepend] += ops.undiff(d[y], a, _n, _axis, prepend, append, 1)
    d[append] += ops.undiff(d[y], a, _n, _axis, prepend, append, 2)
    t[y] += ops.diff(t[a], _n, _axis, t[prepend], t[append])


@rule(np.append, shape=TWO_DATA)
def append(y, arr, values, _axis=None):
    d[arr] += ops.unappend(d[y], arr, values, _axis, 0)
    d[values] += ops.unappend(d[y], arr, values, _axis, 1)
    t[y] += np.append(t[arr], t[values], _axis)


# Shape functions without a rule yet: what the passes may assume where they are used
# on values that are not differentiated.
# Each may hand back its first argument, a view of it or a list of views, as numpy's
# own ``np.shares_memory`` shows (``tests/test_alias_model.py``); ``np.unstack`` is
# numpy 2.1's.
_VIEWS_OF_FIRST = [
    np.asanyarray,
    np.asarray_chkfinite,
    np.ascontiguousarray,
    np.asfortranarray,
    np.asmatrix,
    np.require,
    np.rollaxis,
    np.hsplit,
    np.vsplit,
    np.dsplit,
    np.trim_zeros,
    np.frombuffer,
    np.lib.stride_tricks.as_strided,
    np.lib.stride_tricks.sliding_window_view,
    *[f for f in [getattr(np, "unstack", None)] if f is not None],
]
NO_RULE = (
    no_rule(methods=("view",), shape=FIRST_DATA, passes=True),
    no_rule(*_VIEWS_OF_FIRST, shape=VARIES, passes=True),
    no_rule(np.broadcast_arrays, np.meshgrid, shape=VARIES, shares=True),
    no_rule(np.nan_to_num, shape=VARIES, fresh=True, copy_keyword=True),
)


@rule(
    np.matrix_transpose,
    np.linalg.matrix_transpose,
    attributes=("mT",),
    shape=FIRST_DATA,
    passes=True,
)
def matrix_transpose(y, x):
    d[x] += ops.mT(d[y])
    t[y] += ops.mT(t[x])
