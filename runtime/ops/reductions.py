"""Adjoints of reductions other than the sum and mean (``broadcast.py``): max and min
(split between ties), products (exact at zeros), the variance, cumulative sums and
products, weighted averages, the nan-ignoring reductions, ``np.ptp``, ``np.median``,
``np.sort`` and ``np.trapezoid``; with the second-derivative helpers of their rules.
"""

import math

import numpy as np

from .. import backend
from .arrays import _axes, _eye, _lift
from .broadcast import reduced_size, unbroadcast, unmean, unreduce
from .declare import helper
from .shape import _undiff_last
from .structures import cast_like, zeros_like


@helper(fresh=True)
def unreduce_extreme(g, y, x, axis=None, keepdims=False):
    """Adjoint of max/min: split evenly between the elements that attain it."""
    hit = x == unreduce(y, x, axis, keepdims)
    count = hit.sum(axis=_axes(np.ndim(x), axis), keepdims=True)
    share = hit / count
    if hasattr(x, "dtype") and x.dtype.kind in "fc":
        share = share.astype(x.dtype, copy=False)
    return unreduce(g, x, axis, keepdims) * share


@helper(fresh=True)
def unreduce_prod(g, x, axis=None, keepdims=False):
    """Adjoint of prod: the product of the other elements, exact when some are zero."""
    ndim = np.ndim(x)
    axes = _axes(ndim, axis)
    rest = tuple(a for a in range(ndim) if a not in axes)
    moved = np.transpose(x, rest + axes)
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (left * right).reshape(moved.shape)
    others = np.transpose(others, backend.inverse_permutation(rest + axes))
    return unreduce(g, x, axis, keepdims) * others


@helper(fresh=True)
def unvar(g, a, axis=None, ddof=0, keepdims=False):
    """Adjoint of ``np.var``.

    With no degrees of freedom left (``ddof`` >= the count, where numpy divides by 0)
    the variance is nan or inf and its gradient is nan, as JAX gives."""
    centered = a - np.mean(a, axis=axis, keepdims=True)
    n = reduced_size(a, axis) - ddof
    return unreduce(g, a, axis, keepdims) * centered * (2.0 / n if n > 0 else math.nan)


@helper(fresh=True)
def uncumsum(g, a, axis=None):
    """Adjoint of ``np.cumsum``: a reversed cumulative sum."""
    if axis is None:
        flat = np.ravel(g)
        return np.reshape(np.cumsum(flat[::-1])[::-1], np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


@helper(fresh=True)
def uncumprod(g, y, a, axis=None):
    """Adjoint of ``y = np.cumprod(a, axis)``: ``a[k]`` gets ``sum_{j >= k} g[j] y[j] / a[k]``;
    where an ``a`` along the axis is 0, the products of the others, made without dividing."""
    if axis is None:
        return np.reshape(uncumprod(np.ravel(g), np.ravel(y), np.ravel(a), 0), np.shape(a))
    if not np.any(a == 0):
        return np.flip(np.cumsum(np.flip(g * y, axis), axis), axis) / a
    # out[k] = sum_{j >= k} g[j] prod_{i <= j, i != k} a[i]: a[k] set to 1 in row k
    moved = np.moveaxis(a, axis, -1)
    n = moved.shape[-1]
    eye = _eye(n, a)
    rows = np.where(eye, 1, moved[..., None, :])  # (..., k, i)
    products = np.cumprod(rows, axis=-1) * np.triu(np.ones_like(eye))  # j >= k only
    out = np.sum(products * np.moveaxis(g, axis, -1)[..., None, :], axis=-1)
    return np.moveaxis(out, -1, axis)


@helper(fresh=True)
def unaverage(g, a, axis=None, weights=None, keepdims=False, returned=False):
    """Adjoint of ``a`` in ``np.average(a, axis, weights, returned, keepdims=...)``."""
    if returned:
        g = g[0]
    if weights is None:
        return unmean(g, a, axis, keepdims)
    w = _average_weights(a, axis, weights)
    return unreduce(g, a, axis, keepdims) * (w / np.sum(w, axis=axis, keepdims=True))


@helper(fresh=True)
def unaverage_weights(g, y, a, axis=None, weights=None, keepdims=False, returned=False):
    """Adjoint of ``weights`` in ``np.average``: ``g (a - y) / sum(w)``, summed back to the
    weights' shape; with ``returned``, also the adjoint of the sum of the weights."""
    gsum = None
    if returned:
        g, gsum, y = g[0], g[1], y[0]
    w = _average_weights(a, axis, weights)
    total = np.sum(w, axis=axis, keepdims=True)
    if not keepdims and axis is not None:
        g, y = np.expand_dims(g, axis), np.expand_dims(y, axis)
    out = g * (a - y) / total
    if gsum is not None:
        out = out + (np.expand_dims(gsum, axis) if not keepdims and axis is not None else gsum)
    out = np.broadcast_to(out, np.shape(np.multiply(a, w)))
    if np.ndim(weights) == 1 and np.ndim(a) > 1:  # 1-D weights along ``axis``
        others = tuple(i for i in range(np.ndim(a)) if i != _axes(np.ndim(a), axis)[0])
        return np.sum(out, axis=others)
    return unbroadcast(out, weights)


def _average_weights(a, axis, weights):
    """``weights`` shaped to broadcast against ``a`` (1-D weights lie along ``axis``)."""
    if np.ndim(weights) == 1 and np.ndim(a) > 1:
        shape = [1] * np.ndim(a)
        shape[_axes(np.ndim(a), axis)[0]] = -1
        return np.reshape(weights, shape)
    return weights


@helper(fresh=True)
def unnanmean(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.nanmean``: the mean's over the entries that are not nan."""
    present = ~np.isnan(a)
    dtype = getattr(a, "dtype", None)
    dtype = dtype if dtype is not None and dtype.kind == "f" else None  # float32 stays
    count = np.sum(present, axis=axis, keepdims=True, dtype=dtype)
    return np.where(present, unreduce(g, a, axis, keepdims) / count, 0)


@helper(fresh=True)
def unsort(g, a, axis=-1):
    """Adjoint of ``np.sort(a, axis)``: ``g`` put back where each sorted value came from."""
    if axis is None:
        return np.reshape(unsort(np.ravel(g), np.ravel(a), 0), np.shape(a))
    out = zeros_like(a)
    np.put_along_axis(out, np.argsort(a, axis=axis, kind="stable"), g, axis)
    return out


@helper(fresh=True)
def untrapezoid(g, y, x=None, dx=1.0, axis=-1, which=0):
    """Adjoint of ``np.trapezoid(y, x, dx, axis)`` for ``y`` (``which`` 0), ``x`` (1) or
    ``dx`` (2)."""
    nd = np.ndim(y)
    axis %= nd
    h = np.moveaxis(np.expand_dims(_lift(g, y, x, dx), axis), axis, -1)
    ym = np.moveaxis(y, axis, -1)
    if x is None:
        width = dx if np.ndim(dx) == 0 else np.moveaxis(dx, axis, -1)
    elif np.ndim(x) == 1:
        width = x[1:] - x[:-1]
    else:
        width = np.diff(np.moveaxis(x, axis, -1), axis=-1)
    if which == 0:
        w = width * h * 0.5
        steps = np.shape(ym)[:-1] + (np.shape(ym)[-1] - 1,)
        w = np.broadcast_to(w, np.broadcast_shapes(np.shape(w), steps))
        zero = np.zeros_like(w, shape=np.shape(w)[:-1] + (1,))
        out = np.concatenate([w, zero], -1) + np.concatenate([zero, w], -1)
        return cast_like(unbroadcast(np.moveaxis(out, -1, axis), y), y)
    slope = h * (ym[..., 1:] + ym[..., :-1]) * 0.5  # d out / d width
    if which == 2:
        return cast_like(
            unbroadcast(slope if np.ndim(dx) == 0 else np.moveaxis(slope, -1, axis), dx), dx
        )
    if np.ndim(x) == 1:
        slope = np.reshape(np.sum(slope, axis=tuple(range(np.ndim(slope) - 1))), (-1,))
        return cast_like(_undiff_last(slope, 1), x)
    out = np.moveaxis(_undiff_last(slope, 1), -1, axis)
    return cast_like(unbroadcast(out, x), x)


@helper(fresh=True)
def unnan_extreme(g, y, x, axis=None, keepdims=False):
    """Adjoint of ``np.nanmax``/``np.nanmin``: split evenly between the entries that attain
    it; nan entries (and slices of nans only) get 0."""
    hit = x == unreduce(y, x, axis, keepdims)
    count = hit.sum(axis=_axes(np.ndim(x), axis), keepdims=True)
    share = (hit / np.maximum(count, 1)).astype(x.dtype, copy=False)
    return unreduce(g, x, axis, keepdims) * share


@helper(fresh=True)
def unnanprod(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.nanprod``: the product's, with nans taken as 1 and given 0."""
    nan = np.isnan(a)
    return np.where(nan, 0, unreduce_prod(g, np.where(nan, 1, a), axis, keepdims))


@helper(fresh=True)
def unnanvar(g, a, axis=None, ddof=0, keepdims=False):
    """Adjoint of ``np.nanvar``: the variance's over the entries that are not nan."""
    present = ~np.isnan(a)
    count = np.sum(present, axis=axis, keepdims=True, dtype=a.dtype)
    mean = np.sum(np.where(present, a, 0), axis=axis, keepdims=True) / count
    slope = (a - mean) * (2.0 / np.maximum(count - ddof, 1))
    return np.where(present, unreduce(g, a, axis, keepdims) * slope, 0)


@helper(fresh=True)
def unptp(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.ptp``: the max's adjoint minus the min's."""
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return unreduce_extreme(g, hi, a, axis, keepdims) - unreduce_extreme(g, lo, a, axis, keepdims)


@helper(fresh=True)
def unmedian(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.median``: ``g`` on the middle entry of each slice, or half of it on
    each of the two middle ones (a subgradient where entries tie, as for ``np.sort``)."""
    nd = np.ndim(a)
    axes = _axes(nd, axis)
    rest = tuple(i for i in range(nd) if i not in axes)
    moved = np.transpose(a, rest + axes)
    flat = np.reshape(moved, moved.shape[: len(rest)] + (-1,))
    order = np.argsort(flat, axis=-1, kind="stable")
    n = flat.shape[-1]
    weight = zeros_like(flat)
    middle = order[..., (n - 1) // 2 : n // 2 + 1]
    np.put_along_axis(weight, middle, 1.0 if n % 2 else 0.5, axis=-1)
    weight = np.transpose(np.reshape(weight, moved.shape), backend.inverse_permutation(rest + axes))
    return unreduce(g, a, axis, keepdims) * weight


@helper(fresh=True)
def uncumprod_slope(g, h, a, axis=None):
    """The gradient in ``a`` of ``<g, J(a) h>``, ``J(a)`` the Jacobian of ``np.cumprod(a,
    axis)``: the derivative of ``uncumprod(g, cumprod(a), a, axis)`` (``J(a)^T g``) along
    ``h``, and also its adjoint for the cotangent ``h`` (the second derivative is
    symmetric). Entry ``k`` is ``sum_{j >= k} g[j] sum_{i <= j, i != k} h[i]
    prod_{l <= j, l != i, k} a[l]``: the tangent of the products with ``a[k]`` set to 1
    along ``h`` with ``h[k]`` set to 0, exact where entries of ``a`` are 0."""
    if axis is None:
        flat = uncumprod_slope(np.ravel(g), np.ravel(h), np.ravel(a), 0)
        return np.reshape(flat, np.shape(a))
    a, g, h = (np.moveaxis(v, axis, -1) for v in (a, g, h))  # h is shaped like a
    n = a.shape[-1]
    out = np.zeros_like(a * h)
    for k in range(n):
        ak, hk = a.copy(), h.copy()
        ak[..., k], hk[..., k] = 1, 0
        product, tangent = ak[..., 0], hk[..., 0]
        total = g[..., 0] * tangent if k == 0 else 0.0
        for j in range(1, n):  # the tangent of cumprod(ak) along hk, entry j
            tangent = tangent * ak[..., j] + product * hk[..., j]
            product = product * ak[..., j]
            if j >= k:
                total = total + g[..., j] * tangent
        out[..., k] = total
    return np.moveaxis(out, -1, axis)


@helper(fresh=True)
def reaverage(h, g, a, axis=None, weights=None, keepdims=False, returned=False):
    """The adjoint of ``g`` in ``unaverage(g, a, axis, weights, keepdims, returned)`` for
    the cotangent ``h`` (the weights held): ``h`` times each entry's share, summed."""
    mine = g[0] if returned else g
    share = unaverage(np.ones_like(mine), a, axis, weights, keepdims)
    out = unbroadcast(np.sum(h * share, axis=axis, keepdims=keepdims), mine)
    return [out, zeros_like(g[1])] if returned else out
