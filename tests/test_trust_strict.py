"""A numpy buffer written with, and read back into, values of a strict cupy-like array
(``tests/strict_array.py``): what the gradient makes stays in the arguments' library.

``out = np.zeros(4)`` is numpy's whatever the arguments are; a number read back from it
(``out[1]``, ``np.sum(out)``) times a strict array is a strict array, and the adjoint
of that product must be one too. Before, the adjoint of a reduction of such a product
was made like the numpy number (``ops.broadcast_like(out[1], x)``) and the next line
mixed a numpy array with the strict one. Each gradient is called three times (the first
call records shapes, later ones run the shape variant) and compared with the numpy
gradient, itself checked against central differences.
"""

import fd
import numpy as np
import pytest
from strict_array import StrictArray, strict, to_numpy

from transpile import grad, value_and_grad, vjp


def read_back_times_x(x):
    out = np.zeros(4)
    out[1] = x[0]
    out[1] = out[1] * x[1]
    return np.sum(out[1] * x)


def sum_of_buffer_times_x(x):
    out = np.zeros(4)
    out[1] = x[0]
    out[1] = out[1] * x[1]
    out[2] = out[1] + x[2]
    s = np.sum(out)
    return np.sum(s * x)


def read_back_in_tanh(x):
    out = np.zeros(4)
    out[1] = x[0]
    out[1] = out[1] * x[1]
    return np.sum(np.tanh(x * out[1]))


def buffer_squared(x):
    out = np.zeros(4)
    out[1] = x[0]
    out[1] = out[1] * x[1]
    out[2] = out[1] + x[2]
    return np.sum(out * out)


def max_of_buffer(x):
    out = np.zeros(4)
    out[1] = x[0]
    out[1] = out[1] * x[1]
    return np.max(out) * np.sum(x)


FUNCS = [read_back_times_x, sum_of_buffer_times_x, read_back_in_tanh, buffer_squared, max_of_buffer]
X = np.array([0.3, -0.5, 0.8])

ENTRIES = {
    "grad": lambda f: grad(f),
    "value_and_grad": lambda f: lambda x: value_and_grad(f)(x)[1],
    "vjp": lambda f: lambda x: vjp(f)(x, 1.0),
}


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=ENTRIES.keys())
@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_numpy_buffer_read_back_into_strict_values(f, entry, dtype):
    x = X.astype(dtype)
    expected = fd.numeric_grad(f, [X], (0,))[0]
    fd.assert_close(grad(f)(x), expected, rtol=1e-4 if dtype == np.float32 else 1e-6)
    xs = strict(x)
    g = entry(f)
    for _ in range(3):
        got = g(xs)
        assert isinstance(got, StrictArray) and got.shape == (3,) and got.dtype == dtype
        fd.assert_close(to_numpy(got), expected, rtol=1e-4 if dtype == np.float32 else 1e-6)
    assert np.array_equal(to_numpy(xs), x)  # the argument untouched
