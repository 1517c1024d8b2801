"""Adjoints of linear algebra without a factorization: ``det`` (exact at singular
matrices), ``slogdet``, ``solve``, ``trace``, ``matrix_power`` and ``norm`` of every
order; each with the helpers of its second derivative (``rules/runtime_linalg.py``)
next to it.
"""

import math

import numpy as np

from .arrays import _axes, _lift, _shape
from .declare import helper
from .shape import mT
from .structures import zeros_like


@helper(fresh=True)
def unnorm(g, y, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm`` for the 2-norm of vectors and Frobenius norm."""
    vector = axis is None and np.ndim(x) == 1 or isinstance(axis, int)
    if not (ord is None or ord == "fro" or (ord == 2 and vector)):
        raise NotImplementedError(
            f"the gradient of np.linalg.norm with ord={ord!r} is not "
            "supported; write the norm with supported operations"
        )
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        y = np.expand_dims(y, axis)
    return g * x / y


def _per_matrix(v):
    """``v``, one value per matrix of a stack, shaped to broadcast over the stack's
    matrices; a Python number or 0-d value as it is."""
    return v[..., None, None] if getattr(v, "ndim", 0) else v


@helper(fresh=True)
def undet(g, y, a):
    """Adjoint of ``np.linalg.det``: ``g`` times the cofactor matrix (the transposed
    adjugate) of each matrix of ``a``.

    A well-conditioned stack takes the fast route ``det(a) * inv(a).T``. A singular one
    (numpy's ``inv`` raises; other array modules return inf or nan) or an ill-conditioned
    one (a tiny ``det`` times a huge ``inv``, which loses the cofactors' digits at rank
    ``n - 2`` and below) takes the SVD route of ``svd_cofactors``, exact at any rank."""
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        inv = None
    if inv is not None and _well_conditioned(a, inv):
        return _per_matrix(g * y) * mT(inv)
    return _per_matrix(g) * svd_cofactors(a)


def _well_conditioned(a, inv):
    """Whether every matrix of ``a`` has a condition number below ``1/sqrt(eps)``
    (estimated from the largest entries of ``a`` and of its inverse ``inv``)."""
    n = _shape(inv)[-1]
    if n == 0:  # 0x0 matrices: det is 1, the adjoint is empty
        return True
    cond = np.max(np.abs(a), axis=(-2, -1)) * np.max(np.abs(inv), axis=(-2, -1)) * n
    limit = 1.0 / math.sqrt(np.finfo(inv.dtype).eps)
    return bool(np.all(cond < limit))  # False for a nan or inf estimate


@helper(fresh=True)
def svd_cofactors(a):
    """The cofactor matrix of each matrix of ``a`` without inverting it, so exact for
    singular matrices: with ``a = u @ diag(s) @ vh``,
    ``adj(a).T = det(u) det(vh) u @ diag(prod_{j != i} s_j) @ vh``."""
    u, s, vh = np.linalg.svd(a)
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    sign = np.sign(np.linalg.det(u) * np.linalg.det(vh))  # each det is +1 or -1
    return _per_matrix(sign) * ((u * (before * after)[..., None, :]) @ vh)


@helper(fresh=True)
def solve_rhs_adjoint(g, a, b):
    return np.linalg.solve(mT(a), g)


@helper(fresh=True)
def solve_matrix_adjoint(g, a, b, x):
    gb = np.linalg.solve(mT(a), g)
    if np.ndim(b) == 1:
        return -np.outer(gb, x)
    return -(gb @ mT(x))


@helper(fresh=True)
def untrace(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.trace``: ``g`` on the chosen diagonal of each matrix."""
    shape = _shape(a)
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    dtype = getattr(g, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        dtype = getattr(a, "dtype", None)
        if dtype is None or dtype.kind not in "fc":
            dtype = np.float64
    # the identity in a's array module (np.eye would make a numpy array for a cupy a)
    ones = np.ones_like(a, dtype=dtype, shape=(shape[a1], shape[a2]))
    eye = np.triu(np.tril(ones, offset), offset)
    out = _per_matrix(g) * eye
    return np.moveaxis(out, (-2, -1), (a1, a2))


@helper(fresh=True)
def unnorm_ord(g, y, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm(x, ord, axis, keepdims)``, every ``ord`` numpy has:
    of vectors (None, 2, inf, -inf, 0, 1, -1, any p) and of matrices (None, 'fro',
    'nuc', 2, -2, 1, -1, inf, -inf)."""
    nd = np.ndim(x)
    if axis is None:
        axis = tuple(range(nd)) if ord is None or nd == 1 else (0, 1)
    axes = _axes(nd, axis)
    if not keepdims:
        g, y = np.expand_dims(_lift(g, x), axes), np.expand_dims(_lift(y, x), axes)
    if ord is None or ord == "fro" or (ord == 2 and len(axes) == 1):
        return g * x / y
    if len(axes) == 1:
        return g * _vector_norm_slope(x, y, ord, axes)
    moved = np.moveaxis(x, axes, (-2, -1))
    slope = _matrix_norm_slope(moved, np.moveaxis(y, axes, (-2, -1)), ord)
    return g * np.moveaxis(slope, (-2, -1), axes)


def _vector_norm_slope(x, y, ord, axes):
    if ord == 0:  # counts the nonzero entries: constant almost everywhere
        return np.zeros_like(x)
    if ord in (math.inf, -math.inf):  # the largest (smallest) |x|, shared between ties
        hit = np.abs(x) == y
        return np.sign(x) * hit / np.sum(hit, axis=axes, keepdims=True)
    if ord == 1:
        return np.sign(x)
    return np.sign(x) * (np.abs(x) / y) ** (ord - 1)


def _matrix_norm_slope(x, y, ord):
    """The slope of a norm of each matrix of the stack ``x`` (its last two axes)."""
    if ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        k = slice(0, 1) if ord == 2 else slice(-1, None)  # the largest (smallest) one's
        return u[..., :, k] @ vh[..., k, :]
    if ord in (1, -1, math.inf, -math.inf):  # the largest column (row) sum of |x|
        along = -2 if ord in (1, -1) else -1
        sums = np.sum(np.abs(x), axis=along, keepdims=True)
        hit = sums == y
        return np.sign(x) * hit / np.sum(hit, axis=(-2, -1), keepdims=True)
    raise ValueError(f"invalid norm order {ord!r} for matrices")


@helper(fresh=True)
def unslogdet(g, a):
    """Adjoint of ``np.linalg.slogdet``: its logdet (``g[1]``) only; the sign is constant."""
    return _per_matrix(g[1]) * mT(np.linalg.inv(a))


@helper(fresh=True)
def unmatrix_power(g, a, n):
    """Adjoint of ``np.linalg.matrix_power(a, n)``: the sum over ``k`` of
    ``(a^T)^k g (a^T)^(n-1-k)``; for ``n < 0``, through the inverse."""
    if n < 0:
        inv = np.linalg.inv(a)
        return -(mT(inv) @ unmatrix_power(g, inv, -n) @ mT(inv))
    powers = [None, a]  # powers[k] = a^k; a^0 is left out of the products
    for _ in range(2, n):
        powers.append(powers[-1] @ a)
    out = zeros_like(a)
    for k in range(n):
        left = g if k == 0 else mT(powers[k]) @ g
        out = out + (left if k == n - 1 else left @ mT(powers[n - 1 - k]))
    return out


def _inverse_transposed(a, what):
    """``inv(a)^T`` for each matrix of ``a``, or NotImplementedError where ``a`` is singular
    or ill-conditioned (the second derivative of ``what`` there is not supported)."""
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        inv = None
    if inv is None or not _well_conditioned(a, inv):
        raise NotImplementedError(
            f"the second derivative of {what} at a singular or ill-conditioned matrix is "
            "not supported"
        )
    return mT(inv)


@helper(fresh=True)
def undet_slope(g, h, y, a):
    """The derivative of ``undet(g, y, a)`` in ``a`` (``y = det(a)`` following it) along
    ``h``: ``g`` times the Hessian of det at each matrix of ``a`` applied to ``h``,
    ``y (<a^-T, h> a^-T - a^-T h^T a^-T)``; the Hessian is symmetric, so this is also the
    adjoint of that derivative for the cotangent ``h``."""
    it = _inverse_transposed(a, "np.linalg.det")
    cross = np.sum(it * h, axis=(-2, -1))
    return _per_matrix(g * y) * (_per_matrix(cross) * it - it @ mT(h) @ it)


@helper(fresh=True)
def unslogdet_slope(g, h, a):
    """The derivative of ``unslogdet(g, a)`` in ``a`` along ``h``, which is also its adjoint
    for the cotangent ``h``: ``-g[1] a^-T h^T a^-T``."""
    it = _inverse_transposed(a, "np.linalg.slogdet")
    return -_per_matrix(g[1]) * (it @ mT(h) @ it)


@helper(fresh=True)
def unslogdet_cotangent(h, g, a):
    """The adjoint of ``g`` in ``unslogdet(g, a)`` for the cotangent ``h``: nothing for the
    sign, ``<a^-T, h>`` for the logdet of each matrix."""
    return [zeros_like(g[0]), np.sum(mT(np.linalg.inv(a)) * h, axis=(-2, -1))]


def _norm_curvature(x, ord, axis):
    """``(p - 1, axes)`` for ``np.linalg.norm(x, ord, axis)``, whose slope ``unnorm_ord``
    gives is ``sign(x) (|x| / y) ** (p - 1)``: ``p - 1`` is 0 for the norms whose slope is
    piecewise constant (``ord`` 0, 1, inf of vectors; 1, inf of matrices)."""
    nd = np.ndim(x)
    if axis is None:
        axis = tuple(range(nd)) if ord is None or nd == 1 else (0, 1)
    axes = _axes(nd, axis)
    if ord is None or ord == "fro" or (ord == 2 and len(axes) == 1):
        return 1.0, axes
    if ord in (1, -1, math.inf, -math.inf) or (ord == 0 and len(axes) == 1):
        return 0.0, axes
    if len(axes) == 2:
        raise NotImplementedError(
            f"the second derivative of np.linalg.norm with ord={ord!r} of matrices is not supported"
        )
    return float(ord) - 1.0, axes


def _kept(v, x, axes, keepdims):
    return v if keepdims else np.expand_dims(_lift(v, x), axes)


@helper(fresh=True)
def unnorm_slope(g, h, y, x, ord=None, axis=None, keepdims=False):
    """The derivative of ``unnorm_ord(g, y, x, ord, axis, keepdims)`` in ``x`` (``y``
    held) along ``h``: ``g (p - 1) (|x| / y) ** (p - 2) / y h``, elementwise, so also its
    adjoint for the cotangent ``h``."""
    c, axes = _norm_curvature(x, ord, axis)
    if c == 0.0:
        return zeros_like(x)
    g, y = _kept(g, x, axes, keepdims), _kept(y, x, axes, keepdims)
    return g * h * (c * (np.abs(x) / y) ** (c - 1.0) / y)


@helper(fresh=True)
def unnorm_norm_adjoint(h, g, y, x, ord=None, axis=None, keepdims=False):
    """The adjoint of ``y`` in ``r = unnorm_ord(g, y, x, ...)`` for the cotangent ``h``:
    ``-(p - 1) sum(h r / y)`` over the norm's axes."""
    c, axes = _norm_curvature(x, ord, axis)
    r = unnorm_ord(g, y, x, ord, axis, keepdims)
    return -c * np.sum(h * r / _kept(y, x, axes, keepdims), axis=axes, keepdims=keepdims)


@helper(fresh=True)
def unnorm_norm_tangent(g, ty, y, x, ord=None, axis=None, keepdims=False):
    """The tangent of ``unnorm_ord(g, y, x, ...)`` along the tangent ``ty`` of ``y``."""
    c, axes = _norm_curvature(x, ord, axis)
    r = unnorm_ord(g, y, x, ord, axis, keepdims)
    return r * (-c * _kept(ty, x, axes, keepdims) / _kept(y, x, axes, keepdims))
