"""Complex values through the convolutions (``np.convolve``, ``np.correlate``,
``scipy.signal.convolve``, ``correlate``, ``fftconvolve``, ``convolve2d``), in JAX's
convention: the vjp of ``f`` with the cotangent ``c`` is the gradient of
``Re(sum(c * f(...)))``, ``d/dx - i d/dy`` for a complex argument ``x + iy``, and a real
argument's gradient is real.

Each row of ``tests/convolution_funcs.py``'s ``COMPLEX_ROWS`` and ``COMPLEX_SCIPY_ROWS``
(complex in both arguments, either longer, and a real argument next to a complex one)
is checked, on a first call and a later one, against central differences in the real
and the imaginary direction of every entry (``test_complex_spectral``'s reference): the
vjp with a random complex cotangent, and the jvp with a random tangent (complex for a
complex argument). ``np.convolve`` and ``np.correlate`` run on the strict array double
too, and keep complex64; a matched filter of a complex template is differentiated in it.
"""

import copy
import zlib

import convolution_funcs as cf
import numpy as np
import pytest
from strict_array import StrictArray, strict, to_numpy
from test_complex_spectral import _like, _numeric_jvp, _numeric_vjp

from transpile import grad, jvp, vjp


def _cases(rows):
    return [pytest.param(r, i, id=f"{r.id}-wrt{i}") for r in rows for i in r.wrt]


def _draw(r, key):
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    args = [make(rng) for make in r.args]
    return args, _like(rng, r.func(*copy.deepcopy(args))), rng


@pytest.mark.parametrize("r,i", _cases(cf.COMPLEX_ROWS + cf.COMPLEX_SCIPY_ROWS))
def test_complex_vjp_and_jvp_against_central_differences(r, i):
    args, dout, rng = _draw(r, f"{r.id} {i}")
    pristine = copy.deepcopy(args)
    back, forward = vjp(r.func, wrt=i), jvp(r.func, wrt=i)
    want = _numeric_vjp(r.func, args, i, dout)
    tangent = _like(rng, args[i])
    want_tangent = _numeric_jvp(r.func, args, i, tangent)
    for _ in range(2):  # a first call and a later one
        got = back(*args, dout)
        assert np.shape(got) == np.shape(args[i])
        assert np.iscomplexobj(got) == np.iscomplexobj(args[i]), got.dtype  # real stays real
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
        out, tout = forward(*args, tangent)
        np.testing.assert_allclose(out, r.func(*args), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tout, want_tangent, rtol=1e-6, atol=1e-8)
    for a, p in zip(args, pristine):
        np.testing.assert_array_equal(a, p)  # the arguments are not modified


@pytest.mark.parametrize("r,i", _cases(cf.COMPLEX_ROWS))
def test_complex_convolutions_on_the_strict_double(r, i):
    """The vjp and the jvp on StrictArrays equal numpy's, on a first and a later call."""
    args, dout, rng = _draw(r, f"strict {r.id} {i}")
    tangent = _like(rng, args[i])
    want = vjp(r.func, wrt=i)(*args, dout)
    want_tangent = jvp(r.func, wrt=i)(*args, tangent)[1]
    back, forward = vjp(r.func, wrt=i), jvp(r.func, wrt=i)
    for _ in range(2):
        got = back(*strict(args), strict(dout))
        assert isinstance(got, StrictArray) and got.dtype == want.dtype, type(got)
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-10, atol=1e-12)
        _, tout = forward(*strict(args), strict(tangent))
        assert isinstance(tout, StrictArray), type(tout)
        np.testing.assert_allclose(to_numpy(tout), want_tangent, rtol=1e-10, atol=1e-12)


_LOW = {np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64}


@pytest.mark.parametrize(
    "r,i", _cases([r for r in cf.COMPLEX_ROWS if r.func in (cf.convolve_same, cf.correlate_full)])
)
def test_complex64_in_complex64_out(r, i):
    args, dout, _ = _draw(r, f"c64 {r.id} {i}")
    low = [a.astype(_LOW[a.dtype]) for a in args]
    got = vjp(r.func, wrt=i)(*low, dout.astype(np.complex64))
    assert got.dtype == low[i].dtype, (got.dtype, low[i].dtype)
    want = _numeric_vjp(r.func, args, i, dout)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def complex_matched_filter(template, received):
    """The energy of a complex (baseband) signal's correlation with a template, smoothly
    maximized over the lags: the detector's statistic, in the template."""
    r = np.correlate(received, template, "valid")
    power = np.real(r * np.conj(r))
    return np.log(np.sum(np.exp(2.0 * power))) / 2.0


def test_complex_matched_filter_in_its_template():
    """JAX's gradient (``d/dx - i d/dy`` of the real statistic), first and later call;
    a step along its conjugate (the ascent direction) raises the statistic."""
    rng = np.random.default_rng(12)
    chirp = np.exp(1j * np.linspace(0.0, 3.0, 5) ** 2) * 0.5
    received = (rng.standard_normal(30) + 1j * rng.standard_normal(30)) * 0.2
    received[11:16] += chirp
    template = chirp + (rng.standard_normal(5) + 1j * rng.standard_normal(5)) * 0.1
    want = _numeric_vjp(complex_matched_filter, [template, received], 0, 1.0)
    g = grad(complex_matched_filter)
    for _ in range(2):
        got = g(template, received)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    step = template + 1e-3 * np.conj(got)
    assert complex_matched_filter(step, received) > complex_matched_filter(template, received)
