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
