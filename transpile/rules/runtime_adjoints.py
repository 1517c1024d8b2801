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

from transpile.rules.declare import VARIES, rule
from transpile.template import d, t
from transpile_runtime import ops


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
