"""Minimal reproducers of what the random feature programs (``feature_gen.py``, surveyed
with ``feature_survey.py``) found, one per class, each against central differences, on
a first and a later call. The comment above each says what happened before the fix."""

import math

import fd
import numpy as np
import pytest

from transpile import grad, hessian, hvp, jacobian, jvp, value_and_grad

X = np.array([0.3, -0.5, 0.8])
S = 0.7
V = np.array([1.0, 0.5, -2.0])


def _checked_gradient(f, args, wrt):
    """The library's gradient, first checked against central differences."""
    g = grad(f, wrt=wrt)
    fd.assert_close(g(*args), fd.numeric_grad(f, args, (wrt,))[0], 1e-6, 1e-8, path="gradient")
    return g


def _second_order(f, args, wrt, v):
    """hvp (three forms) and hessian of ``f`` against directional differences of its
    checked gradient, twice each."""
    g = _checked_gradient(f, args, wrt)
    expected = fd.numeric_jvp(g, args, (wrt,), [v], step=1e-4)
    products = [
        hvp(f, wrt=wrt),
        hvp(f, wrt=wrt, mode="reverse"),
        lambda *a: hvp(f, wrt=wrt, has_grad=True)(*a)[1],
    ]
    for product in products:
        for _ in range(2):
            got = product(*args, v)
            assert type(got) is type(args[wrt]) or np.ndim(got) == np.ndim(args[wrt]) == 0
            fd.assert_close(np.asarray(got, np.float64), expected, 1e-6, 1e-8, path="H v")
    if np.ndim(args[wrt]) <= 1 and not isinstance(args[wrt], list):
        h = hessian(f, wrt=wrt)
        for _ in range(2):
            fd.assert_close(np.tensordot(h(*args), v, axes=np.ndim(v)), expected, 1e-6, 1e-8)


# --------------------------------------------------------------------------
# Objects made in the function, given to code that is not differentiated


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, z):
        return self.w * z + self.b

    def act(self, z):
        return np.tanh(self.w * z) + self.b

    def both(self, z):
        return self.act(self(z))


def _apply(layer, z):
    return layer(z)


def _apply_both(layer, z, scale=1.0):
    return layer.both(z) * scale


def made_passed_result_unused(x, s):
    layer = Affine(x, s)
    unused = _apply(layer, x)  # the call runs; its result is not read
    return np.sum(np.sin(x) * s)


def made_passed_for_effect(x, s):
    layer = Affine(x * 0.5, s)
    _apply_both(layer, x, scale=2.0)
    return np.sum(np.sin(x) * s)


def made_inactive_called(x, s):
    layer = Affine(np.array([0.8, -0.5, 1.1]), 0.2)  # no differentiated field
    return np.sum(layer(x) * x) * s


def made_passed_used(x, s):
    layer = Affine(x * 0.5, 0.3)
    return np.sum(_apply_both(layer, x)) * s


# Found: the generated code called the user's helper (and `layer(x)`, `layer.act(x)`)
# with the dict an object made in the function is built as, where the call was not
# differentiated: TypeError "'dict' object is not callable" or AttributeError "'dict'
# object has no attribute 'w'" at every entry point; where the call was differentiated
# to first order, grad(grad(f)) and forward over reverse refused the wrapper that now
# gives such calls an instance ("wrapped by a decorator")
@pytest.mark.parametrize(
    "f", [made_passed_result_unused, made_passed_for_effect, made_inactive_called, made_passed_used]
)
def test_object_made_in_the_function_given_to_code_not_differentiated(f):
    args = [X, S]
    for wrt in (0, 1):
        expected = fd.numeric_grad(f, args, (wrt,))[0]
        for make in (grad, lambda f, wrt: value_and_grad(f, wrt=wrt)):
            g = make(f, wrt=wrt)
            for _ in range(2):
                got = g(*args)
                fd.assert_close(got[1] if isinstance(got, tuple) else got, expected, 1e-6, 1e-8)
    for _ in range(2):
        _, tangent = jvp(f)(X, S, V)
        fd.assert_close(tangent, fd.numeric_jvp(f, args, (0,), [V]), 1e-6, 1e-8)
    _second_order(f, args, 0, V)
    # d/dx of df/ds
    ds = _checked_gradient(f, args, 1)
    mixed = grad(grad(f, wrt=1), wrt=0)
    for _ in range(2):
        fd.assert_close(mixed(*args), fd.numeric_grad(ds, args, (0,), step=1e-4)[0], 1e-6, 1e-8)


# --------------------------------------------------------------------------
# Second order through the code of a first-order gradient


def new_key_in_a_comprehension_dict(x, s):
    h = np.sin(x) + s
    d = {k: h * c for k, c in zip(("a", "b"), (s, 0.3))}
    d["c"] = d["a"] * d["b"]
    return np.sum((d["c"] + h) ** 2) * 0.5


# Found: hvp, hessian and grad(grad(f)) of a dict built by a comprehension and given a
# new key raised KeyError in generated code: reverse over forward pushed the old value
# of `d_dot[k]` (the tangent dict, `ops.zeros_like(d)`, not known to be a dict the
# function builds) where the key did not exist yet
def test_second_order_of_a_comprehension_dict_given_a_new_key():
    _second_order(new_key_in_a_comprehension_dict, [X, S], 0, V)
    _second_order(new_key_in_a_comprehension_dict, [X, S], 1, 1.0)


def stacked_comprehension_of_a_list(x, q):
    h = np.sin(x)
    h = h + np.stack([w * 0.5 for w in q])[1]
    return np.sum(np.tanh(h))


# Found: hvp and hessian of a comprehension over a list parameter refused "no derivative
# rule for method .pop()": the gradient's code pops each item's adjoint from a list.
# Forward mode now pops the tangent list alongside; reverse mode appends the popped
# value's adjoint back (the mirror of append), an in-place update of that adjoint list
# for the zeros pass (before it, a first try gave H v = 0: the appends were not seen)
def test_second_order_pops_the_adjoint_list():
    q = [np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.1, -0.2])]
    v = [np.ones(3), np.array([1.0, -1.0, 2.0])]
    _second_order(stacked_comprehension_of_a_list, [X, q], 1, v)
    _second_order(stacked_comprehension_of_a_list, [X, q], 0, V)


def split_and_rejoined(x, s):
    h = x * s
    a, *rest = np.split(h, 3)
    h = np.concatenate([a * 0.5] + rest)
    return np.sum(np.sin(h) * h)


# Found: hvp(mode="reverse") of `a, *rest = np.split(...)` joined again: the adjoint of
# the concatenated list `[a * 0.5] + rest` got two list contributions (head and tail)
# added with `+`, which concatenated them (ValueError: shapes (6,) (3,)); the adjoints
# of ops.unconcatenate and ops.unstack of a list are now known lists (kinds)
def test_reverse_over_reverse_of_a_split_rejoined():
    _second_order(split_and_rejoined, [X, S], 0, V)


def _looped(x):
    h = x
    for _ in range(2):
        h = np.sin(h) + 0.1 * h
    return h


def slogdet_after_a_loop(x):
    h = _looped(x)
    sign, logdet = np.linalg.slogdet(np.outer(h, h) * 0.1 + np.eye(3) * 2.0)
    return np.sum(h * logdet)


def cholesky_after_a_loop(x):
    h = _looped(x)
    return np.sum(np.linalg.cholesky(np.outer(h, h) * 0.1 + np.eye(3) * 2.0) @ h)


def cholesky_upper_after_a_loop(x):
    h = _looped(x)
    return np.sum(np.linalg.cholesky(np.outer(h, h) * 0.1 + np.eye(3) * 2.0, upper=True) @ h)


# Found: second derivatives of a function with a loop (reverse over the forward-mode
# code: through_tape) refused "no derivative rule for slogdet / cholesky": the tangent
# helpers forward_ops.slogdet and forward_ops.cholesky had no reverse rules
@pytest.mark.parametrize(
    "f", [slogdet_after_a_loop, cholesky_after_a_loop, cholesky_upper_after_a_loop]
)
def test_second_order_through_linear_algebra_after_a_loop(f):
    _second_order(f, [X], 0, V)
    for _ in range(2):
        j = jacobian(grad(f), mode="reverse")(X)
        fd.assert_close(j @ V, fd.numeric_jvp(grad(f), [X], (0,), [V], step=1e-4), 1e-6, 1e-8)


def made_method_calling_methods(x, s):
    h = np.stack([np.sin(x[i]) * 0.5 + x[i] for i in range(3)])  # a loop: through the tape
    layer = Affine(x, 1.5)
    return np.sum(np.tanh(layer.both(h))) + np.sum(h) * s


# Found: hessian and hvp of a method calling methods of an object made from a
# differentiated value, after a loop, raised TypeError "unsupported operand type(s) for
# +: 'dict' and 'dict'": reverse over the method's tangent code added the adjoints of
# the object's tangent (a dict, passed in the tuple `(self_dot, z_dot)`) with `+`
def test_second_order_of_methods_calling_methods_of_a_made_object():
    _second_order(made_method_calling_methods, [X, S], 0, V)


def comprehension_over_an_array(x, s):
    h = x * s
    h = h + np.sum([v * v for v in h])
    return np.sum(h * h) * 0.5


# Found (6,000 programs after the branches merged): every second-order form of a list
# comprehension over an array crashed with "'numpy.ndarray' object has no attribute
# 'pop'": a split forward returned ops.shape_of of the tangent list its adjoint read
# only through ops.zeros_like, and the adjoint made an array of it. A list or dict is
# now kept whole (assemble, and ops.shape_of of a structure)
def test_second_order_of_a_comprehension_over_an_array():
    _second_order(comprehension_over_an_array, [X, S], 0, V)


# Found (gradients through np.gradient differentiated again): every second-order form of
# a lambda summing a generator crashed with a SyntaxError: the tangent function made for
# it was named after the lambda, "<lambda>_tangent"
sum_of_generator = lambda x, s: sum(np.sum(d**2) * s for d in [x, x * 2.0])


def test_second_order_of_a_lambda_summing_a_generator():
    _second_order(sum_of_generator, [X, S], 0, V)


def scaled_by_abs(x, s):
    return abs(s) * x + x * max(s, 0.2)


# Found (3,000 programs, seed 11): jvp of a float32 function along a Python float `s`
# gave a float64 tangent: the tangent of abs(s) was np.sign(s) * s_dot, a float64
# numpy scalar (strong), where the function's abs(s) is a Python float (weak)
@pytest.mark.parametrize("s", [0.7, -0.7, 0.0])
def test_jvp_of_abs_of_a_python_float_keeps_float32(s):
    x = X.astype(np.float32)
    for _ in range(2):
        out, out_dot = jvp(scaled_by_abs, wrt=(0, 1))(x, s, (x, 0.5))
        assert out.dtype == out_dot.dtype == np.float32
        expected = fd.numeric_jvp(scaled_by_abs, [x, s], (0, 1), [x, 0.5])
        if s != 0.0:  # abs has no derivative at 0 (the tangent there is sign(0) = 0)
            fd.assert_close(out_dot, expected, 3e-3, 1e-3, path="tangent")


def scaled_by_math_sin(x, s):
    return x * math.sin(s) + np.sin(x) * math.cos(s * 0.5)


# Found (3,000 programs, seed 11): jvp of a float32 function along a Python float `s`
# gave a float64 tangent: the slope of math.sin(s) was np.cos(s), a float64 numpy scalar
# (strong), where math.sin(s) itself is a Python float (weak)
def test_jvp_of_math_sin_of_a_python_float_keeps_float32():
    x = X.astype(np.float32)
    for _ in range(2):
        out, out_dot = jvp(scaled_by_math_sin, wrt=(0, 1))(x, S, (x, 0.5))
        assert out.dtype == out_dot.dtype == np.float32
        expected = fd.numeric_jvp(scaled_by_math_sin, [x, S], (0, 1), [x, 0.5])
        fd.assert_close(out_dot, expected, 3e-3, 1e-3, path="tangent")


def test_second_order_through_math_sin_and_cos():
    _second_order(lambda s, x: np.sum(scaled_by_math_sin(x, s)), [S, X], 0, 0.3)
    _second_order(lambda x, s: np.sum(scaled_by_math_sin(x, s) ** 2), [X, S], 0, V)
