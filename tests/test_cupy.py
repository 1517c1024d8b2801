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
