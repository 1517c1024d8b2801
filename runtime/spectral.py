"""Adjoints of the discrete Fourier transforms (``np.fft``, ``scipy.fft``), in JAX's
convention for complex numbers (``complex_ops``): the cotangent ``c`` of a value pairs
with its tangent ``t`` as ``Re(sum(c * t))``, so the adjoint of a linear map is its
transpose, not its conjugate transpose.

* ``fft``/``ifft``/``fftn``/``ifftn`` (and ``fft2``, ``ifft2``): the DFT matrix is
  symmetric, so each is its own transpose, with the same ``norm``; the padding or
  cropping to ``n`` (``s``) is undone by cropping or padding back to the input's shape.
* ``rfft``/``rfftn``: ``fft`` of the real input, keeping the first ``n // 2 + 1`` bins of
  the last axis; the transpose is the real part of ``fft`` of the cotangent padded with
  zeros to ``n``.
* ``irfft``/``irfftn``: the inverse of the Hermitian extension, whose interior bins
  stand for two (a bin and its conjugate); the transpose is ``conj(rfft)`` of the
  cotangent with those bins doubled, scaled as the transform is (``norm`` swapped:
  "backward" divides by ``n`` on the inverse, so its transpose does on the forward).

Every helper takes what the transform was called with (``n``/``s``, ``axis``/``axes``,
``norm``) in numpy's spelling, so one set serves both libraries.
"""

import numpy as np

from . import backend
from .complex_ops import is_complex
from .ops import helper

_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _axes_and_lengths(x, s, axes, one_axis):
    """The transformed axes (non-negative) and their lengths after padding or cropping,
    as numpy reads ``s`` (``n``) and ``axes`` (``axis``)."""
    ndim = np.ndim(x)
    if one_axis:
        axes = (axes,)
        s = None if s is None else (s,)
    elif axes is None:
        axes = tuple(range(ndim - (len(s) if s is not None else ndim), ndim))
    axes = tuple(a % ndim for a in axes)
    if s is None:
        s = tuple(np.shape(x)[a] for a in axes)
    return axes, tuple(s)


def _fit(g, shape, axes):
    """``g`` cropped or padded with zeros along ``axes`` to ``shape``'s lengths there."""
    crop = [slice(None)] * g.ndim
    pad = [(0, 0)] * g.ndim
    for a in axes:
        have, want = g.shape[a], shape[a]
        if have > want:
            crop[a] = slice(0, want)
        elif have < want:
            pad[a] = (0, want - have)
    g = g[tuple(crop)]
    if any(p != (0, 0) for p in pad):
        g = np.pad(g, pad)
    return g


def _real_if_real(g, x):
    return np.real(g) if not is_complex(x) else g


def _in_precision(g, x):
    """``g`` in the precision of ``x`` (complex64 for float32 or complex64)."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype in (np.float32, np.complex64) and g.dtype == np.complex128:
        return g.astype(np.complex64)
    return g


@helper(fresh=True, linear=True)
def unfft(g, x, n=None, axis=-1, norm=None, inverse=False):
    """Adjoint of ``x`` in ``np.fft.fft(x, n, axis, norm)`` (``ifft`` where ``inverse``)."""
    return unfftn(g, x, n, axis, norm, inverse, one_axis=True)


@helper(fresh=True, linear=True)
def unfftn(g, x, s=None, axes=None, norm=None, inverse=False, one_axis=False):
    """Adjoint of ``x`` in ``np.fft.fftn(x, s, axes, norm)`` (``ifftn`` where
    ``inverse``; ``fft``/``ifft`` with ``n``, ``axis`` where ``one_axis``)."""
    axes, _ = _axes_and_lengths(x, s, axes, one_axis)
    transform = np.fft.ifftn if inverse else np.fft.fftn
    out = transform(g, axes=axes, norm=norm)
    return _in_precision(_real_if_real(_fit(out, np.shape(x), axes), x), x)


@helper(fresh=True, linear=True)
def unrfft(g, x, n=None, axis=-1, norm=None):
    """Adjoint of the real ``x`` in ``np.fft.rfft(x, n, axis, norm)``."""
    return unrfftn(g, x, n, axis, norm, one_axis=True)


@helper(fresh=True, linear=True)
def unrfftn(g, x, s=None, axes=None, norm=None, one_axis=False):
    """Adjoint of the real ``x`` in ``np.fft.rfftn(x, s, axes, norm)``: the real part of
    ``fftn`` of ``g`` padded with zeros to the full length of the last axis."""
    axes, lengths = _axes_and_lengths(x, s, axes, one_axis)
    out = np.real(np.fft.fftn(g, s=lengths, axes=axes, norm=norm))
    out = _fit(out, np.shape(x), axes)
    return out.astype(x.dtype, copy=False) if getattr(x, "dtype", None) == np.float32 else out


@helper(fresh=True, linear=True)
def unirfft(g, y, n=None, axis=-1, norm=None):
    """Adjoint of ``y`` in ``np.fft.irfft(y, n, axis, norm)``."""
    return unirfftn(g, y, n, axis, norm, one_axis=True)


def _irfft_lengths(y, s, axes, one_axis):
    """The axes and output lengths of ``irfftn(y, s, axes)``: the last defaults to
    ``2 * (m - 1)``."""
    ndim = np.ndim(y)
    if one_axis:
        axes = (axes % ndim,)
        s = None if s is None else (s,)
    elif axes is None:
        axes = tuple(range(ndim - (len(s) if s is not None else ndim), ndim))
    axes = tuple(a % ndim for a in axes)
    if s is None:
        shape = np.shape(y)
        s = tuple(shape[a] for a in axes[:-1]) + (2 * (shape[axes[-1]] - 1),)
    return axes, tuple(s)


@helper(fresh=True, linear=True)
def unirfftn(g, y, s=None, axes=None, norm=None, one_axis=False):
    """Adjoint of ``y`` in ``np.fft.irfftn(y, s, axes, norm)``: ``conj`` of ``rfftn`` of
    the real ``g`` (with the transform's scaling), the interior bins of the last axis
    doubled, then cropped or padded to ``y``'s shape."""
    axes, lengths = _irfft_lengths(y, s, axes, one_axis)
    spectrum = np.fft.rfftn(np.real(g), s=lengths, axes=axes, norm=_SWAPPED[norm])
    last, n = axes[-1], lengths[-1]
    m = spectrum.shape[last]
    weight = np.full(m, 2.0)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[-1] = 1.0
    shape = [1] * spectrum.ndim
    shape[last] = m
    spectrum = spectrum * backend.as_array(weight.reshape(shape).tolist(), spectrum)
    out = _fit(np.conj(spectrum), np.shape(y), axes)
    return _in_precision(out, y)


@helper(fresh=True, linear=True)
def unfftshift(g, axes=None):
    """Adjoint of ``np.fft.fftshift(x, axes)``: the inverse shift."""
    return np.fft.ifftshift(g, axes=axes)


@helper(fresh=True, linear=True)
def unifftshift(g, axes=None):
    """Adjoint of ``np.fft.ifftshift(x, axes)``: the forward shift."""
    return np.fft.fftshift(g, axes=axes)


@helper(fresh=True, linear=True)
def transform(t, name, s=None, axes=None, norm=None):
    """``np.fft.<name>(t, s, axes, norm)`` with the axes that ``s`` implies spelled out
    (the last ``len(s)``, as ``scipy.fft`` reads an ``s`` without ``axes``; numpy 2
    deprecates leaving them out): the tangent of a ``scipy.fft`` n-D transform."""
    if s is not None and axes is None:
        axes = tuple(range(-len(s), 0))
    return getattr(np.fft, name)(t, s, axes, norm)


@helper(fresh=True, linear=True)
def retransform(h, s=None, axes=None, norm=None, inverse=False, one_axis=False, real=False):
    """The transform whose adjoint ``unfftn`` (``unrfftn`` where ``real``, ``unirfftn``
    where both) is, applied to ``h``: the transpose of that adjoint, for a gradient
    differentiated again. ``n`` and ``axis`` where ``one_axis``, as the adjoints take them."""
    name = ("irfft" if inverse else "rfft") if real else ("ifft" if inverse else "fft")
    if one_axis:
        return getattr(np.fft, name)(h, s, axes, norm)
    if s is not None and axes is None:
        axes = tuple(range(-len(s), 0))
    return getattr(np.fft, name + "n")(h, s, axes, norm)


@helper(fresh=True, linear=True)
def unretransform(g, h, s=None, axes=None, norm=None, inverse=False, one_axis=False, real=False):
    """Adjoint of ``h`` in ``retransform(h, ...)``: the adjoint of that transform."""
    if not real:
        return unfftn(g, h, s, axes, norm, inverse, one_axis)
    if inverse:
        return unirfftn(g, h, s, axes, norm, one_axis)
    return unrfftn(g, h, s, axes, norm, one_axis)


# --------------------------------------------------------------------------
# Convolution and correlation (``np.convolve``, ``np.correlate``, ``scipy.signal``). The
# result of every mode is a window of the full result; the adjoint of a window is the
# cotangent set back into the full result's shape, zeros elsewhere (``unmode``), and the
# adjoint of the full convolution in one argument is the "valid" convolution of that
# full cotangent with the other argument reversed (in the rules' lines).

_MODES = ("full", "same", "valid")


def _check_mode(mode, name):
    if mode not in _MODES:
        raise ValueError(
            f"the gradient of {name} takes mode 'full', 'same' or 'valid', not {mode!r}"
        )


def _window_start(n, m, mode, correlate):
    """Where numpy's ``mode`` window of a length ``n`` by ``m`` result starts in the full one."""
    k = min(n, m)
    if mode == "full":
        return 0
    if mode == "valid":
        return k - 1
    return k // 2 if correlate and m > n else (k - 1) // 2  # numpy's correlate centres so


@helper(fresh=True, linear=True)
def unmode(g, a, v, mode="full", correlate=False):
    """The cotangent ``g`` of ``np.convolve(a, v, mode)`` (``np.correlate`` where
    ``correlate``) set into the full result's length, ``len(a) + len(v) - 1``."""
    name = "np.correlate" if correlate else "np.convolve"
    _check_mode(mode, name)
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        raise ValueError(
            f"the gradient of {name} takes 1-D arrays, not {np.ndim(a)}-D and {np.ndim(v)}-D"
        )
    n, m = np.shape(a)[0], np.shape(v)[0]
    start = _window_start(n, m, mode, correlate)
    return np.pad(g, (start, n + m - 1 - start - np.shape(g)[0]))


@helper(fresh=True, linear=True)
def window(h, a, v, mode="full", correlate=False):
    """The ``mode`` window of ``h``, an array of the full result's length: the transpose
    of ``unmode``, for a gradient differentiated again."""
    n, m = np.shape(a)[0], np.shape(v)[0]
    start = _window_start(n, m, mode, correlate)
    length = {"full": n + m - 1, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}[mode]
    return h[start : start + length].copy()


@helper(fresh=True, linear=True)
def unmode_nd(g, a, v, mode="full", axes=None, boundary="fill", fillvalue=0):
    """The cotangent ``g`` of ``scipy.signal.convolve(a, v, mode)`` (and ``correlate``,
    ``fftconvolve`` over ``axes``, ``convolve2d``) set into the full result's shape:
    ``len(a) + len(v) - 1`` along the convolved axes; "same" is centred on ``a``."""
    _check_mode(mode, "scipy.signal.convolve")
    if boundary not in ("fill", "pad") or np.any(fillvalue != 0):
        raise NotImplementedError(
            "the gradient of scipy.signal.convolve2d takes boundary='fill' with fillvalue 0, "
            f"not boundary={boundary!r}, fillvalue={fillvalue!r}"
        )
    ndim = np.ndim(g)
    axes = range(ndim) if axes is None else [axes] if isinstance(axes, int) else axes
    axes = {ax % ndim for ax in axes}
    if mode == "same" and any(
        np.shape(a)[ax] < np.shape(v)[ax] for ax in range(ndim) if ax not in axes
    ):  # scipy then crops the broadcast axis to a's length, centred: not differentiated
        raise NotImplementedError(
            "the gradient of scipy.signal.fftconvolve in mode 'same' where in1 is broadcast "
            "along an axis not convolved"
        )
    pad = [(0, 0)] * ndim
    for ax in axes:
        n, m = np.shape(a)[ax], np.shape(v)[ax]
        start = {"full": 0, "same": (m - 1) // 2, "valid": min(n, m) - 1}[mode]
        pad[ax] = (start, n + m - 1 - start - np.shape(g)[ax])
    return np.pad(g, pad)


@helper(fresh=True, linear=True)
def window_nd(h, a, v, mode="full", axes=None):
    """The ``mode`` window of ``h``, shaped as the full result of ``scipy.signal.convolve(a,
    v)`` along ``axes``: the transpose of ``unmode_nd``, for a gradient differentiated
    again."""
    ndim = np.ndim(h)
    axes = range(ndim) if axes is None else [axes] if isinstance(axes, int) else axes
    axes = {ax % ndim for ax in axes}
    index = [slice(None)] * ndim
    for ax in axes:
        n, m = np.shape(a)[ax], np.shape(v)[ax]
        start = {"full": 0, "same": (m - 1) // 2, "valid": min(n, m) - 1}[mode]
        length = {"full": n + m - 1, "same": n, "valid": max(n, m) - min(n, m) + 1}[mode]
        index[ax] = slice(start, start + length)
    return h[tuple(index)].copy()


# --------------------------------------------------------------------------
# np.interp(x, xp, fp, left, right): linear in fp, piecewise linear in x


def _no_period(period):
    if period is not None:
        raise NotImplementedError("the gradient of np.interp with period= is not supported")


def _segments(x, xp):
    """The segment index of each ``x`` (``xp[j] <= x < xp[j + 1]``, as numpy finds it) and
    its weight on the right end, the index clipped into ``[0, len(xp) - 2]``."""
    n = np.shape(xp)[0]
    # searched as a vector: dask's searchsorted fails on a 0-d query when computed
    j = np.reshape(np.searchsorted(xp, np.reshape(x, (-1,)), side="right"), np.shape(x)) - 1
    jj = np.clip(j, 0, max(n - 2, 0))
    if n < 2:
        return j, jj, np.zeros_like(x, dtype=float)
    lo, hi = xp[jj], xp[jj + 1]
    return j, jj, (x - lo) / (hi - lo)


@helper(fresh=True)
def interp_slope(x, xp, fp, period=None):
    """The slope of ``np.interp(x, xp, fp)`` in ``x``: the slope of the segment ``x`` is
    in, 0 outside ``[xp[0], xp[-1])`` (the right derivative at a knot)."""
    _no_period(period)
    n = np.shape(xp)[0]
    x = np.asarray(x, like=xp) if not hasattr(x, "ndim") else x
    j, jj, _ = _segments(x, xp)
    if n < 2:
        return np.zeros_like(fp[jj] * x)
    slope = (fp[jj + 1] - fp[jj]) / (xp[jj + 1] - xp[jj])
    return np.where((j >= 0) & (j < n - 1), slope, 0.0 * slope)


@helper(fresh=True, linear=True)
def uninterp_slope(g, x, xp, fp, period=None):
    """Adjoint of ``fp`` in ``interp_slope(x, xp, fp)``: each entry of ``g``, over its
    segment's width, added to the segment's right end and taken from its left."""
    _no_period(period)
    n = np.shape(xp)[0]
    x = np.asarray(x, like=xp) if not hasattr(x, "ndim") else x
    g = np.broadcast_to(g, np.shape(x)) * 1.0
    out = np.zeros_like(fp, dtype=np.result_type(fp, g))
    if n < 2:
        return out
    j, jj, _ = _segments(x, xp)
    per_width = np.where((j >= 0) & (j < n - 1), g / (xp[jj + 1] - xp[jj]), 0.0)
    backend.scatter_add(out, np.ravel(jj + 1), np.ravel(per_width))
    backend.scatter_add(out, np.ravel(jj), -np.ravel(per_width))
    return out


@helper(fresh=True, linear=True)
def uninterp(g, x, xp, fp, left=None, right=None, period=None):
    """Adjoint of ``fp`` in ``np.interp(x, xp, fp, left, right)``: each entry of ``g``
    added to the two ends of its segment, weighted as the interpolation weighs them; to
    the first (last) value left (right) of the range unless ``left`` (``right``) is given."""
    _no_period(period)
    n = np.shape(xp)[0]
    x = np.asarray(x, like=xp) if not hasattr(x, "ndim") else x
    g = np.broadcast_to(g, np.shape(x)) * 1.0
    j, jj, w = _segments(x, xp)
    inside = (j >= 0) & (j < n - 1)
    lo = np.where(inside, 1.0 - w, 0.0)
    hi = np.where(inside, w, 0.0)
    lo = lo + (j < 0) * (left is None)  # left of the range: fp[0] unless left is given
    end = (j >= n - 1) & ((x == xp[n - 1]) | (right is None))  # at the last knot or right of it
    out = np.zeros_like(fp, dtype=np.result_type(fp, g))
    backend.scatter_add(out, np.ravel(jj), np.ravel(g * lo))
    backend.scatter_add(out, np.ravel(np.minimum(jj + 1, n - 1)), np.ravel(g * hi))
    backend.scatter_add(out, np.ravel(np.full_like(jj, n - 1)), np.ravel(g * end))
    return out


@helper(fresh=True, linear=True)
def interp_tangent(tfp, x, xp, left=None, right=None, period=None):
    """The tangent of ``np.interp(x, xp, fp, left, right)`` along ``tfp``: the same
    interpolation of ``tfp``, 0 where a given ``left`` or ``right`` holds."""
    _no_period(period)
    return np.interp(x, xp, tfp, None if left is None else 0.0, None if right is None else 0.0)


# --------------------------------------------------------------------------
# np.polyval(p, x) = sum_k p[k] x ** (n - 1 - k)


@helper(fresh=True, linear=True)
def polyder(p):
    """The coefficients of the derivative of the polynomial ``p`` (highest power first),
    as ``np.polyder`` has them, of ``p``'s array library."""
    n = np.shape(p)[0]
    return p[:-1] * np.arange(n - 1, 0, -1, like=p).astype(p.dtype)


@helper(fresh=True, linear=True)
def unpolyder(h, p):
    """Adjoint of ``p`` in ``polyder(p)``: each entry of ``h`` times its power, and 0 for
    the constant term."""
    n = np.shape(p)[0]
    powers = np.arange(n - 1, 0, -1, like=p).astype(np.result_type(p, h))
    return np.concatenate([h * powers, np.zeros(1, dtype=powers.dtype, like=p)])


@helper(fresh=True, linear=True)
def unpolyval(g, p, x):
    """Adjoint of ``p`` in ``np.polyval(p, x)``: ``sum(g * x ** (n - 1 - k))`` for each ``k``."""
    n = np.shape(p)[0]
    x = np.asarray(x, like=p) if not hasattr(x, "ndim") else x
    powers = np.arange(n - 1, -1, -1, like=p)
    terms = np.broadcast_to(g, np.shape(x))[..., None] * x[..., None] ** powers
    out = np.sum(np.reshape(terms, (-1, n)), axis=0)
    return out.astype(np.result_type(p, out), copy=False)


# --------------------------------------------------------------------------
# np.gradient(f, *spacing, axis, edge_order) with numbers for spacing


def _gradient_axes(f, spacing, axis, edge_order):
    """The axes ``np.gradient`` differentiates along and the step of each."""
    if edge_order not in (1, 2):
        raise ValueError(f"np.gradient's edge_order is 1 or 2, not {edge_order!r}")
    ndim = np.ndim(f)
    axes = tuple(range(ndim)) if axis is None else (axis,) if np.ndim(axis) == 0 else tuple(axis)
    axes = tuple(int(ax) % ndim for ax in axes)
    if any(np.ndim(h) != 0 for h in spacing):
        raise NotImplementedError(
            "the gradient of np.gradient takes numbers for its spacing, not coordinate arrays"
        )
    steps = (
        list(spacing)
        if len(spacing) == len(axes)
        else list(spacing) * len(axes) or [1.0] * len(axes)
    )
    return axes, steps


_EDGES = {1: ((-1.0, 1.0), (-1.0, 1.0)), 2: ((-1.5, 2.0, -0.5), (0.5, -2.0, 1.5))}


def _ungradient_last(g, h, edge_order):
    """Adjoint of ``np.gradient(f, h, axis=-1, edge_order=edge_order)``: the centred
    differences of the interior and the one-sided ones at the ends, transposed."""
    n = np.shape(g)[-1]
    lead = [(0, 0)] * (np.ndim(g) - 1)
    inner = g[..., 1:-1] / (2.0 * h)
    out = np.pad(inner, lead + [(2, 0)]) - np.pad(inner, lead + [(0, 2)])
    head, tail = (backend.as_array(list(c), g) for c in _EDGES[edge_order])
    k = np.shape(head)[0]
    out = out + np.pad(g[..., :1] / h * head, lead + [(0, n - k)])
    return out + np.pad(g[..., -1:] / h * tail, lead + [(n - k, 0)])


@helper(fresh=True, linear=True)
def ungradient(g, f, spacing=(), axis=None, edge_order=1):
    """Adjoint of ``f`` in ``np.gradient(f, *spacing, axis=axis, edge_order=edge_order)``
    (the numbers of ``spacing`` one for all axes or one per axis): ``g`` is one array
    for one axis, else one per axis (a list or tuple). dask's ``np.gradient`` returns a
    list of one array for one axis too, so its cotangent is such a list."""
    axes, steps = _gradient_axes(f, spacing, axis, edge_order)
    one = len(axes) == 1 and not isinstance(g, (list, tuple))
    parts = [g] if one else list(g)
    out = None
    for part, ax, h in zip(parts, axes, steps):
        part = np.broadcast_to(part, np.shape(f))
        back = np.moveaxis(_ungradient_last(np.moveaxis(part, ax, -1), h, edge_order), -1, ax)
        out = back if out is None else out + back
    return out.astype(np.result_type(f, out), copy=False)


@helper(fresh=True, linear=True)
def gradient(t, spacing=(), axis=None, edge_order=1):
    """``np.gradient(t, *spacing, axis=axis, edge_order=edge_order)`` of the tangent ``t``
    (the spacing numbers checked as ``ungradient`` checks them)."""
    _gradient_axes(t, spacing, axis, edge_order)
    return np.gradient(t, *spacing, axis=axis, edge_order=edge_order)
