"""Convolution and friends: ``np.convolve`` and ``np.correlate`` in every mode, in both
arguments; ``np.interp`` in the values ``fp`` and the points ``x``; ``np.polyval`` in the
coefficients and the points; ``np.gradient`` with numbers for its spacing.

The result of a convolution in each mode is a window of the full one: its adjoint sets
the cotangent back into the full length (``spectral.unmode``) and convolves it, "valid",
with the other argument reversed (the transpose of the full convolution). ``np.correlate``
is the full convolution with ``conj(v[::-1])``, so its adjoints carry a conjugate (JAX's
convention for complex numbers: transposes, not conjugate transposes).

Not differentiated, and refused where they carry a differentiated value: ``np.interp``'s
sample points ``xp`` and its ``left``/``right`` values; ``np.gradient``'s spacing
(``reverse`` refuses an active argument a template reads but does not differentiate).
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, FIRST_DATA, TWO_DATA, rule
from transpile_runtime import spectral


@rule(np.convolve, shape=TWO_DATA)  # mode (static) sets the length
def convolve(y, a, v, _mode="full"):
    d[a] += np.convolve(spectral.unmode(d[y], a, v, _mode), np.flip(v), "valid")
    d[v] += np.convolve(spectral.unmode(d[y], a, v, _mode), np.flip(a), "valid")
    t[y] += np.convolve(t[a], v, _mode)
    t[y] += np.convolve(a, t[v], _mode)


@rule(np.correlate, shape=TWO_DATA)
def correlate(y, a, v, _mode="valid"):
    d[a] += np.convolve(spectral.unmode(d[y], a, v, _mode, True), np.conj(v), "valid")
    d[v] += np.conj(
        np.flip(np.convolve(spectral.unmode(d[y], a, v, _mode, True), np.flip(a), "valid"))
    )
    t[y] += np.correlate(t[a], v, _mode)
    t[y] += np.correlate(a, t[v], _mode)


@rule(np.interp, shape=ALL_DATA)  # xp, left, right: read, never differentiated
def interp(y, x, xp, fp, left=None, right=None, _period=None):
    d[x] += d[y] * spectral.interp_slope(x, xp, fp, _period)
    d[fp] += spectral.uninterp(d[y], x, xp, fp, left, right, _period)
    t[y] += t[x] * spectral.interp_slope(x, xp, fp, _period)
    t[y] += spectral.interp_tangent(t[fp], x, xp, left, right, _period)


@rule(np.polyval, shape=ALL_DATA)
def polyval(y, p, x):
    d[p] += spectral.unpolyval(d[y], p, x)
    d[x] += d[y] * np.polyval(spectral.polyder(p), x)
    t[y] += np.polyval(t[p], x)
    t[y] += t[x] * np.polyval(spectral.polyder(p), x)


@rule(np.gradient, shape=FIRST_DATA, sequence_result=True)  # the spacing: numbers, static
def gradient(y, f, *spacing, _axis=None, _edge_order=1):
    d[f] += spectral.ungradient(d[y], f, spacing, _axis, _edge_order)
    t[y] += spectral.gradient(t[f], spacing, _axis, _edge_order)
