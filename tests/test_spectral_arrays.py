"""The Fourier transform and convolution rules on the strict NEP-18 array double
(``tests/strict_array.py``, cupy's stand-in: no implicit conversion to numpy, no mixing
with numpy arrays), in reverse and in forward mode.

Every row of ``tests/spectral_funcs.py``'s transforms (``np.fft``) and every row of
``tests/convolution_funcs.py`` (``np.convolve``, ``np.correlate``, ``np.interp``,
``np.polyval``, ``np.gradient``, ``np.diff``, ``np.trapezoid``) runs its vjp (complex
cotangents for complex outputs) and its jvp on StrictArrays, on a first call and a
later one: StrictArrays come back, fresh, equal to numpy's results of the same gradient,
the arguments untouched, no ufunc method that only numpy has. numpy's results are checked
against central differences by ``test_complex_spectral.py`` and ``test_convolution.py``;
a few rows here are checked against central differences directly, on StrictArrays.

Not here: ``scipy.fft`` and ``scipy.signal`` take numpy arrays alone (they convert their
arguments with ``np.asarray``, which a device array refuses); ``np.fft.fftfreq`` makes a
numpy array (cupy code calls ``cupy.fft.fftfreq``). Dask: ``test_spectral_dask.py``.
"""

import copy
import zlib

import convolution_funcs as cf
import numpy as np
import pytest
import spectral_funcs as sf
from strict_array import StrictArray, strict, to_numpy
from test_complex_spectral import _like, _numeric_jvp, _numeric_vjp
from test_strict_arrays import _methods_called, _run

from transpile import jvp, vjp

# the transforms and shifts of np.fft (numpy's own rows; scipy.fft's run on numpy alone)
FFT_ROWS = [r for r in sf.ROWS if r.func.__name__.startswith("f_") and r.strict]
CONV_ROWS = cf.ROWS
ROWS = FFT_ROWS + CONV_ROWS


def _cases(rows):
    return [pytest.param(r, i, id=f"{r.id}-wrt{i}") for r in rows for i in r.wrt]


def _draw(r, key):
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return [make(rng) for make in r.args], rng


def _allowed(r, args):
    """The numpy-only ufunc methods the function itself calls on StrictArrays."""
    StrictArray.calls.clear()
    r.func(*copy.deepcopy(strict(args)))
    return _methods_called()


def _tangent(rng, value):
    return _like(rng, value) if np.shape(value) else float(rng.standard_normal())


@pytest.mark.parametrize("r,i", _cases(ROWS))
def test_vjp_and_jvp_on_the_strict_double(r, i):
    args, rng = _draw(r, f"{r.id} {i}")
    dout = _like(rng, r.func(*copy.deepcopy(args)))
    tangent = _tangent(rng, args[i])
    allowed = _allowed(r, args)
    back, forward = vjp(r.func, wrt=i), jvp(r.func, wrt=i)
    _run(back, args + [dout], strict(args) + [strict(dout)], f"vjp wrt={i}", 1e-10, allowed)
    _run(
        lambda *a: forward(*a)[1],
        args + [tangent],
        strict(args) + [strict(tangent)],
        f"jvp wrt={i}",
        1e-10,
        allowed,
    )


# one row of each rule, checked on StrictArrays against central differences in the real
# and (for complex arguments) the imaginary direction of every entry
_DIRECT = {
    "f_fft(complex[8])",
    "f_rfft_odd(real[6])",
    "f_irfft_pad(complex[4, 2])",
    "f_fftn_s(real[2, 3, 4])",
    "f_irfftn_axes(complex[4, 2, 3])",
    "f_ifftshift(complex[5, 2])",
    "convolve_same(normal[3],normal[6])",
    "correlate_same(normal[5],normal[2])",
    "interp_ends(between_knots[9],knots,normal[6])",
    "polyval(normal[4],normal[2,3])",
    "gradient_spacings(normal[3,4])",
    "diff_ends(normal[5],normal[2],normal[1])",
    "trapezoid_x(normal[6],normal[6])",
}
DIRECT_ROWS = [r for r in ROWS if r.id in _DIRECT]


def test_every_direct_row_is_found():
    assert sorted(r.id for r in DIRECT_ROWS) == sorted(_DIRECT)


@pytest.mark.parametrize("r,i", _cases(DIRECT_ROWS))
def test_strict_gradients_against_central_differences(r, i):
    args, rng = _draw(r, f"fd {r.id} {i}")
    dout = _like(rng, r.func(*copy.deepcopy(args)))
    tangent = _tangent(rng, args[i])
    want_vjp = _numeric_vjp(r.func, args, i, dout)
    want_jvp = _numeric_jvp(r.func, args, i, tangent)
    back, forward = vjp(r.func, wrt=i), jvp(r.func, wrt=i)
    for _ in range(2):  # a first call and a later one
        got = back(*strict(args), strict(dout))
        assert isinstance(got, StrictArray) or not np.shape(args[i]), type(got)
        np.testing.assert_allclose(to_numpy(got), want_vjp, rtol=1e-6, atol=1e-8)
        out, tout = forward(*strict(args), strict(tangent))
        assert isinstance(tout, StrictArray), type(tout)
        np.testing.assert_allclose(to_numpy(out), r.func(*args), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(to_numpy(tout), want_jvp, rtol=1e-6, atol=1e-8)
