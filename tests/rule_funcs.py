"""Small wrappers, one derivative rule each, for ``tests/test_rules.py``.

The transpiler reads source, so every function differentiated by the rule
table lives here. Each wrapper applies one registered operation and reduces the
result to a scalar with ``np.sum(result * c)``: ``c`` is the last parameter, a
fixed random weight shaped like the operation's output, so every entry of the
Jacobian contributes to the gradient. Options such as ``axis``, ``keepdims``
and ``ddof`` are either spelled as literals or passed as plain (never
differentiated) arguments, so one wrapper serves several variants.

The ``v_*`` functions at the end return non-scalar values, for the vjp
inner-product identity. Nothing here runs at import time.
"""

import math

import numpy
import numpy as np

# --------------------------------------------------------------------------
# Operators: + - * / ** @, unary - and +


def op_add(x, y, c):
    return np.sum((x + y) * c)


def op_sub(x, y, c):
    return np.sum((x - y) * c)


def op_mul(x, y, c):
    return np.sum((x * y) * c)


def op_div(x, y, c):
    return np.sum((x / y) * c)


def op_pow(x, y, c):
    return np.sum((x**y) * c)


def op_pow_int(x, c):
    return np.sum((x**3) * c)


def op_pow_half(x, c):
    return np.sum((x**0.5) * c)


def op_rpow(x, c):
    return np.sum((2.0**x) * c)


def op_matmul(x, y, c):
    return np.sum((x @ y) * c)


def op_neg(x, c):
    return np.sum((-x) * c)


def op_pos(x, c):
    return np.sum((+x) * c)


# --------------------------------------------------------------------------
# Ufunc spellings of the operators, and builtins.pow


def fn_add(x, y, c):
    return np.sum(np.add(x, y) * c)


def fn_subtract(x, y, c):
    return np.sum(np.subtract(x, y) * c)


def fn_multiply(x, y, c):
    return np.sum(np.multiply(x, y) * c)


def fn_divide(x, y, c):
    return np.sum(np.divide(x, y) * c)


def fn_true_divide(x, y, c):
    return np.sum(np.true_divide(x, y) * c)


def fn_power(x, y, c):
    return np.sum(np.power(x, y) * c)


def fn_builtin_pow(x, y, c):
    return np.sum(pow(x, y) * c)


def fn_power_int(x, c):
    return np.sum(np.power(x, 3) * c)


def fn_builtin_pow_half(x, c):
    return np.sum(pow(x, 0.5) * c)


# --------------------------------------------------------------------------
# Elementwise numpy functions of one argument


def u_exp(x, c):
    return np.sum(np.exp(x) * c)


def u_log(x, c):
    return np.sum(np.log(x) * c)


def u_sqrt(x, c):
    return np.sum(np.sqrt(x) * c)


def u_sin(x, c):
    return np.sum(np.sin(x) * c)


def u_cos(x, c):
    return np.sum(np.cos(x) * c)


def u_tan(x, c):
    return np.sum(np.tan(x) * c)


def u_tanh(x, c):
    return np.sum(np.tanh(x) * c)


def u_sinh(x, c):
    return np.sum(np.sinh(x) * c)


def u_cosh(x, c):
    return np.sum(np.cosh(x) * c)


def u_arctan(x, c):
    return np.sum(np.arctan(x) * c)


def u_abs(x, c):
    return np.sum(np.abs(x) * c)


def u_absolute(x, c):
    return np.sum(np.absolute(x) * c)


def u_fabs(x, c):
    return np.sum(np.fabs(x) * c)


def u_builtin_abs(x, c):
    return np.sum(abs(x) * c)


def u_square(x, c):
    return np.sum(np.square(x) * c)


def u_reciprocal(x, c):
    return np.sum(np.reciprocal(x) * c)


def u_log1p(x, c):
    return np.sum(np.log1p(x) * c)


def u_expm1(x, c):
    return np.sum(np.expm1(x) * c)


def u_negative(x, c):
    return np.sum(np.negative(x) * c)


def u_exp2(x, c):
    return np.sum(np.exp2(x) * c)


def u_log2(x, c):
    return np.sum(np.log2(x) * c)


def u_log10(x, c):
    return np.sum(np.log10(x) * c)


def u_arcsin(x, c):
    return np.sum(np.arcsin(x) * c)


def u_arccos(x, c):
    return np.sum(np.arccos(x) * c)


def u_arcsinh(x, c):
    return np.sum(np.arcsinh(x) * c)


def u_arccosh(x, c):
    return np.sum(np.arccosh(x) * c)


def u_arctanh(x, c):
    return np.sum(np.arctanh(x) * c)


def u_cbrt(x, c):
    return np.sum(np.cbrt(x) * c)


def u_numpy_alias_tanh(x, c):
    return numpy.sum(numpy.tanh(x) * c)


# --------------------------------------------------------------------------
# math module (Python floats)


def m_exp(x, c):
    return math.exp(x) * c


def m_log(x, c):
    return math.log(x) * c


def m_sqrt(x, c):
    return math.sqrt(x) * c


def m_sin(x, c):
    return math.sin(x) * c


def m_cos(x, c):
    return math.cos(x) * c


def m_tan(x, c):
    return math.tan(x) * c


def m_tanh(x, c):
    return math.tanh(x) * c


def m_log1p(x, c):
    return math.log1p(x) * c


def m_expm1(x, c):
    return math.expm1(x) * c


# --------------------------------------------------------------------------
# Elementwise functions of two arguments


def b_maximum(x, y, c):
    return np.sum(np.maximum(x, y) * c)


def b_minimum(x, y, c):
    return np.sum(np.minimum(x, y) * c)


def b_arctan2(x, y, c):
    return np.sum(np.arctan2(x, y) * c)


def b_hypot(x, y, c):
    return np.sum(np.hypot(x, y) * c)


def b_logaddexp(x, y, c):
    return np.sum(np.logaddexp(x, y) * c)


def b_builtin_max(x, y, c):
    return max(x, y) * c


def b_builtin_min(x, y, c):
    return min(x, y) * c


def b_where(x, y, c):
    return np.sum(np.where(x > 0.0, x, y) * c)


def b_where_mask(x, y, mask, c):
    return np.sum(np.where(mask, x, y) * c)


def b_where_literal(x, mask, c):
    return np.sum(np.where(mask, x, 0.0) * c)


# --------------------------------------------------------------------------
# clip


def clip_fn(x, c):
    return np.sum(np.clip(x, -0.5, 0.5) * c)


def clip_lower(x, c):
    return np.sum(np.clip(x, -0.5, None) * c)


def clip_upper_kw(x, c):
    return np.sum(np.clip(x, a_min=None, a_max=0.5) * c)


def clip_method(x, c):
    return np.sum(x.clip(-0.5, 0.5) * c)


def clip_array_bounds(x, lo, hi, c):
    return np.sum(np.clip(x, lo, hi) * c)


# --------------------------------------------------------------------------
# Reductions: options as arguments


def red_sum(x, axis, keepdims, c):
    return np.sum(np.sum(x, axis=axis, keepdims=keepdims) * c)


def red_mean(x, axis, keepdims, c):
    return np.sum(np.mean(x, axis=axis, keepdims=keepdims) * c)


def red_max(x, axis, keepdims, c):
    return np.sum(np.max(x, axis=axis, keepdims=keepdims) * c)


def red_amax(x, axis, keepdims, c):
    return np.sum(np.amax(x, axis=axis, keepdims=keepdims) * c)


def red_min(x, axis, keepdims, c):
    return np.sum(np.min(x, axis=axis, keepdims=keepdims) * c)


def red_amin(x, axis, keepdims, c):
    return np.sum(np.amin(x, axis=axis, keepdims=keepdims) * c)


def red_prod(x, axis, keepdims, c):
    return np.sum(np.prod(x, axis=axis, keepdims=keepdims) * c)


def red_var(x, axis, ddof, keepdims, c):
    return np.sum(np.var(x, axis=axis, ddof=ddof, keepdims=keepdims) * c)


def red_std(x, axis, ddof, keepdims, c):
    return np.sum(np.std(x, axis=axis, ddof=ddof, keepdims=keepdims) * c)


def red_cumsum(x, axis, c):
    return np.sum(np.cumsum(x, axis=axis) * c)


# Reductions: literal options and positional spellings


def red_cumsum_scaled(x, w, c):
    return np.sum(np.cumsum(x) * w * c)


def meth_cumsum_scaled(x, w, c):
    return np.sum(x.cumsum() * w * c)


def red_sum_scaled(x, w, c):
    return np.sum(np.sum(x) * w * c)


def red_sum_axis0_literal(x, c):
    return np.sum(np.sum(x, 0) * c)


def red_mean_tuple_keepdims_literal(x, c):
    return np.sum(np.mean(x, axis=(0, 2), keepdims=True) * c)


def red_max_last_literal(x, c):
    return np.sum(np.max(x, axis=-1) * c)


def red_var_ddof_literal(x, c):
    return np.sum(np.var(x, axis=1, ddof=1) * c)


def red_cumsum_default(x, c):
    return np.sum(np.cumsum(x) * c)


# Reduction methods


def meth_sum(x, axis, keepdims, c):
    return np.sum(x.sum(axis=axis, keepdims=keepdims) * c)


def meth_mean(x, axis, keepdims, c):
    return np.sum(x.mean(axis=axis, keepdims=keepdims) * c)


def meth_max(x, axis, keepdims, c):
    return np.sum(x.max(axis=axis, keepdims=keepdims) * c)


def meth_min(x, axis, keepdims, c):
    return np.sum(x.min(axis=axis, keepdims=keepdims) * c)


def meth_prod(x, axis, keepdims, c):
    return np.sum(x.prod(axis=axis, keepdims=keepdims) * c)


def meth_var(x, axis, ddof, keepdims, c):
    return np.sum(x.var(axis=axis, ddof=ddof, keepdims=keepdims) * c)


def meth_std(x, axis, ddof, keepdims, c):
    return np.sum(x.std(axis=axis, ddof=ddof, keepdims=keepdims) * c)


def meth_cumsum(x, axis, c):
    return np.sum(x.cumsum(axis=axis) * c)


def meth_sum_noargs(x, c):
    return x.sum() * c


def meth_mean_positional(x, c):
    return np.sum(x.mean(1) * c)


# --------------------------------------------------------------------------
# norm


def norm_default(x, c):
    return np.linalg.norm(x) * c


def norm_axis(x, axis, keepdims, c):
    return np.sum(np.linalg.norm(x, axis=axis, keepdims=keepdims) * c)


def norm_ord(x, ord, c):
    return np.sum(np.linalg.norm(x, ord) * c)


def norm_ord_axis(x, ord, axis, c):
    return np.sum(np.linalg.norm(x, ord=ord, axis=axis) * c)


def norm_ord1_literal(x, c):
    return np.linalg.norm(x, ord=1) * c


def norm_ord_inf_literal(x, c):
    return np.linalg.norm(x, np.inf) * c


# --------------------------------------------------------------------------
# Shapes and copies


def sh_reshape_fn(x, c):
    return np.sum(np.reshape(x, (3, -1)) * c)


def sh_reshape_arg(x, shape, c):
    return np.sum(np.reshape(x, shape) * c)


def sh_reshape_method_varargs(x, c):
    return np.sum(x.reshape(2, 3, -1) * c)


def sh_reshape_method_flat(x, c):
    return np.sum(x.reshape(-1) * c)


def sh_reshape_method_tuple(x, c):
    return np.sum(x.reshape((4, -1)) * c)


def sh_transpose_fn(x, c):
    return np.sum(np.transpose(x) * c)


def sh_transpose_fn_axes(x, c):
    return np.sum(np.transpose(x, (1, 2, 0)) * c)


def sh_transpose_fn_axes_kw(x, axes, c):
    return np.sum(np.transpose(x, axes=axes) * c)


def sh_transpose_method(x, c):
    return np.sum(x.transpose() * c)


def sh_transpose_method_varargs(x, c):
    return np.sum(x.transpose(2, 0, 1) * c)


def sh_transpose_method_tuple(x, c):
    return np.sum(x.transpose((1, 2, 0)) * c)


def sh_T(x, c):
    return np.sum(x.T * c)


def sh_copy_fn(x, c):
    return np.sum(np.copy(x) * c)


def sh_copy_method(x, c):
    return np.sum(x.copy() * c)


def sh_astype(x, c):
    return np.sum(x.astype(np.float64) * c)


def sh_ravel_fn(x, c):
    return np.sum(np.ravel(x) * c)


def sh_ravel_method(x, c):
    return np.sum(x.ravel() * c)


def sh_flatten(x, c):
    return np.sum(x.flatten() * c)


def sh_squeeze_fn(x, c):
    return np.sum(np.squeeze(x) * c)


def sh_squeeze_fn_axis(x, c):
    return np.sum(np.squeeze(x, axis=1) * c)


def sh_squeeze_method(x, c):
    return np.sum(x.squeeze() * c)


def sh_expand_dims(x, axis, c):
    return np.sum(np.expand_dims(x, axis) * c)


def sh_atleast_1d(x, c):
    return np.sum(np.atleast_1d(x) * c)


def sh_atleast_2d(x, c):
    return np.sum(np.atleast_2d(x) * c)


def sh_broadcast_to(x, shape, c):
    return np.sum(np.broadcast_to(x, shape) * c)


def sh_flip(x, c):
    return np.sum(np.flip(x) * c)


def sh_flip_axis(x, axis, c):
    return np.sum(np.flip(x, axis) * c)


def sh_roll(x, shift, axis, c):
    return np.sum(np.roll(x, shift, axis) * c)


def sh_roll_flat(x, c):
    return np.sum(np.roll(x, 2) * c)


def sh_triu(x, k, c):
    return np.sum(np.triu(x, k) * c)


def sh_tril(x, k, c):
    return np.sum(np.tril(x, k) * c)


def sh_triu_default(x, c):
    return np.sum(np.triu(x) * c)


def sh_dot(x, y, c):
    return np.sum(np.dot(x, y) * c)


def sh_matmul_fn(x, y, c):
    return np.sum(np.matmul(x, y) * c)


def sh_dot_method(x, y, c):
    return np.sum(x.dot(y) * c)


def sh_stack(x, y, c):
    return np.sum(np.stack([x, y]) * c)


def sh_stack_axis(x, y, axis, c):
    return np.sum(np.stack([x, y], axis=axis) * c)


def sh_vstack(x, y, c):
    return np.sum(np.vstack([x, y]) * c)


def sh_concatenate(x, y, c):
    return np.sum(np.concatenate([x, y]) * c)


def sh_concatenate_axis(x, y, axis, c):
    return np.sum(np.concatenate((x, y), axis=axis) * c)


def sh_array_of_floats(x, y, c):
    return np.sum(np.array([x, y, x * y]) * c)


def sh_array_copy(x, c):
    return np.sum(np.array(x) * c)


def sh_asarray(x, c):
    return np.sum(np.asarray(x) * c)


def sh_asarray_list(x, y, c):
    return np.sum(np.asarray([x, y]) * c)


def sh_builtin_sum(x, y, c):
    return np.sum(sum([x, y, x * y]) * c)


def sh_builtin_sum_start(x, y, c):
    return np.sum(sum([x, x * x], y) * c)


def sh_builtin_list(x, y, c):
    items = list((x, y * y))
    return np.sum((items[0] + items[1] * x) * c)


def sh_builtin_tuple(x, y, c):
    items = tuple([x * y, y])
    return np.sum((items[0] - items[1] ** 2) * c)


def ew_full(v, c):
    return np.sum(np.full((2, 3), v) * c)


def ew_full_like(v, c):
    return np.sum(np.full_like(c, v) * c)


def sh_builtin_float(x, c):
    return float(x) * c


def sh_take(x, indices, axis, c):
    return np.sum(np.take(x, indices, axis=axis) * c)


def sh_take_wrap(x, indices, c):
    return np.sum(np.take(x, indices, axis=0, mode="wrap") * c)


def sh_take_method(x, indices, c):
    return np.sum(x.take(indices) * c)


# --------------------------------------------------------------------------
# Linear algebra


def la_einsum_matmul(x, y, c):
    return np.sum(np.einsum("ij,jk->ik", x, y) * c)


def la_einsum_batched(x, y, c):
    return np.sum(np.einsum("bij,bjk->bik", x, y) * c)


def la_einsum_implicit(x, y, c):
    return np.einsum("i,i", x, y) * c


def la_einsum_sum_away(x, c):
    return np.sum(np.einsum("ij->i", x) * c)


def la_einsum_three(x, y, c):
    return np.sum(np.einsum("ij,j,k->ik", x, y, y) * c)


def la_outer(x, y, c):
    return np.sum(np.outer(x, y) * c)


def la_vdot(x, y, c):
    return np.vdot(x, y) * c


def la_inv(a, c):
    return np.sum(np.linalg.inv(a) * c)


def la_det(a, c):
    return np.linalg.det(a) * c


def la_det_batched(a, c):
    return np.sum(np.linalg.det(a) * c)


def la_solve(a, b, c):
    return np.sum(np.linalg.solve(a, b) * c)


def la_trace(a, c):
    return np.trace(a) * c


def la_trace_offset(a, offset, c):
    return np.trace(a, offset) * c


def la_trace_axes(a, axis1, axis2, c):
    return np.sum(np.trace(a, axis1=axis1, axis2=axis2) * c)


def la_trace_3d_default(a, c):
    return np.sum(np.trace(a) * c)


def la_trace_method(a, c):
    return a.trace() * c


def la_diag(v, k, c):
    return np.sum(np.diag(v, k) * c)


def la_diag_default(v, c):
    return np.sum(np.diag(v) * c)


# --------------------------------------------------------------------------
# More elementwise functions


def u_sinc(x, c):
    return np.sum(np.sinc(x) * c)


def u_deg2rad(x, c):
    return np.sum(np.deg2rad(x) * c)


def u_radians(x, c):
    return np.sum(np.radians(x) * c)


def u_rad2deg(x, c):
    return np.sum(np.rad2deg(x) * c)


def u_degrees(x, c):
    return np.sum(np.degrees(x) * c)


def b_logaddexp2(x, y, c):
    return np.sum(np.logaddexp2(x, y) * c)


def b_fmax(x, y, c):
    return np.sum(np.fmax(x, y) * c)


def b_fmin(x, y, c):
    return np.sum(np.fmin(x, y) * c)


def b_copysign(x, y, c):
    return np.sum(np.copysign(x, y) * c)


def b_float_power(x, y, c):
    return np.sum(np.float_power(x, y) * c)


# --------------------------------------------------------------------------
# More reductions and scans


def red_cumprod(x, axis, c):
    return np.sum(np.cumprod(x, axis=axis) * c)


def meth_cumprod(x, c):
    return np.sum(x.cumprod(axis=0) * c)


def red_nansum(x, axis, keepdims, c):
    return np.sum(np.nansum(x, axis=axis, keepdims=keepdims) * c)


def red_nanmean(x, axis, keepdims, c):
    return np.sum(np.nanmean(x, axis=axis, keepdims=keepdims) * c)


def red_average(x, axis, c):
    return np.sum(np.average(x, axis) * c)


def red_average_weights(x, w, axis, keepdims, c):
    return np.sum(np.average(x, axis=axis, weights=w, keepdims=keepdims) * c)


def red_average_returned(x, w, c):
    avg, total = np.average(x, axis=0, weights=w, returned=True)
    return np.sum(avg * 2.0 + total * 3.0) + np.sum(avg * c)


def norm_ord_keepdims(x, ord, axis, c):
    return np.sum(np.linalg.norm(x, ord, axis, True) * c)


# --------------------------------------------------------------------------
# More shapes, joins, splits and gathers


def sh_atleast_3d(x, c):
    return np.sum(np.atleast_3d(x) * c)


def sh_atleast_2d_two(x, y, c):
    a, b = np.atleast_2d(x, y)
    return np.sum(a * 2.0) + np.sum(b * c)


def sh_hstack(x, y, c):
    return np.sum(np.hstack([x, y]) * c)


def sh_hstack_array(x, c):
    return np.sum(np.hstack(x) * c)


def sh_dstack(x, y, c):
    return np.sum(np.dstack((x, y)) * c)


def sh_column_stack(x, y, c):
    return np.sum(np.column_stack([x, y]) * c)


def sh_split(x, sections, axis, c):
    parts = np.split(x, sections, axis=axis)
    return np.sum(parts[0] * 2.0) + np.sum(parts[-1] * c)


def sh_array_split(x, c):
    a, b = np.array_split(x, 2)
    return np.sum(a**2) + np.sum(b * c)


def sh_repeat(x, repeats, axis, c):
    return np.sum(np.repeat(x, repeats, axis=axis) * c)


def sh_repeat_method(x, c):
    return np.sum(x.repeat(2, axis=0) * c)


def sh_tile(x, reps, c):
    return np.sum(np.tile(x, reps) * c)


def sh_pad(x, pad_width, c):
    return np.sum(np.pad(x, pad_width) * c)


def sh_pad_value(x, v, c):
    return np.sum(np.pad(x, ((1, 0), (2, 1)), "constant", constant_values=v) * c)


def sh_take_along_axis(x, indices, axis, c):
    return np.sum(np.take_along_axis(x, indices, axis=axis) * c)


def sh_sort(x, axis, c):
    return np.sum(np.sort(x, axis=axis) * c)


def sh_sort_default(x, c):
    return np.sum(np.sort(x) * c)


# --------------------------------------------------------------------------
# More linear algebra


def la_kron(x, y, c):
    return np.sum(np.kron(x, y) * c)


def la_tensordot(x, y, axes, c):
    return np.sum(np.tensordot(x, y, axes) * c)


def la_tensordot_default(x, y, c):
    return np.sum(np.tensordot(x, y) * c)


def la_einsum(subscripts, x, c):
    return np.sum(np.einsum(subscripts, x) * c)


def la_einsum_two(subscripts, x, y, c):
    return np.sum(np.einsum(subscripts, x, y) * c)


def la_slogdet(a, c):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(logdet * c)


def la_cholesky(a, c):
    return np.sum(np.linalg.cholesky(a) * c)


def la_cholesky_upper(a, c):
    return np.sum(np.linalg.cholesky(a, upper=True) * c)


def la_eigh(a, c):
    w, v = np.linalg.eigh(a)
    return np.sum(w * 0.5) + np.sum(v[..., :1, :] * v * c)  # unchanged by signs of v


def la_eigh_upper(a, c):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(w * c) + np.sum(v[..., :1, :] * v * 0.5)


def la_svd_values(a, c):
    return np.sum(np.linalg.svd(a, compute_uv=False) * c)


def la_svd_values_hermitian(a, c):
    return np.sum(np.linalg.svd(a, compute_uv=False, hermitian=True) * c)


def la_svd(a, full, c):
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    # u[:, i] and vh[i] change sign together: these products do not see it
    left = u[..., :, :k] * u[..., :1, :k]
    right = vh[..., :k, :] * vh[..., :k, :1]
    return np.sum((left * s[..., None, :]) @ right * c)


def la_qr(a, c):
    q, r = np.linalg.qr(a)
    return np.sum(q @ (r * r) * c)


def la_qr_r(a, c):
    return np.sum(np.linalg.qr(a, mode="r") * c)


def sh_pad_reflect(x, c):
    return np.sum(np.pad(x, 2, mode="reflect") * c)


def la_svd_full_extra(a, c):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u * u[..., :1, :] * c)


def la_qr_complete(a, c):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q * q[..., :1, :] * c)


def la_pinv(a, c):
    return np.sum(np.linalg.pinv(a) * c)


def la_pinv_hermitian(a, c):
    return np.sum(np.linalg.pinv(a, hermitian=True) * c)


# --------------------------------------------------------------------------
# Non-scalar functions, for the vjp inner-product identity


def v_tanh(x):
    return np.tanh(x)


def v_matmul(x, y):
    return x @ y


def v_broadcast_mul(x, y):
    return x * y


def v_sum_axis(x):
    return np.sum(x, axis=0)


def v_var_keepdims(x):
    return np.var(x, axis=-1, keepdims=True)


def v_transpose(x):
    return np.transpose(x, (2, 0, 1))


def v_concatenate(x, y):
    return np.concatenate([x, y], axis=1)


def v_solve(a, b):
    return np.linalg.solve(a, b)


def v_cumsum(x):
    return np.cumsum(x, axis=1)


def v_maximum(x, y):
    return np.maximum(x, y)


def v_split(x):
    a, b, e = np.split(x, [1, 3], axis=1)
    return a * 2.0 + e


def v_take_along_axis(x):
    return np.take_along_axis(x, np.array([[0, 2, 2], [1, 1, 0]]), axis=1)


def v_pad(x):
    return np.pad(x, ((1, 2), (0, 1)))


def v_repeat(x):
    return np.repeat(x, [1, 0, 3], axis=1)


def v_tile(x):
    return np.tile(x, (2, 1, 3))


def v_einsum_diag(x, y):
    return np.einsum("ii,...i->...i", x, y)


def v_kron(x, y):
    return np.kron(x, y)


def v_tensordot(x, y):
    return np.tensordot(x, y, axes=([0, 2], [1, 0]))


def v_slogdet(a):
    return np.linalg.slogdet(a)[1]


def v_cholesky(a):
    return np.linalg.cholesky(a)


def v_eigh(a):
    w, v = np.linalg.eigh(a)
    return v * v[..., :1, :] + w


def v_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (u * u[..., :1, :] * s[..., None, :]) @ (vh * vh[..., :, :1])


def v_qr(a):
    q, r = np.linalg.qr(a)
    return q * r[..., 0, :]


def v_pinv(a):
    return np.linalg.pinv(a)


# --------------------------------------------------------------------------
# Axes, flips, differences, appends; inner, cross, powers, products, eigvalsh,
# lstsq; the nan reductions, ptp, median, trapezoid; real and conj


def sh_swapaxes(x, a1, a2, c):
    return np.sum(np.swapaxes(x, a1, a2) * c)


def sh_swapaxes_method(x, c):
    return np.sum(x.swapaxes(0, -1) * c)


def sh_moveaxis(x, source, destination, c):
    return np.sum(np.moveaxis(x, source, destination) * c)


def sh_rot90(x, k, axes, c):
    return np.sum(np.rot90(x, k, axes) * c)


def sh_rot90_default(x, c):
    return np.sum(np.rot90(x) * c)


def sh_fliplr(x, c):
    return np.sum(np.fliplr(x) * c)


def sh_flipud(x, c):
    return np.sum(np.flipud(x) * c)


def sh_diff(x, n, axis, c):
    return np.sum(np.diff(x, n=n, axis=axis) * c)


def sh_diff_default(x, c):
    return np.sum(np.diff(x) * c)


def sh_diff_ends(x, p, q, c):
    return np.sum(np.diff(x, axis=0, prepend=p, append=q) * c)


def sh_append(x, v, axis, c):
    return np.sum(np.append(x, v, axis=axis) * c)


def sh_append_flat(x, v, c):
    return np.sum(np.append(x, v) * c)


def sh_astype_bool(x, c):
    return np.sum(x.astype(bool) * c) + np.sum(x.astype(float) * c)


def la_diagonal(x, offset, axis1, axis2, c):
    return np.sum(np.diagonal(x, offset, axis1, axis2) * c)


def la_diagonal_method(x, c):
    return np.sum(x.diagonal(1) * c)


def la_inner(x, y, c):
    return np.sum(np.inner(x, y) * c)


def la_cross(x, y, c):
    return np.sum(np.cross(x, y) * c)


def la_cross_axis(x, y, axisa, axisb, axisc, c):
    return np.sum(np.cross(x, y, axisa=axisa, axisb=axisb, axisc=axisc) * c)


def la_cross_same_axis(x, y, axis, c):
    return np.sum(np.cross(x, y, axis=axis) * c)


def la_matrix_power(a, n, c):
    return np.sum(np.linalg.matrix_power(a, n) * c)


def la_multi_dot(x, y, z, c):
    return np.sum(np.linalg.multi_dot([x, y, z]) * c)


def la_multi_dot_two(x, y, c):
    return np.sum(np.linalg.multi_dot([x, y]) * c)


def la_eigvalsh(a, c):
    return np.sum(np.linalg.eigvalsh(a) * c)


def la_eigvalsh_upper(a, c):
    return np.sum(np.linalg.eigvalsh(a, UPLO="U") * c)


def la_lstsq(a, b, c):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x * c)


def la_lstsq_residuals(a, b, c):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x * c) + np.sum(residuals * 0.5)


def la_lstsq_singular_values(a, b, c):
    return np.sum(np.linalg.lstsq(a, b)[3] * c)


def red_nanmax(x, axis, keepdims, c):
    return np.sum(np.nanmax(x, axis=axis, keepdims=keepdims) * c)


def red_nanmin(x, axis, keepdims, c):
    return np.sum(np.nanmin(x, axis=axis, keepdims=keepdims) * c)


def red_nanprod(x, axis, keepdims, c):
    return np.sum(np.nanprod(x, axis=axis, keepdims=keepdims) * c)


def red_nanvar(x, axis, ddof, keepdims, c):
    return np.sum(np.nanvar(x, axis=axis, ddof=ddof, keepdims=keepdims) * c)


def red_nanstd(x, axis, ddof, keepdims, c):
    return np.sum(np.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims) * c)


def red_ptp(x, axis, keepdims, c):
    return np.sum(np.ptp(x, axis=axis, keepdims=keepdims) * c)


def red_median(x, axis, keepdims, c):
    return np.sum(np.median(x, axis=axis, keepdims=keepdims) * c)


def red_trapezoid(y, axis, c):
    return np.sum(np.trapezoid(y, axis=axis) * c)


def red_trapezoid_x(y, x, axis, c):
    return np.sum(np.trapezoid(y, x, axis=axis) * c)


def red_trapezoid_dx(y, dx, c):
    return np.sum(np.trapezoid(y, dx=dx) * c)


def u_real(x, c):
    return np.sum(np.real(x) * c)


def u_real_attr(x, c):
    return np.sum(x.real * c)


def u_conj(x, c):
    return np.sum(np.conj(x) * c)


def u_conjugate(x, c):
    return np.sum(np.conjugate(x) * c)


def u_conj_method(x, c):
    return np.sum(x.conj() * c)


def u_conjugate_method(x, c):
    return np.sum(x.conjugate() * c)


def v_swapaxes(x):
    return x.swapaxes(0, 2)


def v_rot90(x):
    return np.rot90(x, 3, axes=(1, 2))


def v_diagonal(x):
    return np.diagonal(x, -1, 2, 0)


def v_diff(x):
    return np.diff(x, n=2, axis=0)


def v_append(x, y):
    return np.append(x, y, axis=1)


def v_inner(x, y):
    return np.inner(x, y)


def v_cross(x, y):
    return np.cross(x, y)


def v_matrix_power(a):
    return np.linalg.matrix_power(a, 3)


def v_multi_dot(x, y, z):
    return np.linalg.multi_dot([x, y, z])


def v_eigvalsh(a):
    return np.linalg.eigvalsh(a)


def v_lstsq(a, b):
    return np.linalg.lstsq(a, b)[0]


def v_nanvar(x):
    return np.nanvar(x, axis=0)


def v_median(x):
    return np.median(x, axis=-1)


def v_ptp(x):
    return np.ptp(x, axis=1)


def v_trapezoid(y, x):
    return np.trapezoid(y, x, axis=0)


def u_real_of_complex(x, c):
    return np.sum(np.real(x * 1j) * c)


# The array-API spellings (numpy 2): np.linalg.* on the last two axes, vecdot,
# matrix_transpose; and np.positive, np.nancumsum


def u_positive(x, c):
    return np.sum(np.positive(x) * c)


def red_nancumsum(x, axis, c):
    return np.sum(np.nancumsum(x, axis=axis) * c)


def sh_matrix_transpose(x, c):
    return np.sum(np.matrix_transpose(x) * c)


def sh_linalg_matrix_transpose(x, c):
    return np.sum(np.linalg.matrix_transpose(x) * c)


def sh_mT(x, c):
    return np.sum(x.mT * c)


def sh_linalg_matmul(x, y, c):
    return np.sum(np.linalg.matmul(x, y) * c)


def la_linalg_outer(x, y, c):
    return np.sum(np.linalg.outer(x, y) * c)


def la_linalg_tensordot(x, y, c):
    return np.sum(np.linalg.tensordot(x, y, axes=1) * c)


def la_linalg_cross(x, y, axis, c):
    return np.sum(np.linalg.cross(x, y, axis=axis) * c)


def la_linalg_diagonal(x, offset, c):
    return np.sum(np.linalg.diagonal(x, offset=offset) * c)


def la_linalg_trace(x, offset, c):
    return np.sum(np.linalg.trace(x, offset=offset) * c)


def la_vecdot(x, y, axis, c):
    return np.sum(np.vecdot(x, y, axis=axis) * c)


def la_linalg_vecdot(x, y, c):
    return np.sum(np.linalg.vecdot(x, y) * c)


def v_vecdot(x, y):
    return np.vecdot(x, y)


def v_linalg_diagonal(x):
    return np.linalg.diagonal(x, offset=-1)


def sh_array_int_cast(x, c):
    return np.sum(np.array(x, dtype=int) * c) + np.sum(np.asarray(x > 0, dtype=float) * x * c)
