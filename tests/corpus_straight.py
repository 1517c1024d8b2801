"""Corpus of straight-line numeric functions (no if/for/while), in Tangent's style.

Each function is small and exercises one construct. ``CASES`` lists them as
data: the function, a factory that builds inputs in the function's smooth
domain from a seeded ``numpy.random.Generator``, which arguments to
differentiate, and tolerances. ``tests/test_corpus.py`` checks every case
against central finite differences (``tests/fd.py``), or against a closed-form
gradient where finite differences cannot see the intended derivative
(``stop_gradient``).

Inputs avoid kinks by construction: positive values for log/sqrt, values away
from zero for abs/sign/comparisons, distinct values for max/min, values away
from clip bounds and from integers for floor.

``VJP_CASES`` lists non-scalar functions for the inner-product check of
``vjp``. Importing this module only defines functions and builds these lists.
"""

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy
import numpy as np
from numpy import tanh

import transpile
from transpile import stop_gradient
from transpile import stop_gradient as sg


@dataclasses.dataclass(frozen=True)
class Case:
    """One corpus entry.

    ``make_args(rng)`` returns the positional arguments. ``wrt`` is passed to
    ``grad`` unchanged. ``expected(*args)``, when given, is a closed-form
    gradient (same structure as ``grad``'s result) checked in addition to, or
    with ``fd=False`` instead of, finite differences. ``name`` overrides the
    test id when one function is used by several cases.
    """

    func: Callable
    make_args: Callable[[np.random.Generator], tuple]
    wrt: Any = 0
    rtol: float = 1e-6
    atol: float = 1e-8
    expected: Callable | None = None
    fd: bool = True
    name: str | None = None
    allow_unused: bool = False  # a wrt argument is cut on purpose: grad warns without it

    @property
    def id(self) -> str:
        return self.name or self.func.__name__


F32_TOL = dict(rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------
# Input domains (test data builders; not part of the corpus)


def normal(rng, *shape):
    return rng.standard_normal(shape)


def positive(rng, *shape, low=0.5, high=2.0):
    return rng.uniform(low, high, shape)


def away(rng, *shape, margin=0.2, high=2.0):
    """Values with ``margin <= |x| <= high``: no kink at zero."""
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(margin, high, shape)


def distinct(rng, *shape, gap=0.1):
    """Values pairwise at least ``gap`` apart: a unique max/min along any axis."""
    size = int(np.prod(shape))
    values = (np.arange(size) - size / 2.0) * gap * 2.0 + rng.uniform(0, gap / 2.0, size)
    return rng.permutation(values).reshape(shape)


def away_from_integers(rng, *shape, low=-3.0, high=3.0):
    """Values at least 0.1 from any integer."""
    return np.floor(rng.uniform(low, high, shape)) + rng.uniform(0.1, 0.9, shape)


def f32(make_args):
    """Wrap an argument factory so that every float64 array becomes float32."""

    def build(rng):
        return tuple(
            a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in make_args(rng)
        )

    return build


# --------------------------------------------------------------------------
# Arithmetic: + - * / ** @, unary -, broadcasting


def add_sub(x, y):
    return np.sum(x + y - x * 0.5 - y * y)


def mul_div(x, y):
    return np.sum(x * y / (y + 3.0))


def div_both(x, y):
    return np.sum(x / y)


def pow_int(x):
    return np.sum(x**3)


def pow_float(x):
    return np.sum(x**1.5)


def pow_negative(x):
    return np.sum(x**-2)


def pow_both(x, y):
    return np.sum(x**y)


def pow_scalar_base(x):
    return np.sum(2.0**x)


def same_operand_twice(x):
    s = x * x
    return np.sum(s * x)


def unary_ops(x):
    return np.sum(-x * np.exp(-x) + (+x))


def matmul_both(a, b):
    return np.sum(np.tanh(a @ b))


def matvec(a, v):
    return np.sum((a @ v) ** 2)


def vecmat(v, a):
    return np.sum(np.sin(v @ a))


def vecvec(u, v):
    return u @ v


def matmul_chain(a, b, c):
    return np.sum((a @ b @ c) ** 2)


def np_dot_vectors(u, v):
    return np.dot(u, v) * np.dot(u, u)


def np_dot_matrices(a, b):
    return np.sum(np.dot(a, b) ** 2)


def np_matmul(a, b):
    return np.sum(np.cos(np.matmul(a, b)))


def transpose_attr(a, b):
    return np.sum((a.T @ b) ** 2)


def broadcast_row(x, b):
    return np.sum(np.tanh(x + b) * b)


def broadcast_column(x, c):
    return np.sum((x * c) ** 2)


def broadcast_outer(a, b):
    return np.sum(np.sin(a - b))


def broadcast_python_float(x, s):
    return np.sum(x * s + s / (x * x + 1.0))


def broadcast_divide_row(x, b):
    return np.sum(x / b)


def broadcast_3d(x, w):
    return np.sum(np.exp(x * w) * 0.1)


def broadcast_power_row(x, p):
    return np.sum(x**p)


def scalars_only(x, y):
    return x * y + x / y - y**2 + 3.0 * x


def scalar_times_array(s, x):
    return np.sum(np.exp(s * x)) + s * s


ARITHMETIC = [
    Case(add_sub, lambda r: (normal(r, 3, 4), normal(r, 3, 4)), wrt=(0, 1)),
    Case(mul_div, lambda r: (normal(r, 3, 4), positive(r, 3, 4)), wrt=(0, 1)),
    Case(div_both, lambda r: (normal(r, 5), positive(r, 5)), wrt=(0, 1)),
    Case(pow_int, lambda r: (normal(r, 6),)),
    Case(pow_float, lambda r: (positive(r, 6),)),
    Case(pow_negative, lambda r: (positive(r, 6),)),
    Case(pow_both, lambda r: (positive(r, 3, 4), normal(r, 3, 4)), wrt=(0, 1)),
    Case(pow_scalar_base, lambda r: (normal(r, 5),)),
    Case(same_operand_twice, lambda r: (normal(r, 4),)),
    Case(unary_ops, lambda r: (normal(r, 5),)),
    Case(matmul_both, lambda r: (normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1)),
    Case(matvec, lambda r: (normal(r, 3, 4), normal(r, 4)), wrt=(0, 1)),
    Case(vecmat, lambda r: (normal(r, 3), normal(r, 3, 4)), wrt=(0, 1)),
    Case(vecvec, lambda r: (normal(r, 4), normal(r, 4)), wrt=(0, 1)),
    Case(
        matmul_chain, lambda r: (normal(r, 2, 3), normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1, 2)
    ),
    Case(np_dot_vectors, lambda r: (normal(r, 4), normal(r, 4)), wrt=(0, 1)),
    Case(np_dot_matrices, lambda r: (normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1)),
    Case(np_matmul, lambda r: (normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1)),
    Case(transpose_attr, lambda r: (normal(r, 4, 3), normal(r, 4, 2)), wrt=(0, 1)),
    Case(broadcast_row, lambda r: (normal(r, 3, 4), normal(r, 4)), wrt=(0, 1)),
    Case(broadcast_column, lambda r: (normal(r, 3, 4), normal(r, 3, 1)), wrt=(0, 1)),
    Case(broadcast_outer, lambda r: (normal(r, 3, 1), normal(r, 1, 4)), wrt=(0, 1)),
    Case(broadcast_python_float, lambda r: (normal(r, 3, 4), 0.7), wrt=(0, 1)),
    Case(broadcast_divide_row, lambda r: (normal(r, 3, 4), positive(r, 4)), wrt=(0, 1)),
    Case(broadcast_3d, lambda r: (normal(r, 2, 3, 4), normal(r, 3, 1)), wrt=(0, 1)),
    Case(broadcast_power_row, lambda r: (positive(r, 3, 4), normal(r, 4)), wrt=(0, 1)),
    Case(scalars_only, lambda r: (1.3, 0.8), wrt=(0, 1)),
    Case(scalar_times_array, lambda r: (0.4, normal(r, 5))),
]


# --------------------------------------------------------------------------
# Elementwise functions


def f_exp(x):
    return np.sum(np.exp(x))


def f_log(x):
    return np.sum(np.log(x) * x)


def f_sqrt(x):
    return np.sum(np.sqrt(x))


def f_sin(x):
    return np.sum(np.sin(x) * x)


def f_cos(x):
    return np.sum(np.cos(2.0 * x))


def f_tan(x):
    return np.sum(np.tan(x))


def f_tanh(x):
    return np.sum(np.tanh(x) ** 2)


def f_sinh(x):
    return np.sum(np.sinh(x))


def f_cosh(x):
    return np.sum(np.cosh(x))


def f_arctan(x):
    return np.sum(np.arctan(3.0 * x))


def f_abs(x):
    return np.sum(np.abs(x) * x)


def f_square(x):
    return np.sum(np.square(x - 1.0))


def f_reciprocal(x):
    return np.sum(np.reciprocal(x))


def f_log1p(x):
    return np.sum(np.log1p(x))


def f_expm1(x):
    return np.sum(np.expm1(x) * x)


def f_maximum(x, y):
    return np.sum(np.maximum(x, y) ** 2)


def f_minimum(x, y):
    return np.sum(np.minimum(x, y) * x)


def relu(x):
    return np.sum(np.maximum(x, 0.0) * x)


def clamp_above(x):
    return np.sum(np.minimum(1.0, x) ** 3)


def softplus_sum(x):
    return np.sum(np.log(np.exp(x) + 1.0))


def numpy_by_module_name(x):
    return numpy.sum(numpy.exp(x) * numpy.sin(x))


def numpy_from_import(x):
    return np.sum(tanh(x) * x)


ELEMENTWISE = [
    Case(f_exp, lambda r: (normal(r, 5),)),
    Case(f_log, lambda r: (positive(r, 5),)),
    Case(f_sqrt, lambda r: (positive(r, 5),)),
    Case(f_sin, lambda r: (normal(r, 5),)),
    Case(f_cos, lambda r: (normal(r, 5),)),
    Case(f_tan, lambda r: (r.uniform(-1.0, 1.0, 5),)),
    Case(f_tanh, lambda r: (normal(r, 5),)),
    Case(f_sinh, lambda r: (normal(r, 5),)),
    Case(f_cosh, lambda r: (normal(r, 5),)),
    Case(f_arctan, lambda r: (normal(r, 5),)),
    Case(f_abs, lambda r: (away(r, 6),)),
    Case(f_square, lambda r: (normal(r, 5),)),
    Case(f_reciprocal, lambda r: (positive(r, 5),)),
    Case(f_log1p, lambda r: (r.uniform(-0.5, 2.0, 5),)),
    Case(f_expm1, lambda r: (normal(r, 5),)),
    Case(f_maximum, lambda r: (lambda x: (x, x + away(r, 3, 4)))(normal(r, 3, 4)), wrt=(0, 1)),
    Case(f_minimum, lambda r: (lambda x: (x, x + away(r, 3, 4)))(normal(r, 3, 4)), wrt=(0, 1)),
    Case(relu, lambda r: (away(r, 3, 4),)),
    Case(clamp_above, lambda r: (1.0 + away(r, 6, margin=0.1, high=0.9),)),
    Case(softplus_sum, lambda r: (normal(r, 5),)),
    Case(numpy_by_module_name, lambda r: (normal(r, 5),)),
    Case(numpy_from_import, lambda r: (normal(r, 5),)),
]


# --------------------------------------------------------------------------
# Reductions


def sum_axis0(x):
    return np.sum(np.sum(x, axis=0) ** 2)


def sum_negative_axis(x):
    return np.sum(np.sum(x, axis=-1) ** 2)


def sum_tuple_axis(x):
    return np.sum(np.sum(x, axis=(0, 2)) ** 2)


def sum_keepdims(x):
    return np.sum(x * np.sum(x, axis=1, keepdims=True))


def sum_method_axis(x):
    return np.sum(x.sum(axis=1) ** 2)


def sum_method_all(x):
    return (x * 2.0).sum() ** 2


def mean_all(x):
    return np.mean(x**2)


def mean_axis(x):
    return np.sum(np.mean(x, axis=0) ** 3)


def mean_keepdims_center(x):
    centered = x - np.mean(x, axis=-1, keepdims=True)
    return np.sum(centered**2 * x)


def mean_method(x):
    return (x * x).mean()


def mean_method_tuple_axis(x):
    return np.sum(x.mean(axis=(0, 1)) ** 2)


def max_all(x):
    return np.max(x) * np.sum(x)


def max_axis(x):
    return np.sum(np.max(x, axis=1) ** 2)


def logsumexp_keepdims(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)))


def min_axis(x):
    return np.sum(np.min(x, axis=0) * np.arange(1.0, 5.0))


def min_negative_axis_keepdims(x):
    return np.sum(x * np.min(x, axis=-1, keepdims=True))


def max_method(x):
    return x.max() + np.sum(x.max(axis=0) ** 2)


def prod_all(x):
    return np.prod(x)


def prod_axis(x):
    return np.sum(np.prod(x, axis=1))


def prod_keepdims(x):
    return np.sum(np.prod(x, axis=0, keepdims=True) * x)


REDUCTIONS = [
    Case(sum_axis0, lambda r: (normal(r, 3, 4),)),
    Case(sum_negative_axis, lambda r: (normal(r, 2, 3, 4),)),
    Case(sum_tuple_axis, lambda r: (normal(r, 2, 3, 4),)),
    Case(sum_keepdims, lambda r: (normal(r, 3, 4),)),
    Case(sum_method_axis, lambda r: (normal(r, 3, 4),)),
    Case(sum_method_all, lambda r: (normal(r, 3, 4),)),
    Case(mean_all, lambda r: (normal(r, 3, 4),)),
    Case(mean_axis, lambda r: (normal(r, 3, 4),)),
    Case(mean_keepdims_center, lambda r: (normal(r, 3, 4),)),
    Case(mean_method, lambda r: (normal(r, 3, 4),)),
    Case(mean_method_tuple_axis, lambda r: (normal(r, 2, 3, 4),)),
    Case(max_all, lambda r: (distinct(r, 3, 4),)),
    Case(max_axis, lambda r: (distinct(r, 3, 4),)),
    Case(logsumexp_keepdims, lambda r: (normal(r, 3, 4),)),
    Case(min_axis, lambda r: (distinct(r, 3, 4),)),
    Case(min_negative_axis_keepdims, lambda r: (distinct(r, 2, 3, 4),)),
    Case(max_method, lambda r: (distinct(r, 3, 4),)),
    Case(prod_all, lambda r: (away(r, 5, margin=0.5, high=1.5),)),
    Case(prod_axis, lambda r: (away(r, 3, 4, margin=0.5, high=1.5),)),
    Case(prod_keepdims, lambda r: (away(r, 3, 4, margin=0.5, high=1.5),)),
]


# --------------------------------------------------------------------------
# Shapes: reshape, transpose; selection: where, clip


def reshape_function(x, w):
    return np.sum(np.tanh(np.reshape(x, (2, 6)) @ w))


def reshape_method_minus_one(x):
    y = x.reshape(-1)
    return np.sum(y * y * np.arange(12.0))


def reshape_method_varargs(x, w):
    return np.sum((x.reshape(4, 3) @ w) ** 2)


def transpose_with_axes(x, w):
    y = np.transpose(x, (1, 0, 2))
    return np.sum((y.reshape(3, 8) @ w) ** 2)


def transpose_default(x, y):
    return np.sum(np.sin(np.transpose(x) @ y))


def transpose_method(x):
    y = x.transpose(2, 0, 1)
    return np.sum(y[0] * y[1] + y[2])


def where_computed_condition(x):
    return np.sum(np.where(x > 0.0, x**2, np.sin(x)))


def where_both_active(x, y):
    return np.sum(np.where(x > y, x * y, x - y))


def where_scalar_other(x):
    return np.sum(np.where(np.abs(x) > 1.0, 0.0, x) * x)


def clip_function(x):
    return np.sum(np.clip(x, -1.0, 1.0) ** 2 + x)


def clip_method(x):
    return np.sum(x.clip(0.0, 1.5) * x)


SHAPES = [
    Case(reshape_function, lambda r: (normal(r, 3, 4), normal(r, 6)), wrt=(0, 1)),
    Case(reshape_method_minus_one, lambda r: (normal(r, 3, 4),)),
    Case(reshape_method_varargs, lambda r: (normal(r, 2, 6), normal(r, 3, 2)), wrt=(0, 1)),
    Case(transpose_with_axes, lambda r: (normal(r, 2, 3, 4), normal(r, 8)), wrt=(0, 1)),
    Case(transpose_default, lambda r: (normal(r, 4, 3), normal(r, 4, 2)), wrt=(0, 1)),
    Case(transpose_method, lambda r: (normal(r, 2, 3, 3),)),
    Case(where_computed_condition, lambda r: (away(r, 3, 4),)),
    Case(
        where_both_active, lambda r: (lambda x: (x, x + away(r, 3, 4)))(normal(r, 3, 4)), wrt=(0, 1)
    ),
    Case(where_scalar_other, lambda r: (np.array([0.3, -0.5, 1.5, -1.8, 0.8, 2.2]),)),
    Case(clip_function, lambda r: (np.array([-1.5, -0.7, 0.2, 0.9, 1.3, 2.0]),)),
    Case(clip_method, lambda r: (np.array([-0.5, 0.4, 1.2, 1.8, 0.1, 2.5]),)),
]


# --------------------------------------------------------------------------
# Subscript reads


def index_int(x):
    return x[1] * x[2] + x[0] ** 2


def index_negative_row(x):
    return np.sum(x[-1] * x[-2])


def index_slices(x):
    return np.sum(x[1:3] ** 2) + np.sum(x[:2] * x[4])


def index_steps(x):
    return np.sum(x[::2] * x[1::2])


def index_reverse(x):
    return np.sum(x[::-1] * np.arange(6.0) * x)


def index_tuple_of_slices(x):
    return np.sum(x[1:, ::2] ** 2) + x[0, -1]


def index_two_ints(x):
    return x[1, 2] * x[0, 0] + x[-1, -1]


def index_int_array_repeats(x):
    idx = np.array([0, 2, 2, 1, 2])
    return np.sum(x[idx] ** 2)


def index_int_arrays_2d(x):
    rows = np.array([0, 1, 1, 2])
    cols = np.array([2, 2, 3, 2])
    return np.sum(np.sin(x[rows, cols]))


def index_list_literal(x):
    return np.sum(x[[0, 0, 3]] ** 2 * x[1])


def index_none_outer(x):
    return np.sum(np.tanh(x[:, None] * x[None, :]))


def index_newaxis(x):
    y = x[np.newaxis, :, np.newaxis]
    return np.sum(y * y * x[:, None])


def index_bool_mask(x):
    return np.sum(x[x > 0.0] ** 2)


def index_mask_from_other(x, y):
    mask = y > 0.0
    return np.sum(x[mask] * 3.0 + x[mask] ** 2)


def index_ellipsis(x):
    return np.sum(x[..., 0] * x[..., -1])


def index_column(x):
    return np.sum(np.exp(x[:, 1]) * x[:, 2])


INDEXING = [
    Case(index_int, lambda r: (normal(r, 5),)),
    Case(index_negative_row, lambda r: (normal(r, 3, 4),)),
    Case(index_slices, lambda r: (normal(r, 5, 2),)),
    Case(index_steps, lambda r: (normal(r, 6),)),
    Case(index_reverse, lambda r: (normal(r, 6),)),
    Case(index_tuple_of_slices, lambda r: (normal(r, 3, 4),)),
    Case(index_two_ints, lambda r: (normal(r, 3, 4),)),
    Case(index_int_array_repeats, lambda r: (normal(r, 3, 2),)),
    Case(index_int_arrays_2d, lambda r: (normal(r, 3, 4),)),
    Case(index_list_literal, lambda r: (normal(r, 4, 3),)),
    Case(index_none_outer, lambda r: (normal(r, 4),)),
    Case(index_newaxis, lambda r: (normal(r, 4),)),
    Case(index_bool_mask, lambda r: (away(r, 3, 4),)),
    Case(index_mask_from_other, lambda r: (normal(r, 3, 4), away(r, 3, 4))),
    Case(index_ellipsis, lambda r: (normal(r, 2, 3, 4),)),
    Case(index_column, lambda r: (normal(r, 3, 4),)),
]


# --------------------------------------------------------------------------
# Assignment forms: unpacking, augmented assignment, re-assignment, constants


def tuple_unpack(x, y):
    a, b = x * 2.0, y + 1.0
    return np.sum(a * b)


def tuple_swap(x, y):
    a, b = x, y
    a, b = b, a * b
    return np.sum(a * b**2)


def unpack_array_rows(x):
    a, b, c = x
    return np.sum(a * b - c * a)


def augmented_arrays(x):
    y = x * 1.0
    y += x**2
    y *= x
    y -= 1.0
    y /= 2.0
    y **= 2
    return np.sum(y)


def augmented_float_param(s, x):
    s += 1.0
    s *= s
    s -= 0.5 * s
    return s * np.sum(x)


def reassign_many(x):
    y = x
    y = y * 2.0
    y = np.sin(y)
    y = y + x
    y = y * y
    y = y / (1.0 + x * x)
    return np.sum(y)


def reassign_parameter(x):
    x = x * 2.0
    x = np.exp(x)
    x = x / np.sum(x)
    return np.sum(x**2)


def nested_expression(x, y):
    return np.sum(np.exp(np.sin(x) * np.cos(y)) / (1.0 + (x - y) ** 2))


def numeric_constants(x):
    return np.sum(3 * x + 1e-3 * x**2 - 2.5 / (x + 4) + np.pi * x - 7)


ASSIGNMENT = [
    Case(tuple_unpack, lambda r: (normal(r, 4), normal(r, 4)), wrt=(0, 1)),
    Case(tuple_swap, lambda r: (normal(r, 4), normal(r, 4)), wrt=(0, 1)),
    Case(unpack_array_rows, lambda r: (normal(r, 3, 4),)),
    Case(augmented_arrays, lambda r: (normal(r, 5),)),
    Case(augmented_float_param, lambda r: (0.6, normal(r, 4)), wrt=(0, 1)),
    Case(reassign_many, lambda r: (normal(r, 5),)),
    Case(reassign_parameter, lambda r: (normal(r, 5),)),
    Case(nested_expression, lambda r: (normal(r, 3, 4), normal(r, 3, 4)), wrt=(0, 1)),
    Case(numeric_constants, lambda r: (positive(r, 5),)),
]


# --------------------------------------------------------------------------
# Keyword arguments, defaults, user functions, several wrt


def keyword_defaults(x, scale=2.0, shift=0.5):
    return np.sum(np.tanh(scale * x + shift))


def wrt_by_name(x, y, power=3):
    return np.sum(x * y**power)


def helper_square(x):
    return x * x


def helper_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def helper_affine(x, w, b=0.0):
    return x @ w + b


def helper_layer(x, w, b):
    return np.tanh(helper_affine(x, w, b=b))


def helper_mse(p, y):
    return np.mean((p - y) ** 2)


def call_helpers(x):
    return np.sum(helper_square(x) + helper_sigmoid(x))


def call_helper_nested_args(x):
    return np.sum(helper_square(helper_square(x)))


def call_helper_chain(x, w, b):
    return np.sum(helper_layer(x, w, b) ** 2)


def call_helper_keywords(x, w):
    return np.sum(helper_affine(x, w, b=1.5) ** 2) + np.sum(helper_affine(w=w, x=x))


def logistic_regression(w, x, y):
    p = helper_sigmoid(x @ w)
    return helper_mse(p, y)


def three_args(a, b, c):
    return np.sum(a * np.sin(b) + c**2 * a)


CALLS = [
    Case(keyword_defaults, lambda r: (normal(r, 5),)),
    Case(wrt_by_name, lambda r: (normal(r, 4), normal(r, 4)), wrt="y"),
    Case(call_helpers, lambda r: (normal(r, 5),)),
    Case(call_helper_nested_args, lambda r: (normal(r, 5),)),
    Case(call_helper_chain, lambda r: (normal(r, 3, 4), normal(r, 4, 2), normal(r, 2)), wrt=(1, 2)),
    Case(call_helper_keywords, lambda r: (normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1)),
    Case(
        logistic_regression,
        lambda r: (normal(r, 4), normal(r, 6, 4), r.uniform(0, 1, 6)),
        expected=lambda w, x, y: (
            x.T @ ((lambda p: 2.0 / len(y) * (p - y) * p * (1 - p))(1.0 / (1.0 + np.exp(-(x @ w)))))
        ),
    ),
    Case(three_args, lambda r: (normal(r, 4), normal(r, 4), normal(r, 4)), wrt=(0, 2)),
    Case(
        three_args,
        lambda r: (normal(r, 4), normal(r, 4), normal(r, 4)),
        wrt=("c", 0),
        name="three_args_mixed_wrt",
    ),
]


# --------------------------------------------------------------------------
# stop_gradient: finite differences would differentiate through it, so these
# cases are checked against closed forms only.


def stop_gradient_factor(x):
    return np.sum(x * stop_gradient(x))


def stop_gradient_module_attr(x):
    c = transpile.stop_gradient(np.sum(x**2))
    return np.sum(x) * c


def stop_gradient_alias(x, y):
    return np.sum(sg(x * y) * y + x)


def stop_gradient_chain(x):
    t = np.exp(x)
    u = stop_gradient(t * 2.0)
    v = np.sin(u) + u**2
    return np.sum(v * x)


def stop_gradient_only_path(x, y):
    z = stop_gradient(np.tanh(x) * 3.0)
    return np.sum(z * y)


STOP_GRADIENT = [
    Case(stop_gradient_factor, lambda r: (normal(r, 5),), expected=lambda x: x, fd=False),
    Case(
        stop_gradient_module_attr,
        lambda r: (normal(r, 5),),
        expected=lambda x: np.full_like(x, np.sum(x**2)),
        fd=False,
    ),
    Case(
        stop_gradient_alias,
        lambda r: (normal(r, 4), normal(r, 4)),
        wrt=(0, 1),
        expected=lambda x, y: (np.ones_like(x), x * y),
        fd=False,
    ),
    Case(
        stop_gradient_chain,
        lambda r: (normal(r, 4),),
        expected=lambda x: np.sin(2 * np.exp(x)) + (2 * np.exp(x)) ** 2,
        fd=False,
    ),
    Case(
        stop_gradient_only_path,
        lambda r: (normal(r, 4), normal(r, 4)),
        wrt=(0, 1),
        expected=lambda x, y: (np.zeros_like(x), np.tanh(x) * 3.0),
        fd=False,
        allow_unused=True,
    ),
]


# --------------------------------------------------------------------------
# Non-differentiable operations used as constants


def comparison_mask(x):
    return np.sum(x * (x > 0.0))


def argmax_index(x):
    i = np.argmax(x)
    return x[i] * np.sum(x)


def shape_attribute(x):
    n = x.shape[0]
    return np.sum(x**2) / n


def len_builtin(x):
    return np.sum(x) / len(x) * np.sum(x)


def int_cast(x):
    k = int(np.sum(x > 0.0))
    return np.sum(x**2) * k


def floor_constant(x):
    return np.sum(x * np.floor(x))


def sign_constant(x):
    return np.sum(np.sign(x) * x**2)


def shape_unpack_reshape(x):
    n, m = x.shape
    return np.sum(x.reshape(m, n) * np.arange(n * m).reshape(m, n) * x.T)


def size_and_ndim(x):
    return np.sum(x**3) / (x.size + x.ndim)


NONDIFF = [
    Case(comparison_mask, lambda r: (away(r, 3, 4),)),
    Case(argmax_index, lambda r: (distinct(r, 6),)),
    Case(shape_attribute, lambda r: (normal(r, 3, 4),)),
    Case(len_builtin, lambda r: (normal(r, 5),)),
    Case(int_cast, lambda r: (away(r, 6),)),
    Case(floor_constant, lambda r: (away_from_integers(r, 6),)),
    Case(sign_constant, lambda r: (away(r, 6),)),
    Case(shape_unpack_reshape, lambda r: (normal(r, 3, 4),)),
    Case(size_and_ndim, lambda r: (normal(r, 3, 4),)),
]


# --------------------------------------------------------------------------
# float32 inputs: gradients must come back float32 (checked against float64
# finite differences with float32 tolerances)


FLOAT32 = [
    Case(
        matmul_both,
        f32(lambda r: (normal(r, 3, 4), normal(r, 4, 2))),
        wrt=(0, 1),
        name="matmul_both_f32",
        **F32_TOL,
    ),
    Case(
        broadcast_row,
        f32(lambda r: (normal(r, 3, 4), normal(r, 4))),
        wrt=(0, 1),
        name="broadcast_row_f32",
        **F32_TOL,
    ),
    Case(
        broadcast_python_float,
        f32(lambda r: (normal(r, 3, 4), 0.7)),
        wrt=0,
        name="broadcast_python_float_f32",
        **F32_TOL,
    ),
    Case(softplus_sum, f32(lambda r: (normal(r, 5),)), name="softplus_sum_f32", **F32_TOL),
    Case(
        mean_keepdims_center,
        f32(lambda r: (normal(r, 3, 4),)),
        name="mean_keepdims_center_f32",
        **F32_TOL,
    ),
    Case(max_axis, f32(lambda r: (distinct(r, 3, 4),)), name="max_axis_f32", **F32_TOL),
    Case(
        index_int_array_repeats,
        f32(lambda r: (normal(r, 3, 2),)),
        name="index_int_array_repeats_f32",
        **F32_TOL,
    ),
    Case(
        logsumexp_keepdims,
        f32(lambda r: (normal(r, 3, 4),)),
        name="logsumexp_keepdims_f32",
        **F32_TOL,
    ),
    Case(f_sqrt, f32(lambda r: (positive(r, 5),)), name="f_sqrt_f32", **F32_TOL),
    Case(
        call_helper_chain,
        f32(lambda r: (normal(r, 3, 4), normal(r, 4, 2), normal(r, 2))),
        wrt=(1, 2),
        name="call_helper_chain_f32",
        **F32_TOL,
    ),
]


# --------------------------------------------------------------------------
# The logistic sigmoid written out, under a logarithm: its adjoint is taken
# through the composition (transpile/analysis/composites.py). Each case differs in what
# the pattern must or must not match.


def bce_written_out(w, b, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def bce_closed_form(w, b, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    r = (p - y) / len(y)
    return x.T @ r, np.sum(r)


def log_sigmoid_also_used_plainly(z):
    p = 1.0 / (np.exp(-z) + 1)
    return np.sum(np.log(p) * z) + np.sum(p**2)


def log_one_minus_sigmoid_only(z):
    p = 1 / (1.0 + np.exp(-z))
    return np.sum(np.log(1.0 - p) * np.cos(z))


def log_sigmoid_scalar(z, a):
    p = 1.0 / (1.0 + math.exp(-(z * a)))
    return math.log(p) + math.log(1.0 - p) * a


def log_sigmoid_negated_product(z, a):
    p = 1.0 / (1.0 + np.exp(-z * a))  # exp((-z) * a): not matched, ordinary rules
    return np.sum(np.log(p) + np.log(1.0 - p) * a)


def log_sigmoid_rebound_input(z):
    p = 1.0 / (1.0 + np.exp(-z))
    z = z * 3.0  # a later z: the pattern must use the z that p was made from
    return np.sum(np.log(p) * z)


def log_sigmoid_in_loop(z):
    total = 0.0
    for k in range(2):
        p = 1.0 / (1.0 + np.exp(-z * (k + 1.0)))
        total = total + np.sum(np.log(p) + np.log(1.0 - p) * k)
    return total


def log_of_other_ratio(z):
    p = 1.0 / (2.0 + np.exp(-z))  # not a sigmoid: the ordinary rules apply
    return np.sum(np.log(p) + np.log(1.0 - p))


COMPOSITES = [
    Case(
        bce_written_out,
        lambda r: (normal(r, 3), 0.2, normal(r, 7, 3), (r.random(7) < 0.5).astype(float)),
        wrt=(0, 1),
        expected=bce_closed_form,
    ),
    Case(log_sigmoid_also_used_plainly, lambda r: (normal(r, 2, 3),)),
    Case(log_one_minus_sigmoid_only, lambda r: (normal(r, 5),)),
    Case(log_sigmoid_scalar, lambda r: (float(r.normal()), 0.7), wrt=(0, 1)),
    Case(log_sigmoid_negated_product, lambda r: (normal(r, 4), 0.7), wrt=(0, 1)),
    Case(log_sigmoid_rebound_input, lambda r: (normal(r, 4),)),
    Case(log_sigmoid_in_loop, lambda r: (normal(r, 4),)),
    Case(log_of_other_ratio, lambda r: (normal(r, 4),)),
    Case(
        bce_written_out,
        f32(lambda r: (normal(r, 3), 0.2, normal(r, 7, 3), (r.random(7) < 0.5).astype(float))),
        wrt=(0, 1),
        name="bce_written_out_f32",
        **F32_TOL,
    ),
]


CASES = (
    ARITHMETIC
    + ELEMENTWISE
    + REDUCTIONS
    + SHAPES
    + INDEXING
    + ASSIGNMENT
    + CALLS
    + STOP_GRADIENT
    + NONDIFF
    + FLOAT32
    + COMPOSITES
)


# --------------------------------------------------------------------------
# Non-scalar functions for the inner-product check of vjp


def vjp_tanh_affine(x, w):
    return np.tanh(x @ w)


def vjp_softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def vjp_broadcast(x, b):
    return x * b + b


def vjp_gather(x):
    return x[[0, 2, 2]] * 2.0


def vjp_row_norms(x):
    return np.sqrt(np.sum(x**2, axis=1))


def vjp_transpose_reshape(x):
    return np.transpose(x, (2, 0, 1)).reshape(4, 6) * np.sin(x).reshape(4, 6)


VJP_CASES = [
    Case(vjp_tanh_affine, lambda r: (normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1)),
    Case(vjp_softmax, lambda r: (normal(r, 3, 4),)),
    Case(vjp_broadcast, lambda r: (normal(r, 3, 4), normal(r, 4)), wrt=(0, 1)),
    Case(vjp_gather, lambda r: (normal(r, 4, 3),)),
    Case(vjp_row_norms, lambda r: (normal(r, 3, 4),)),
    Case(vjp_transpose_reshape, lambda r: (normal(r, 2, 3, 4),)),
]
