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
import fd
import numpy as np
import pytest
import spectral_funcs as sf
from strict_array import StrictArray, strict, to_numpy
from test_complex_spectral import _like, _numeric_jvp, _numeric_vjp
from test_strict_arrays import _methods_called, _run

from transpile import TranspileError, grad, jvp, vjp

try:
    from scipy import ndimage
except ImportError:  # the cupyx stand-in's test is skipped
    ndimage = None

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


# --------------------------------------------------------------------------
# cupy's own names: code written for cupy calls ``cupy.fft.fft`` (module
# ``cupy.fft._fft``), ``cupy.polyval`` (``cupy.lib._routines_poly``) and
# ``cupyx.scipy.ndimage.convolve``; a rule is found by the public part of the module and
# the name. cupy is not installed here: each stand-in below says it is the cupy function
# (its ``__module__`` and ``__name__``, all that the lookup reads) and computes what that
# function computes, with numpy or scipy.


def _named(fn, module, name):
    fn.__module__, fn.__name__, fn.__qualname__ = module, name, name
    return fn


cupy_fft = _named(
    lambda a, n=None, axis=-1, norm=None: np.fft.fft(a, n, axis, norm), "cupy.fft._fft", "fft"
)
cupy_rfft = _named(
    lambda a, n=None, axis=-1, norm=None: np.fft.rfft(a, n, axis, norm), "cupy.fft._fft", "rfft"
)
cupy_polyval = _named(lambda p, x: np.polyval(p, x), "cupy.lib._routines_poly", "polyval")
cupy_convolve = _named(
    lambda a, v, mode="full": np.convolve(a, v, mode), "cupy._math.misc", "convolve"
)


def spectrum_energy(x):
    return np.sum(np.abs(cupy_fft(x, 6, norm="ortho")) ** 2 * np.arange(6.0))


def rspectrum_power(x):
    return np.sum(np.abs(cupy_rfft(x)) ** 3)


def poly_and_conv(p, x):
    return np.sum(cupy_polyval(p, x) * cupy_convolve(x, p, "same"))


@pytest.mark.parametrize(
    "f,shapes",
    [(spectrum_energy, [(5,)]), (rspectrum_power, [(7,)]), (poly_and_conv, [(3,), (5,)])],
    ids=["cupy.fft.fft", "cupy.fft.rfft", "cupy.polyval,cupy.convolve"],
)
def test_cupy_names_take_the_rules_of_their_numpy_twins(f, shapes):
    rng = np.random.default_rng(21)
    args = [rng.standard_normal(s) for s in shapes]
    wrt = tuple(range(len(args)))
    want = fd.numeric_grad(f, list(args), wrt)
    g = grad(f, wrt=wrt)
    for _ in range(2):
        fd.assert_close(list(g(*args)), list(want), rtol=1e-6, atol=1e-9, path=f.__name__)


def _ndimage_convolve(a, w):
    return ndimage.convolve(a, w, mode="reflect")


cupyx_ndimage_convolve = _named(_ndimage_convolve, "cupyx.scipy.ndimage._filters", "convolve")


def blurred_energy(x, w):
    return np.sum(cupyx_ndimage_convolve(x, w) ** 2)


def test_a_cupyx_function_is_not_taken_for_the_numpy_one_of_its_name():
    """cupyx.scipy.ndimage.convolve (reflected edges, centred) is not np.convolve: it is
    refused by name, not differentiated with np.convolve's rule."""
    if ndimage is None:
        pytest.skip("needs scipy")
    x, w = np.arange(6.0), np.array([0.25, 0.5, 0.25])
    with pytest.raises(TranspileError, match="convolve"):
        grad(blurred_energy)(x, w)
