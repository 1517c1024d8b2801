"""Gradients through the FFT family, convolutions, ``np.interp``, ``np.polyval``,
``np.gradient`` and the absolute value of complex values, differentiated again: the adjoints' helpers (``transpile_runtime.spectral``,
``complex_ops.unabs``) have rules of their own (``rules/runtime_spectral.py``,
``rules/runtime_complex.py``). Each Hessian-vector product is checked against central
differences of the generated gradient, in forward-over-reverse (``hvp``) and in
reverse-over-reverse (``grad`` of an inner product with the gradient), on a first call
and a later one."""

import numpy as np
import pytest

from transpile import grad, hvp


def power(F):
    return np.real(F * np.conj(F))


def fft(a):
    return np.sum(power(np.fft.fft(np.tanh(a))) * np.arange(8))


def imag_of_fft(a):
    return np.sum(np.imag(np.fft.fft(np.tanh(a))) ** 2)


def fft_n(a):
    return np.sum(power(np.fft.fft(np.tanh(a), 6, norm="ortho")))


def ifft(a):
    return np.sum(np.real(np.fft.ifft(np.sin(a) * a)) ** 3)


def rfft(a):
    return np.sum(power(np.fft.rfft(np.tanh(a))) * np.arange(5))


def rfft_n(a):
    return np.sum(power(np.fft.rfft(np.tanh(a), 11, norm="forward")))


def irfft(a):
    return np.sum(np.fft.irfft(np.fft.rfft(a) * (1 + np.arange(5)), 8) ** 3)


def irfft_of_complex(a):
    return np.sum(np.sin(np.fft.irfft(a[:5] + 1j * a[3:], 8)) ** 2)


def fft2(a):
    return np.sum(power(np.fft.fft2(np.tanh(a).reshape(2, 4)))[0] ** 2)


def ifftn(a):
    return np.sum(np.real(np.fft.ifftn(np.tanh(a).reshape(2, 4), axes=(0,))) ** 3)


def rfftn(a):
    return np.sum(power(np.fft.rfftn(np.tanh(a).reshape(2, 4))) ** 2)


def irfft2(a):
    spectrum = np.fft.rfft2(np.sin(a).reshape(2, 4))
    return np.sum(np.fft.irfft2(spectrum * spectrum, (2, 4)) ** 2)


def fftshift(a):
    return np.sum(np.fft.fftshift(np.tanh(a)) * np.arange(8) * a)


def ifftshift(a):
    return np.sum(np.fft.ifftshift(np.tanh(a) * a) ** 3)


def convolve_same(a):
    return np.sum(np.tanh(np.convolve(a, a[:3] ** 2, "same")) ** 2)


def convolve_valid(a):
    return np.sum(np.convolve(a**2, a[:3], "valid") ** 3)


def convolve_full(a):
    return np.sum(np.sin(np.convolve(a[:3], np.tanh(a))))


def correlate_full(a):
    return np.sum(np.sin(np.correlate(a, a[2:5], "full")))


def correlate_same(a):
    return np.sum(np.correlate(a[:3], np.tanh(a), "same") ** 2)


def correlate_valid(a):
    return np.sum(np.exp(np.correlate(a, np.cos(a[:4]))))


def abs_squared(a):
    return np.sum(np.abs(np.exp(1j * a[:4]) * a[4:] + a[:4] ** 2) ** 2)


def abs_of_complex(a):
    return np.sum(np.abs(a * (1 + 2j) + 1j * np.sin(a)) * np.arange(8))


def abs_of_fft(a):
    return np.sum(np.abs(np.fft.fft(np.tanh(a))) * np.arange(8))


def abs_of_abs(a):
    return np.sum(np.abs(np.abs(a + 1j * a[::-1]) * (1 + 1j)))


XP = np.array([-3.0, -1.1, -0.2, 0.45, 1.3, 3.0])


def interp_in_fp(a):
    return np.sum(np.interp(np.array([0.2, 1.0, -2.5, -0.7, 3.5]), XP, np.tanh(a[:6])) ** 2)


def interp_in_x(a):
    return np.sum(np.sin(np.interp(a, XP, np.array([1.0, 3.0, 2.0, 0.5, 1.5, -1.0]))) * a)


def interp_in_both(a):
    return np.sum(np.interp(a[:4] * 0.9, XP, a[2:] ** 2, left=0.5, right=-1.0) ** 3)


def polyval_in_p(a):
    return np.sum(np.polyval(a[:4], np.linspace(-1.0, 1.0, 5)) ** 2)


def polyval_in_both(a):
    return np.sum(np.polyval(a[:3], a[3:]) ** 3)


def gradient_of_a_vector(a):
    return np.sum(np.gradient(a**2, 0.5, edge_order=2) ** 3)


def gradient_along_both_axes(a):
    rows, columns = np.gradient(np.sin(a).reshape(4, 2))
    return np.sum(rows**2 * columns)


CASES = [
    interp_in_fp,
    interp_in_x,
    interp_in_both,
    polyval_in_p,
    polyval_in_both,
    gradient_of_a_vector,
    gradient_along_both_axes,
    abs_squared,
    abs_of_complex,
    abs_of_fft,
    abs_of_abs,
    fft,
    imag_of_fft,
    fft_n,
    ifft,
    rfft,
    rfft_n,
    irfft,
    irfft_of_complex,
    fft2,
    ifftn,
    rfftn,
    irfft2,
    fftshift,
    ifftshift,
    convolve_same,
    convolve_valid,
    convolve_full,
    correlate_full,
    correlate_same,
    correlate_valid,
]

RNG = np.random.default_rng(3)
X = RNG.normal(size=8)
V = RNG.normal(size=8)


def _central(f, x, v, h=1e-5):
    g = grad(f)
    return (g(x + h * v) - g(x - h * v)) / (2 * h)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_over_reverse(f):
    want = _central(f, X, V)
    product = hvp(f)
    for _ in range(2):
        np.testing.assert_allclose(product(X, V), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_over_reverse(f):
    inner = grad(f)

    def along(x, v):
        return np.sum(inner(x) * v)

    want = _central(f, X, V)
    product = grad(along)
    for _ in range(2):
        np.testing.assert_allclose(product(X, V), want, rtol=1e-5, atol=1e-6)


# A user function's saved values form a tuple of complex and real arrays; the adjoint of
# an entry of that tuple keeps its imaginary part where the entry is complex (it was
# dropped, for every entry, when the buffer was a tuple: a wrong second derivative)


def split_parts(z):
    # a branch keeps it a callee of its own (straight-line helpers are inlined)
    if z.shape[0] > 0:
        return np.real(z * np.conj(z)), np.imag(z) * 2.0
    return np.real(z), np.imag(z)


def through_a_helper(a):
    power_, imag_ = split_parts(np.tanh(a) * (1 + 2j))
    return np.sum(power_ * np.arange(8)) + np.sum(imag_ * a)


@pytest.mark.parametrize("f", [through_a_helper], ids=lambda f: f.__name__)
def test_complex_entries_of_a_saved_tuple_keep_their_imaginary_part(f):
    test_reverse_over_reverse(f)
    test_forward_over_reverse(f)


# scipy.signal's adjoints set the cotangent into the full result with
# spectral.unmode_nd, whose transpose is spectral.window_nd

KERNEL = np.array([[0.5, -0.2], [0.1, 0.3]])


def scipy_cases():
    signal = pytest.importorskip("scipy.signal")
    return [
        lambda a: np.sum(np.tanh(signal.convolve(a[:6], a[6:] ** 2, "same")) ** 2),
        lambda a: np.sum(signal.convolve(np.sin(a).reshape(2, 4), KERNEL, "valid") ** 3),
        lambda a: np.sum(np.sin(signal.correlate(a[:5], a[5:], "full"))),
        lambda a: np.sum(signal.fftconvolve(a[:6] ** 2, a[6:], "same") ** 2),
        lambda a: np.sum(
            signal.fftconvolve(np.sin(a).reshape(2, 4), np.array([[0.5, 0.2, -0.1]]), axes=1) ** 2
        ),
        lambda a: np.sum(signal.convolve2d(np.tanh(a).reshape(2, 4), KERNEL, "same") ** 2),
    ]


def test_scipy_signal_to_second_order():
    for f in scipy_cases():
        test_forward_over_reverse(f)
        test_reverse_over_reverse(f)
