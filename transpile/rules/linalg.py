"""Linear algebra: products, inverses, determinants, solves, traces and diagonals."""

import numpy as np

from transpile.rules.declare import (
    ALL_DATA,
    FIRST_DATA,
    SUBSCRIPTS_FIRST,
    TWO_DATA,
    no_rule,
    rule,
)
from transpile.template import d, position
from transpile_runtime import ops


@rule(np.outer, shape=ALL_DATA)
def outer(y, a, b):
    d[a] += np.reshape(d[y] @ np.ravel(b), np.shape(a))
    d[b] += np.reshape(np.ravel(a) @ d[y], np.shape(b))


@rule(np.vdot, shape=ALL_DATA)
def inner_1d(y, a, b):
    d[a] += ops.unbroadcast(d[y] * b, a)
    d[b] += ops.unbroadcast(d[y] * a, b)


@rule(np.linalg.inv, shape=ALL_DATA)
def inv(y, a):
    d[a] -= ops.mT(y) @ d[y] @ ops.mT(y)


@rule(np.linalg.det, shape=ALL_DATA)
def det(y, a):
    d[a] += ops.undet(d[y], y, a)


@rule(np.linalg.solve, shape=ALL_DATA)
def solve(x, a, b):
    d[b] += ops.solve_rhs_adjoint(d[x], a, b)
    d[a] += ops.solve_matrix_adjoint(d[x], a, b, x)


@rule(np.trace, methods=("trace",), shape=FIRST_DATA)
def trace(y, a, _offset=0, _axis1=0, _axis2=1, **_kwargs):
    d[a] += ops.untrace(d[y], a, _offset, _axis1, _axis2)


@rule(np.diag, shape=FIRST_DATA, shares=True)  # of a matrix: a read-only view
def diag(y, v, _k=0):
    d[v] += ops.undiag(d[y], v, _k)


@rule(np.einsum, shape=SUBSCRIPTS_FIRST, shares=True)  # one operand: maybe a view
def einsum(y, _subscripts, *operands, **_kwargs):
    d[operands] += ops.uneinsum(d[y], _subscripts, operands, position)


# Products without a rule yet: what the passes may assume where they are used on
# values that are not differentiated.
NO_RULE = (no_rule(np.inner, shape=ALL_DATA), no_rule(np.tensordot, shape=TWO_DATA))
