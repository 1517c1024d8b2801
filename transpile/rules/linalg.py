"""Linear algebra: products, inverses, determinants, solves, traces and diagonals."""

import numpy as np

from runtime import ops
from transpile.template import d, position


def outer(y, a, b):
    d[a] += np.reshape(d[y] @ np.ravel(b), np.shape(a))
    d[b] += np.reshape(np.ravel(a) @ d[y], np.shape(b))


def inner_1d(y, a, b):
    d[a] += ops.unbroadcast(d[y] * b, a)
    d[b] += ops.unbroadcast(d[y] * a, b)


def inv(y, a):
    d[a] -= ops.mT(y) @ d[y] @ ops.mT(y)


def det(y, a):
    d[a] += ops.undet(d[y], y, a)


def solve(x, a, b):
    d[b] += ops.solve_rhs_adjoint(d[x], a, b)
    d[a] += ops.solve_matrix_adjoint(d[x], a, b, x)


def trace(y, a, _offset=0, _axis1=0, _axis2=1, **_kwargs):
    d[a] += ops.untrace(d[y], a, _offset, _axis1, _axis2)


def diag(y, v, _k=0):
    d[v] += ops.undiag(d[y], v, _k)


def einsum(y, _subscripts, *operands, **_kwargs):
    d[operands] += ops.uneinsum(d[y], _subscripts, operands, position)


REVERSE = [
    (np.einsum, einsum),
    (np.outer, outer),
    (np.vdot, inner_1d),
    (np.linalg.inv, inv),
    (np.linalg.det, det),
    (np.linalg.solve, solve),
    (np.trace, trace),
    (np.diag, diag),
]
METHODS = {"trace": trace}
