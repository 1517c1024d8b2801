"""Generated gradients run unchanged on cupy arrays (needs cupy and a GPU).

Each gradient is computed twice: on numpy arrays and on the same values as
cupy arrays. The cupy result must be a cupy array (the computation stayed on
the device) and must equal the numpy one, which is itself checked against
float64 central finite differences.
"""

import fd
import numpy as np
import pytest

from transpile import grad, value_and_grad

pytestmark = pytest.mark.cupy

cp = pytest.importorskip("cupy")
try:
    cp.zeros(1)
except Exception as exc:  # cupy installed, but no usable GPU
    pytest.skip(f"cupy cannot allocate on a GPU: {exc}", allow_module_level=True)


def tanh_mlp(x, W1, b1, W2):
    h = np.tanh(x @ W1 + b1)
    return np.mean(np.tanh(h @ W2) ** 2)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def rnn(h, xs, Wx, Wh):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h * h)


def buffer_writes(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * (i + 1.0)
    return np.sum(out * x)


def heat(u0, k):
    """A periodic heat equation integrated in Fourier space (np.fft: cupy.fft on cupy)."""
    u = u0
    for _ in range(3):
        u = np.fft.irfft(np.fft.rfft(u) * np.exp(-0.01 * k**2), n=u0.shape[0])
    return np.sum((u - np.sin(u0)) ** 2)


def matched_filter(template, signal):
    r = np.correlate(signal, template, "valid") + np.convolve(signal, template, "same")[2:-1]
    return np.log(np.sum(np.exp(4.0 * r))) / 4.0


def rng():
    return np.random.default_rng(2024)


CASES = [
    (
        tanh_mlp,
        lambda r: (
            r.standard_normal((6, 4)),
            r.standard_normal((4, 5)) * 0.5,
            r.standard_normal(5) * 0.1,
            r.standard_normal((5, 3)) * 0.5,
        ),
        (0, 1, 2, 3),
    ),
    (logsumexp, lambda r: (r.standard_normal(7),), (0,)),
    (
        rnn,
        lambda r: (
            r.standard_normal(4) * 0.5,
            r.standard_normal((3, 2)),
            r.standard_normal((2, 4)) * 0.5,
            r.standard_normal((4, 4)) * 0.5,
        ),
        (0, 1, 2, 3),
    ),
    (buffer_writes, lambda r: (r.standard_normal(5),), (0,)),
    (heat, lambda r: (r.standard_normal(16), 2 * np.pi * np.fft.rfftfreq(16, 1.0 / 16)), (0,)),
    (matched_filter, lambda r: (r.standard_normal(4) * 0.5, r.standard_normal(20)), (0, 1)),
]


def to_device(args):
    return tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("func, make_args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_gradient_matches_numpy(func, make_args, wrt, dtype):
    args = tuple(a.astype(dtype) if isinstance(a, np.ndarray) else a for a in make_args(rng()))
    g = grad(func, wrt=wrt)
    host = g(*args)
    device_args = to_device(args)
    pristine = [cp.asnumpy(a).copy() for a in device_args]
    for _ in range(2):  # the generic path, then the variant specialized for these shapes
        device = g(*device_args)
        for a, p in zip(device_args, pristine):
            np.testing.assert_array_equal(cp.asnumpy(a), p)  # inputs untouched
        assert isinstance(device, tuple) and len(device) == len(wrt)
        tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
        for d, h in zip(device, host):
            assert isinstance(d, cp.ndarray), f"expected a cupy array, got {type(d).__name__}"
            assert d.dtype == dtype
            np.testing.assert_allclose(cp.asnumpy(d), h, **tol)
    if dtype == np.float64:
        fd.assert_close(host, fd.numeric_grad(func, args, wrt), rtol=1e-6, atol=1e-9)


def test_cupy_value_and_grad():
    x = rng().standard_normal(9)
    value, g = value_and_grad(logsumexp)(cp.asarray(x))
    assert float(value) == pytest.approx(np.log(np.sum(np.exp(x))), rel=1e-12)
    assert isinstance(g, cp.ndarray)
    p = np.exp(x - x.max())
    np.testing.assert_allclose(cp.asnumpy(g), p / p.sum(), rtol=1e-10)


def heat_in_cupy_names(u0, k):
    """The heat equation written with cupy.fft itself: the rules of numpy's twins."""
    u = u0
    for _ in range(3):
        u = cp.fft.irfft(cp.fft.rfft(u) * cp.exp(-0.01 * k**2), n=u0.shape[0])
    return cp.sum((u - cp.sin(u0)) ** 2)


def test_cupy_fft_names_are_differentiated_as_numpys():
    u0 = rng().standard_normal(16)
    k = 2 * np.pi * np.fft.rfftfreq(16, 1.0 / 16)
    want = grad(heat)(u0, k)  # numpy, checked against differences in CASES
    g = grad(heat_in_cupy_names)
    for _ in range(2):
        got = g(cp.asarray(u0), cp.asarray(k))
        assert isinstance(got, cp.ndarray)
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-10, atol=1e-12)


def test_complex_spectrum_gradient_on_cupy():
    """A complex argument's gradient (JAX's convention) on the device equals numpy's
    (which tests/test_complex_spectral.py checks against differences)."""
    r = rng()
    z = r.standard_normal(8) + 1j * r.standard_normal(8)
    w = r.uniform(0.5, 1.5, 8)

    def energy(z, w):
        return np.sum(np.abs(np.fft.fft(z)) ** 2 * w)

    want = grad(energy)(z, w)
    got = grad(energy)(cp.asarray(z), cp.asarray(w))
    assert isinstance(got, cp.ndarray) and got.dtype == np.complex128
    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-10, atol=1e-12)
