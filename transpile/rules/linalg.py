"""Linear algebra: products (outer, einsum, kron, tensordot), inverses, determinants,
solves, traces, diagonals, and decompositions (slogdet, cholesky, eigh, svd, qr, pinv);
inner, cross, matrix_power, multi_dot, eigvalsh, lstsq."""

import numpy as np

from transpile.core.template import d, position, t
from transpile.rules.declare import (
    ALL_DATA,
    FIRST_DATA,
    SEQUENCE_FIRST,
    SUBSCRIPTS_FIRST,
    TWO_DATA,
    rule,
)
from transpile_runtime import complex_ops, forward_ops, ops


@rule(np.outer, np.linalg.outer, shape=ALL_DATA)
def outer(y, a, b):
    d[a] += np.reshape(d[y] @ np.ravel(b), np.shape(a))
    d[b] += np.reshape(np.ravel(a) @ d[y], np.shape(b))
    t[y] += np.outer(t[a], b)
    t[y] += np.outer(a, t[b])


@rule(np.linalg.inv, shape=ALL_DATA)
def inv(y, a):
    d[a] -= ops.mT(y) @ d[y] @ ops.mT(y)
    t[y] -= y @ t[a] @ y


@rule(np.linalg.det, shape=ALL_DATA)
def det(y, a):
    d[a] += ops.undet(d[y], y, a)
    t[y] += np.sum(ops.undet(np.ones_like(y), y, a) * t[a], axis=(-2, -1))


@rule(np.linalg.solve, shape=ALL_DATA)
def solve(x, a, b):
    d[b] += ops.solve_rhs_adjoint(d[x], a, b)
    d[a] += ops.solve_matrix_adjoint(d[x], a, b, x)
    t[x] += np.linalg.solve(a, t[b])
    t[x] -= np.linalg.solve(a, t[a] @ x)


@rule(np.trace, methods=("trace",), shape=FIRST_DATA)
def trace(y, a, _offset=0, _axis1=0, _axis2=1, **_kwargs):
    d[a] += ops.untrace(d[y], a, _offset, _axis1, _axis2)
    t[y] += np.trace(t[a], _offset, _axis1, _axis2)


@rule(np.diag, shape=FIRST_DATA, shares=True)  # of a matrix: a read-only view
def diag(y, v, _k=0):
    d[v] += ops.undiag(d[y], v, _k)
    t[y] += np.diag(t[v], _k)


@rule(np.einsum, shape=SUBSCRIPTS_FIRST, shares=True)  # one operand: maybe a view
def einsum(y, _subscripts, *operands, **_kwargs):
    d[operands] += ops.uneinsum_any(d[y], _subscripts, operands, position)
    t[y] += np.einsum(_subscripts, *ops.replaced(operands, position, t[operands]))


@rule(np.kron, shape=ALL_DATA)
def kron(y, a, b):
    d[a] += ops.unkron_a(d[y], a, b)
    d[b] += ops.unkron_b(d[y], a, b)
    t[y] += np.kron(t[a], b)
    t[y] += np.kron(a, t[b])


@rule(np.tensordot, np.linalg.tensordot, shape=TWO_DATA)
def tensordot(y, a, b, _axes=2):
    d[a] += ops.untensordot_a(d[y], a, b, _axes)
    d[b] += ops.untensordot_b(d[y], a, b, _axes)
    t[y] += np.tensordot(t[a], b, _axes)
    t[y] += np.tensordot(a, t[b], _axes)


# Decompositions. Those with several results (slogdet, eigh, svd, qr) return a tuple;
# its adjoint ``d[y]`` is a list with one entry per result (zeros for results unused).


@rule(np.linalg.slogdet, shape=ALL_DATA, sequence_result=True)
def slogdet(y, a):
    d[a] += ops.unslogdet(d[y], a)
    t[y] += forward_ops.slogdet(y, a, t[a])


@rule(np.linalg.cholesky, shape=ALL_DATA)
def cholesky(y, a, *, _upper=False):
    d[a] += ops.uncholesky(d[y], complex_ops.real_only(y, "np.linalg.cholesky"), _upper)
    t[y] += forward_ops.cholesky(complex_ops.real_only(y, "np.linalg.cholesky"), t[a], _upper)


@rule(np.linalg.svd, shape=FIRST_DATA, sequence_result=True)
def svd(y, a, _full_matrices=True, _compute_uv=True, _hermitian=False):
    d[a] += ops.unsvd(
        d[y], y, complex_ops.real_only(a, "np.linalg.svd"), _full_matrices, _compute_uv, _hermitian
    )
    t[y] += forward_ops.svd(
        y, complex_ops.real_only(a, "np.linalg.svd"), t[a], _full_matrices, _compute_uv, _hermitian
    )


@rule(np.linalg.qr, shape=FIRST_DATA, sequence_result=True)
def qr(y, a, _mode="reduced"):
    d[a] += ops.unqr(d[y], y, complex_ops.real_only(a, "np.linalg.qr"), _mode)
    t[y] += forward_ops.qr(y, complex_ops.real_only(a, "np.linalg.qr"), t[a], _mode)


@rule(np.linalg.pinv, shape=FIRST_DATA)
def pinv(y, a, _rcond=None, _hermitian=False, **_kwargs):
    d[a] += ops.unpinv(d[y], y, a, _hermitian)
    t[y] += forward_ops.pinv(y, a, t[a], _hermitian)


@rule(np.diagonal, methods=("diagonal",), shape=FIRST_DATA, shares=True)  # a read-only view
def diagonal(y, a, _offset=0, _axis1=0, _axis2=1):
    d[a] += ops.undiagonal(d[y], a, _offset, _axis1, _axis2)
    t[y] += np.diagonal(t[a], _offset, _axis1, _axis2)


@rule(np.inner, shape=ALL_DATA)
def inner(y, a, b):
    d[a] += ops.uninner_a(d[y], a, b)
    d[b] += ops.uninner_b(d[y], a, b)
    t[y] += np.inner(t[a], b)
    t[y] += np.inner(a, t[b])


@rule(np.cross, np.linalg.cross, shape=TWO_DATA)
def cross(c, a, b, _axisa=-1, _axisb=-1, _axisc=-1, _axis=None):
    d[a] += ops.uncross(d[c], a, b, 0, _axisa, _axisb, _axisc, _axis)
    d[b] += ops.uncross(d[c], a, b, 1, _axisa, _axisb, _axisc, _axis)
    t[c] += forward_ops.cross(t[a], b, _axisa, _axisb, _axisc, _axis)
    t[c] += forward_ops.cross(a, t[b], _axisa, _axisb, _axisc, _axis)


@rule(np.linalg.matrix_power, shape=FIRST_DATA)
def matrix_power(y, a, _n):
    d[a] += ops.unmatrix_power(d[y], a, _n)
    t[y] += forward_ops.matrix_power(t[a], a, _n)


@rule(np.linalg.multi_dot, shape=SEQUENCE_FIRST)
def multi_dot(y, arrays, **_kwargs):
    d[arrays] += ops.unmulti_dot(d[y], arrays)
    t[y] += forward_ops.multi_dot(arrays, t[arrays])


@rule(np.linalg.lstsq, shape=TWO_DATA)  # (x, residuals, rank, s): through x and residuals
def lstsq(y, a, b, _rcond=None):
    d[a] += ops.unlstsq(d[y], y, a, b, 0)
    d[b] += ops.unlstsq(d[y], y, a, b, 1)
    t[y] += forward_ops.lstsq(y, a, b, t[a], t[b])  # one line: the tangent is a tuple


# The array-API spellings in np.linalg that work on the last two axes


@rule(np.linalg.diagonal, shape=FIRST_DATA, shares=True)  # a read-only view
def linalg_diagonal(y, x, *, _offset=0):
    d[x] += ops.undiagonal(d[y], x, _offset, -2, -1)
    t[y] += np.linalg.diagonal(t[x], offset=_offset)


@rule(np.linalg.trace, shape=FIRST_DATA)
def linalg_trace(y, x, *, _offset=0, _dtype=None):
    d[x] += ops.untrace(d[y], x, _offset, -2, -1)
    t[y] += np.linalg.trace(t[x], offset=_offset)


@rule(np.vecdot, np.linalg.vecdot, shape=ALL_DATA)
def vecdot(y, x1, x2, *, _axis=-1, **_kwargs):
    # sum(conj(x1) * x2): x1's adjoint is conjugated, x2's reads conj(x1)
    d[x1] += np.conj(ops.unvecdot(d[y], x2, x1, _axis))
    d[x2] += ops.unvecdot(d[y], np.conj(x1), x2, _axis)
    t[y] += np.vecdot(t[x1], x2, axis=_axis)
    t[y] += np.vecdot(x1, t[x2], axis=_axis)
