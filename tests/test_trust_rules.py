"""A ``defvjp`` rule's contribution is checked against its argument when the gradient
runs: one of another shape (or complex, boolean, None) raises a ``ValueError`` naming
the rule and the argument, as JAX's custom_vjp does, on the first call and on a later
one (a shape variant); a contribution of the right shape still gives the gradient that
finite differences give. An autograd-style curried rule is refused by ``defvjp`` with
the signature it expects.
"""

import numpy as np
import pytest
from fd import assert_close, numeric_grad
from variants import call_twice

from transpile import defvjp, grad, hvp, value_and_grad, vjp


def _cube(x):
    return x**3


def cube_summed(x):  # a rule that returns a scalar for a vector argument
    return _cube(x)


def cube_complex(x):
    return _cube(x)


def cube_none(x):
    return _cube(x)


def cube_right(x):
    return _cube(x)


def scale_by(x, w):
    return x * w


defvjp(cube_summed, lambda g, ans, x: np.sum(g * 3.0 * x**2))
defvjp(cube_complex, lambda g, ans, x: g * 3.0 * x**2 + 0j)
defvjp(cube_none, lambda g, ans, x: None)
defvjp(cube_right, lambda g, ans, x: g * 3.0 * x**2)
# the adjoint for w returns g * x, shaped like the product: summed over w's broadcast axes
defvjp(scale_by, lambda g, ans, x, w: g * w, lambda g, ans, x, w: g * x)

X = np.array([0.650, -0.727, 0.327])


def loss_summed(x):
    return np.sum(cube_summed(x) * x)


def loss_complex(x):
    return np.sum(cube_complex(x))


def loss_none(x):
    return np.sum(cube_none(x))


def loss_right(x):
    return np.sum(cube_right(x) * np.sin(x))


def loss_scale(x, w):
    return np.sum(scale_by(x, w) ** 2)


@pytest.mark.parametrize(
    "loss, found",
    [
        (loss_summed, r"has shape \(\), but the argument has shape \(3,\)"),
        (loss_complex, "complex128"),
        (loss_none, "is None"),
    ],
    ids=["scalar_for_vector", "complex", "none"],
)
@pytest.mark.parametrize(
    "entry",
    [
        lambda f: grad(f)(X),
        lambda f: value_and_grad(f)(X),
        lambda f: vjp(f)(X, 1.0),
    ],
    ids=["grad", "value_and_grad", "vjp"],
)
def test_a_contribution_not_shaped_like_its_argument_is_refused(loss, found, entry):
    for _ in range(2):  # the first call and a later one
        with pytest.raises(ValueError, match=found) as raised:
            entry(loss)
        assert "argument 'x' of cube_" in str(raised.value)  # names the rule


def test_the_same_rule_on_a_scalar_argument_is_right():
    # np.sum of a scalar is the scalar: the rule is right there
    g = call_twice(grad(loss_summed), 0.5)
    assert g == pytest.approx(4 * 0.5**3)


def test_a_contribution_of_the_right_shape():
    assert_close(call_twice(grad(loss_right), X), numeric_grad(loss_right, [X], (0,))[0])
    # second order differentiates the rule's adjoint (forward over reverse needs tangents)
    product = hvp(lambda x: np.sum(cube_right(x) * 2.0), mode="reverse")
    assert_close(call_twice(product, X, np.ones(3)), 12.0 * X)


@pytest.mark.parametrize("w", [np.float64(1.5), np.array([1.5]), np.array([1.5, -0.5, 2.0])])
def test_a_broadcast_contribution_is_summed_to_its_arguments_shape(w):
    for wrt in (0, 1):
        expected = numeric_grad(loss_scale, [X, w], (wrt,))[0]
        got = call_twice(grad(loss_scale, wrt=wrt), X, w)
        assert np.shape(got) == np.shape((X, w)[wrt])
        assert_close(got, expected)


def test_a_curried_autograd_rule_is_refused_with_the_signature_expected():
    def cube_curried(x):
        return _cube(x)

    with pytest.raises(TypeError, match=r"adjoint\(g, ans, x\).*lambda g, ans, x: \.\.\."):
        defvjp(cube_curried, lambda ans, x: lambda g: g * 3 * x**2)

    def two_args(x, y, scale=1.0):
        return x * y * scale

    with pytest.raises(TypeError, match=r"adjoint\(g, ans, x, y\)"):
        defvjp(two_args, lambda ans, x, y: lambda g: g * y)
    # what is accepted: (g, ans, *args), with the function's defaults or *args
    defvjp(two_args, lambda g, ans, x, y, scale=1.0: g * y * scale, None)
    defvjp(two_args, lambda g, ans, *args: g * args[1], None)
