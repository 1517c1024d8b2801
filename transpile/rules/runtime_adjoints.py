"""The adjoints of numpy functions in ``transpile_runtime.ops`` (``unsort``, ``uncumsum``,
``unconcatenate``, ...), as rules: the second derivative of a function calling ``np.sort``,
``np.cumsum``, ``np.linalg.solve`` ... differentiates its gradient's code, which calls them.

Most are linear in their first argument, the adjoint flowing in, and read the others for
their shape, their axes or a permutation only (options here, never differentiated: a
permutation such as ``argsort`` is constant almost everywhere). The adjoint of such a
linear map is the numpy function it undoes (``d[g] += np.cumsum(d[r], axis=_axis)`` for a
reversed cumulative sum), and its tangent is the map itself applied to the tangent.
Each template calls only numpy functions and helpers that have rules themselves.
"""

import numpy as np

from transpile.rules.declare import VARIES, nondiff, rule
from transpile.template import d, t
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


@rule(ops.unconcatenate, shape=VARIES, passes=True)
def unconcatenate(r, g, _arrays, _axis=0):
    d[g] += np.concatenate(d[r], _axis)
    t[r] += ops.unconcatenate(t[g], _arrays, _axis)


@rule(ops.unstack, shape=VARIES, passes=True)
def unstack(r, g, _arrays, _axis=0):
    d[g] += np.stack(d[r], _axis)
    t[r] += ops.unstack(t[g], _arrays, _axis)


@rule(ops.unvstack, shape=VARIES, passes=True)
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


@rule(ops.solve_rhs_adjoint, shape=VARIES, fresh=True)
def solve_rhs_adjoint(r, g, a, _b):  # r = solve(a^T, g)
    d[g] += np.linalg.solve(a, d[r])
    d[a] += ops.mT(ops.solve_matrix_adjoint(d[r], ops.mT(a), g, r))
    t[r] += ops.solve_rhs_adjoint(t[g], a, _b)
    t[r] -= ops.solve_rhs_adjoint(ops.mT(t[a]) @ r, a, _b)


@rule(ops.solve_matrix_adjoint, shape=VARIES, fresh=True)
def solve_matrix_adjoint(r, g, a, _b, x):  # -solve(a^T, g) x^T: linear in g and x; b: its ndim
    d[g] -= np.linalg.solve(a, d[r] @ x)
    d[x] -= ops.mT(d[r]) @ ops.solve_rhs_adjoint(g, a, _b)
    d[a] -= ops.mT(
        ops.solve_matrix_adjoint(d[r] @ x, ops.mT(a), g, ops.solve_rhs_adjoint(g, a, _b))
    )
    t[r] += ops.solve_matrix_adjoint(t[g], a, _b, x)
    t[r] += ops.solve_matrix_adjoint(g, a, _b, t[x])
    t[r] -= ops.solve_matrix_adjoint(ops.mT(t[a]) @ ops.solve_rhs_adjoint(g, a, _b), a, _b, x)


@rule(ops.undet, shape=VARIES, fresh=True)
def undet(r, g, _y, a):  # g y a^-T, with y = det(a): the slope holds y's dependence on a
    d[g] += ops.unbroadcast(np.sum(d[r] * ops.undet(np.ones_like(g), _y, a), axis=(-2, -1)), g)
    d[a] += ops.undet_slope(g, d[r], _y, a)
    t[r] += ops.undet(t[g], _y, a)
    t[r] += ops.undet_slope(g, t[a], _y, a)


@rule(ops.unslogdet, shape=VARIES, fresh=True)
def unslogdet(r, g, a):  # g[1] a^-T
    d[g] += ops.unslogdet_cotangent(d[r], g, a)
    d[a] += ops.unslogdet_slope(g, d[r], a)
    t[r] += ops.unslogdet(t[g], a)
    t[r] += ops.unslogdet_slope(g, t[a], a)


# Products: the adjoint of one operand is linear in the cotangent and in the other
# operands, and reads its own operand for its shape.


@rule(ops.dot_left, shape=VARIES, fresh=True)
def dot_left(r, g, _x, y):
    d[g] += np.dot(d[r], y)
    d[y] += ops.dot_right(g, d[r], y)
    t[r] += ops.dot_left(t[g], _x, y)
    t[r] += ops.dot_left(g, _x, t[y])


@rule(ops.dot_right, shape=VARIES, fresh=True)
def dot_right(r, g, x, _y):
    d[g] += np.dot(x, d[r])
    d[x] += ops.dot_left(g, x, d[r])
    t[r] += ops.dot_right(t[g], x, _y)
    t[r] += ops.dot_right(g, t[x], _y)


@rule(ops.untensordot_a, shape=VARIES, fresh=True)
def untensordot_a(r, g, _a, b, _axes):
    d[g] += np.tensordot(d[r], b, _axes)
    d[b] += ops.untensordot_b(g, d[r], b, _axes)
    t[r] += ops.untensordot_a(t[g], _a, b, _axes)
    t[r] += ops.untensordot_a(g, _a, t[b], _axes)


@rule(ops.untensordot_b, shape=VARIES, fresh=True)
def untensordot_b(r, g, a, _b, _axes):
    d[g] += np.tensordot(a, d[r], _axes)
    d[a] += ops.untensordot_a(g, a, d[r], _axes)
    t[r] += ops.untensordot_b(t[g], a, _b, _axes)
    t[r] += ops.untensordot_b(g, t[a], _b, _axes)


@rule(ops.unkron_a, shape=VARIES, fresh=True)
def unkron_a(r, g, _a, b):
    d[g] += np.kron(d[r], b)
    d[b] += ops.unkron_b(g, d[r], b)
    t[r] += ops.unkron_a(t[g], _a, b)
    t[r] += ops.unkron_a(g, _a, t[b])


@rule(ops.unkron_b, shape=VARIES, fresh=True)
def unkron_b(r, g, a, _b):
    d[g] += np.kron(a, d[r])
    d[a] += ops.unkron_a(g, a, d[r])
    t[r] += ops.unkron_b(t[g], a, _b)
    t[r] += ops.unkron_b(g, t[a], _b)


@rule(ops.uneinsum_any, shape=VARIES, shares=True)
def uneinsum_any(r, g, _subscripts, operands, _index):
    d[g] += np.einsum(_subscripts, *ops.replaced(operands, _index, d[r]))
    d[operands] += ops.uneinsum_others(d[r], g, _subscripts, operands, _index)
    t[r] += ops.uneinsum_any(t[g], _subscripts, operands, _index)
    t[r] += ops.uneinsum_tangent(g, _subscripts, operands, t[operands], _index)


@rule(ops.unnorm_ord, shape=VARIES, fresh=True)
def unnorm_ord(r, g, y, x, _ord=None, _axis=None, _keepdims=False):  # g times the slope
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unnorm_ord(np.ones_like(g), y, x, _ord, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    d[x] += ops.unnorm_slope(g, d[r], y, x, _ord, _axis, _keepdims)
    d[y] += ops.unnorm_norm_adjoint(d[r], g, y, x, _ord, _axis, _keepdims)
    t[r] += ops.unnorm_ord(t[g], y, x, _ord, _axis, _keepdims)
    t[r] += ops.unnorm_slope(g, t[x], y, x, _ord, _axis, _keepdims)
    t[r] += ops.unnorm_norm_tangent(g, t[y], y, x, _ord, _axis, _keepdims)


@rule(ops.uninner_a, shape=VARIES, fresh=True)
def uninner_a(r, g, _a, b):
    d[g] += np.inner(d[r], b)
    d[b] += ops.uninner_b(g, d[r], b)
    t[r] += ops.uninner_a(t[g], _a, b)
    t[r] += ops.uninner_a(g, _a, t[b])


@rule(ops.uninner_b, shape=VARIES, fresh=True)
def uninner_b(r, g, a, _b):
    d[g] += np.inner(a, d[r])
    d[a] += ops.uninner_a(g, a, d[r])
    t[r] += ops.uninner_b(t[g], a, _b)
    t[r] += ops.uninner_b(g, t[a], _b)


@rule(ops.unvecdot, shape=VARIES, fresh=True)
def unvecdot(r, g, other, _mine, _axis=-1):
    d[g] += ops.unbroadcast(np.vecdot(d[r], other, axis=_axis), g)
    d[other] += ops.unvecdot(g, d[r], other, _axis)
    t[r] += ops.unvecdot(t[g], other, _mine, _axis)
    t[r] += ops.unvecdot(g, t[other], _mine, _axis)


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


@rule(ops.head, shape=VARIES, passes=True)
def head(r, g, _x):
    d[g] += ops.unhead(d[r], g)
    t[r] += ops.head(t[g], _x)


@rule(ops.tail, shape=VARIES, passes=True)
def tail(r, g, _y):
    d[g] += ops.untail(d[r], g)
    t[r] += ops.tail(t[g], _y)


@rule(ops.unrepeat, shape=VARIES, passes=True)
def unrepeat(r, g, _x):
    d[g] += ops.reunrepeat(d[r], g)
    t[r] += ops.unrepeat(t[g], _x)


@rule(ops.unjoin, shape=VARIES, passes=True)
def unjoin(r, g, _arrays, _how):
    d[g] += ops.rejoin(d[r], _how)
    t[r] += ops.unjoin(t[g], _arrays, _how)


@rule(ops.unatleast, shape=VARIES, passes=True)
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


@rule(ops.uncholesky, shape=VARIES, fresh=True)
def uncholesky(r, g, y, _upper=False):  # linear in g; y, the factor, through its inverse
    d[g] += ops.uncholesky_cotangent(d[r], y, _upper)
    d[y] += ops.uncholesky_factor_adjoint(d[r], g, y, _upper)
    t[r] += ops.uncholesky(t[g], y, _upper)
    t[r] += ops.uncholesky_factor_tangent(g, t[y], y, _upper)
