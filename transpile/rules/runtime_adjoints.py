"""The adjoints of numpy functions in ``transpile_runtime.ops`` (``unsort``, ``uncumsum``,
``unconcatenate``, ...), as rules: the second derivative of a function calling ``np.sort``,
``np.cumsum``, ``np.var`` ... differentiates its gradient's code, which calls them (those
of linear algebra and products: ``runtime_linalg.py``); the helpers live in the families
of ``runtime/ops/`` (``reductions.py``, ``shape.py``, ``indexing.py``, ``sequences.py``, ...).

Most are linear in their first argument, the adjoint flowing in, and read the others for
their shape, their axes or a permutation only (options here, never differentiated: a
permutation such as ``argsort`` is constant almost everywhere). The adjoint of such a
linear map is the numpy function it undoes (``d[g] += np.cumsum(d[r], axis=_axis)`` for a
reversed cumulative sum), and its tangent is the map itself applied to the tangent.
Each template calls only numpy functions and helpers that have rules themselves.
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import VARIES, nondiff, rule
from transpile_runtime import forward_ops, ops

NONDIFF = (nondiff(ops.fwinner, shape=VARIES, fresh=True),)  # fmax's weight: piecewise constant


@rule(ops.tangent_like, shape=VARIES, shares=True)
def tangent_like(r, tangent, _y):  # a tangent broadcast to its value's shape
    d[tangent] += ops.unbroadcast(d[r], tangent)
    t[r] += ops.tangent_like(t[tangent], _y)


@rule(ops.mT, shape=VARIES, passes=True)
def mT(r, a):
    d[a] += ops.mT(d[r])
    t[r] += ops.mT(t[a])


@rule(ops.unsort, shape=VARIES, fresh=True)
def unsort(r, g, _a, _axis=-1):
    d[g] += np.take_along_axis(d[r], np.argsort(_a, axis=_axis, kind="stable"), _axis)
    t[r] += ops.unsort(t[g], _a, _axis)


@rule(ops.uncumsum, shape=VARIES, fresh=True)
def uncumsum(r, g, _a, _axis=None):
    d[g] += np.cumsum(d[r], axis=_axis)
    t[r] += ops.uncumsum(t[g], _a, _axis)


@rule(ops.unconcatenate, shape=VARIES, passes=True, sequence_result=True)
def unconcatenate(r, g, _arrays, _axis=0):
    d[g] += np.concatenate(d[r], _axis)
    t[r] += ops.unconcatenate(t[g], _arrays, _axis)


@rule(ops.unstack, shape=VARIES, passes=True, sequence_result=True)
def unstack(r, g, _arrays, _axis=0):
    d[g] += np.stack(d[r], _axis)
    t[r] += ops.unstack(t[g], _arrays, _axis)


@rule(ops.unvstack, shape=VARIES, passes=True, sequence_result=True)
def unvstack(r, g, _arrays):
    d[g] += np.vstack(d[r])
    t[r] += ops.unvstack(t[g], _arrays)


@rule(ops.untrace, shape=VARIES, fresh=True)
def untrace(r, g, _a, _offset=0, _axis1=0, _axis2=1):
    d[g] += np.trace(d[r], _offset, _axis1, _axis2)
    t[r] += ops.untrace(t[g], _a, _offset, _axis1, _axis2)


@rule(ops.undiag, shape=VARIES, shares=True)
def undiag(r, g, _v, _k=0):  # the diagonal of a matrix, or a vector put on one
    d[g] += np.diag(d[r], _k)
    t[r] += ops.undiag(t[g], _v, _k)


@rule(ops.unroll, shape=VARIES, fresh=True)
def unroll(r, g, _shift, _axis=None):
    d[g] += np.roll(d[r], _shift, _axis)
    t[r] += ops.unroll(t[g], _shift, _axis)


@rule(ops.untile, shape=VARIES, fresh=True)
def untile(r, g, _a, _reps):
    d[g] += np.tile(d[r], _reps)
    t[r] += ops.untile(t[g], _a, _reps)


@rule(ops.unrepeat_array, shape=VARIES, fresh=True)
def unrepeat_array(r, g, _a, _repeats, _axis=None):
    d[g] += np.repeat(d[r], _repeats, _axis)
    t[r] += ops.unrepeat_array(t[g], _a, _repeats, _axis)


@rule(ops.unpad, shape=VARIES, fresh=True)
def unpad(r, g, _a, _pad_width, _mode="constant"):  # mode='constant' only: zeros around
    d[g] += np.pad(d[r], _pad_width)
    t[r] += ops.unpad(t[g], _a, _pad_width, _mode)


@rule(ops.untake_along_axis, shape=VARIES, fresh=True)
def untake_along_axis(r, g, _arr, _indices, _axis=-1):
    d[g] += np.take_along_axis(d[r], _indices, _axis)
    t[r] += ops.untake_along_axis(t[g], _arr, _indices, _axis)


# Adjoints that also depend on a differentiated value: linear in each, or through rules.


@rule(ops.unvar, shape=VARIES, fresh=True)
def unvar(r, g, a, _axis=None, _ddof=0, _keepdims=False):  # g (a - mean a) 2 / n: bilinear
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unvar(np.ones_like(g), a, _axis, _ddof, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    # centring is its own adjoint: centre g d[r] (ones_like(g) only scales by 2 / n)
    d[a] += ops.unvar(
        np.ones_like(g), ops.unreduce(g, a, _axis, _keepdims) * d[r], _axis, _ddof, _keepdims
    )
    t[r] += ops.unvar(t[g], a, _axis, _ddof, _keepdims)
    t[r] += ops.unvar(g, t[a], _axis, _ddof, _keepdims)


# Linear in the cotangent, with weights that are constant almost everywhere (the
# entries attaining an extreme, the middle of a sort, the entries that are not nan).


@rule(ops.unnan_extreme, shape=VARIES, fresh=True)
def unnan_extreme(r, g, _y, _x, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unnan_extreme(np.ones_like(_y), _y, _x, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    t[r] += ops.unnan_extreme(t[g], _y, _x, _axis, _keepdims)


@rule(ops.unptp, shape=VARIES, fresh=True)
def unptp(r, g, _a, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unptp(np.ones_like(g), _a, _axis, _keepdims), axis=_axis, keepdims=_keepdims
        ),
        g,
    )
    t[r] += ops.unptp(t[g], _a, _axis, _keepdims)


@rule(ops.unmedian, shape=VARIES, fresh=True)
def unmedian(r, g, _a, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unmedian(np.ones_like(g), _a, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    t[r] += ops.unmedian(t[g], _a, _axis, _keepdims)


@rule(ops.unnanmean, shape=VARIES, fresh=True)
def unnanmean(r, g, _a, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unnanmean(np.ones_like(g), _a, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    t[r] += ops.unnanmean(t[g], _a, _axis, _keepdims)


# Linear maps of lists and joins: their adjoints put the pieces back.


@rule(ops.spread, shape=VARIES, shares=True)
def spread(r, g, _items):
    d[g] += ops.unspread(d[r], g)
    t[r] += ops.spread(t[g], _items)


@rule(ops.head, shape=VARIES, passes=True, sequence_result=True)
def head(r, g, _x):
    d[g] += ops.unhead(d[r], g)
    t[r] += ops.head(t[g], _x)


@rule(ops.tail, shape=VARIES, passes=True, sequence_result=True)
def tail(r, g, _y):
    d[g] += ops.untail(d[r], g)
    t[r] += ops.tail(t[g], _y)


@rule(ops.unrepeat, shape=VARIES, passes=True, sequence_result=True)
def unrepeat(r, g, _x):
    d[g] += ops.reunrepeat(d[r], g)
    t[r] += ops.unrepeat(t[g], _x)


@rule(ops.unjoin, shape=VARIES, passes=True, sequence_result=True)
def unjoin(r, g, _arrays, _how):
    d[g] += ops.rejoin(d[r], _how)
    t[r] += ops.unjoin(t[g], _arrays, _how)


@rule(ops.unatleast, shape=VARIES, passes=True, sequence_result=True)
def unatleast(r, g, _arrays, _index):
    d[g] += ops.reatleast(d[r], g, _index)
    t[r] += ops.unatleast(t[g], _arrays, _index)


@rule(ops.undiff, shape=VARIES, fresh=True)
def undiff(r, g, _a, _n=1, _axis=-1, _prepend=None, _append=None, _which=0):
    d[g] += ops.rediff(d[r], _a, _n, _axis, _prepend, _append, _which)
    t[r] += ops.undiff(t[g], _a, _n, _axis, _prepend, _append, _which)


@rule(ops.unappend, shape=VARIES, passes=True)
def unappend(r, g, _arr, _values, _axis=None, _which=0):
    d[g] += ops.reappend(d[r], _arr, _values, _axis, _which)
    t[r] += ops.unappend(t[g], _arr, _values, _axis, _which)


@rule(ops.undiagonal, shape=VARIES, fresh=True)
def undiagonal(r, g, _a, _offset=0, _axis1=0, _axis2=1):
    d[g] += np.diagonal(d[r], _offset, _axis1, _axis2)
    t[r] += ops.undiagonal(t[g], _a, _offset, _axis1, _axis2)


@rule(ops.uncast, shape=VARIES, passes=True)
def uncast(r, g, _y, _x):  # g in x's type, or zeros where y holds integers
    d[g] += ops.uncast(d[r], _y, g)
    t[r] += ops.uncast(t[g], _y, _x)


@rule(ops.unarray_cast, shape=VARIES, passes=True)
def unarray_cast(r, g, _y, _a):  # g in a's structure, or zeros where y holds integers
    d[g] += ops.unarray_cast(np.array(d[r]), _y, _y)
    t[r] += ops.unarray_cast(t[g], _y, _a)


@rule(ops.uncumprod, shape=VARIES, fresh=True)
def uncumprod(r, g, _y, a, _axis=None):  # J(a)^T g, y = cumprod(a): the slope holds y's part
    d[g] += forward_ops.cumprod(d[r], _y, a, _axis)
    d[a] += ops.uncumprod_slope(g, d[r], a, _axis)
    t[r] += ops.uncumprod(t[g], _y, a, _axis)
    t[r] += ops.uncumprod_slope(g, t[a], a, _axis)


@rule(ops.unaverage, shape=VARIES, fresh=True)
def unaverage(r, g, _a, _axis=None, weights=None, _keepdims=False, _returned=False):
    # linear in g; differentiated weights (a second derivative in them) are refused
    d[g] += ops.reaverage(d[r], g, _a, _axis, weights, _keepdims, _returned)
    t[r] += ops.unaverage(t[g], _a, _axis, weights, _keepdims, _returned)
