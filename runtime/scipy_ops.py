"""What the generated code of the scipy rules (``transpile/rules/scipy_*.py``) calls.

scipy is an optional dependency: this module imports without it, and reaches scipy
only when one of its names is used. The scipy functions a template calls are read
from here (``scipy_ops.digamma``, ``scipy_ops.norm.pdf``) as the very scipy objects,
so the compiler finds their declarations as it does at the user's call sites; the
helpers below are the adjoints too long for a template line.
"""

import numpy as np

from .ops import helper, unreduce

# the names read from scipy on first use: (module, names)
_SCIPY = (
    ("scipy.special", ("digamma", "polygamma")),
    ("scipy.stats", ("norm", "t", "gamma", "beta", "poisson")),
)


def __getattr__(name):
    for module, names in _SCIPY:
        if name in names:
            import importlib

            value = getattr(importlib.import_module(module), name)
            globals()[name] = value  # found directly from now on
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _spread(g, y, x, axis, keepdims):
    """The adjoint ``g`` and the result ``y`` of a reduction of ``x`` over ``axis``,
    broadcast back over the reduced axes (``x`` may be a shape)."""
    return unreduce(g, x, axis, keepdims), unreduce(y, x, axis, keepdims)


def _logsumexp_input(a, b):
    """The shape ``logsumexp`` reduces: that of ``a`` broadcast with the weights ``b``."""
    return np.shape(a) if b is None else np.broadcast_shapes(np.shape(a), np.shape(b))


@helper(fresh=True)
def unlogsumexp(g, y, a, axis=None, b=None, keepdims=False):
    """The adjoint of ``y = logsumexp(a, axis, b, keepdims)`` for ``a``:
    ``g * b * exp(a - y)``, shaped as ``a`` broadcast with ``b``."""
    g, y = _spread(g, y, _logsumexp_input(a, b), axis, keepdims)
    weights = np.exp(a - y)
    return g * weights if b is None else g * b * weights


@helper(fresh=True)
def unlogsumexp_weights(g, y, a, axis=None, b=None, keepdims=False):
    """The adjoint of ``y = logsumexp(a, axis, b, keepdims)`` for the weights ``b``:
    ``g * exp(a - y)``, shaped as ``a`` broadcast with ``b``."""
    g, y = _spread(g, y, _logsumexp_input(a, b), axis, keepdims)
    return np.broadcast_to(g * np.exp(a - y), _logsumexp_input(a, b)).copy()


@helper(fresh=True)
def xdivy(x, y):
    """``x / y``, and 0 where ``x == 0`` (``y`` may be 0 there): the slope of
    ``xlogy(x, y)`` in ``y``, which is 0 wherever ``x`` is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.divide(x, y)
    return np.where(x == 0, np.zeros_like(q), q)


@helper(fresh=True)
def t_logpdf_df(x, df, loc=0.0, scale=1.0):
    """The slope of ``t.logpdf(x, df, loc, scale)`` in ``df``."""
    from scipy.special import digamma

    z2 = ((x - loc) / scale) ** 2
    return 0.5 * (
        digamma((df + 1.0) / 2.0)
        - digamma(df / 2.0)
        - 1.0 / df
        - np.log1p(z2 / df)
        + (df + 1.0) * z2 / (df * (df + z2))
    )


def _mvn_parts(x, mean, cov):
    """``(r, s, full)``: the residual ``x - mean``, ``cov^-1 r`` per sample, and ``cov``
    as a matrix (a number is a multiple of the identity, a vector a diagonal)."""
    x = np.asarray(x)
    r = x if mean is None else x - mean
    n = np.shape(r)[-1] if np.ndim(r) else 1
    cov = np.asarray(cov)
    if cov.ndim == 0:
        full = cov * np.eye(n, dtype=np.result_type(cov, float))
    elif cov.ndim == 1:
        full = np.diag(cov)
    else:
        full = cov
    s = np.linalg.solve(full, np.reshape(r, (-1, n)).T).T
    return r, np.reshape(s, np.shape(r)), full


def _per_sample(g, r):
    """``g`` (scipy squeezes the result) with one entry per sample of ``r``, and an axis
    to broadcast over the coordinates."""
    return np.reshape(g, np.shape(r)[:-1] + (1,))


@helper(fresh=True)
def unmvn_x(g, x, mean, cov):
    """The adjoint of ``y = multivariate_normal.logpdf(x, mean, cov)`` for ``x``:
    ``-g * cov^-1 (x - mean)`` per sample, shaped as ``x - mean`` (``x``: ``(..., d)``)."""
    r, s, _ = _mvn_parts(x, mean, cov)
    return -_per_sample(g, r) * s


@helper(fresh=True)
def unmvn_cov(g, x, mean, cov):
    """The adjoint of ``y = multivariate_normal.logpdf(x, mean, cov)`` for ``cov``:
    ``sum(g * (s s^T - cov^-1)) / 2`` with ``s = cov^-1 (x - mean)``, symmetric; for a
    number or a vector ``cov``, its trace or diagonal."""
    r, s, full = _mvn_parts(x, mean, cov)
    n = full.shape[-1]
    gs = np.reshape(_per_sample(g, r) * s, (-1, n))
    s = np.reshape(s, (-1, n))
    total = np.sum(g)
    out = 0.5 * (gs.T @ s - total * np.linalg.inv(full))
    out = 0.5 * (out + out.T)
    if np.ndim(cov) == 0:
        return np.trace(out)
    if np.ndim(cov) == 1:
        return np.diagonal(out).copy()
    return out
