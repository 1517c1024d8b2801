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

from . import forward_ops
from .ops import helper, uncholesky, uneigvalsh, unreduce
from .ops import uneigh as uneigh_pair
from .structure import flatten, unflatten

# the names read from scipy on first use: (module, names)
_SCIPY = (
    ("scipy.special", ("digamma", "polygamma")),
    ("scipy.stats", ("norm", "t", "gamma", "beta", "poisson")),
    ("scipy.signal", ("convolve", "correlate", "fftconvolve", "convolve2d")),
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


# scipy.linalg ----------------------------------------------------------------------
# The solvers read only part of their matrix (one triangle for assume_a="sym" or "pos",
# the band for "tridiagonal", the triangle for solve_triangular): the adjoint lies on
# the part read, each entry read standing for every place it fills, so that it is the
# derivative of what runs (central differences of the call agree entry by entry).

_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
_GENERAL = (None, "gen", "general")
_TRIANGULAR = {"upper triangular": False, "lower triangular": True}


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _no_overwrite(name, *flags):
    """A solver told to overwrite its inputs destroys what the adjoint reads."""
    if any(flags):
        raise ValueError(
            f"scipy.linalg.{name} with overwrite_a or overwrite_b destroys the matrix its "
            "gradient needs; drop the overwrite option in a differentiated call"
        )


def _band(n, width):
    """The boolean band ``|i - j| <= width`` of an ``n`` by ``n`` matrix."""
    rows = np.arange(n)
    return np.abs(rows[:, None] - rows[None, :]) <= width


def _read_part(a, assume_a, lower):
    """The matrix the solver sees: ``a`` itself, or built from the part it reads."""
    if assume_a in _GENERAL:
        return a
    if assume_a in _SYMMETRIC:
        low = np.tril(a) if lower else np.triu(a)
        return low + _mT(np.tril(a, -1) if lower else np.triu(a, 1))
    if assume_a in _TRIANGULAR:
        return np.tril(a) if _TRIANGULAR[assume_a] else np.triu(a)
    if assume_a == "diagonal":
        return a * np.eye(a.shape[-1], dtype=bool)
    if assume_a == "tridiagonal":
        return a * _band(a.shape[-1], 1)
    raise NotImplementedError(f"scipy.linalg: assume_a={assume_a!r} has no derivative rule")


def _onto_read_part(g, assume_a, lower):
    """The adjoint ``g`` of the matrix the solver saw, as the adjoint of ``a``."""
    if assume_a in _GENERAL:
        return g
    if assume_a in _SYMMETRIC:
        both = g + _mT(g)
        half = np.tril(both) if lower else np.triu(both)
        return half - g * np.eye(g.shape[-1], dtype=bool)
    return _read_part(g, assume_a, lower)  # a mask: the same part


def _outer(u, x):
    return np.outer(u, x) if np.ndim(x) == 1 else u @ _mT(x)


@helper(fresh=True)
def unsolve_b(g, a, lower=False, assume_a=None, transposed=False):
    """The adjoint of ``b`` in ``x = scipy.linalg.solve(a, b, lower, ..., assume_a, transposed)``."""
    m = _read_part(a, assume_a, lower)
    return np.linalg.solve(m if transposed else _mT(m), g)


@helper(fresh=True)
def unsolve_a(g, a, x, lower=False, assume_a=None, transposed=False, overwrite=False):
    """The adjoint of ``a`` in ``x = scipy.linalg.solve(a, b, ...)``: ``-gb x^T`` on the
    part of ``a`` read, transposed for ``transposed=True``."""
    _no_overwrite("solve", overwrite)
    gm = -_outer(unsolve_b(g, a, lower, assume_a, transposed), x)
    return _onto_read_part(_mT(gm) if transposed else gm, assume_a, lower)


@helper(fresh=True)
def solve_tangent(ta, tb, a, x, lower=False, assume_a=None, transposed=False):
    """The tangent of ``x = scipy.linalg.solve(a, b, ...)``: the part read is linear in ``a``."""
    m, tm = _read_part(a, assume_a, lower), _read_part(ta, assume_a, lower)
    m, tm = (_mT(m), _mT(tm)) if transposed else (m, tm)
    rhs = tb - (tm @ x)
    return np.linalg.solve(m, rhs)


@helper(fresh=True)
def uninv(g, y, a, assume_a=None, lower=False, overwrite=False):
    """The adjoint of ``y = scipy.linalg.inv(a, ..., assume_a, lower)``: ``-y^T g y^T``."""
    _no_overwrite("inv", overwrite)
    return _onto_read_part(-(_mT(y) @ g @ _mT(y)), assume_a, lower)


@helper(fresh=True)
def inv_tangent(ta, y, assume_a=None, lower=False):
    return -(y @ _read_part(ta, assume_a, lower) @ y)


def _trans(trans):
    """``solve_triangular``'s ``trans`` (0, 1, 2 or "N", "T", "C") as a bool."""
    return trans in (1, 2, "T", "C")


def _triangle(a, lower, unit_diagonal):
    """The triangular matrix ``solve_triangular`` reads: one triangle, and the identity's
    diagonal for ``unit_diagonal``."""
    if unit_diagonal:
        strict = np.tril(a, -1) if lower else np.triu(a, 1)
        return strict + np.eye(a.shape[-1], dtype=a.dtype)
    return np.tril(a) if lower else np.triu(a)


@helper(fresh=True)
def unsolve_triangular_b(g, a, trans=0, lower=False, unit_diagonal=False):
    """The adjoint of ``b`` in ``x = solve_triangular(a, b, trans, lower, unit_diagonal)``."""
    m = _triangle(a, lower, unit_diagonal)
    return np.linalg.solve(m if _trans(trans) else _mT(m), g)


@helper(fresh=True)
def unsolve_triangular_a(g, a, x, trans=0, lower=False, unit_diagonal=False):
    """The adjoint of ``a`` in ``x = solve_triangular(a, b, ...)``, on the triangle read
    (without the diagonal for ``unit_diagonal``)."""
    gm = -_outer(unsolve_triangular_b(g, a, trans, lower, unit_diagonal), x)
    gm = _mT(gm) if _trans(trans) else gm
    k = 1 if unit_diagonal else 0
    return np.tril(gm, -k) if lower else np.triu(gm, k)


@helper(fresh=True)
def solve_triangular_tangent(ta, tb, a, x, trans=0, lower=False, unit_diagonal=False):
    m = _triangle(a, lower, unit_diagonal)
    k = 1 if unit_diagonal else 0
    tm = np.tril(ta, -k) if lower else np.triu(ta, k)
    m, tm = (_mT(m), _mT(tm)) if _trans(trans) else (m, tm)
    return np.linalg.solve(m, tb - tm @ x)


def _factor_part(c, lower):
    """The triangle of ``cho_factor``'s ``c`` that holds the factor."""
    return np.tril(c) if lower else np.triu(c)


def _other_part(c, lower):
    """The triangle of ``c`` the factorization did not touch: ``a``'s own entries where
    this scipy's ``cho_factor`` leaves them there, else zero (scipy 1.18 zeroes it)."""
    if not _cho_factor_keeps_entries():
        return np.zeros_like(c)
    return np.triu(c, 1) if lower else np.tril(c, -1)


_KEEPS = []  # whether this scipy's cho_factor leaves a's entries in c's other triangle


def _cho_factor_keeps_entries():
    """Asked of scipy itself once (its documentation calls that triangle arbitrary)."""
    if not _KEEPS:
        import scipy.linalg  # (optional: only where a scipy rule's gradient runs)

        c, _ = scipy.linalg.cho_factor(np.array([[1.0, 1.0], [1.0, 2.0]]))
        _KEEPS.append(bool(c[1, 0] == 1.0))
    return _KEEPS[0]


@helper(fresh=True)
def uncho_factor(g, y, overwrite=False):
    """The adjoint of ``a`` in ``c, lower = scipy.linalg.cho_factor(a, lower)``: the
    factor's triangle through the Cholesky adjoint; ``c``'s other triangle holds ``a``'s
    own entries, whose adjoint passes through."""
    _no_overwrite("cho_factor", overwrite)
    (c, lower), gc = y, g[0]
    factor, g_factor = _factor_part(c, lower), _factor_part(gc, lower)
    return uncholesky(g_factor, factor, upper=not lower) + _other_part(gc, lower)


@helper(fresh=True)
def cho_factor_tangent(y, ta):
    """The tangent of ``(c, lower) = cho_factor(a, lower)``: ``(c', None)``."""
    c, lower = y
    factor = forward_ops.cholesky(_factor_part(c, lower), ta, upper=not lower)
    return (_factor_part(factor, lower) + _other_part(ta, lower), None)


def _lower_factor(c, lower):
    return np.tril(c) if lower else _mT(np.triu(c))


@helper(fresh=True)
def uncho_solve_factor(g, c_and_lower, x):
    """The adjoint of ``c`` in ``x = cho_solve((c, lower), b)``: with ``S = L L^T`` the
    matrix solved, ``-(gb x^T + x gb^T) L`` on the factor's triangle."""
    c, lower = c_and_lower
    low = _lower_factor(c, lower)
    gb = uncho_solve_b(g, c_and_lower)
    gs = -_outer(gb, x)
    g_low = np.tril((gs + _mT(gs)) @ low)
    # the flag's adjoint is a zero that adds to another (two solves with one factor)
    return (g_low if lower else _mT(g_low), 0.0)


@helper(fresh=True)
def uncho_solve_b(g, c_and_lower):
    """The adjoint of ``b`` in ``x = cho_solve((c, lower), b)``: the matrix is symmetric."""
    c, lower = c_and_lower
    low = _lower_factor(c, lower)
    return np.linalg.solve(_mT(low), np.linalg.solve(low, g))


@helper(fresh=True)
def cho_solve_tangent(t_c_and_lower, tb, c_and_lower, x):
    c, lower = c_and_lower
    low = _lower_factor(c, lower)
    t_low = _lower_factor(t_c_and_lower[0], lower)
    ts = t_low @ _mT(low) + low @ _mT(t_low)
    return uncho_solve_b(tb - ts @ x, c_and_lower)


def _row_order(piv):
    """The row order ``perm`` with ``a[perm] = L @ U`` for LAPACK's pivots ``piv`` (row
    ``i`` interchanged with row ``piv[i]``, in turn)."""
    perm = list(range(len(piv)))
    for i, p in enumerate(int(p) for p in piv):
        perm[i], perm[p] = perm[p], perm[i]
    return np.asarray(perm)


def _lu_parts(lu):
    """The unit lower ``L`` and upper ``U`` packed in ``lu``."""
    return np.tril(lu, -1) + np.eye(lu.shape[-1], dtype=lu.dtype), np.triu(lu)


@helper(fresh=True)
def unlu_factor(g, y, overwrite=False):
    """The adjoint of ``a`` in ``lu, piv = scipy.linalg.lu_factor(a)``, for ``P^T a = L U``:
    ``P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T``."""
    _no_overwrite("lu_factor", overwrite)
    (lu, piv), glu = y, g[0]
    low, up = _lu_parts(lu)
    inner = np.tril(_mT(low) @ np.tril(glu, -1), -1) + np.triu(np.triu(glu) @ _mT(up))
    permuted = np.linalg.solve(_mT(low), _mT(np.linalg.solve(up, _mT(inner))))
    out = np.zeros_like(permuted)
    out[_row_order(piv)] = permuted
    return out


@helper(fresh=True)
def lu_factor_tangent(y, ta):
    """The tangent of ``(lu, piv) = lu_factor(a)``: ``(L tril(X, -1) + triu(X) U, None)``
    with ``X = L^-1 P^T a' U^-1``."""
    lu, piv = y
    low, up = _lu_parts(lu)
    x = _mT(np.linalg.solve(_mT(up), _mT(np.linalg.solve(low, ta[_row_order(piv)]))))
    return (low @ np.tril(x, -1) + np.triu(x) @ up, None)


def _lu_matrix(lu, piv):
    low, up = _lu_parts(lu)
    a = np.zeros_like(lu)
    a[_row_order(piv)] = low @ up
    return a


@helper(fresh=True)
def unlu_solve_b(g, lu_and_piv, trans=0):
    """The adjoint of ``b`` in ``x = lu_solve((lu, piv), b, trans)``."""
    a = _lu_matrix(*lu_and_piv)
    return np.linalg.solve(a if _trans(trans) else _mT(a), g)


@helper(fresh=True)
def unlu_solve_factor(g, lu_and_piv, x, trans=0):
    """The adjoint of ``lu`` in ``x = lu_solve((lu, piv), b, trans)``: the adjoint of the
    matrix ``a = P L U`` solved, carried to ``L`` (below the diagonal) and ``U``."""
    lu, piv = lu_and_piv
    low, up = _lu_parts(lu)
    ga = -_outer(unlu_solve_b(g, lu_and_piv, trans), x)
    ga = (_mT(ga) if _trans(trans) else ga)[_row_order(piv)]
    return (np.tril(ga @ _mT(up), -1) + np.triu(_mT(low) @ ga), 0.0)  # piv: a zero


@helper(fresh=True)
def lu_solve_tangent(t_lu_and_piv, tb, lu_and_piv, x, trans=0):
    lu, piv = lu_and_piv
    low, up = _lu_parts(lu)
    t_lu = t_lu_and_piv[0]
    ta = np.zeros_like(lu)
    ta[_row_order(piv)] = np.tril(t_lu, -1) @ up + low @ np.triu(t_lu)
    a = _lu_matrix(lu, piv)
    a, ta = (_mT(a), _mT(ta)) if _trans(trans) else (a, ta)
    return np.linalg.solve(a, tb - ta @ x)


@helper(fresh=True)
def unexpm(g, a):
    """The adjoint of ``expm(a)``: the Frechet derivative of ``expm`` at ``a^T`` along ``g``."""
    return expm_frechet(_mT(a), g)


@helper(fresh=True)
def expm_frechet(a, e):
    """The Frechet derivative of ``expm`` at ``a`` along ``e``, matrix by matrix."""
    from scipy.linalg import expm_frechet as frechet  # scipy is optional: read on use

    if np.ndim(a) == 2:
        return frechet(a, e, compute_expm=False)
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(e)), dtype=np.result_type(a, e))
    for index in np.ndindex(out.shape[:-2]):
        out[index] = frechet(a[index], e[index], compute_expm=False)
    return out


@helper(fresh=True)
def uneigh(g, y, a, lower=True, eigvals_only=False, overwrite=False):
    """The adjoint of ``a`` in ``scipy.linalg.eigh(a, lower=lower, eigvals_only=...)``
    (distinct eigenvalues), on the triangle read."""
    _no_overwrite("eigh", overwrite)
    uplo = "L" if lower else "U"
    if eigvals_only:
        return uneigvalsh(g, a, uplo)
    return uneigh_pair(g, y, uplo)


@helper(fresh=True)
def eigh_tangent(y, a, ta, lower=True, eigvals_only=False):
    uplo = "L" if lower else "U"
    if eigvals_only:
        return forward_ops.eigvalsh(a, ta, uplo)
    return forward_ops.eigh(y, ta, uplo)
