"""The runtime helpers that generated code calls (``transpile_runtime.ops``), as rules:
a gradient made by this library is ordinary numpy code calling them, so with these it
can be differentiated again (``grad(grad(f))``, ``higher``).

Most helpers are linear in their first argument, the adjoint flowing in, and read the
others for their shape only (options here, never differentiated): the adjoint of
summing over broadcast axes is broadcasting back, and the other way round. The two
matrix-product adjoints are bilinear. Each template calls only numpy functions and
helpers that have rules themselves, so a third derivative needs nothing more.
Helpers that make constants (the seed, zeros, shapes, masks) end differentiation.
Every declared shape is ``VARIES``: a body calling these is never shape-specialized.
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import VARIES, nondiff, rule
from transpile_runtime import complex_ops, ops

NONDIFF = (
    nondiff(ops.seed, ops.zeros_like, shape=VARIES, fresh=True),
    nondiff(ops.shape_of, ops.reduced_size, ops.winner, ops.inside, shape=VARIES),
    nondiff(ops.broadcast_like, shape=VARIES, shares=True),
    nondiff(ops.keys, shape=VARIES, fresh=True),
)


@rule(ops.unbroadcast, shape=VARIES, passes=True)
def unbroadcast(y, g, _x):
    d[g] += ops.unreduce(d[y], g)
    t[y] += ops.unbroadcast(t[g], _x)


@rule(ops.unreduce, shape=VARIES, shares=True)
def unreduce(y, g, _x, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(np.sum(d[y], axis=_axis, keepdims=_keepdims), g)
    t[y] += ops.unreduce(t[g], _x, _axis, _keepdims)


@rule(ops.unmean, shape=VARIES, shares=True)
def unmean(y, g, _x, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(np.sum(d[y], axis=_axis, keepdims=_keepdims), g) / ops.reduced_size(
        _x, _axis
    )
    t[y] += ops.unmean(t[g], _x, _axis, _keepdims)


@rule(ops.matmul_left, shape=VARIES, fresh=True)
def matmul_left(z, g, _x, b):
    d[g] += d[z] @ b
    d[b] += ops.matmul_right(g, d[z], b)
    t[z] += ops.matmul_left(t[g], _x, b)
    t[z] += ops.matmul_left(g, _x, t[b])


@rule(ops.matmul_right, shape=VARIES, fresh=True)
def matmul_right(z, g, a, _y):
    d[g] += a @ d[z]
    d[a] += ops.matmul_left(g, a, d[z])
    t[z] += ops.matmul_right(t[g], a, _y)
    t[z] += ops.matmul_right(g, t[a], _y)


@rule(ops.owned, ops.real_only, complex_ops.real_only, shape=VARIES, passes=True)
def owned(y, value, *_args):
    d[value] += d[y]
    t[y] += t[value]


@rule(ops.copy, shape=VARIES, fresh=True)
def copy(y, x):
    d[x] += d[y]
    t[y] += ops.copy(t[x])  # a fresh array: the code may write into either afterwards


@rule(ops.cotangent, shape=VARIES, passes=True)
def cotangent(y, dout, _out):
    d[dout] += d[y]
    t[y] += t[dout]


@rule(ops.contribution, shape=VARIES, passes=True)
def contribution(y, value, _arg, _rule, _param):
    d[value] += d[y]
    t[y] += t[value]


@rule(complex_ops.real_like, shape=VARIES, passes=True)
def real_like(y, g, _buf, _index=None):
    d[g] += d[y]
    t[y] += complex_ops.real_like(t[g], _buf, _index)


@rule(ops.like, shape=VARIES, passes=True)
def like(y, g, _x):
    d[g] += ops.like(d[y], g)
    t[y] += ops.like(t[g], _x)


@rule(ops.cast_like, shape=VARIES, passes=True)
def cast_like(y, g, _x):
    d[g] += ops.cast_like(d[y], g)
    t[y] += ops.cast_like(t[g], _x)


@rule(ops.add, shape=VARIES, shares=True)
def add(y, a, b):
    d[a] += d[y]
    d[b] += d[y]
    t[y] += ops.add(t[a], t[b])  # one term: + would concatenate lists


@rule(ops.select, shape=VARIES, fresh=True)
def select(y, _condition, a, b):
    d[a] += ops.unbroadcast(ops.select(_condition, d[y], 0.0), a)
    d[b] += ops.unbroadcast(ops.select(_condition, 0.0, d[y]), b)
    t[y] += ops.select(_condition, t[a], 0.0)
    t[y] += ops.select(_condition, 0.0, t[b])


@rule(ops.untake, shape=VARIES, fresh=True)
def untake(y, g, _a, _indices, _axis=None, _mode="raise"):
    d[g] += np.take(d[y], _indices, axis=_axis, mode=_mode)
    t[y] += ops.untake(t[g], _a, _indices, _axis, _mode)


@rule(ops.pow_slope, shape=VARIES, fresh=True)
def pow_slope(s, x, y):  # y * x ** (y - 1); a differentiated exponent y is refused
    d[x] += ops.unbroadcast(d[s] * y * ops.pow_slope(x, y - 1), x)
    t[s] += t[x] * y * ops.pow_slope(x, y - 1)


@rule(ops.pow_log, shape=VARIES, fresh=True)
def pow_log(s, z, x):  # z * log(x), 0 where x is 0
    d[z] += ops.unbroadcast(ops.pow_log(d[s], x), z)
    d[x] += ops.unbroadcast(ops.hypot_slope(d[s] * z, x), x)
    t[s] += ops.pow_log(t[z], x)
    t[s] += ops.hypot_slope(t[x] * z, x)


@rule(ops.hypot_slope, shape=VARIES, fresh=True)
def hypot_slope(s, x, z):  # x / z, 0 where z is 0
    d[x] += ops.unbroadcast(ops.hypot_slope(d[s], z), x)
    d[z] -= ops.unbroadcast(ops.hypot_slope(d[s] * s, z), z)
    t[s] += ops.hypot_slope(t[x], z)
    t[s] -= ops.hypot_slope(t[z] * s, z)


@rule(ops.unreduce_extreme, shape=VARIES, fresh=True)
def unreduce_extreme(r, g, _y, _x, _axis=None, _keepdims=False):
    # linear in g; the share of each element that attains the extreme is piecewise
    # constant in x, so its derivative is zero wherever it exists
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unreduce_extreme(np.ones_like(_y), _y, _x, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    t[r] += ops.unreduce_extreme(t[g], _y, _x, _axis, _keepdims)


@rule(ops.unreduce_prod, shape=VARIES, fresh=True)
def unreduce_prod(r, g, x, _axis=None, _keepdims=False):
    # linear in g; differentiated in x (a second derivative of np.prod) it is refused
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unreduce_prod(np.ones_like(g), x, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    t[r] += ops.unreduce_prod(t[g], x, _axis, _keepdims)


@rule(ops.untranspose, shape=VARIES, passes=True)
def untranspose(r, g, _axes=None):
    d[g] += ops.retranspose(d[r], _axes)
    t[r] += ops.untranspose(t[g], _axes)


@rule(ops.retranspose, shape=VARIES, passes=True)
def retranspose(r, g, _axes=None):
    d[g] += ops.untranspose(d[r], _axes)
    t[r] += ops.retranspose(t[g], _axes)


@rule(ops.scatter_added, shape=VARIES, fresh=True)
def scatter_added(r, buf, _index, g):
    d[buf] += d[r]
    d[g] += ops.unbroadcast(ops.gather(d[r], _index), g)
    t[r] += ops.scatter_added(t[buf], _index, t[g])  # one term: buf may be a list


@rule(ops.gather, shape=VARIES, shares=True)
def gather(r, a, _index):
    d[a] += ops.scatter_added(ops.zeros_like(a), _index, d[r])
    t[r] += ops.gather(t[a], _index)


@rule(ops.inner, shape=VARIES, fresh=True)
def inner(r, a, b):
    d[a] += ops.scaled(b, d[r])
    d[b] += ops.scaled(a, d[r])
    t[r] += ops.inner(t[a], b)
    t[r] += ops.inner(a, t[b])


@rule(ops.scaled, shape=VARIES, fresh=True)
def scaled(r, tree, s):
    d[tree] += ops.scaled(d[r], s)
    d[s] += ops.inner(d[r], tree)
    t[r] += ops.add(ops.scaled(t[tree], s), ops.scaled(tree, t[s]))  # a structure


# ``for item in seq`` where ``seq`` may be a dict: its keys carry no derivative
@rule(ops.iterated, shape=VARIES, passes=True)
def iterated(y, seq):
    d[seq] += ops.uniterated(d[y], seq)
    t[y] += ops.iterated_tangent(t[seq], seq)


@rule(ops.uniterated, shape=VARIES, passes=True)
def uniterated(y, g, _seq):
    d[g] += ops.iterated_tangent(d[y], _seq)
    t[y] += ops.uniterated(t[g], _seq)


@rule(ops.iterated_tangent, shape=VARIES, passes=True)
def iterated_tangent(y, g, _seq):
    d[g] += ops.uniterated(d[y], _seq)
    t[y] += ops.iterated_tangent(t[g], _seq)
