"""The runtime adjoints of numpy functions called directly (``rules/runtime_adjoints.py``):
one function per rule, differentiated in the arguments the rule differentiates (the
others, read for their shape or a permutation, are constants here)."""

import numpy as np

from transpile_runtime import forward_ops, ops

_A3 = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.8]])
_V3 = np.array([0.4, -1.1, 0.7])
_M34 = np.arange(12.0).reshape(3, 4) * 0.1 - 0.5
_M23 = np.array([[0.5, -0.2, 0.9], [1.1, 0.3, -0.6]])
_W = np.arange(1.0, 13.0).reshape(3, 4) / 12.0  # weights: a sum of g's entries is not enough


def h_mT(a):
    return np.sum(np.sin(ops.mT(a)) * _M34)


def h_unsort(g):
    return np.sum(np.sin(ops.unsort(g, _V3)) * _V3)


def h_unsort_2d(g):
    return np.sum(np.sin(ops.unsort(g, _M34, 0)) * _W)


def h_unsort_flat(g):
    return np.sum(np.sin(ops.unsort(g, _M34, None)) * _W)


def h_uncumsum(g):
    return np.sum(np.sin(ops.uncumsum(g, _M34, 1)) * _W)


def h_uncumsum_flat(g):
    return np.sum(np.sin(ops.uncumsum(g, _M34)) * _W)


def h_unconcatenate(g):
    a, b = ops.unconcatenate(g, [_M34, _M34[:2]], 0)
    return np.sum(np.sin(a) * _W) + np.sum(b**3)


def h_unstack(g):
    a, b = ops.unstack(g, [_V3, _V3], 1)
    return np.sum(np.sin(a) * _V3) + np.sum(b**3)


def h_unvstack(g):
    a, b = ops.unvstack(g, [_V3, _M23])
    return np.sum(np.sin(a) * _V3) + np.sum(b**3)


def h_untrace(g):
    return np.sum(np.sin(ops.untrace(g, _M34, 1)) * _W)


def h_undiag(g):
    return np.sum(np.sin(ops.undiag(g, _V3, 1)))


def h_undiag_matrix(g):
    return np.sum(np.sin(ops.undiag(g, _A3)) * _A3)


def h_unroll(g):
    return np.sum(np.sin(ops.unroll(g, 1, 1)) * _W)


def h_untile(g):
    return np.sum(np.sin(ops.untile(g, _V3, (2, 2))) * _V3)


def h_unrepeat_array(g):
    return np.sum(np.sin(ops.unrepeat_array(g, _M34, 2, 1)) * _W)


def h_unpad(g):
    return np.sum(np.sin(ops.unpad(g, _V3, 2)) * _V3)


def h_untake_along_axis(g):
    return np.sum(np.sin(ops.untake_along_axis(g, _V3, np.array([2, 0, 2]), 0)) * _V3)


def h_unvar(g, a):
    return np.sum(np.sin(ops.unvar(g, a, 1, 1)) * _W)


def h_solve_rhs_adjoint(g, a):
    return np.sum(np.sin(ops.solve_rhs_adjoint(g, a, _V3)) * _V3)


def h_solve_matrix_adjoint(g, a, x):
    return np.sum(np.sin(ops.solve_matrix_adjoint(g, a, _V3, x)) * _A3)


def h_solve_matrix_adjoint_2d(g, a, x):
    return np.sum(np.sin(ops.solve_matrix_adjoint(g, a, _M23.T, x)) * _A3)


def h_undet(g, a):
    return np.sum(np.sin(ops.undet(g, np.linalg.det(a), a)) * _A3)


def h_unslogdet(g, a):
    return np.sum(np.sin(ops.unslogdet((0.0, g), a)) * _A3)


def h_dot_left(g, y):
    return np.sum(np.sin(ops.dot_left(g, _M34, y)) * _W)


def h_dot_right(g, x):
    return np.sum(np.sin(ops.dot_right(g, x, _M34)) * _W)


def h_untensordot_a(g, b):
    return np.sum(np.sin(ops.untensordot_a(g, _M34, b, 1)) * _W)


def h_untensordot_b(g, a):
    return np.sum(np.sin(ops.untensordot_b(g, a, _M34, 1)) * _W)


def h_unkron_a(g, b):
    return np.sum(np.sin(ops.unkron_a(g, _V3, b)) * _V3)


def h_unkron_b(g, a):
    return np.sum(np.sin(ops.unkron_b(g, a, _V3)) * _V3)


def h_uneinsum_any(g, a, b):
    return np.sum(np.sin(ops.uneinsum_any(g, "ij,jk->ik", (a, b), 0)) * _A3)


def h_uneinsum_diagonal(g, a):
    return np.sum(np.sin(ops.uneinsum_any(g, "ii,i->", (_A3, a), 0)) * _A3)


def h_unnorm_ord(g, y, x):
    return np.sum(np.sin(ops.unnorm_ord(g, y, x)) * _V3)


def h_unnorm_p(g, y, x):
    return np.sum(np.sin(ops.unnorm_ord(g, y, x, 3)) * _V3)


def h_unnorm_axis(g, y, x):
    return np.sum(np.sin(ops.unnorm_ord(g, y, x, None, 1)) * _W)


def h_uninner_a(g, b):
    return np.sum(np.sin(ops.uninner_a(g, _M34, b)) * _W)


def h_uninner_b(g, a):
    return np.sum(np.sin(ops.uninner_b(g, a, _M34)) * _W)


def h_unvecdot(g, other):
    return np.sum(np.sin(ops.unvecdot(g, other, _M34)) * _W)


def h_unnan_extreme(g):
    return np.sum(np.sin(ops.unnan_extreme(g, np.nanmax(_M34, 0), _M34, 0)) * _W)


def h_unptp(g):
    return np.sum(np.sin(ops.unptp(g, _M34, 1)) * _W)


def h_unmedian(g):
    return np.sum(np.sin(ops.unmedian(g, _M34, 1)) * _W)


def h_unnanmean(g):
    return np.sum(np.sin(ops.unnanmean(g, _M34, 0)) * _W)


def h_spread(g):
    a, b = ops.spread(g, [_M34, _M34[0]])
    return np.sum(np.sin(a) * _W) + np.sum(b**3)


def h_head(a, b):
    first = ops.head([a, b, a * b], [_V3, _V3])
    return np.sum(np.sin(first[0]) * first[1])


def h_tail(a, b):
    last = ops.tail([a, b, a * b], [_V3, _V3])
    return np.sum(np.sin(last[0]) * last[1])


def h_unrepeat(a, b):
    items = ops.unrepeat([a, b, a * b, b**2], [_V3, _V3])
    return np.sum(np.sin(items[0]) * items[1])


def h_unjoin(g):
    a, b = ops.unjoin(g, [_M23, _M23[:, :1]], "h")
    return np.sum(np.sin(a) * _M23) + np.sum(b**3)


def h_unatleast(g):
    return np.sum(np.sin(ops.unatleast(g, (_V3, _M23), 0)) * _V3)


def h_undiff(g):
    return np.sum(np.sin(ops.undiff(g, _V3, 1, -1, 0.5, None, 0)) * _V3)


def h_undiff_prepend(g):
    return np.sin(ops.undiff(g, _V3, 1, -1, 0.5, None, 1))


def h_unappend(g):
    return np.sum(np.sin(ops.unappend(g, _V3, _M23[0], None, 1)) * _V3)


def h_undiagonal(g):
    return np.sum(np.sin(ops.undiagonal(g, _M34, 1)) * _W)


def h_uncast(g):
    return np.sum(np.sin(ops.uncast(g, _V3.astype(np.float32), _V3)) * _V3)


def h_unarray_cast(g):
    a, b = ops.unarray_cast(g, np.array([_V3, _V3]), [_V3, _V3])
    return np.sum(np.sin(a) * _V3) + np.sum(b**3)


def h_uncumprod(g, a):
    return np.sum(np.sin(ops.uncumprod(g, np.cumprod(a, 1), a, 1)) * _W)


def h_uncumprod_zero(g, a):  # an entry of a held at 0: the products made without dividing
    z = a * np.array([1.0, 0.0, 1.0, 1.0])
    return np.sum(np.sin(ops.uncumprod(g, np.cumprod(z), z)) * _W[0])


def h_unaverage(g):
    return np.sum(np.sin(ops.unaverage(g, _M34, 1, _M34[0] ** 2)) * _W)


def h_unaverage_returned(g):
    return np.sum(np.sin(ops.unaverage((g, 0.0), _M34, None, _W, False, True)) * _W)


def h_uncholesky(g, y):
    return np.sum(np.sin(ops.uncholesky(g, y)) * _A3)


def h_uncholesky_upper(g, y):
    return np.sum(np.sin(ops.uncholesky(g, y, True)) * _A3)


def h_slogdet_tangent(ta, a, y):  # y: slogdet(a), read for the sign's shape
    return np.sum(np.sin(forward_ops.slogdet(y, a, ta)[1]) * _V3)


def h_cholesky_tangent(ta, y):
    return np.sum(np.sin(forward_ops.cholesky(y, ta)) * _A3)


def h_cholesky_tangent_upper(ta, y):
    return np.sum(np.sin(forward_ops.cholesky(y, ta, True)) * _A3)


def h_tangent_like(tangent):
    return np.sum(np.sin(ops.tangent_like(tangent, _M34)) * _W)


def h_fwinner(x):  # a constant weight: no adjoint flows through it
    return np.sum(ops.fwinner(x, 0.5) * np.sin(x))


# --------------------------------------------------------------------------
# One-line functions whose gradients call those helpers: differentiated twice


def sort(x):
    return np.sum(np.sort(x) ** 2 * _V3) + np.sum(np.sin(x))


def cumprod(x):
    return np.sum(np.cumprod(x)) + np.sum(np.cumprod(x * np.array([1.0, 0.0, 1.0]) + 0.5) * x)


def average(x):
    return np.average(x**2, weights=np.array([1.0, 2.0, 3.0])) ** 2 + np.average(x**3)


def average_in_weights(x):
    return np.average(_A3, axis=0, weights=x**2) @ x


def cholesky(x):
    a = _A3 + np.outer(x, x)
    return np.sum(np.linalg.cholesky(a) * _A3) + np.sum(np.linalg.cholesky(a, upper=True) ** 2)


def matrix_transposed(x):
    return np.sum(np.outer(x, x**2).mT @ _A3 * x)


def cumsum(x):
    return np.sum(np.cumsum(x) ** 2)


def concatenate(x):
    return np.sum(np.concatenate([x, x**2]) ** 2)


def stack(x):
    return np.sum(np.stack([x, np.sin(x)], axis=1) ** 2)


def split(x):
    a, b, c = np.split(x, 3)
    return np.sum(a * b**2 * c)


def solve(x):
    return np.sum(np.linalg.solve(_A3 + np.diag(x), _V3) ** 2)


def solve_matrix(x):
    return np.sum(np.linalg.solve(_A3 + np.outer(x, x), _M23.T * x[0]) ** 2)


def inv(x):
    return np.sum(np.linalg.inv(_A3 + np.diag(x**2)))


def det(x):
    return np.linalg.det(_A3 + np.outer(x, x))


def slogdet(x):
    sign, logdet = np.linalg.slogdet(_A3 + np.outer(x, x))
    return logdet


def var(x):
    return np.var(x) * np.sum(x)


def std(x):
    return np.std(np.outer(x, x), axis=0, ddof=1) @ x


def einsum(x):
    return np.einsum("i,ij,j->", x, _A3, x**2)


def einsum_matrix(x):
    return np.sum(np.einsum("ij,jk->ik", np.outer(x, x), _M34) ** 2)


def diag(x):
    return np.sum(np.diag(np.outer(x, np.sin(x))) ** 2) + np.sum(np.diag(x) @ _A3 @ np.diag(x))


def trace(x):
    return np.trace(np.outer(x, x) @ _A3) ** 2


def norm(x):
    return np.linalg.norm(x) ** 3 + np.linalg.norm(np.outer(x, x) + _A3)


def norm_axis(x):
    return np.sum(np.linalg.norm(np.outer(x, x) + _A3, ord=3, axis=1) * x)


def tile(x):
    return np.sum(np.tile(x, 2) ** 2 * np.arange(6.0))


def repeat(x):
    return np.sum(np.repeat(x, 2) ** 3)


def roll(x):
    return np.sum(np.roll(x, 1) * x**2)


def tensordot(x):
    return np.sum(np.tensordot(np.outer(x, x), _M34, axes=1) ** 2)


def dot(x):
    return np.dot(x, _A3 @ x) ** 2 + np.inner(x, x**2) ** 2


def kron(x):
    return np.sum(np.kron(x, x**2) ** 2)


def lists(x):
    a = [x, x**2] + [np.sin(x)]
    b = [x * 0.5] * 2
    return np.sum(sum(a) * a[1] * b[0] * b[1])


def array_of(x):
    return np.sum(np.array([x[0] ** 2, x[1] * x[2]]) ** 2) + np.sum(np.asarray(x) ** 3)


def joins(x):
    return np.sum(np.hstack([x, x**2]) ** 3) + np.sum(np.atleast_2d(x) ** 3)


def diffs(x):
    return np.sum(np.diff(x**2) ** 2) + np.sum(np.append(x, x**2) ** 2)


def extremes(x):
    return np.nanmax(x**2) * np.sum(x) + np.ptp(x**2) * np.median(x**3) + np.nanmean(x**2) ** 2


def casts(x):
    return np.sum(x.astype(np.float64) ** 3) + np.sum(np.fmax(x, 0.1) ** 3)


def diagonal(x):
    return np.sum(np.diagonal(np.outer(x, x**2)) ** 2)


def take_along(x):
    return np.sum(np.take_along_axis(x, np.array([2, 0, 1]), axis=0) ** 3) + np.sum(
        np.pad(x, 1) ** 2 * np.arange(5.0)
    )


def loop_broadcast(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(x[i] + _V3) * x)
    return s


def mask_write(x):
    out = np.zeros(3)
    out[x > 0] = x[x > 0] ** 2
    return np.sum(out * x)


def row_write(x):
    out = np.zeros((2, 3))
    out[0] = x**2
    out[1, :] = np.sin(x) * x[0]
    return np.sum(out * out)


# Of one number, for grad(grad(grad(f))): the linear adjoints' rules call only helpers
# with rules, so a third derivative needs nothing more


def third_sort(t):
    return np.sum(np.sort(np.array([t, t**2, np.sin(t)])) ** 3 * np.arange(3.0))


def third_solve(t):
    return np.sum(np.linalg.solve(_A3 + t * np.eye(3), _V3 * t) ** 2)


def third_tensordot(t):
    return np.sum(np.tensordot(np.outer([t, t**2, 1.0], [1.0, t, t]), _M34, axes=1) ** 2)


def third_concatenate(t):
    return np.sum(np.cumsum(np.concatenate([np.array([t, t**2]), np.array([np.sin(t)])])) ** 3)


def third_det(t):
    return np.linalg.det(_A3 + t * t * np.eye(3))
