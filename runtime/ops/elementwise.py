"""Slopes of elementwise functions, where the formula needs care at a point (``x ** y``
at 0, ``hypot`` and ``sinc`` at the origin), the weights of ``maximum``/``fmax``,
masks, and the adjoints of casts and of ``np.real``.
"""

import math

import numpy as np

from .. import backend
from .declare import helper
from .structures import cast_like, unarray, zeros_like


@helper(fresh=True)
def winner(a, b):
    """1 where ``a`` beats ``b``, 0.5 on ties, else 0 (the adjoint weight of max)."""
    dtype = np.result_type(a, b)
    if dtype.kind not in "fc":
        dtype = np.float64
    weight = (a > b) + (a == b) * 0.5
    return weight.astype(dtype, copy=False) if hasattr(weight, "astype") else weight


@helper(fresh=True)
def pow_slope(x, y):
    """``y * x ** (y - 1)``: the derivative of ``x ** y`` by ``x``.

    0 where ``y`` is 0 (``x ** 0`` is constant, also at ``x == 0`` where the formula is
    ``0 * inf``), as JAX gives; for a Python number ``x == 0`` and ``y < 1`` it is
    numpy's ``inf`` rather than Python's ZeroDivisionError."""
    if isinstance(x, (list, tuple)):  # np.power([...], y)
        x = backend.as_array(x, y)
    if getattr(y, "ndim", 0) == 0:  # a number exponent (Python, numpy, or 0-d)
        if y == 0:
            return np.zeros_like(x) if hasattr(x, "dtype") else 0.0
        if isinstance(x, (int, float)) and not isinstance(x, np.generic) and x == 0 and y < 1:
            return y * math.inf
        return y * x ** (y - 1)
    zero = y == 0
    return np.where(zero, 0, y * x ** np.where(zero, 1, y - 1))


@helper(fresh=True)
def pow_log(z, x):
    """``z * log(x)`` for ``z = x ** y``: the derivative of the power by its exponent.

    Where ``x`` is 0 the log is read as 0 (JAX's convention), so ``0 ** y`` contributes 0
    for ``y > 0`` instead of ``0 * -inf = nan``. A Python number ``x`` stays a Python
    number (so float32 stays float32); a negative one gives nan, as ``np.log`` does."""
    if isinstance(x, (int, float)) and not isinstance(x, np.generic):
        if x > 0:
            return z * math.log(x)
        return z * (0.0 if x == 0 else math.nan)
    if isinstance(x, (list, tuple)):
        x = backend.as_array(x, z)
    return z * np.log(np.where(x == 0, 1, x))


@helper(fresh=True)
def hypot_slope(x, z):
    """``x / z``: the derivative of ``z = hypot(x, y)`` by ``x``; 0 at the origin (where
    ``z`` is 0, hence ``x`` too), as JAX gives, instead of ``0 / 0``."""
    if getattr(z, "ndim", 0) == 0:  # numbers keep their types
        return x / z if z != 0 else x * 0.0
    return x / np.where(z == 0, 1, z)


@helper(fresh=True)
def select(condition, a, b):
    return np.where(condition, a, b)


@helper(fresh=True)
def inside(x, lo, hi):
    """1.0 where ``x`` lies within [lo, hi] (either bound may be None)."""
    mask = np.ones_like(x, dtype=bool)
    if lo is not None:
        mask = mask & (x >= lo)
    if hi is not None:
        mask = mask & (x <= hi)
    return mask


@helper(fresh=True)
def fwinner(a, b):
    """``winner(a, b)``, and 1 where only ``b`` is nan: the weight of ``a`` in
    ``np.fmax(a, b)`` (``np.fmin`` with the arguments swapped), which ignores a nan."""
    return winner(a, b) + (np.isnan(b) & ~np.isnan(a))


@helper(fresh=True)
def sinc_slope(x, y):
    """The derivative of ``y = np.sinc(x)``: ``(cos(pi x) - y) / x``, 0 at ``x == 0``."""
    if getattr(x, "ndim", 0) == 0 and not isinstance(x, np.ndarray):  # numbers
        return (math.cos(math.pi * x) - y) / x if x != 0 else x * 0.0
    zero = x == 0
    return np.where(zero, 0, (np.cos(np.pi * x) - y) / np.where(zero, 1, x))


@helper(passes=True)
def uncast(g, y, x):
    """Adjoint of a cast ``y = x.astype(t)``: ``g`` in ``x``'s type; zero where ``y`` is
    of integers or bools (a step function of ``x``)."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and dtype.kind not in "fc":
        return zeros_like(x)
    return cast_like(g, x)


@helper(passes=True, checks=True)
def real_only(g, x):
    """Adjoint of ``np.real``, ``np.conj`` and ``x.real`` of a real ``x``: ``g`` itself."""
    if isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c":
        raise NotImplementedError(
            "the gradient of np.real, np.conj and .real is supported for real inputs only"
        )
    return g


@helper(passes=True)
def unarray_cast(g, y, a):
    """Adjoint of ``y = np.array(a, ...)`` or ``np.asarray``: ``unarray``'s, zero where
    ``y`` is of integers or bools (a cast that is a step function of ``a``)."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and dtype.kind not in "fc":
        g = zeros_like(y)
    return unarray(g, a)


@helper(fresh=True, linear=True, specialized=True)
def unabs(g, x):
    """Adjoint of ``x`` in ``np.abs(x)``: ``g * sign(x)`` for a real ``x``, and in JAX's
    convention ``Re(g) conj(x) / |x|`` for a complex one (0 at 0, as the subgradient of
    a real ``|x|``). A shape variant of a real ``x`` writes the product itself."""
    if isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c":
        return np.real(g) * np.conj(np.sign(x))
    return g * np.sign(x)
