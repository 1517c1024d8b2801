"""Forward-mode helpers: the tangents of the rules whose forward line is more than one
numpy call (cumprod, matrix_power, multi_dot, average, the decompositions, lstsq), or
that must check what they are given (cross).
Each takes the values (result, operands) and the operands' tangents and returns the
result's tangent; ``Parts`` is the tangent of a tuple result, to which several forward
lines (one per operand) add entry by entry."""

import numpy as np

from transpile_runtime import backend, refusals


class Parts(tuple):
    """The tangent of a tuple (or list) result: ``+`` and ``-`` work entry by entry."""

    def __add__(self, other):
        return Parts(a + b for a, b in zip(self, other, strict=True))

    def __sub__(self, other):
        return Parts(a - b for a, b in zip(self, other, strict=True))

    def __neg__(self):
        return Parts(-a for a in self)


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _diag(a):
    return np.diagonal(a, axis1=-2, axis2=-1)


def _symmetric(ta, lower=True):
    """The tangent as the decomposition reads it: one triangle, mirrored."""
    if lower:
        low = np.tril(ta)
        return low + _mT(np.tril(ta, -1))
    up = np.triu(ta)
    return up + _mT(np.triu(ta, 1))


def atleast(ta, y, arys, position):
    """np.atleast_*d: the tangent reshaped like its result (a ``Parts`` of them, zeros
    elsewhere, for several arrays)."""
    if len(arys) == 1:
        return np.reshape(ta, np.shape(y))
    return Parts(
        np.reshape(ta, np.shape(yk)) if k == position else np.zeros_like(yk)
        for k, yk in enumerate(y)
    )


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """np.cross, linear in each operand (one of them a tangent), of 3-vectors only: see
    ``refusals.unless_three_vectors``."""
    if axis is not None:
        axisa = axisb = axis
    refusals.unless_three_vectors(np.shape(a)[axisa], np.shape(b)[axisb])
    return np.cross(a, b, axisa, axisb, axisc, axis)


def cumprod(ta, y, a, axis=None):
    """np.cumprod: y[k] = y[k-1] a[k], so dy[k] = dy[k-1] a[k] + y[k-1] da[k]."""
    a, y = backend.as_array(a, ta, y), backend.as_array(y, a)
    ta = backend.as_array(ta, a).astype(np.result_type(a, 1.0), copy=False)
    if axis is None:
        a, ta, y, axis = np.ravel(a), np.ravel(ta), np.ravel(y), 0
    a, ta, y = (np.moveaxis(v, axis, 0) for v in (a, ta, y))
    out = np.empty_like(ta)
    if len(out):
        out[0] = ta[0]
    for k in range(1, len(out)):
        out[k] = out[k - 1] * a[k] + y[k - 1] * ta[k]
    return np.moveaxis(out, 0, axis)


def matrix_power(ta, a, n):
    """np.linalg.matrix_power: the product rule over the factors."""
    if n == 0:
        return np.zeros_like(a)
    if n < 0:
        b = np.linalg.inv(a)
        ta, a, n = -(b @ ta @ b), b, -n
    p, tp = a, ta
    for _ in range(n - 1):
        p, tp = p @ a, tp @ a + p @ ta
    return tp


def multi_dot(arrays, tangents):
    """np.linalg.multi_dot: one product per factor, with that factor's tangent."""
    arrays = list(arrays)
    total = 0.0
    for k, tk in enumerate(tangents):
        total = total + np.linalg.multi_dot([*arrays[:k], tk, *arrays[k + 1 :]])
    return total


def _parts(value, returned, total):
    return Parts((value, total)) if returned else value


def average_a(ta, a, axis, weights, keepdims, returned):
    """np.average through the data: linear."""
    value = np.average(ta, axis, weights, keepdims=keepdims)
    if returned:
        return Parts((value, np.zeros_like(value)))
    return value


def average_w(tw, y, a, axis, weights, keepdims, returned):
    """np.average through the weights: sum(dw (a - avg)) / sum(w) (and sum(dw))."""
    avg = y[0] if returned else y
    a = backend.as_array(a, tw)
    w = np.broadcast_to(weights, a.shape) if np.ndim(weights) == a.ndim else weights
    tw = np.broadcast_to(tw, np.shape(w))
    if np.ndim(w) != a.ndim:  # 1-D weights along axis
        shape = [1] * a.ndim
        shape[axis if isinstance(axis, int) else axis[0]] = -1
        w, tw = np.reshape(w, shape), np.reshape(tw, shape)
        w, tw = np.broadcast_to(w, a.shape), np.broadcast_to(tw, a.shape)
    avg_k = np.average(a, axis, w, keepdims=True)
    total = np.sum(w, axis=axis, keepdims=keepdims)
    value = np.sum(tw * (a - avg_k), axis=axis, keepdims=keepdims) / total
    value = np.reshape(value, np.shape(avg))
    if returned:
        return Parts((value, np.reshape(np.sum(tw, axis=axis, keepdims=keepdims), np.shape(y[1]))))
    return value


def trapezoid_dx(tdx, y, x, axis):
    """np.trapezoid through ``dx`` (which counts only where ``x`` is not given)."""
    if x is not None:
        return np.zeros(np.shape(np.trapezoid(y, axis=axis)))
    return np.trapezoid(y, dx=tdx, axis=axis)


def slogdet(y, a, ta):
    """(0, trace(a^-1 da))."""
    return (np.zeros_like(y[0]), np.trace(np.linalg.solve(a, ta), axis1=-2, axis2=-1))


def cholesky(y, ta, upper=False):
    """L' = L phi(L^-1 dA L^-T), phi the lower triangle with its diagonal halved."""
    L = _mT(y) if upper else y
    ta = _symmetric(ta, lower=not upper)
    x = np.linalg.solve(L, _mT(np.linalg.solve(L, _mT(ta))))
    phi = np.tril(x, -1) + 0.5 * np.tril(np.triu(x))
    tl = L @ phi
    return _mT(tl) if upper else tl


def cholesky_factor(y, ty, ta, upper=False):
    """The tangent of ``cholesky(y, ta, upper)`` along the tangent ``ty`` of the factor
    (a second derivative through a loop's tape): with ``X = L^-1 S L^-T``, ``S`` the
    symmetric matrix ``ta`` stands for, ``T Phi(X) - L Phi(L^-1 T X + X T^T L^-T)``."""
    L, T = (_mT(y), _mT(ty)) if upper else (y, ty)
    ta = _symmetric(ta, lower=not upper)
    x = np.linalg.solve(L, _mT(np.linalg.solve(L, _mT(ta))))
    m = np.linalg.solve(L, T) @ x
    dx = -(m + _mT(m))
    out = T @ _phi(x) + L @ _phi(dx)
    return _mT(out) if upper else out


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    return np.tril(x, -1) + 0.5 * np.tril(np.triu(x))


def _gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(w.shape[-1], dtype=bool, like=w)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


def eigh(y, ta, UPLO="L"):
    """dw = diag(V^T dA V), dV = V (F o V^T dA V)."""
    w, v = y
    m = _mT(v) @ _symmetric(ta, UPLO.upper() == "L") @ v
    return (_diag(m), v @ (_gaps(w) * m))


def eigvalsh(a, ta, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return _diag(_mT(v) @ _symmetric(ta, UPLO.upper() == "L") @ v)


def svd(y, a, ta, full_matrices=True, compute_uv=True, hermitian=False):
    """The tangents of u, s, vh (of s alone without compute_uv)."""
    if hermitian:
        ta = _symmetric(ta)
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    v = _mT(vh)
    dp = _mT(u) @ ta @ v
    ts = _diag(dp)
    if not compute_uv:
        return ts
    S = s[..., None, :]  # multiplies columns
    f = _gaps(s * s)
    du = u @ (f * (dp * S + _mT(dp) * s[..., :, None])) + (ta @ v - u @ dp) / S
    dv = v @ (f * (s[..., :, None] * dp + _mT(dp) * S)) + (_mT(ta) @ u - v @ _mT(dp)) / S
    if full_matrices and m != n:
        U, _, VH = y
        if m > n:  # extra columns of U: orthogonal to the rest, rotated with it
            q = U[..., :, k:]
            dq = -u @ (_mT(du) @ q)
            du = np.concatenate([du, dq], axis=-1)
        else:
            q = _mT(VH)[..., :, k:]
            dq = -v @ (_mT(dv) @ q)
            dv = np.concatenate([dv, dq], axis=-1)
    return (du, ts, _mT(dv))


def qr(y, a, ta, mode="reduced"):
    """A = QR: X = Q^T dA R^-1, omega = the skew part of its strict lower triangle;
    dR = (X - omega) R, dQ = dA R^-1 - Q (X - omega) (for m < n: on the first m columns,
    dR2 = Q^T (dA2 - dQ R2))."""
    m, n = np.shape(a)[-2:]
    q, r = np.linalg.qr(a)  # reduced
    k = min(m, n)
    r1, ta1 = r[..., :, :k], ta[..., :, :k]
    r1_inv_t = np.linalg.solve(_mT(r1), _mT(ta1))  # (dA1 R1^-1)^T
    ar = _mT(r1_inv_t)
    x = _mT(q) @ ar
    low = np.tril(x, -1)
    upper = x - low + _mT(low)
    dr1 = upper @ r1
    dq = ar - q @ upper
    if n > m:
        dr2 = _mT(q) @ (ta[..., :, m:] - dq @ r[..., :, m:])
        dr = np.concatenate([dr1, dr2], axis=-1)
    else:
        dr = dr1
    if mode == "r":
        return dr
    if mode == "complete" and m > n:
        Q, R = y
        extra = Q[..., :, n:]
        dq = np.concatenate([dq, -q @ (_mT(dq) @ extra)], axis=-1)
        dr = np.concatenate([dr, np.zeros_like(R, shape=np.shape(R)[:-2] + (m - n, n))], axis=-2)
    return (dq, dr)


def pinv(y, a, ta, hermitian=False):
    """d(A+) = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+."""
    if hermitian:
        ta = _symmetric(ta)
    p = y
    m, n = np.shape(a)[-2:]
    left = np.eye(m, like=a) - a @ p
    right = np.eye(n, like=a) - p @ a
    return -p @ ta @ p + p @ _mT(p) @ _mT(ta) @ left + right @ _mT(ta) @ _mT(p) @ p


def lstsq(y, a, b, ta, tb):
    """(dx, dresiduals, 0, ds) of np.linalg.lstsq at full rank."""
    x, residuals, _rank, _s = y
    p = np.linalg.pinv(a)
    tp = pinv(p, a, ta)
    dx = tp @ b + p @ tb
    if np.size(residuals):
        r = b - a @ x
        dres = 2.0 * np.sum(r * (tb - ta @ x - a @ dx), axis=0)
        dres = np.reshape(dres, np.shape(residuals))
    else:
        dres = np.zeros_like(residuals)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    ds = _diag(_mT(u) @ ta @ _mT(vh))
    return (dx, dres, 0.0, ds)
