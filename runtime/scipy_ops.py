"""What the generated code of the scipy rules (``transpile/rules/scipy_*.py``) calls.

scipy is an optional dependency: this module imports without it, and reaches scipy
only when one of its names is used. The scipy functions a template calls are read
from here (``scipy_ops.digamma``, ``scipy_ops.norm.pdf``) as the very scipy objects,
so the compiler finds their declarations as it does at the user's call sites; the
helpers below are the adjoints too long for a template line.
"""

import numbers
import threading
import weakref

import numpy as np

from .ops import helper, unreduce
from .structure import flatten, unflatten

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


@helper(fresh=True)
def t_logpdf_df_x(x, df, loc=0.0, scale=1.0):
    """The slope of ``t_logpdf_df(x, df, loc, scale)`` in ``x``: with ``u = z^2``,
    ``(1 - u) (x - loc) / (scale^2 (df + u)^2)``."""
    u = ((x - loc) / scale) ** 2
    return (1.0 - u) * (x - loc) / (scale * scale * (df + u) ** 2)


@helper(fresh=True)
def t_logpdf_df_df(x, df, loc=0.0, scale=1.0):
    """The slope of ``t_logpdf_df(x, df, loc, scale)`` in ``df``: the second derivative of
    ``t.logpdf`` in ``df``."""
    from scipy.special import polygamma

    u = ((x - loc) / scale) ** 2
    return 0.25 * (polygamma(1, (df + 1.0) / 2.0) - polygamma(1, df / 2.0)) + 0.5 * (df + u * u) / (
        df * (df + u) ** 2
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


# Their tangents, and the helpers of their second derivatives: with r = x - mean and
# s = cov^-1 r per sample, unmvn_x is -g s, linear in g and in r. Vectors v, w below are
# broadcast to the shape of r; a result with one entry per sample is squeezed as scipy's.


def _solve(full, v):
    """``full^-1 v`` for each sample (last axis) of ``v``."""
    n = full.shape[-1]
    return np.reshape(np.linalg.solve(full, np.reshape(v, (-1, n)).T).T, np.shape(v))


def _squeezed(value):
    """A result with one entry per sample, squeezed as scipy squeezes its densities."""
    out = np.squeeze(value)
    return out[()] if out.ndim == 0 else out


@helper(fresh=True)
def unmvn_solve(g, v, x, mean, cov):
    """``-g * cov^-1 v`` per sample, shaped as ``x - mean`` (``v`` broadcast to it): the
    slope of ``unmvn_x(g, x, mean, cov)`` in ``x`` along ``v``."""
    r = np.asarray(x) if mean is None else np.asarray(x) - mean
    _, _, full = _mvn_parts(x, mean, cov)
    return -_per_sample(g, r) * _solve(full, np.broadcast_to(v, np.shape(r)))


@helper(fresh=True)
def mvn_dot(w, v, x, mean, cov):
    """``-w . cov^-1 v`` per sample (``w`` and ``v`` broadcast to the shape of ``x - mean``),
    one entry per sample."""
    r = np.asarray(x) if mean is None else np.asarray(x) - mean
    _, _, full = _mvn_parts(x, mean, cov)
    v, w = np.broadcast_to(v, np.shape(r)), np.broadcast_to(w, np.shape(r))
    return _squeezed(-np.sum(w * _solve(full, v), axis=-1))


@helper(fresh=True)
def mvn_residual_dot(w, x, mean, cov):
    """``-w . cov^-1 (x - mean)`` per sample: the tangent of
    ``multivariate_normal.logpdf(x, mean, cov)`` along ``w`` in ``x``."""
    r, s, _ = _mvn_parts(x, mean, cov)
    return _squeezed(-np.sum(np.broadcast_to(w, np.shape(r)) * s, axis=-1))


@helper(fresh=True)
def mvn_cov_dot(tcov, x, mean, cov):
    """The tangent of ``multivariate_normal.logpdf(x, mean, cov)`` along ``tcov`` in
    ``cov``: ``(s^T tcov s - trace(cov^-1 tcov)) / 2`` per sample (``tcov`` a number or a
    vector where ``cov`` is)."""
    _, s, full = _mvn_parts(x, mean, cov)
    n = full.shape[-1]
    if np.ndim(cov) == 0:
        tfull = tcov * np.eye(n)
    elif np.ndim(cov) == 1:
        tfull = np.diag(np.broadcast_to(tcov, (n,)))
    else:
        tfull = np.asarray(tcov)
    quadratic = np.sum(s * (s @ tfull.T), axis=-1)
    return _squeezed(0.5 * (quadratic - np.trace(np.linalg.solve(full, tfull))))


# --------------------------------------------------------------------------
# scipy.integrate.odeint, differentiated by the adjoint method
#
# With a(s) the adjoint of the state y(s), the backward integration carries the
# augmented state [y, a, b] from each output time t[i] to the one before:
#     dy/ds = f(y, s),  da/ds = -a . df/dy,  db/ds = -a . df/dargs
# restarting y from the forward solution and adding the output's adjoint g[i] to a
# at each t[i]. At the first time, a is the adjoint of y0 and b that of the numeric
# args (flattened); the adjoint of t[i] is g[i] . f(y[i], t[i]) (moving an output time
# moves that output alone), and that of t[0] is -a . f(y0, t[0]) (moving the start
# shifts the whole trajectory). The three generated lines of odeint's rule share one
# integration: the first of them to run stores its parts here, each handed out once.

_LAST_ODEINT = threading.local()


@helper(fresh=True)
def odeint_adjoint_y0(g, ys, func, y0, t, args, vjp, **options):
    """The adjoint of ``ys = odeint(func, y0, t, args, **options)`` for ``y0``, shaped as
    ``y0``; ``vjp(func, wrt)`` makes ``func``'s vector-Jacobian product."""
    out = _odeint_part("y0", g, ys, func, t, args, vjp, options)
    return _shaped(out, y0)


@helper(fresh=True)
def odeint_adjoint_t(g, ys, func, y0, t, args, vjp, **options):
    """The adjoint of ``ys = odeint(func, y0, t, args, **options)`` for the times ``t``."""
    return _shaped(_odeint_part("t", g, ys, func, t, args, vjp, options), t)


@helper(fresh=True)
def odeint_adjoint_args(g, ys, func, y0, t, args, vjp, **options):
    """The adjoint of ``ys = odeint(func, y0, t, args, **options)`` for ``args``: a tuple
    with one entry per argument, shaped as it (None for one that is not numeric)."""
    return _odeint_part("args", g, ys, func, t, args, vjp, options)


def _odeint_part(which, g, ys, func, t, args, vjp, options):
    """One part of ``odeint_adjoint``'s result for this ``(g, ys)``, computing it unless
    a sibling helper already did for the very same arrays."""
    entry = getattr(_LAST_ODEINT, "entry", None)
    if entry is None or entry[0]() is not ys or entry[1]() is not g or which not in entry[2]:
        parts = odeint_adjoint(g, ys, func, t, args, vjp, **options)
        entry = (_weak(ys), _weak(g), parts)
        _LAST_ODEINT.entry = entry
    return entry[2].pop(which)


def _weak(value):
    """A weak reference to ``value``; one that never matches where it cannot be made."""
    try:
        return weakref.ref(value)
    except TypeError:
        return lambda: _NOTHING


_NOTHING = object()


def odeint_adjoint(g, ys, func, t, args, vjp, rtol=None, atol=None, tfirst=False, **solver):
    """``{"y0": ..., "t": ..., "args": ...}``, the adjoints of ``ys = odeint(func, y0, t,
    args)`` given ``g``, that of ``ys``; ``solver`` holds odeint's step options."""
    from scipy.integrate import odeint

    ys = np.asarray(ys, dtype=np.float64)
    g = np.broadcast_to(np.asarray(g, dtype=np.float64), ys.shape)
    rhs = _Rhs(func, args, vjp, tfirst, ys.shape[1])
    tolerances = {"rtol": _scalar(rtol), "atol": _scalar(atol)}
    a, b = np.zeros(ys.shape[1]), np.zeros(rhs.size)
    dt = np.zeros(len(t))
    for i in range(len(t) - 1, 0, -1):
        a = a + g[i]
        dt[i] = np.dot(rhs.f(ys[i], t[i]), g[i])
        start = np.concatenate([ys[i], a, b])
        state = odeint(rhs.augmented, start, [t[i], t[i - 1]], **tolerances, **solver)[1]
        a, b = state[rhs.n : 2 * rhs.n], state[2 * rhs.n :]
    dt[0] = -np.dot(rhs.f(ys[0], t[0]), a)
    return {"y0": a + g[0], "t": dt, "args": rhs.unflatten(b)}


# Forward mode: the tangent v(s) of the state along a direction in (y0, args, t) solves
# the sensitivity equations dv/ds = df/dy . v + df/dargs . targs, from v = ty0 at the
# first time, integrated with y as one augmented system (``func``'s Jacobian-vector
# products made by this library's ``jvp``). Moving an output time t[i] adds f(y[i], t[i])
# to that output's tangent; moving the first one starts v at -f(y0, t[0]) instead.


@helper(fresh=True)
def odeint_tangent_y0(ty0, ys, func, y0, t, args, jvp, **options):
    """The tangent of ``ys = odeint(func, y0, t, args, **options)`` along ``ty0`` in ``y0``."""
    return _odeint_forward(ys, func, t, args, jvp, ty0, None, **options)


@helper(fresh=True)
def odeint_tangent_args(targs, ys, func, y0, t, args, jvp, **options):
    """The tangent of ``ys = odeint(func, y0, t, args, **options)`` along ``targs`` (one
    tangent per entry of ``args``; those of entries that are not numeric are ignored)."""
    return _odeint_forward(ys, func, t, args, jvp, 0.0, targs, **options)


@helper(fresh=True)
def odeint_tangent_t(tt, ys, func, y0, t, args, jvp, tfirst=False, **options):
    """The tangent of ``ys = odeint(func, y0, t, args, **options)`` along ``tt`` in ``t``."""
    ys = np.asarray(ys, dtype=np.float64)
    tt = np.broadcast_to(np.asarray(tt, dtype=np.float64), (len(t),))
    slopes = np.stack([_flat(_call(func, y, s, args, tfirst)) for y, s in zip(ys, t)])
    out = slopes * tt[:, None]
    if tt[0] != 0.0:
        v0 = -slopes[0] * tt[0]
        out = out + _odeint_forward(ys, func, t, args, jvp, v0, None, tfirst=tfirst, **options)
    return out


def _odeint_forward(
    ys, func, t, args, jvp, v0, targs, rtol=None, atol=None, tfirst=False, **solver
):
    """The tangents of the states ``ys`` of ``odeint(func, ys[0], t, args)`` from ``v0`` at
    the first time, with ``targs`` the tangents of ``args`` (None for none)."""
    from scipy.integrate import odeint

    ys = np.asarray(ys, dtype=np.float64)
    n = ys.shape[1]
    args = tuple(args)
    moved = [] if targs is None else [i for i, a in enumerate(args) if _numeric(a)]
    tangents = tuple(targs[i] for i in moved)
    product = jvp(func, wrt=(1 if tfirst else 0, *(2 + i for i in moved)))

    def augmented(state, s):
        y, v = state[:n], state[n:]
        out, tangent = _call(product, y, s, (*args, (v, *tangents)), tfirst)
        return np.concatenate([_flat(out), _flat(tangent)])

    start = np.concatenate([ys[0], np.broadcast_to(np.ravel(v0), (n,))])
    tolerances = {"rtol": _scalar(rtol), "atol": _scalar(atol)}
    return odeint(augmented, start, t, **tolerances, **solver)[:, n:]


def _call(fn, y, s, args, tfirst):
    """``fn(y, s, *args)``, or ``fn(s, y, *args)`` where ``tfirst``."""
    return fn(s, y, *args) if tfirst else fn(y, s, *args)


class _Rhs:
    """``func``'s right-hand side and the augmented one of the adjoint ODE, over flat
    float64 vectors; ``size`` counts the numbers in the differentiated args."""

    def __init__(self, func, args, vjp, tfirst, n):
        self.func, self.args, self.tfirst, self.n = func, tuple(args), tfirst, n
        self.numeric = [i for i, a in enumerate(self.args) if _numeric(a)]
        wrt = (0 if not tfirst else 1, *(2 + i for i in self.numeric))
        self.vjp = vjp(func, wrt=wrt)
        self.leaves = [flatten(self.args[i]) for i in self.numeric]
        self.size = sum(np.size(leaf) for leaves, _ in self.leaves for leaf in leaves)

    def call(self, fn, y, s, *rest):
        return fn(s, y, *rest) if self.tfirst else fn(y, s, *rest)

    def f(self, y, s):
        return _flat(self.call(self.func, y, s, *self.args))

    def augmented(self, state, s):
        y, a = state[: self.n], state[self.n : 2 * self.n]
        out = self.call(self.func, y, s, *self.args)
        parts = self.call(self.vjp, y, s, *self.args, _like(out, -a))
        return np.concatenate([_flat(out), *(_flat(p) for p in parts)])

    def unflatten(self, b):
        """``b`` cut back into the args' structures: a tuple, None for an entry that is
        not numeric."""
        out, start = [None] * len(self.args), 0
        for i, (leaves, treedef) in zip(self.numeric, self.leaves):
            pieces = []
            for leaf in leaves:
                size = np.size(leaf)
                pieces.append(_shaped(b[start : start + size], leaf))
                start += size
            out[i] = unflatten(treedef, pieces)
        return tuple(out)


def _numeric(value) -> bool:
    """Whether ``value`` (a number, an array, a nest of them) can be differentiated."""
    leaves, _ = flatten(value)
    return bool(leaves) and all(
        not isinstance(v, (bool, np.bool_)) and np.asarray(v).dtype.kind in "iuf" for v in leaves
    )


def _flat(value):
    """The numbers of ``value`` (an array, or a list or nest of them) as one float64 vector."""
    leaves, _ = flatten(value)
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in leaves] or [[]])


def _like(out, a):
    """``a`` (flat) in the structure of ``func``'s result ``out`` (``[dx, dv]``)."""
    if not isinstance(out, (list, tuple)):
        return np.reshape(a, np.shape(out))
    leaves, treedef = flatten(out)
    pieces, start = [], 0
    for leaf in leaves:
        size = np.size(leaf)
        pieces.append(_shaped(a[start : start + size], leaf))
        start += size
    return unflatten(treedef, pieces)


def _shaped(flat, like):
    """``flat`` shaped as ``like``: a float for a Python number, else an array of its
    shape, in its float dtype (float64 for an integer one)."""
    if isinstance(like, numbers.Number) and not isinstance(like, np.generic):
        return float(np.reshape(flat, ()))
    dtype = np.asarray(like).dtype
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    return np.reshape(flat, np.shape(like)).astype(dtype)


def _scalar(tolerance):
    """odeint's tolerance for the augmented state: the smallest one given, or None."""
    return None if tolerance is None else float(np.min(tolerance))
