"""What every entry point checks and keeps: a tangent (``jvp``) and ``v`` (``hvp``) shaped
like the argument they go with, or a ``ValueError`` naming both shapes (as ``vjp`` does
for ``dout``); float32 in, float32 out, a 0-d float32 array included.

Values are compared with closed forms (``f(x) = sum(tanh(c x)^2)`` with a float64
constant ``c``, which makes the function's own values float64) and central differences
(``tests/fd.py``); each entry is called twice (the later call may run a shape variant).
"""

import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import grad, hessian, hvp, jacobian, jvp, value_and_grad, vjp

C = np.float64(2.0)  # a numpy float64 constant: it promotes float32 values to float64


def tanh_sq(x):
    return np.sum(np.tanh(x * C) ** 2)


def tanh_vec(x):
    return np.tanh(x * C)


def tanh_sq_of_dict(p):
    return np.sum(np.tanh(p["a"] * C) ** 2) + np.sum(p["b"][0] * C)


def two_args(x, y):
    return np.sum(np.sin(x) * y)


def d_tanh_sq(x):
    t = np.tanh(2.0 * x)
    return 4.0 * t * (1.0 - t * t)


def dd_tanh_sq(x):
    t = np.tanh(2.0 * x)
    s = 1.0 - t * t
    return 8.0 * s * (s - 2.0 * t * t)


X = np.array([0.3, -0.5, 0.8])

# --------------------------------------------------------------------------
# tangents and v of the wrong shape or structure


WRONG_TANGENTS = [  # each call returns the product along t, to check a right t with
    ("jvp", lambda t: jvp(tanh_sq)(X, t)[1]),
    ("hvp", lambda t: hvp(tanh_sq)(X, t)),
    ("hvp_has_grad", lambda t: hvp(tanh_sq, has_grad=True)(X, t)[1]),
    ("hvp_reverse", lambda t: hvp(tanh_sq, mode="reverse")(X, t)),
]


@pytest.mark.parametrize("call", [c for _, c in WRONG_TANGENTS], ids=[n for n, _ in WRONG_TANGENTS])
@pytest.mark.parametrize("shape", [(1,), (4,), (), (3, 1)])
def test_a_tangent_of_another_shape_is_refused(call, shape):
    with pytest.raises(ValueError, match=rf"has shape \({shape[0] if shape else ''}.*\(3,\)"):
        call(np.ones(shape))
    # after a refusal, a tangent of the right shape gets the right product
    t = np.array([1.0, -0.5, 2.0])
    expected = d_tanh_sq(X) @ t if call is WRONG_TANGENTS[0][1] else dd_tanh_sq(X) * t
    fd.assert_close(call(t), expected, rtol=1e-10)


@pytest.mark.parametrize(
    "make", [lambda f: jvp(f), lambda f: hvp(f), lambda f: hvp(f, mode="reverse")]
)
@pytest.mark.parametrize(
    "tangent, where",
    [
        ({"a": X}, "structure"),
        ({"a": X, "c": [X]}, "structure"),
        ({"a": X, "b": [X, X]}, "structure"),
        ({"a": X, "b": [X[:2]]}, r"\['b'\]\[0\] has shape \(2,\)"),
        ({"a": X[:1], "b": [X]}, r"\['a'\] has shape \(1,\)"),
        ([X, [X]], "structure"),
    ],
)
def test_a_tangent_of_another_structure_is_refused(make, tangent, where):
    p = {"a": X, "b": [X]}
    with pytest.raises(ValueError, match=where):
        make(tanh_sq_of_dict)(p, tangent)


def test_a_tuple_wrt_takes_a_tuple_of_tangents():
    y = np.array([1.0, 2.0, -1.0])
    with pytest.raises(ValueError, match="tuple of 2"):
        jvp(two_args, wrt=(0, 1))(X, y, X)
    with pytest.raises(ValueError, match=r"\[1\] has shape \(1,\)"):
        jvp(two_args, wrt=(0, 1))(X, y, (X, y[:1]))
    out, tangent = jvp(two_args, wrt=(0, 1))(X, y, (X, y))
    assert tangent == pytest.approx(np.sum(np.cos(X) * y * X + np.sin(X) * y))


# --------------------------------------------------------------------------
# float32 in, float32 out, for every entry point

ARGUMENTS = {
    "0-d array": np.array(0.3, np.float32),
    "scalar": np.float32(0.3),
    "(1,) array": np.array([0.3], np.float32),
}


def leaves_like(result, x):
    """Each leaf of ``result``: float32, shaped like ``x`` (a 0-d array for a 0-d array)."""
    leaves, _ = fd.flatten(result)
    for leaf in leaves:
        assert getattr(leaf, "dtype", None) == np.float32, (type(leaf), leaf)
        assert np.shape(leaf) == np.shape(x)
        if isinstance(x, np.ndarray):
            assert isinstance(leaf, np.ndarray)
    return leaves


@pytest.mark.parametrize("x", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_gradients_of_float32(x):
    expected = d_tanh_sq(float(np.ravel(x)[0]))
    g = leaves_like(call_twice(grad(tanh_sq), x), x)[0]
    assert float(np.ravel(g)[0]) == pytest.approx(expected, rel=1e-5)
    value, g = call_twice(value_and_grad(tanh_sq), x)
    assert float(np.ravel(leaves_like(g, x)[0])[0]) == pytest.approx(expected, rel=1e-5)
    dout = np.ones_like(tanh_vec(x))
    g = leaves_like(call_twice(vjp(tanh_vec), x, dout), x)[0]
    assert float(np.ravel(g)[0]) == pytest.approx(2.0 * (1.0 - np.tanh(0.6) ** 2), rel=1e-5)


@pytest.mark.parametrize("x", ARGUMENTS.values(), ids=ARGUMENTS.keys())
@pytest.mark.parametrize("form", ["forward", "reverse", "has_grad"])
def test_hvp_of_float32(x, form):
    v = np.full_like(x, 0.5)
    options = {"forward": {}, "reverse": {"mode": "reverse"}, "has_grad": {"has_grad": True}}
    got = call_twice(hvp(tanh_sq, **options[form]), x, v)
    leaves = leaves_like(got, x)
    x0 = float(np.ravel(x)[0])
    assert float(np.ravel(leaves[-1])[0]) == pytest.approx(0.5 * dd_tanh_sq(x0), rel=1e-5)
    if form == "has_grad":
        assert float(np.ravel(leaves[0])[0]) == pytest.approx(d_tanh_sq(x0), rel=1e-5)


@pytest.mark.parametrize("x", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_hessian_and_grad_of_grad_of_float32(x):
    H = call_twice(hessian(tanh_sq), x)
    assert H.dtype == np.float32 and H.shape == np.shape(x) * 2
    assert float(np.ravel(H)[0]) == pytest.approx(dd_tanh_sq(0.3), rel=1e-5)
    if np.ndim(x) == 0:
        g2 = leaves_like(call_twice(grad(grad(tanh_sq)), x), x)[0]
        assert float(g2) == pytest.approx(dd_tanh_sq(0.3), rel=1e-5)


def sin_vec(x):
    return np.sin(x) * 2.0


@pytest.mark.parametrize("x", ARGUMENTS.values(), ids=ARGUMENTS.keys())
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian_of_float32(x, mode):
    J = call_twice(jacobian(sin_vec, mode=mode), x)
    assert J.dtype == np.float32 and J.shape == np.shape(x) * 2
    assert float(np.ravel(J)[0]) == pytest.approx(2.0 * np.cos(0.3), rel=1e-5)


def test_float32_leaves_of_a_dict_argument():
    x = np.array(0.3, np.float32)
    p = {"a": x, "b": [np.float32(0.5)]}
    g = call_twice(grad(tanh_sq_of_dict), p)
    assert g["a"].dtype == np.float32 and isinstance(g["a"], np.ndarray) and g["a"].ndim == 0
    assert g["b"][0].dtype == np.float32
    assert float(g["a"]) == pytest.approx(d_tanh_sq(0.3), rel=1e-5)
    assert float(g["b"][0]) == pytest.approx(2.0)
    t = {"a": np.array(1.0, np.float32), "b": [np.float32(1.0)]}
    for product in (hvp(tanh_sq_of_dict), hvp(tanh_sq_of_dict, mode="reverse")):
        h = call_twice(product, p, t)
        assert h["a"].dtype == np.float32 and h["b"][0].dtype == np.float32
        assert float(h["a"]) == pytest.approx(dd_tanh_sq(0.3), rel=1e-5)
        assert float(h["b"][0]) == 0.0


def test_reverse_hvp_of_a_lambda():
    f = lambda x: np.sum(np.sin(x) ** 2)
    got = call_twice(hvp(f, mode="reverse"), X, np.ones(3))
    fd.assert_close(got, 2.0 * np.cos(2.0 * X))
