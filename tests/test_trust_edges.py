"""Edge values: what JAX gives (or numpy's own value), never an exception from inside the
library.

Each case is a point where the function is defined (or numpy returns nan without
raising) and the gradient used to raise or come back nan/wrong: empty means, var/std
with no degrees of freedom left, det of a singular matrix, matmul/dot with a list
operand, ``0 ** p`` and ``hypot(0, 0)``. Every gradient is called twice (the first call
of a straight-line gradient runs a probe, later calls run a shape-specialized variant)
and compared with an independent reference: a closed form, a known value, or central
finite differences in float64 (``tests/fd.py``) where the function is smooth there.
"""

import warnings

import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import grad, value_and_grad, vjp


def quiet_twice(g, *args):
    """``call_twice`` with numpy's own 0/0 and empty-slice warnings silenced (the
    function itself warns at these points); any exception still escapes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return call_twice(g, *args)


# --------------------------------------------------------------------------
# 1. mean of an empty array


def mean_all(x):
    return np.mean(x)


def mean_axis0(x):
    return np.sum(np.mean(x, axis=0))


def mean_method(x):
    return x.mean()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mean_of_empty_gives_an_empty_gradient(dtype):
    x = np.zeros(0, dtype=dtype)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value, g = value_and_grad(mean_all)(x)
        assert np.isnan(value)
        assert isinstance(g, np.ndarray) and g.shape == (0,) and g.dtype == dtype
    g = quiet_twice(grad(mean_method), x)
    assert g.shape == (0,) and g.dtype == dtype


def test_mean_of_empty_along_an_axis():
    x = np.zeros((0, 3))
    g = quiet_twice(grad(mean_axis0), x)
    assert isinstance(g, np.ndarray) and g.shape == (0, 3) and g.dtype == np.float64
    # the same helper still divides by the count on a non-empty input
    y = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(quiet_twice(grad(mean_axis0), y), np.full((2, 3), 0.5))


def vjp_mean_axis1(x):
    return np.mean(x, axis=1)


def test_vjp_of_an_empty_mean():
    x = np.zeros((2, 0))
    g = quiet_twice(vjp(vjp_mean_axis1), x, np.ones(2))
    assert g.shape == (2, 0)


# --------------------------------------------------------------------------
# 2. var/std with no degrees of freedom left: nan gradients, as JAX gives


def std_ddof1(x):
    return np.std(x, ddof=1)


def var_ddof2(x):
    return np.var(x, ddof=2)


def var_ddof_method(x):
    return x.var(ddof=1)


def var_axis_ddof(x):
    return np.sum(np.var(x, axis=0, ddof=1))


@pytest.mark.parametrize(
    "func, x",
    [
        (std_ddof1, np.array([1.5])),
        (var_ddof2, np.array([1.0, 3.0])),
        (var_ddof2, np.array([2.0, 2.0])),
        (var_ddof_method, np.array([4.0])),
        (var_ddof2, np.array([1.0])),  # ddof > n: numpy clamps the count to 0
    ],
)
def test_var_without_degrees_of_freedom_is_nan(func, x):
    g = quiet_twice(grad(func), x)
    assert g.shape == x.shape and g.dtype == x.dtype
    assert np.all(np.isnan(g))


def test_var_without_degrees_of_freedom_along_an_axis():
    x = np.array([[1.0, 2.0, 5.0]])
    g = quiet_twice(grad(var_axis_ddof), x)
    assert g.shape == (1, 3) and np.all(np.isnan(g))
    # with degrees of freedom left, it matches finite differences
    y = np.array([[1.0, 2.0, 5.0], [0.5, -1.0, 2.0]])
    (expected,) = fd.numeric_grad(var_axis_ddof, (y,), (0,))
    np.testing.assert_allclose(quiet_twice(grad(var_axis_ddof), y), expected, rtol=1e-6)


def test_std_ddof_float32_stays_float32():
    x = np.array([1.5], dtype=np.float32)
    g = quiet_twice(grad(std_ddof1), x)
    assert g.dtype == np.float32 and np.all(np.isnan(g))


# --------------------------------------------------------------------------
# 3. det of a singular matrix: the transposed adjugate


def det_f(a):
    return np.linalg.det(a)


def det_sum(a):
    return np.sum(np.linalg.det(a))


def det_weighted(a, w):
    return np.sum(np.linalg.det(a) * w)


def cofactor_grad(a):
    """d det(a) / d a = the cofactor matrix (the transposed adjugate), by expansion."""
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[-1]
    if n == 1:
        return np.ones_like(a)
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            out[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


SINGULAR = {
    "2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "3x3-rank2": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "3x3-rank2-exact": np.array([[2.0, 1.0, 3.0], [1.0, 0.0, 1.0], [3.0, 1.0, 4.0]]),
    "3x3-rank1": np.outer([1.0, -2.0, 0.5], [3.0, 1.0, -1.0]),
    "3x3-zero": np.zeros((3, 3)),
}


def test_det_singular_2x2_known_value():
    a = SINGULAR["2x2"]
    g = call_twice(grad(det_f), a)
    np.testing.assert_allclose(g, [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_singular_matches_cofactors(name):
    a = SINGULAR[name]
    expected = cofactor_grad(a)
    g = call_twice(grad(det_f), a)
    assert g.shape == a.shape and g.dtype == np.float64
    np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-12)
    assert np.array_equal(a, SINGULAR[name])  # not mutated


def test_det_regular_still_matches_cofactors_and_fd():
    a = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.0, 0.0, 4.0]])
    g = call_twice(grad(det_f), a)
    np.testing.assert_allclose(g, cofactor_grad(a), rtol=1e-12)
    (expected,) = fd.numeric_grad(det_f, (a,), (0,))
    np.testing.assert_allclose(g, expected, rtol=1e-7)


def test_det_stack_mixing_singular_and_regular():
    a = np.stack(
        [
            SINGULAR["3x3-rank2"],
            np.array([[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.0, 0.0, 4.0]]),
            SINGULAR["3x3-rank1"],
        ]
    )
    g = call_twice(grad(det_sum), a)
    np.testing.assert_allclose(g, cofactor_grad(a), rtol=1e-9, atol=1e-12)
    w = np.array([0.5, -2.0, 3.0])
    g = call_twice(grad(det_weighted), a, w)
    np.testing.assert_allclose(g, w[:, None, None] * cofactor_grad(a), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("value", [0.0, 2.5])
def test_det_1x1(value):
    a = np.array([[value]])
    g = call_twice(grad(det_f), a)
    np.testing.assert_allclose(g, [[1.0]])
    b = np.full((2, 1, 1), value)
    np.testing.assert_allclose(call_twice(grad(det_sum), b), np.ones((2, 1, 1)))


@pytest.mark.parametrize("eps", [1e-6, 1e-10, 1e-14])
def test_det_nearly_singular_keeps_its_accuracy(eps):
    # det = eps is tiny and inv(a) huge: their product would lose the cofactors' digits
    a = np.array([[1.0, 2.0, 0.0], [2.0, 4.0 + eps, 1.0], [0.0, 0.0, 3.0]])
    g = call_twice(grad(det_f), a)
    np.testing.assert_allclose(g, cofactor_grad(a), rtol=1e-9, atol=1e-12)


def test_det_of_empty_matrices():
    for shape in [(0, 0), (2, 0, 0), (0, 2, 2)]:
        g = call_twice(grad(det_sum), np.zeros(shape))
        assert g.shape == shape and g.dtype == np.float64


def test_det_singular_float32():
    a = SINGULAR["2x2"].astype(np.float32)
    g = call_twice(grad(det_f), a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [[4.0, -2.0], [-2.0, 1.0]], atol=1e-5)


def trace_f(a):
    return np.trace(a)


def trace_stack(a):
    return np.sum(np.trace(a, axis1=1, axis2=2))


class Guarded:
    """A NEP-13/18 duck array that, like a cupy array, refuses implicit conversion to a
    numpy array: numpy functions and ufuncs dispatch to it, ``np.asarray`` raises."""

    def __init__(self, data):
        self.data = np.asarray(data)

    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)
    dtype = property(lambda self: self.data.dtype)

    def __array__(self, *args, **kwargs):
        raise TypeError("implicit conversion to a numpy array is not allowed")

    def __bool__(self):
        return bool(self.data)

    def __getitem__(self, index):
        return _wrap(self.data[index])

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def __mul__(self, other):
        return np.multiply(self, other)

    def __rmul__(self, other):
        return np.multiply(other, self)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __lt__(self, other):
        return np.less(self, other)


def _wrap(v):
    if isinstance(v, (np.ndarray, np.generic)):
        return Guarded(v)
    if isinstance(v, tuple):
        return tuple(_wrap(x) for x in v)
    return v


def _unwrap(v):
    if isinstance(v, Guarded):
        return v.data
    if isinstance(v, list):
        return [_unwrap(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_unwrap(x) for x in v)
    if isinstance(v, dict):
        return {k: _unwrap(x) for k, x in v.items()}
    return v


def test_untrace_and_undet_need_no_implicit_conversion():
    """The helpers work on arrays that refuse ``np.asarray`` (as cupy's do) and on a
    Python float adjoint."""
    from transpile_runtime import ops

    with pytest.raises(TypeError):
        np.asarray(Guarded([1.0]))
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    y = np.linalg.det(a)
    np.testing.assert_allclose(ops.undet(1.0, y, a), cofactor_grad(a), rtol=1e-12)
    np.testing.assert_allclose(ops.undet(1.0, 0.0, SINGULAR["2x2"]), [[4, -2], [-2, 1]])
    np.testing.assert_allclose(ops.untrace(2.0, a), 2.0 * np.eye(2))
    np.testing.assert_allclose(
        ops.untrace(np.array([1.0, 3.0]), np.zeros((2, 3, 3)), 1, 1, 2),
        np.array([1.0, 3.0])[:, None, None] * np.eye(3, k=1),
    )
    np.testing.assert_allclose(ops.untrace(1.0, np.zeros((2, 4)), -1), np.eye(2, 4, k=-1))

    ga = Guarded([1.0, -1.0])
    out = ops.untrace(ga, Guarded(np.zeros((2, 2, 2))), 0, 1, 2)
    assert isinstance(out, Guarded)
    np.testing.assert_allclose(out.data, [np.eye(2), -np.eye(2)])
    out = ops.untrace(1.5, Guarded(np.zeros((3, 3))))
    assert isinstance(out, Guarded)
    np.testing.assert_allclose(out.data, 1.5 * np.eye(3))
    for stack in (np.stack([a, 2 * a]), np.stack([a, SINGULAR["2x2"]])):
        expected = np.array([1.0, -1.0])[:, None, None] * cofactor_grad(stack)
        out = ops.undet(ga, Guarded(np.linalg.det(stack)), Guarded(stack))
        assert isinstance(out, Guarded)
        np.testing.assert_allclose(out.data, expected, rtol=1e-12, atol=1e-12)
    out = ops.undet(1.0, Guarded(np.float64(0.0)), Guarded(SINGULAR["3x3-rank2"]))
    np.testing.assert_allclose(out.data, cofactor_grad(SINGULAR["3x3-rank2"]), atol=1e-12)

    g = call_twice(grad(trace_f), np.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(g, np.eye(3))
    g = call_twice(grad(trace_stack), np.ones((2, 3, 3), dtype=np.float32))
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, np.broadcast_to(np.eye(3), (2, 3, 3)))


# --------------------------------------------------------------------------
# 4. matmul / dot with a list operand


def matmul_list(x, w):
    return np.sum(x @ w)


def matmul_list_left(w, x):
    return np.sum(w @ x)


def dot_list(x, w):
    return np.sum(np.dot(x, w))


def dot_list_left(w, x):
    return np.sum(np.dot(w, x) * np.array([1.0, -2.0]))


def matmul_fn_list(x, w):
    return np.sum(np.matmul(x, w) ** 2)


X22 = np.array([[1.0, 2.0], [3.0, -1.5]])


@pytest.mark.parametrize("func", [matmul_list, dot_list, matmul_fn_list])
def test_list_on_the_right(func):
    w = [1.0, 2.0]
    gx = call_twice(grad(func, wrt=0), X22, w)
    (ex,) = fd.numeric_grad(func, (X22, w), (0,))
    np.testing.assert_allclose(gx, ex, rtol=1e-7)
    gw = call_twice(grad(func, wrt=1), X22, w)
    (ew,) = fd.numeric_grad(func, (X22, w), (1,))
    assert isinstance(gw, list) and len(gw) == 2
    assert all(type(v) is float for v in gw), gw
    np.testing.assert_allclose(gw, ew, rtol=1e-7)
    assert w == [1.0, 2.0]
    gx2, gw2 = call_twice(grad(func, wrt=(0, 1)), X22, w)
    np.testing.assert_allclose(gx2, ex, rtol=1e-7)
    assert isinstance(gw2, list) and all(type(v) is float for v in gw2)
    np.testing.assert_allclose(gw2, ew, rtol=1e-7)


@pytest.mark.parametrize("func", [matmul_list_left, dot_list_left])
def test_list_on_the_left(func):
    w = [0.5, -1.0]
    gx = call_twice(grad(func, wrt=1), w, X22)
    (ex,) = fd.numeric_grad(func, (w, X22), (1,))
    np.testing.assert_allclose(gx, ex, rtol=1e-7)
    gw = call_twice(grad(func, wrt=0), w, X22)
    (ew,) = fd.numeric_grad(func, (w, X22), (0,))
    assert isinstance(gw, list) and all(type(v) is float for v in gw), gw
    np.testing.assert_allclose(gw, ew, rtol=1e-7)


def matmul_nested_list(x, w):
    return np.sum(np.tanh(x @ w))


def test_nested_list_matrix_operand():
    w = [[1.0, 0.5, -1.0], [2.0, 0.0, 0.25]]
    gw = call_twice(grad(matmul_nested_list, wrt=1), X22, w)
    (ew,) = fd.numeric_grad(matmul_nested_list, (X22, w), (1,))
    assert isinstance(gw, list) and all(isinstance(r, list) for r in gw)
    assert all(type(v) is float for r in gw for v in r)
    np.testing.assert_allclose(gw, ew, rtol=1e-7)
    gx = call_twice(grad(matmul_nested_list, wrt=0), X22, w)
    (ex,) = fd.numeric_grad(matmul_nested_list, (X22, w), (0,))
    np.testing.assert_allclose(gx, ex, rtol=1e-7)


# --------------------------------------------------------------------------
# 5. 0 ** p: the exponent's derivative z * log(x) is 0 where x == 0


def pow_zero_base(p):
    return np.sum(np.array([0.0, 2.0]) ** p)


def power_zero_base(p):
    return np.sum(np.power(np.array([0.0, 2.0, 3.0]), p))


def builtin_pow_zero_base(p):
    return pow(0.0, p) + pow(2.0, p)


def scalar_zero_base(p):
    return 0.0**p


def pow_both(x, p):
    return np.sum(x**p)


def test_pow_zero_base_array():
    g = call_twice(grad(pow_zero_base), 2.0)
    assert isinstance(g, float)  # a sum over the array: a numpy float64
    np.testing.assert_allclose(g, 4.0 * np.log(2.0), rtol=1e-13)
    g = call_twice(grad(power_zero_base), 2.0)
    np.testing.assert_allclose(g, 4.0 * np.log(2.0) + 9.0 * np.log(3.0), rtol=1e-13)


def test_pow_zero_base_scalar():
    g = call_twice(grad(scalar_zero_base), 2.0)
    assert g == 0.0 and type(g) is float
    g = call_twice(grad(builtin_pow_zero_base), 1.5)
    np.testing.assert_allclose(g, 2.0**1.5 * np.log(2.0), rtol=1e-13)


def test_pow_zero_base_with_array_exponent():
    x = np.array([0.0, 2.0, 0.5])
    p = np.array([2.0, 1.5, 3.0])
    gx, gp = call_twice(grad(pow_both, wrt=(0, 1)), x, p)
    np.testing.assert_allclose(gx, p * x ** (p - 1), rtol=1e-13)
    np.testing.assert_allclose(gp, [0.0, 2.0**1.5 * np.log(2.0), 0.125 * np.log(0.5)], rtol=1e-13)
    # away from zero it is the same as finite differences
    y = np.array([0.7, 2.0, 0.5])
    ex, ep = fd.numeric_grad(pow_both, (y, p), (0, 1))
    gx, gp = call_twice(grad(pow_both, wrt=(0, 1)), y, p)
    np.testing.assert_allclose(gx, ex, rtol=1e-7)
    np.testing.assert_allclose(gp, ep, rtol=1e-7)


def test_pow_zero_base_float32():
    x = np.array([0.0, 2.0], dtype=np.float32)
    p = np.float32(2.0)
    gp = call_twice(grad(pow_both, wrt=1), x, p)
    assert gp.dtype == np.float32
    np.testing.assert_allclose(gp, 4.0 * np.log(2.0), rtol=1e-6)
    pa = np.array([2.0, 3.0], dtype=np.float32)
    gp = call_twice(grad(pow_both, wrt=1), x, pa)
    assert gp.dtype == np.float32
    np.testing.assert_allclose(gp, [0.0, 8.0 * np.log(2.0)], rtol=1e-6)
    # a Python float exponent with a float32 base keeps float32 for the base's gradient
    gx = call_twice(grad(pow_both, wrt=0), x, 2.0)
    assert gx.dtype == np.float32
    np.testing.assert_allclose(gx, [0.0, 4.0])


def pow_negative_base(p):
    return (-2.0) ** p


def test_pow_negative_base_scalar_is_nan_not_an_error():
    # (-2.0) ** 2.0 == 4.0; its derivative by the exponent is not real: JAX gives nan
    g = quiet_twice(grad(pow_negative_base), 2.0)
    assert type(g) is float and np.isnan(g)


def poly_loop(x):
    s = 0.0
    for k in range(4):
        s = s + x**k
    return np.sum(s)


def pow_int_exponent(x, k):
    return np.sum(x**k)


def square_literal(x):
    return np.sum(x**2 + np.power(x, 3.0))


def sqrt_by_pow(x):
    return x**0.5


@pytest.mark.parametrize("x", [0.0, np.zeros(3), np.array([0.0, 1.5, -2.0])])
def test_pow_zero_exponent_at_zero(x):
    # d/dx (1 + x + x**2 + x**3) = 1 + 2x + 3x**2: the x**0 term contributes 0, also at 0
    g = call_twice(grad(poly_loop), x)
    np.testing.assert_allclose(g, 1.0 + 2.0 * np.asarray(x) + 3.0 * np.asarray(x) ** 2)
    assert type(g) is type(x) or np.ndim(x) == 0
    for k in (0, 0.0, 1, 2):
        g = call_twice(grad(pow_int_exponent), x, k)
        expected = np.zeros_like(np.asarray(x)) if k == 0 else k * np.asarray(x) ** (k - 1)
        np.testing.assert_allclose(g, expected)
        assert np.shape(g) == np.shape(x)


def test_pow_zero_exponent_array():
    x = np.array([0.0, 0.0, 2.0, 0.0])
    k = np.array([0.0, 1.0, 0.0, 3.0])
    g = call_twice(grad(pow_int_exponent), x, k)
    np.testing.assert_allclose(g, [0.0, 1.0, 0.0, 0.0])
    x32, k32 = x.astype(np.float32), k.astype(np.float32)
    g = call_twice(grad(pow_int_exponent), x32, k32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [0.0, 1.0, 0.0, 0.0])
    (expected,) = fd.numeric_grad(pow_int_exponent, (x + 0.5, k), (0,))
    np.testing.assert_allclose(call_twice(grad(pow_int_exponent), x + 0.5, k), expected, rtol=1e-7)


def test_pow_of_python_zero_with_exponent_below_one_is_inf():
    # numpy and JAX give inf for d/dx x ** 0.5 at 0; Python's 0.0 ** -0.5 would raise
    g = call_twice(grad(sqrt_by_pow), 0.0)
    assert g == np.inf


def test_pow_number_exponent_stays_folded():
    """A number exponent keeps the readable folded adjoint (``2 * x``), no helper call."""
    from transpile import source

    text = source(grad(square_literal))
    assert "pow_slope" not in text, text
    assert "2 * x" in text and "3.0 * x ** 2.0" in text, text
    x = np.array([0.0, 1.0, -2.0])
    np.testing.assert_allclose(call_twice(grad(square_literal), x), 2 * x + 3 * x**2)


# --------------------------------------------------------------------------
# 6. hypot at (0, 0): 0, as JAX gives


def hypot_f(x, y):
    return np.sum(np.hypot(x, y))


def test_hypot_at_the_origin():
    x = np.array([0.0, 3.0, 0.0])
    y = np.array([0.0, 4.0, -2.0])
    gx, gy = call_twice(grad(hypot_f, wrt=(0, 1)), x, y)
    np.testing.assert_allclose(gx, [0.0, 0.6, 0.0])
    np.testing.assert_allclose(gy, [0.0, 0.8, -1.0])
    gx, gy = call_twice(grad(hypot_f, wrt=(0, 1)), 0.0, 0.0)
    assert gx == 0.0 and gy == 0.0
    # elsewhere it matches finite differences, with broadcasting
    a = np.array([[0.5, -1.0, 2.0]])
    b = np.array([[1.0], [-0.3]])
    ea, eb = fd.numeric_grad(hypot_f, (a, b), (0, 1))
    ga, gb = call_twice(grad(hypot_f, wrt=(0, 1)), a, b)
    np.testing.assert_allclose(ga, ea, rtol=1e-7)
    np.testing.assert_allclose(gb, eb, rtol=1e-7)


def test_hypot_at_the_origin_float32():
    x = np.array([0.0, 3.0], dtype=np.float32)
    y = np.array([0.0, 4.0], dtype=np.float32)
    gx, gy = call_twice(grad(hypot_f, wrt=(0, 1)), x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float32
    np.testing.assert_allclose(gx, [0.0, 0.6], rtol=1e-6)
    np.testing.assert_allclose(gy, [0.0, 0.8], rtol=1e-6)
