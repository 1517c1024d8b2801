"""The discrete Fourier transforms of ``np.fft``: ``fft``, ``ifft``, ``rfft``, ``irfft``
and their 2-D and n-D forms, with ``n``/``s``, ``axis``/``axes`` and ``norm``; the shifts;
the sample frequencies (constants). Each transform is linear: its forward line is the
transform of the tangent, its reverse line the transpose in JAX's convention for complex
numbers (``transpile_runtime.spectral``: the complex transforms are their own transposes;
``rfft``'s is the real part of a padded ``fft``; ``irfft``'s doubles the interior bins).
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import FIRST_DATA, STATIC, nondiff, rule
from transpile_runtime import spectral


@rule(np.fft.fft, shape=FIRST_DATA, complex_values=True)
def fft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unfft(d[y], a, _n, _axis, _norm)
    t[y] += np.fft.fft(t[a], _n, _axis, _norm)


@rule(np.fft.ifft, shape=FIRST_DATA, complex_values=True)
def ifft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unfft(d[y], a, _n, _axis, _norm, True)
    t[y] += np.fft.ifft(t[a], _n, _axis, _norm)


@rule(np.fft.rfft, shape=FIRST_DATA, complex_values=True)
def rfft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unrfft(d[y], a, _n, _axis, _norm)
    t[y] += np.fft.rfft(t[a], _n, _axis, _norm)


@rule(np.fft.irfft, shape=FIRST_DATA, complex_values=True)
def irfft(y, a, _n=None, _axis=-1, _norm=None, **_kwargs):
    d[a] += spectral.unirfft(d[y], a, _n, _axis, _norm)
    t[y] += np.fft.irfft(t[a], _n, _axis, _norm)


@rule(np.fft.fftn, shape=FIRST_DATA, complex_values=True)
def fftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.fftn(t[a], _s, _axes, _norm)


@rule(np.fft.ifftn, shape=FIRST_DATA, complex_values=True)
def ifftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm, True)
    t[y] += np.fft.ifftn(t[a], _s, _axes, _norm)


@rule(np.fft.rfftn, shape=FIRST_DATA, complex_values=True)
def rfftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unrfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.rfftn(t[a], _s, _axes, _norm)


@rule(np.fft.irfftn, shape=FIRST_DATA, complex_values=True)
def irfftn(y, a, _s=None, _axes=None, _norm=None, **_kwargs):
    d[a] += spectral.unirfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.irfftn(t[a], _s, _axes, _norm)


# the 2-D forms: the n-D ones over the last two axes by default


@rule(np.fft.fft2, shape=FIRST_DATA, complex_values=True)
def fft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.fft2(t[a], _s, _axes, _norm)


@rule(np.fft.ifft2, shape=FIRST_DATA, complex_values=True)
def ifft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unfftn(d[y], a, _s, _axes, _norm, True)
    t[y] += np.fft.ifft2(t[a], _s, _axes, _norm)


@rule(np.fft.rfft2, shape=FIRST_DATA, complex_values=True)
def rfft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unrfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.rfft2(t[a], _s, _axes, _norm)


@rule(np.fft.irfft2, shape=FIRST_DATA, complex_values=True)
def irfft2(y, a, _s=None, _axes=(-2, -1), _norm=None, **_kwargs):
    d[a] += spectral.unirfftn(d[y], a, _s, _axes, _norm)
    t[y] += np.fft.irfft2(t[a], _s, _axes, _norm)


@rule(np.fft.fftshift, shape=FIRST_DATA, complex_values=True)
def fftshift(y, x, _axes=None):
    d[x] += spectral.unfftshift(d[y], _axes)
    t[y] += np.fft.fftshift(t[x], _axes)


@rule(np.fft.ifftshift, shape=FIRST_DATA, complex_values=True)
def ifftshift(y, x, _axes=None):
    d[x] += spectral.unifftshift(d[y], _axes)
    t[y] += np.fft.ifftshift(t[x], _axes)


# the sample frequencies: constants of the lengths
NONDIFF = (nondiff(np.fft.fftfreq, np.fft.rfftfreq, shape=STATIC),)
