"""Adjoints of the matrix factorizations: ``cholesky`` (with the helpers of its second
derivative), ``eigh`` and ``eigvalsh``, ``svd``, ``qr``, ``pinv`` and ``lstsq``. The
symmetric ones read one triangle of their input, so their adjoints lie on it.
"""

import numpy as np

from .arrays import _eye
from .declare import helper
from .shape import mT
from .structures import cast_like


def _symmetric(a):
    """The symmetric matrices whose lower triangles are those of ``a``."""
    return np.tril(a) + mT(np.tril(a, -1))


def _lower_half(x):
    """``tril(x)`` with its diagonal halved (Murray's Phi)."""
    return np.tril(x) - 0.5 * (x * _eye(x.shape[-1], x))


@helper(fresh=True)
def uncholesky(g, y, upper=False):
    """Adjoint of ``y = np.linalg.cholesky(a, upper=upper)``, which reads only the lower
    (upper) triangle of ``a``: the adjoint lies on that triangle."""
    low, gl = (mT(y), mT(g)) if upper else (y, g)
    p = _lower_half(mT(low) @ gl)
    # G = L^-T P L^-1, then each entry of the triangle read stands for both of its places
    left = np.linalg.solve(mT(low), p)
    full = mT(np.linalg.solve(mT(low), mT(left)))
    out = _lower_half(full + mT(full))
    return mT(out) if upper else out


@helper(fresh=True)
def uneigh(g, y, UPLO="L"):
    """Adjoint of ``y = w, v = np.linalg.eigh(a, UPLO)`` (distinct eigenvalues), on the
    triangle of ``a`` that ``eigh`` reads."""
    (w, v), (gw, gv) = y, g
    gap = w[..., None, :] - w[..., :, None]  # w_j - w_i
    off = ~_eye(w.shape[-1], w)
    f = np.where(off, 1 / np.where(off, gap, 1), 0)
    inner = f * (mT(v) @ gv) + _diag_matrix(gw)
    full = v @ inner @ mT(v)
    if UPLO.upper() == "U":
        return mT(_lower_half(mT(full + mT(full))))
    return _lower_half(full + mT(full))


def _diag_matrix(v):
    """The stack of diagonal matrices with diagonals ``v`` (its last axis)."""
    return v[..., :, None] * _eye(v.shape[-1], v)


@helper(fresh=True)
def unsvd(g, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Adjoint of ``np.linalg.svd(a, full_matrices, compute_uv, hermitian)`` for distinct
    nonzero singular values (Townsend 2016): ``u`` and ``vh`` as far as they are unique.
    ``hermitian`` reads the lower triangle of ``a`` only: the adjoint lies there."""
    if hermitian:
        full = unsvd(g, y, _symmetric(a), full_matrices, compute_uv)
        return _lower_half(full + mT(full))
    m, n = np.shape(a)[-2:]
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u @ (g[..., :, None] * vh)
    u, s, vh = y
    gu, gs, gvh = g
    k = min(m, n)
    if full_matrices and m != n:
        u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
        if np.any(g[0][..., k:]) or np.any(g[2][..., k:, :]):
            raise NotImplementedError(
                "the gradient of np.linalg.svd(full_matrices=True) of a non-square matrix "
                "through its extra singular vectors, which are not unique; use "
                "full_matrices=False"
            )
    v, gv = mT(vh), mT(gvh)
    s2 = s[..., None, :] ** 2 - s[..., :, None] ** 2  # s_j^2 - s_i^2
    off = ~_eye(k, s)
    f = np.where(off, 1 / np.where(off, s2, 1), 0)
    ut_gu, vt_gv = mT(u) @ gu, mT(v) @ gv
    smat = s[..., None, :]  # scales columns: x * smat == x @ diag(s)
    inner = (f * (ut_gu - mT(ut_gu))) * smat + _diag_matrix(gs)
    inner = inner + s[..., :, None] * (f * (vt_gv - mT(vt_gv)))
    out = u @ inner @ vh
    if m > k:  # (I - u u^T) gu s^-1 v^T
        out = out + ((gu - u @ ut_gu) / smat) @ vh
    if n > k:  # u s^-1 gv^T (I - v v^T)
        out = out + u @ mT((gv - v @ vt_gv) / smat)
    return out


@helper(fresh=True)
def unqr(g, y, a, mode="reduced"):
    """Adjoint of ``np.linalg.qr(a, mode)`` (full column rank; ``'r'`` and ``'reduced'``,
    or ``'complete'`` of a matrix with no more rows than columns)."""
    m, n = np.shape(a)[-2:]
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = np.zeros_like(q), g
    elif mode in ("reduced", "complete") and (mode == "reduced" or m <= n):
        (q, r), (gq, gr) = y, g
    else:
        raise NotImplementedError(f"the gradient of np.linalg.qr(mode={mode!r}) is not supported")
    if m >= n:
        return _qr_square_adjoint(q, r, gq, gr)
    # a = [x | z]: x = q u is square, z = q w (Liao et al. 2019)
    z, gw = a[..., :, m:], gr[..., :, m:]
    gx = _qr_square_adjoint(q, r[..., :, :m], gq + z @ mT(gw), gr[..., :, :m])
    return np.concatenate([gx, q @ gw], axis=-1)


def _qr_square_adjoint(q, r, gq, gr):
    """(gq + q copyltu(M)) r^-T with M = r gr^T - gq^T q, for m >= n."""
    m = r @ mT(gr) - mT(gq) @ q
    sym = np.tril(m) + mT(np.tril(m, -1))
    return mT(np.linalg.solve(r, mT(gq + q @ sym)))


@helper(fresh=True)
def unpinv(g, y, a, hermitian=False):
    """Adjoint of ``y = np.linalg.pinv(a)`` where the rank of ``a`` does not change nearby
    (Golub and Pereyra): ``-y^T g y^T + (I - a y) g^T y y^T + y^T y g^T (I - y a)``.
    ``hermitian`` reads the lower triangle of ``a`` only: the adjoint lies there."""
    if hermitian:
        full = unpinv(g, y, _symmetric(a))
        return _lower_half(full + mT(full))
    yt, gt = mT(y), mT(g)
    out = -(yt @ g @ yt)
    right = gt @ y @ yt
    out = out + right - a @ (y @ right)
    left = yt @ y @ gt
    return out + left - (left @ y) @ a


@helper(fresh=True)
def uneigvalsh(g, a, UPLO="L"):
    """Adjoint of ``np.linalg.eigvalsh(a, UPLO)``: ``v diag(g) v^T``, on the triangle of
    ``a`` that is read."""
    _, v = np.linalg.eigh(a, UPLO)
    full = (v * g[..., None, :]) @ mT(v)
    if UPLO.upper() == "U":
        return mT(_lower_half(mT(full + mT(full))))
    return _lower_half(full + mT(full))


@helper(fresh=True, checks=True)
def unlstsq(g, y, a, b, which):
    """Adjoint of ``a`` (``which`` 0) or ``b`` (1) in ``np.linalg.lstsq(a, b)``, through
    its solution and residuals (the rank and singular values are refused), where the
    rank of ``a`` does not change nearby."""
    gx, gres, _, gs = g
    if np.any(gs):
        raise NotImplementedError(
            "the gradient of np.linalg.lstsq's singular values is not supported"
        )
    x = y[0]
    vector = np.ndim(b) == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    gx2 = gx[:, None] if vector else gx
    pinv = np.linalg.pinv(a)
    if which == 1:
        out = mT(pinv) @ gx2
    else:
        out = unpinv(gx2 @ mT(b2), pinv, a)
    if np.size(y[1]) and np.any(gres):  # residuals: sum of squares of b - a x, x optimal
        resid = (b2 - a @ x2) * (2.0 * np.reshape(gres, (1, -1)))
        out = out + (resid if which == 1 else -(resid @ mT(x2)))
    return cast_like(np.reshape(out, np.shape((a, b)[which])), (a, b)[which])


def _cholesky_lower(y, upper):
    """The lower factor of ``y = cholesky(a, upper=upper)`` and its inverse."""
    low = mT(y) if upper else y
    return low, np.linalg.inv(low)


@helper(fresh=True)
def uncholesky_cotangent(h, y, upper=False):
    """The adjoint of ``g`` in ``uncholesky(g, y, upper)`` for the cotangent ``h``:
    ``L Phi(L^-1 (Phi(h) + Phi(h)^T) L^-T)`` (``Phi``: the lower triangle, its diagonal
    halved; ``uncholesky`` is ``Phi`` of that map's transpose, read backwards)."""
    low, inv = _cholesky_lower(y, upper)
    half = _lower_half(mT(h) if upper else h)
    out = low @ _lower_half(inv @ (half + mT(half)) @ mT(inv))
    return mT(out) if upper else out


@helper(fresh=True)
def uncholesky_factor_adjoint(h, g, y, upper=False):
    """The adjoint of ``y`` in ``uncholesky(g, y, upper)`` for the cotangent ``h``:
    ``g Phi(Z)^T - L^-T (P + P^T) Z`` with ``P = Phi(L^T g)`` and
    ``Z = L^-1 (Phi(h) + Phi(h)^T) L^-T``."""
    low, inv = _cholesky_lower(y, upper)
    gl, half = (mT(g), _lower_half(mT(h))) if upper else (g, _lower_half(h))
    z = inv @ (half + mT(half)) @ mT(inv)
    p = _lower_half(mT(low) @ gl)
    out = gl @ mT(_lower_half(z)) - mT(inv) @ (p + mT(p)) @ z
    return mT(out) if upper else out


@helper(fresh=True)
def uncholesky_factor_tangent(g, ty, y, upper=False):
    """The tangent of ``uncholesky(g, y, upper)`` along the tangent ``ty`` of ``y``."""
    low, inv = _cholesky_lower(y, upper)
    gl, tl = (mT(g), mT(ty)) if upper else (g, ty)
    it = mT(inv)
    p = _lower_half(mT(low) @ gl)
    full = it @ (_lower_half(mT(tl) @ gl) - mT(tl) @ it @ p - p @ inv @ tl) @ inv
    out = _lower_half(full + mT(full))
    return mT(out) if upper else out
