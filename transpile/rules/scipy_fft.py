"""``scipy.fft``: the twins of ``np.fft``'s transforms and shifts, with the same
arguments (``workers``, ``overwrite_x`` and ``plan`` change nothing differentiated) and
the same adjoints (``transpile_runtime.spectral``). Loaded only where the program has
imported ``scipy.fft`` (``rules.optional_families``).
"""

import numpy as np
from scipy import fft as sfft

from transpile.core.template import d, t
from transpile.rules.declare import FIRST_DATA, STATIC, nondiff, rule
from transpile_runtime import spectral


@rule(sfft.fft, shape=FIRST_DATA, complex_values=True)
def fft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unfft(d[y], a, _n, _axis, _norm)
    t[y] += np.fft.fft(t[a], _n, _axis, _norm)


@rule(sfft.ifft, shape=FIRST_DATA, complex_values=True)
def ifft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unfft(d[y], a, _n, _axis, _norm, True)
    t[y] += np.fft.ifft(t[a], _n, _axis, _norm)


@rule(sfft.rfft, shape=FIRST_DATA, complex_values=True)
def rfft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unrfft(d[y], a, _n, _axis, _norm)
    t[y] += np.fft.rfft(t[a], _n, _axis, _norm)


@rule(sfft.irfft, shape=FIRST_DATA, complex_values=True)
def irfft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unirfft(d[y], a, _n, _axis, _norm)
    t[y] += np.fft.irfft(t[a], _n, _axis, _norm)


@rule(sfft.fftn, shape=FIRST_DATA, complex_values=True)
def fftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm)
    t[y] += spectral.transform(t[a], "fftn", _s, _axes, _norm)


@rule(sfft.ifftn, shape=FIRST_DATA, complex_values=True)
def ifftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm, True)
    t[y] += spectral.transform(t[a], "ifftn", _s, _axes, _norm)


@rule(sfft.rfftn, shape=FIRST_DATA, complex_values=True)
def rfftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unrfftn(d[y], a, _s, _axes, _norm)
    t[y] += spectral.transform(t[a], "rfftn", _s, _axes, _norm)


@rule(sfft.irfftn, shape=FIRST_DATA, complex_values=True)
def irfftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unirfftn(d[y], a, _s, _axes, _norm)
    t[y] += spectral.transform(t[a], "irfftn", _s, _axes, _norm)


@rule(sfft.fft2, shape=FIRST_DATA, complex_values=True)
def fft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.fft2(t[a], _s, _axes, _norm)


@rule(sfft.ifft2, shape=FIRST_DATA, complex_values=True)
def ifft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm, True)
    t[y] += np.fft.ifft2(t[a], _s, _axes, _norm)


@rule(sfft.rfft2, shape=FIRST_DATA, complex_values=True)
def rfft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unrfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.rfft2(t[a], _s, _axes, _norm)


@rule(sfft.irfft2, shape=FIRST_DATA, complex_values=True)
def irfft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unirfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.irfft2(t[a], _s, _axes, _norm)


@rule(sfft.fftshift, shape=FIRST_DATA, complex_values=True)
def fftshift(y, x, _axes=None):
    d[x] += spectral.unfftshift(d[y], _axes)
    t[y] += np.fft.fftshift(t[x], _axes)


@rule(sfft.ifftshift, shape=FIRST_DATA, complex_values=True)
def ifftshift(y, x, _axes=None):
    d[x] += spectral.unifftshift(d[y], _axes)
    t[y] += np.fft.ifftshift(t[x], _axes)


NONDIFF = (nondiff(sfft.fftfreq, sfft.rfftfreq, shape=STATIC),)
