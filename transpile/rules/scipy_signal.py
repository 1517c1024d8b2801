"""``scipy.signal.convolve`` and ``correlate``, n-D, in every mode, in both arguments:
the adjoints of ``np.convolve``'s (``rules/convolution.py``) along every axis, the
cotangent set into the full result's shape by ``spectral.unmode_nd`` ("same" is centred
on the first argument, as scipy's is). Loaded only where the program has imported
``scipy.signal`` (``rules.optional_families``).
"""

import numpy as np
from scipy import signal

from transpile.core.template import d, t
from transpile.rules.declare import TWO_DATA, rule
from transpile_runtime import ops, scipy_ops, spectral


@rule(signal.convolve, shape=TWO_DATA)
def convolve(y, in1, in2, _mode="full", _method="auto"):
    d[in1] += scipy_ops.convolve(spectral.unmode_nd(d[y], in1, in2, _mode), np.flip(in2), "valid")
    d[in2] += scipy_ops.convolve(spectral.unmode_nd(d[y], in1, in2, _mode), np.flip(in1), "valid")
    t[y] += scipy_ops.convolve(t[in1], in2, _mode, _method)
    t[y] += scipy_ops.convolve(in1, t[in2], _mode, _method)


@rule(signal.correlate, shape=TWO_DATA)
def correlate(y, in1, in2, _mode="full", _method="auto"):
    d[in1] += scipy_ops.convolve(spectral.unmode_nd(d[y], in1, in2, _mode), np.conj(in2), "valid")
    d[in2] += np.conj(
        np.flip(
            scipy_ops.convolve(spectral.unmode_nd(d[y], in1, in2, _mode), np.flip(in1), "valid")
        )
    )
    t[y] += scipy_ops.correlate(t[in1], in2, _mode, _method)
    t[y] += scipy_ops.correlate(in1, t[in2], _mode, _method)


@rule(signal.fftconvolve, shape=TWO_DATA)  # over axes; the others broadcast
def fftconvolve(y, in1, in2, _mode="full", _axes=None):
    d[in1] += ops.unbroadcast(
        scipy_ops.fftconvolve(
            spectral.unmode_nd(d[y], in1, in2, _mode, _axes), np.flip(in2, _axes), "valid", _axes
        ),
        in1,
    )
    d[in2] += ops.unbroadcast(
        scipy_ops.fftconvolve(
            spectral.unmode_nd(d[y], in1, in2, _mode, _axes), np.flip(in1, _axes), "valid", _axes
        ),
        in2,
    )
    t[y] += scipy_ops.fftconvolve(t[in1], in2, _mode, _axes)
    t[y] += scipy_ops.fftconvolve(in1, t[in2], _mode, _axes)


@rule(signal.convolve2d, shape=TWO_DATA)  # the adjoint: boundary "fill" with 0 only
def convolve2d(y, in1, in2, _mode="full", _boundary="fill", fillvalue=0):
    d[in1] += scipy_ops.convolve2d(
        spectral.unmode_nd(d[y], in1, in2, _mode, None, _boundary, fillvalue), np.flip(in2), "valid"
    )
    d[in2] += scipy_ops.convolve2d(
        spectral.unmode_nd(d[y], in1, in2, _mode, None, _boundary, fillvalue), np.flip(in1), "valid"
    )
    t[y] += scipy_ops.convolve2d(t[in1], in2, _mode, _boundary, 0)
    t[y] += scipy_ops.convolve2d(in1, t[in2], _mode, _boundary, fillvalue)
