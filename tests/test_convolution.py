"""Convolution and friends (``transpile/rules/convolution.py``, ``scipy_signal.py``, with
``np.diff`` and ``np.trapezoid``): every row of ``tests/convolution_funcs.py`` against
central finite differences in float64 (``tests/fd.py``).

* the vjp with a random cotangent, on a first call and a later one (a shape-specialized
  variant), equals the gradient of ``sum(dout * f(...))`` by differences; the arguments
  are left as they were;
* the jvp, on both calls, equals the directional difference;
* float32 in, float32 out, close to the float64 reference;
* on the strict array double (``tests/strict_array.py``, cupy's stand-in), the same vjp;
* two programs, a matched filter's smooth peak in its template and a small 1-D
  convolutional network in its kernels, against differences on both calls;
* what is not differentiated is refused: ``np.interp``'s ``xp``, ``np.gradient``'s
  spacing, ``period=``, arguments that are not 1-D.
"""

import copy

import convolution_funcs as cf
import fd
import numpy as np
import pytest
from strict_array import StrictArray, strict, to_numpy

from transpile import TranspileError, grad, jvp, vjp


def _rows(rows):
    return [pytest.param(r, i, id=f"{r.id}-wrt{i}") for r in rows for i in r.wrt]


def _draw(r, key):
    rng = np.random.default_rng(sum(map(ord, key)) * 31 + len(key))
    args = [make(rng) for make in r.args]
    out = r.func(*copy.deepcopy(args))
    return args, rng.standard_normal(np.shape(out)), rng


def _numeric_vjp(f, args, i, dout):
    def weighted(*a):
        return np.sum(dout * f(*a))

    return fd.numeric_grad(weighted, list(args), (i,))[0]


def _check_vjp(r, i):
    args, dout, _ = _draw(r, r.id + str(i))
    pristine = copy.deepcopy(args)
    g = vjp(r.func, wrt=i)
    first = g(*args, dout)
    later = g(*args, dout)
    fd.assert_same(list(args), list(pristine), path="argument")
    expected = _numeric_vjp(r.func, args, i, dout)
    for got in (first, later):
        assert np.shape(got) == np.shape(args[i])
        fd.assert_close(got, expected, rtol=1e-6, atol=1e-8, path=r.id)
    return g, g.__transpile_dispatch__


@pytest.mark.parametrize("r,i", _rows(cf.ROWS + cf.SCIPY_ROWS))
def test_vjp_against_central_differences(r, i):
    _, dispatch = _check_vjp(r, i)
    assert dispatch.specializable  # the later call ran a shape-specialized variant


@pytest.mark.parametrize("r,i", _rows(cf.ROWS + cf.SCIPY_ROWS))
def test_jvp_against_central_differences(r, i):
    args, _, rng = _draw(r, r.id + "jvp" + str(i))
    tangent = rng.standard_normal(np.shape(args[i]))
    if not np.shape(args[i]):
        tangent = float(tangent)
    h = jvp(r.func, wrt=i)
    expected = fd.numeric_jvp(r.func, list(args), (i,), (tangent,))
    for _ in range(2):  # a first call and a later one
        out, tout = h(*args, tangent)
        np.testing.assert_allclose(out, r.func(*args), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tout, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("r,i", _rows([r for r in cf.ROWS + cf.SCIPY_ROWS if r.f32]))
def test_float32_in_float32_out(r, i):
    args, dout, _ = _draw(r, r.id + str(i))
    expected = _numeric_vjp(r.func, args, i, dout)
    low = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    g = vjp(r.func, wrt=i)
    for _ in range(2):
        got = g(*low, dout.astype(np.float32))
        assert got.dtype == np.float32, got.dtype
        np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("r,i", _rows(cf.ROWS))
def test_vjp_on_the_strict_array_double(r, i):
    """Each rule runs where the arrays are not numpy's (cupy's stand-in), and agrees."""
    args, dout, _ = _draw(r, r.id + str(i))
    expected = vjp(r.func, wrt=i)(*args, dout)
    g = vjp(r.func, wrt=i)
    for _ in range(2):
        got = g(*strict(args), strict(dout))
        if np.shape(args[i]):
            assert isinstance(got, StrictArray), type(got)
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------
# Programs, against differences on a first and a later call


def _program_check(func, args, wrt):
    pristine = copy.deepcopy(args)
    g = grad(func, wrt=wrt)
    expected = fd.numeric_grad(func, list(args), wrt)
    for _ in range(2):
        got = g(*args)
        fd.assert_close(list(got), list(expected), rtol=1e-6, atol=1e-9, path=func.__name__)
    fd.assert_same(list(args), list(pristine), path="argument")
    assert g.__transpile_dispatch__.specializable


def test_matched_filter_peak_in_its_template():
    rng = np.random.default_rng(3)
    pulse = np.array([0.2, 0.9, -0.4, 0.5])
    sig = rng.standard_normal(40) * 0.3
    sig[17:21] += pulse
    template = pulse + rng.standard_normal(4) * 0.1
    _program_check(cf.matched_filter_peak, (template, sig), (0, 1))


def test_convolutional_network_in_its_kernels():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(32)
    target = rng.standard_normal(30)
    k1, k2 = rng.standard_normal(5) * 0.5, rng.standard_normal(3) * 0.5
    _program_check(cf.conv_net_loss, (k1, k2, x, target), (0, 1, 2))


def test_profile_through_interp_polyval_gradient_trapezoid():
    rng = np.random.default_rng(5)
    xp = cf.KNOTS
    x = np.linspace(0.05, 4.95, 40)
    x = x[np.min(np.abs(x[:, None] - xp[None, :]), axis=1) > 0.03]
    _program_check(cf.smooth_profile, (rng.standard_normal(6), x, xp), (0, 1))


def test_a_gradient_descent_step_fits_a_kernel():
    """Ten steps of gradient descent on the network's loss lower it (the gradient points
    uphill), first call and specialized calls alike."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal(32)
    k_true = np.array([0.5, -0.3, 0.2])
    target = np.convolve(np.tanh(np.convolve(x, k_true, "same")), k_true, "valid")
    k1, k2 = np.array([0.1, 0.1, 0.1]), np.array([0.2, 0.0, 0.1])
    step = grad(cf.conv_net_loss, wrt=(0, 1))
    start = cf.conv_net_loss(k1, k2, x, target)
    for _ in range(10):
        d1, d2 = step(k1, k2, x, target)
        k1, k2 = k1 - 0.1 * d1, k2 - 0.1 * d2
    assert cf.conv_net_loss(k1, k2, x, target) < 0.9 * start


# --------------------------------------------------------------------------
# What is not differentiated is refused


def interp_in_xp(xp, x, fp):
    return np.sum(np.interp(x, xp, fp))


def interp_in_left(left, x, xp, fp):
    return np.sum(np.interp(x, xp, fp, left=left))


def gradient_in_spacing(h, f):
    return np.sum(np.gradient(f, h) ** 2)


def interp_periodic(fp, x, xp):
    return np.sum(np.interp(x, xp, fp, period=6.0))


def convolve_number(a, v):
    return np.sum(np.convolve(a, v))


def test_interp_in_its_sample_points_is_refused():
    x, fp = np.array([0.5, 1.5]), np.array([0.0, 1.0, 4.0])
    with pytest.raises(TranspileError, match="xp"):
        grad(interp_in_xp)(np.array([0.0, 1.0, 2.0]), x, fp)
    with pytest.raises(TranspileError, match="left"):
        grad(interp_in_left)(0.5, x, np.array([0.0, 1.0, 2.0]), fp)


def test_gradient_in_its_spacing_is_refused():
    with pytest.raises(TranspileError, match="spacing|h"):
        grad(gradient_in_spacing)(0.5, np.arange(4.0) ** 2)


def test_coordinate_arrays_and_period_are_refused():
    with pytest.raises(NotImplementedError, match="coordinate arrays"):
        grad(cf.gradient_1d_coordinates)(np.arange(4.0) ** 2, np.array([0.0, 1.0, 3.0, 4.0]))
    with pytest.raises(NotImplementedError, match="period"):
        grad(interp_periodic)(np.arange(3.0), np.array([0.5, 7.0]), np.array([0.0, 1.0, 2.0]))


def test_a_number_convolved_is_refused_not_misshaped():
    with pytest.raises(ValueError, match="1-D"):
        grad(convolve_number)(2.0, np.array([1.0, 2.0]))
    np.testing.assert_allclose(grad(convolve_number, wrt=1)(np.ones(3), np.ones(2)), [3.0, 3.0])


def test_fftconvolve_same_broadcast_along_an_axis_not_convolved_is_refused():
    pytest.importorskip("scipy")

    def loss(a, v):
        return np.sum(cf.sig_fftconvolve_axes(a, v, "same"))

    with pytest.raises(NotImplementedError, match="broadcast"):
        grad(loss)(np.ones((1, 5)), np.ones((3, 2)))


def test_convolve2d_wrap_is_refused_in_reverse_and_differentiated_forwards():
    pytest.importorskip("scipy")
    rng = np.random.default_rng(8)
    a, v = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    dout = rng.standard_normal(cf.sig_convolve2d_wrap(a, v, "same").shape)
    with pytest.raises(NotImplementedError, match="boundary='wrap'"):
        vjp(cf.sig_convolve2d_wrap)(a, v, "same", dout)
    for i in (0, 1):
        tangent = rng.standard_normal(np.shape((a, v)[i]))
        expected = fd.numeric_jvp(cf.sig_convolve2d_wrap, [a, v, "same"], (i,), (tangent,))
        for _ in range(2):
            _, tout = jvp(cf.sig_convolve2d_wrap, wrt=i)(a, v, "same", tangent)
            np.testing.assert_allclose(tout, expected, rtol=1e-6, atol=1e-8)
