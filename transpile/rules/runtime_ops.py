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

from transpile.rules.declare import VARIES, nondiff, rule
from transpile.template import d
from transpile_runtime import ops

NONDIFF = (
    nondiff(ops.seed, ops.zeros_like, shape=VARIES, fresh=True),
    nondiff(ops.shape_of, ops.reduced_size, ops.winner, ops.inside, shape=VARIES),
    nondiff(ops.broadcast_like, shape=VARIES, shares=True),
)


@rule(ops.unbroadcast, shape=VARIES, passes=True)
def unbroadcast(y, g, _x):
    d[g] += ops.unreduce(d[y], g)


@rule(ops.unreduce, shape=VARIES, shares=True)
def unreduce(y, g, _x, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(np.sum(d[y], axis=_axis, keepdims=_keepdims), g)


@rule(ops.unmean, shape=VARIES, shares=True)
def unmean(y, g, _x, _axis=None, _keepdims=False):
    d[g] += ops.unbroadcast(np.sum(d[y], axis=_axis, keepdims=_keepdims), g) / ops.reduced_size(
        _x, _axis
    )


@rule(ops.matmul_left, shape=VARIES, fresh=True)
def matmul_left(z, g, _x, b):
    d[g] += d[z] @ b
    d[b] += ops.matmul_right(g, d[z], b)


@rule(ops.matmul_right, shape=VARIES, fresh=True)
def matmul_right(z, g, a, _y):
    d[g] += a @ d[z]
    d[a] += ops.matmul_left(g, a, d[z])


@rule(ops.owned, ops.real_only, shape=VARIES, passes=True)
def owned(y, value, *_args):
    d[value] += d[y]


@rule(ops.copy, shape=VARIES, fresh=True)
def copy(y, x):
    d[x] += d[y]


@rule(ops.cotangent, shape=VARIES, passes=True)
def cotangent(y, dout, _out):
    d[dout] += d[y]


@rule(ops.like, shape=VARIES, passes=True)
def like(y, g, _x):
    d[g] += ops.like(d[y], g)


@rule(ops.cast_like, shape=VARIES, passes=True)
def cast_like(y, g, _x):
    d[g] += ops.cast_like(d[y], g)


@rule(ops.add, shape=VARIES, shares=True)
def add(y, a, b):
    d[a] += d[y]
    d[b] += d[y]


@rule(ops.select, shape=VARIES, fresh=True)
def select(y, _condition, a, b):
    d[a] += ops.unbroadcast(ops.select(_condition, d[y], 0.0), a)
    d[b] += ops.unbroadcast(ops.select(_condition, 0.0, d[y]), b)


@rule(ops.untake, shape=VARIES, fresh=True)
def untake(y, g, _a, _indices, _axis=None, _mode="raise"):
    d[g] += np.take(d[y], _indices, axis=_axis, mode=_mode)


@rule(ops.pow_slope, shape=VARIES, fresh=True)
def pow_slope(s, x, y):  # y * x ** (y - 1); a differentiated exponent y is refused
    d[x] += ops.unbroadcast(d[s] * y * ops.pow_slope(x, y - 1), x)


@rule(ops.pow_log, shape=VARIES, fresh=True)
def pow_log(s, z, x):  # z * log(x), 0 where x is 0
    d[z] += ops.unbroadcast(ops.pow_log(d[s], x), z)
    d[x] += ops.unbroadcast(ops.hypot_slope(d[s] * z, x), x)


@rule(ops.hypot_slope, shape=VARIES, fresh=True)
def hypot_slope(s, x, z):  # x / z, 0 where z is 0
    d[x] += ops.unbroadcast(ops.hypot_slope(d[s], z), x)
    d[z] -= ops.unbroadcast(ops.hypot_slope(d[s] * s, z), z)
