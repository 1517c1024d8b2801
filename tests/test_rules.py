"""Every registered derivative rule against central finite differences, as a table.

In the style of JAX's ``lax_autodiff_test``: each ``Row`` names a wrapper in
``tests/rule_funcs.py`` (one rule applied, then weighted by a fixed random
array ``c`` and summed, so every Jacobian entry counts), an input domain per
argument that avoids kinks and singularities, the arguments to differentiate,
the registry entries the row exercises (``targets``), and tolerances.

* ``test_rule``: float64 gradient from ``transpile.grad`` == Richardson central
  differences (``tests/fd.py``), for every ``wrt`` variant (both operands of a
  binary rule and each alone); shapes and dtypes match the arguments; the
  arguments are left untouched.
* ``test_rule_float32``: float32 in, float32 gradient out, for a subset, close
  to float64 differences at a loose tolerance.
* ``test_vjp_inner_product``: ``<dout, J v> == <vjp(dout), v>`` for non-scalar
  functions.
* ``test_unsupported_gradient_raises``: gradients that are not implemented
  (np.pad modes other than 'constant', the non-unique singular vectors of a full
  SVD, a complete QR of a tall matrix, lstsq's singular values) raise instead of
  returning a wrong gradient.
* ``test_fmax_fmin_send_the_gradient_past_a_nan``: the operand that is not nan wins.
* ``test_every_rule_has_a_row``: every callable, method, attribute and
  operator in the registry (and in the family tables) is the target of a row,
  and every row's targets really occur in its wrapper's source.

Known bugs are kept as ``xfail(strict=True)`` rows with the diagnosis; the
reproducers live in ``/tmp/bugs_rules_<n>.py``.
"""

import ast
import builtins
import copy
import inspect
import math
import textwrap
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import convolution_funcs
import fd
import gast
import numpy as np
import pytest
import rule_funcs as rf
import spectral_funcs
from variants import call_twice

from transpile import TranspileError, grad, jvp, vjp
from transpile.rules import FAMILIES, build_registry, declarations
from transpile.rules.declare import Kind

# --------------------------------------------------------------------------
# Input domains. ``shape=None`` gives a Python float, ``()`` a 0-d array.


class Dom:
    """A generator of one argument from a seeded ``numpy.random.Generator``."""

    def __init__(self, name, shape, make):
        self.name, self.shape, self.make = name, shape, make

    def __call__(self, rng):
        if self.shape is None:
            return float(self.make(rng, ()))
        return np.asarray(self.make(rng, self.shape), dtype=np.float64)

    def __repr__(self):
        if self.shape is None:
            return f"{self.name}:float"
        return f"{self.name}{list(self.shape)}".replace(" ", "")


def normal(shape):
    return Dom("normal", shape, lambda r, s: r.standard_normal(s))


def pos(shape, low=0.5, high=2.0):
    return Dom("pos", shape, lambda r, s: r.uniform(low, high, s))


def away(shape, margin=0.3, high=2.0):
    """``margin <= |x| <= high``: away from the kink or pole at zero."""
    return Dom(
        "away", shape, lambda r, s: r.choice([-1.0, 1.0], size=s) * r.uniform(margin, high, s)
    )


def unit(shape):
    """``|x| <= 0.8``: inside the domain of arcsin, arccos, arctanh."""
    return Dom("unit", shape, lambda r, s: r.uniform(-0.8, 0.8, s))


def gt1(shape):
    return Dom("gt1", shape, lambda r, s: r.uniform(1.3, 3.0, s))


def grid(shape, offset=0.0):
    """Multiples of 0.1 plus ``offset`` plus < 0.01 of noise: two grids with offsets 0 and
    0.05 never come within 0.04 of each other, so maximum/minimum have no ties."""
    return Dom(
        f"grid{offset:+g}",
        shape,
        lambda r, s: r.integers(-15, 15, s) * 0.1 + offset + r.uniform(0, 0.01, s),
    )


def distinct(shape, gap=0.1):
    """Pairwise at least ``gap`` apart: a unique max/min along every axis."""

    def make(r, s):
        n = int(np.prod(s))
        v = (np.arange(n) - n / 2.0) * gap * 2.0 + r.uniform(0, gap / 2.0, n)
        return r.permutation(v).reshape(s)

    return Dom("distinct", shape, make)


def cliprange(shape):
    """Values in [-1, 1] at least 0.05 from the clip bounds +-0.5."""

    def make(r, s):
        mag = np.where(r.random(s) < 0.5, r.uniform(0.0, 0.45, s), r.uniform(0.55, 1.0, s))
        return r.choice([-1.0, 1.0], size=s) * mag

    return Dom("cliprange", shape, make)


def with_zero(shape):
    """Away from zero except for one exact zero (prod's adjoint must not divide)."""

    def make(r, s):
        v = r.choice([-1.0, 1.0], size=s) * r.uniform(0.5, 1.5, s)
        v.flat[1] = 0.0
        return v

    return Dom("with_zero", shape, make)


def wellcond(n, batch=()):
    """A random matrix plus ``n * I``: well conditioned."""
    shape = tuple(batch) + (n, n)
    return Dom("wellcond", shape, lambda r, s: r.standard_normal(s) + n * np.eye(n))


def spd(n, batch=()):
    """A symmetric positive definite matrix ``b b^T + n I``."""

    def make(r, s):
        b = r.standard_normal(s)
        return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)

    return Dom("spd", tuple(batch) + (n, n), make)


def sym(n, batch=()):
    """A symmetric matrix with eigenvalues about 1.5 apart (distinct, for eigh)."""

    def make(r, s):
        b = r.standard_normal(s) * 0.2
        return b + np.swapaxes(b, -1, -2) + np.diag(np.arange(n) * 1.5 + 1.0)

    return Dom("sym", tuple(batch) + (n, n), make)


def with_nan(shape):
    """Normal values with a nan in every other row (nansum, nanmean skip them)."""

    def make(r, s):
        v = r.standard_normal(s)
        v.reshape(-1, s[-1])[::2, 1] = np.nan
        return v

    return Dom("with_nan", shape, make)


def ints(values):
    return Const(np.array(values), "ints" + repr(np.shape(values)).replace(" ", ""))


def mask(shape):
    value = np.arange(int(np.prod(shape))).reshape(shape) % 3 != 1
    return Const(value, "mask" + "x".join(map(str, shape)))


class Const:
    """A fixed (non-differentiated) argument with a readable test id."""

    def __init__(self, value, name=None):
        self.value, self.name = value, name

    def __call__(self, rng):
        return copy.deepcopy(self.value)

    def __repr__(self):
        return self.name or repr(self.value).replace(" ", "")


def _spec(a):
    return a if isinstance(a, (Dom, Const)) else Const(a)


# --------------------------------------------------------------------------
# The weight ``c``: shaped like the wrapped operation's output.


class _Probe:
    """Stands in for ``c``: records the shape of what it is multiplied with."""

    __array_ufunc__ = None  # make ndarray and numpy scalars defer to __rmul__

    def __init__(self):
        self.shape = None

    def __mul__(self, other):
        self.shape = np.shape(other)
        return 0.0

    __rmul__ = __mul__


def _weight(func, args, rng, dtype):
    probe = _Probe()
    func(*copy.deepcopy(args), probe)
    assert probe.shape is not None, f"{func.__name__} never multiplied its result by c"
    if probe.shape == ():
        return float(rng.uniform(0.5, 1.5))
    return rng.standard_normal(probe.shape).astype(dtype)


# --------------------------------------------------------------------------
# The table


@dataclass
class Row:
    func: Callable
    args: tuple  # Dom / Const / plain constant, one per parameter except the weight c
    targets: tuple  # callables, "name" for methods, ".name" for attributes, gast op classes
    wrt: tuple = (0,)  # each entry is one wrt value passed to grad
    rtol: float = 1e-6
    atol: float = 1e-8
    xfail: str | None = None  # reason; the row's known bug
    xfail_wrt: tuple | None = None  # the wrt values the bug affects (None: all)
    f32: bool = False  # also in the float32 subset
    f32_xfail: str | None = None  # the row's known float32 bug
    f32_xfail_wrt: tuple | None = None
    float_ok: bool = False  # a 0-d array argument may get a Python float gradient
    name: str = ""

    @property
    def id(self):
        return self.name or f"{self.func.__name__}({','.join(repr(a) for a in self.args)})"

    def make(self, rng, dtype=np.float64):
        args = [_spec(a)(rng) for a in self.args]
        if dtype != np.float64:
            args = [
                a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a
                for a in args
            ]
        args.append(_weight(self.func, args, rng, dtype))
        return tuple(args)


ROWS = []
BOTH = ((0, 1), 0, 1)


def row(func, *args, targets, **kw):
    r = Row(func, tuple(_spec(a) for a in args), tuple(targets), **kw)
    ROWS.append(r)
    return r


PY = None  # shape of a Python float argument

# Operators and their ufunc / builtin spellings ------------------------------

PAIRS = [
    ((2, 3), (2, 3)),
    ((3, 4), (4,)),
    ((4,), (3, 4)),
    ((3, 1), (1, 4)),
    ((), (3,)),
    (PY, (3,)),
    ((2, 3), PY),
    (PY, PY),
]
for fn, targets, dy in [
    (rf.op_add, [gast.Add], normal),
    (rf.op_sub, [gast.Sub], normal),
    (rf.op_mul, [gast.Mult], normal),
    (rf.op_div, [gast.Div], away),
    (rf.fn_add, [np.add], normal),
    (rf.fn_subtract, [np.subtract], normal),
    (rf.fn_multiply, [np.multiply], normal),
    (rf.fn_divide, [np.divide], away),
    (rf.fn_true_divide, [np.true_divide], away),
]:
    for sx, sy in PAIRS:
        row(
            fn,
            normal(sx),
            dy(sy),
            targets=targets,
            wrt=BOTH,
            f32=(sx, sy) == ((3, 4), (4,)) and fn in (rf.op_mul, rf.op_div),
        )

POW_F32 = None  # fixed; the rows stay as regression tests
for fn, targets in [
    (rf.op_pow, [gast.Pow]),
    (rf.fn_power, [np.power]),
    (rf.fn_builtin_pow, [builtins.pow]),
]:
    for sx, sy in [
        ((2, 3), (2, 3)),
        ((3, 4), (4,)),
        ((3, 1), (1, 4)),
        (PY, (3,)),
        ((3,), PY),
        (PY, PY),
    ]:
        row(
            fn,
            pos(sx),
            normal(sy),
            targets=targets,
            wrt=BOTH,
            f32=(sx, sy) in [((2, 3), (2, 3)), (PY, (3,))],
            f32_xfail=POW_F32,
            f32_xfail_wrt=((0, 1), 1) if sx is PY else (),
        )
for s in [PY, (), (3,), (2, 3)]:
    row(rf.op_pow_int, normal(s), targets=[gast.Pow])
    row(rf.op_pow_half, pos(s), targets=[gast.Pow])
    row(rf.fn_power_int, normal(s), targets=[np.power], f32=s == (3,))
    row(rf.fn_builtin_pow_half, pos(s), targets=[builtins.pow])
    row(rf.op_rpow, normal(s), targets=[gast.Pow], f32=s == (3,), f32_xfail=POW_F32)
    row(rf.op_neg, normal(s), targets=[gast.USub])
    row(rf.op_pos, normal(s), targets=[gast.UAdd])

MATMUL_BUG = None  # fixed; the rows stay as regression tests
for sx, sy, bug in [
    ((2, 3), (3, 4), None),
    ((3,), (3, 4), None),
    ((2, 3), (3,), None),
    ((3,), (3,), None),
    ((2, 2, 3), (3, 4), None),
    ((2, 3), (2, 3, 4), None),
    ((2, 2, 3), (2, 3, 4), None),
    ((1, 2, 3), (2, 3, 4), None),
    ((2, 3, 4), (4,), None),
    ((3,), (2, 3, 4), MATMUL_BUG),
]:
    for fn, targets in [(rf.op_matmul, [gast.MatMult]), (rf.sh_matmul_fn, [np.matmul])]:
        row(
            fn,
            normal(sx),
            normal(sy),
            targets=targets,
            wrt=BOTH,
            xfail=bug,
            xfail_wrt=((0, 1), 0),
            f32=fn is rf.op_matmul and sx == (2, 3) and sy == (3, 4),
        )

# Elementwise functions of one argument ------------------------------------

UNARY = [
    (rf.u_exp, np.exp, normal),
    (rf.u_log, np.log, pos),
    (rf.u_sqrt, np.sqrt, pos),
    (rf.u_sin, np.sin, normal),
    (rf.u_cos, np.cos, normal),
    (rf.u_tan, np.tan, unit),
    (rf.u_tanh, np.tanh, normal),
    (rf.u_sinh, np.sinh, normal),
    (rf.u_cosh, np.cosh, normal),
    (rf.u_arctan, np.arctan, normal),
    (rf.u_abs, np.abs, away),
    (rf.u_absolute, np.absolute, away),
    (rf.u_fabs, np.fabs, away),
    (rf.u_builtin_abs, builtins.abs, away),
    (rf.u_square, np.square, normal),
    (rf.u_reciprocal, np.reciprocal, away),
    (rf.u_log1p, np.log1p, pos),
    (rf.u_expm1, np.expm1, normal),
    (rf.u_negative, np.negative, normal),
    (rf.u_exp2, np.exp2, normal),
    (rf.u_log2, np.log2, pos),
    (rf.u_log10, np.log10, pos),
    (rf.u_arcsin, np.arcsin, unit),
    (rf.u_arccos, np.arccos, unit),
    (rf.u_arcsinh, np.arcsinh, normal),
    (rf.u_arccosh, np.arccosh, gt1),
    (rf.u_arctanh, np.arctanh, unit),
    (rf.u_cbrt, np.cbrt, away),
    (rf.u_numpy_alias_tanh, np.tanh, normal),
]
F32_UNARY = {
    rf.u_exp,
    rf.u_log,
    rf.u_sqrt,
    rf.u_tanh,
    rf.u_abs,
    rf.u_arcsin,
    rf.u_cbrt,
    rf.u_reciprocal,
}
for fn, target, dom in UNARY:
    for s in [PY, (), (3,), (2, 3)]:
        row(fn, dom(s), targets=[target], f32=fn in F32_UNARY and s == (2, 3))

MATH = [
    (rf.m_exp, math.exp, normal),
    (rf.m_log, math.log, pos),
    (rf.m_sqrt, math.sqrt, pos),
    (rf.m_sin, math.sin, normal),
    (rf.m_cos, math.cos, normal),
    (rf.m_tan, math.tan, unit),
    (rf.m_tanh, math.tanh, normal),
    (rf.m_log1p, math.log1p, pos),
    (rf.m_expm1, math.expm1, normal),
]
for fn, target, dom in MATH:
    for s in [PY, ()]:
        row(fn, dom(s), targets=[target], float_ok=True)

# Elementwise functions of two arguments -----------------------------------

WINNER_F32 = None  # fixed; the rows stay as regression tests
for fn, target in [(rf.b_maximum, np.maximum), (rf.b_minimum, np.minimum)]:
    for sx, sy in PAIRS:
        row(
            fn,
            grid(sx),
            grid(sy, 0.05),
            targets=[target],
            wrt=BOTH,
            f32=(sx, sy) in [((2, 3), (2, 3)), ((3, 4), (4,))],
            f32_xfail=WINNER_F32,
        )
for fn, target, dx, dy in [
    (rf.b_arctan2, np.arctan2, away, away),
    (rf.b_hypot, np.hypot, away, away),
    (rf.b_logaddexp, np.logaddexp, normal, normal),
]:
    for sx, sy in PAIRS:
        row(fn, dx(sx), dy(sy), targets=[target], wrt=BOTH)
for fn, target in [(rf.b_builtin_max, builtins.max), (rf.b_builtin_min, builtins.min)]:
    row(fn, grid(PY), grid(PY, 0.05), targets=[target], wrt=BOTH)
    row(fn, grid(()), grid((), 0.05), targets=[target], wrt=BOTH, f32=True, f32_xfail=WINNER_F32)

for sx, sy in [
    ((2, 3), (2, 3)),
    ((3, 4), (4,)),
    ((4,), (3, 4)),
    ((3, 1), (1, 4)),
    ((3,), PY),
    ((), (3,)),
]:
    row(
        rf.b_where,
        away(sx),
        normal(sy),
        targets=[np.where],
        wrt=BOTH,
        f32=sx == (2, 3) and sy == (2, 3),
    )
for sm, sx, sy in [((3, 4), (4,), PY), ((3, 4), (3, 1), (1, 4)), ((4,), (2, 4), (4,))]:
    row(rf.b_where_mask, normal(sx), normal(sy), mask(sm), targets=[np.where], wrt=BOTH)

ELIDE_OPTIONS = None  # fixed; the rows stay as regression tests
for sm, sx, bug in [
    ((3, 4), (3, 4), None),
    ((3, 4), (4,), ELIDE_OPTIONS),
    ((3, 4), (), ELIDE_OPTIONS),
    ((3, 4), PY, ELIDE_OPTIONS),
]:
    row(rf.b_where_literal, normal(sx), mask(sm), targets=[np.where], xfail=bug)

# clip ---------------------------------------------------------------------

CLIP_BROADCAST = None  # fixed; the rows stay as regression tests
for s in [PY, (), (7,), (3, 4)]:
    row(rf.clip_fn, cliprange(s), targets=[np.clip], f32=s == (3, 4))
    row(rf.clip_lower, cliprange(s), targets=[np.clip])
    row(rf.clip_upper_kw, cliprange(s), targets=[np.clip])
for s in [(7,), (3, 4)]:
    row(rf.clip_method, cliprange(s), targets=["clip"], f32=s == (3, 4))
row(
    rf.clip_array_bounds,
    cliprange((3, 4)),
    Const(np.full((3, 4), -0.5), "lo[3,4]"),
    Const(np.full((4,), 0.5), "hi[4]"),
    targets=[np.clip],
)
row(
    rf.clip_array_bounds,
    cliprange((4,)),
    Const(np.full((3, 4), -0.5), "lo[3,4]"),
    0.5,
    targets=[np.clip],
    xfail=CLIP_BROADCAST,
)

# Reductions ---------------------------------------------------------------

AXES_2D = [
    (None, False),
    (None, True),
    (0, False),
    (0, True),
    (-1, False),
    (-1, True),
    ((0, 1), False),
    ((0, 1), True),
]
AXES_3D = [((0, 2), False), ((0, 2), True), (1, False), ((-1, 0), True)]
AXES_1D = [(None, False), (0, True)]
for fn, target, dom in [
    (rf.red_sum, np.sum, normal),
    (rf.red_mean, np.mean, normal),
    (rf.red_max, np.max, distinct),
    (rf.red_amax, np.amax, distinct),
    (rf.red_min, np.min, distinct),
    (rf.red_amin, np.amin, distinct),
    (rf.red_prod, np.prod, lambda s: away(s, 0.5, 1.5)),
    (rf.meth_sum, "sum", normal),
    (rf.meth_mean, "mean", normal),
    (rf.meth_max, "max", distinct),
    (rf.meth_min, "min", distinct),
    (rf.meth_prod, "prod", lambda s: away(s, 0.5, 1.5)),
]:
    method = isinstance(target, str)
    for shp, variants in [
        ((2, 3), AXES_2D),
        ((2, 3, 4), AXES_3D),
        ((4,), AXES_1D),
        ((), [(None, False)]),
        (PY, [(None, False)]),
    ]:
        if method and shp == (2, 3, 4):
            variants = variants[:2]
        if method and shp is PY:  # a Python float has no .sum()
            continue
        for axis, keepdims in variants:
            row(
                fn,
                dom(shp),
                axis,
                keepdims,
                targets=[target],
                f32=not method
                and shp == (2, 3)
                and (axis, keepdims) in [(0, False), (-1, True)]
                and fn in (rf.red_sum, rf.red_mean, rf.red_max, rf.red_prod),
            )
for fn, target in [(rf.red_prod, np.prod), (rf.meth_prod, "prod")]:
    for axis in [None, 0, 1]:
        row(fn, with_zero((2, 3)), axis, False, targets=[target])

VAR_VARIANTS = [
    (None, 0, False),
    (None, 1, True),
    (0, 0, False),
    (0, 1, True),
    (-1, 1, False),
    ((0, 1), 0, True),
    ((0, 1), 1, False),
]
for fn, target in [
    (rf.red_var, np.var),
    (rf.red_std, np.std),
    (rf.meth_var, "var"),
    (rf.meth_std, "std"),
]:
    for axis, ddof, keepdims in VAR_VARIANTS:
        row(
            fn,
            normal((3, 4)),
            axis,
            ddof,
            keepdims,
            targets=[target],
            f32=not isinstance(target, str) and (axis, ddof) == (0, 1),
        )
    row(fn, normal((2, 3, 4)), (0, 2), 1, False, targets=[target])
    row(fn, normal((5,)), None, 0, False, targets=[target])

for fn, target in [(rf.red_cumsum, np.cumsum), (rf.meth_cumsum, "cumsum")]:
    for shp, axis in [
        ((5,), None),
        ((5,), 0),
        ((2, 3), None),
        ((2, 3), 0),
        ((2, 3), -1),
        ((2, 3, 2), 1),
    ]:
        row(fn, normal(shp), axis, targets=[target])

CUMSUM_SCALAR = None  # fixed; the rows stay as regression tests
for fn, target in [(rf.red_cumsum_scaled, np.cumsum), (rf.meth_cumsum_scaled, "cumsum")]:
    for sw in [(4,), PY, (), (3, 1)]:
        row(
            fn,
            normal((4,)),
            normal(sw),
            targets=[target],
            wrt=BOTH,
            xfail=None if sw == (4,) else CUMSUM_SCALAR,
            xfail_wrt=((0, 1), 1),
        )
for sw in [PY, (), (3, 1)]:
    row(rf.red_sum_scaled, normal((2, 3)), normal(sw), targets=[np.sum], wrt=BOTH)
row(rf.red_sum_axis0_literal, normal((2, 3)), targets=[np.sum])
row(rf.red_mean_tuple_keepdims_literal, normal((2, 3, 4)), targets=[np.mean])
row(rf.red_max_last_literal, distinct((2, 3, 4)), targets=[np.max])
row(rf.red_var_ddof_literal, normal((3, 4)), targets=[np.var])
row(rf.red_cumsum_default, normal((2, 3)), targets=[np.cumsum])
row(rf.meth_sum_noargs, normal((2, 3)), targets=["sum"])
row(rf.meth_mean_positional, normal((2, 3)), targets=["mean"])

# norm ---------------------------------------------------------------------

for s in [(4,), (2, 3), (2, 3, 2)]:
    row(rf.norm_default, normal(s), targets=[np.linalg.norm], f32=s == (2, 3))
for s, axis, keepdims in [
    ((2, 3), 0, False),
    ((2, 3), -1, True),
    ((2, 3), (0, 1), False),
    ((2, 3), (0, 1), True),
    ((2, 3, 4), (1, 2), False),
    ((2, 3, 4), 1, True),
    ((4,), 0, False),
    ((4,), None, True),
    ((2, 3), None, True),
    ((2, 3), None, False),
]:
    row(rf.norm_axis, normal(s), axis, keepdims, targets=[np.linalg.norm])
for s, ord_ in [((4,), 2), ((4,), None), ((2, 3), "fro"), ((2, 3), None)]:
    row(rf.norm_ord, normal(s), ord_, targets=[np.linalg.norm])
for s, ord_, axis in [((2, 3), 2, 1), ((2, 3), None, 0), ((2, 3), "fro", (0, 1))]:
    row(rf.norm_ord_axis, normal(s), ord_, axis, targets=[np.linalg.norm])

# Shapes and copies --------------------------------------------------------

row(rf.sh_reshape_fn, normal((2, 6)), targets=[np.reshape])
row(rf.sh_reshape_fn, normal((3, 2, 2)), targets=[np.reshape])
row(rf.sh_reshape_arg, normal((2, 3)), (3, 2), targets=[np.reshape])
row(rf.sh_reshape_arg, normal((2, 3)), -1, targets=[np.reshape])
row(rf.sh_reshape_arg, normal(()), (1, 1), targets=[np.reshape])
row(rf.sh_reshape_method_varargs, normal((3, 4)), targets=["reshape"])
row(rf.sh_reshape_method_flat, normal((3, 4)), targets=["reshape"])
row(rf.sh_reshape_method_tuple, normal((2, 6)), targets=["reshape"])
row(rf.sh_transpose_fn, normal((2, 3)), targets=[np.transpose], f32=True)
row(rf.sh_transpose_fn, normal((2, 3, 4)), targets=[np.transpose])
row(rf.sh_transpose_fn_axes, normal((2, 3, 4)), targets=[np.transpose])
row(rf.sh_transpose_fn_axes_kw, normal((2, 3, 4)), (2, 0, 1), targets=[np.transpose])
row(rf.sh_transpose_fn_axes_kw, normal((2, 3)), None, targets=[np.transpose])
row(rf.sh_transpose_method, normal((2, 3, 4)), targets=["transpose"])
row(rf.sh_transpose_method_varargs, normal((2, 3, 4)), targets=["transpose"])
row(rf.sh_transpose_method_tuple, normal((2, 3, 4)), targets=["transpose"])
for s in [(2, 3), (2, 3, 4), (3,)]:
    row(rf.sh_T, normal(s), targets=[".T"])
for s in [(), (2, 3)]:
    row(rf.sh_copy_fn, normal(s), targets=[np.copy])
    row(rf.sh_copy_method, normal(s), targets=["copy"])
    row(rf.sh_astype, normal(s), targets=["astype"])
row(rf.sh_ravel_fn, normal((2, 3)), targets=[np.ravel])
row(rf.sh_ravel_method, normal((2, 3)), targets=["ravel"])
row(rf.sh_flatten, normal((2, 3)), targets=["flatten"])
row(rf.sh_squeeze_fn, normal((3, 1, 2)), targets=[np.squeeze])
row(rf.sh_squeeze_fn_axis, normal((3, 1, 2)), targets=[np.squeeze])
row(rf.sh_squeeze_method, normal((1, 3, 1)), targets=["squeeze"])
for s, axis in [((3,), 0), ((2, 3), -1), ((2, 3), (0, 2))]:
    row(rf.sh_expand_dims, normal(s), axis, targets=[np.expand_dims])
for s in [PY, (), (3,), (2, 3)]:
    row(rf.sh_atleast_1d, normal(s), targets=[np.atleast_1d])
    row(rf.sh_atleast_2d, normal(s), targets=[np.atleast_2d])
for s, to in [
    ((3,), (3,)),
    ((3,), (2, 3)),
    ((3, 1), (3, 4)),
    ((), (2, 2)),
    (PY, (2, 2)),
    ((1, 3), (2, 2, 3)),
]:
    row(
        rf.sh_broadcast_to,
        normal(s),
        to,
        targets=[np.broadcast_to],
        xfail=None if s == to else ELIDE_OPTIONS,
    )
row(rf.sh_flip, normal((2, 3)), targets=[np.flip])
for s, axis in [((2, 3), 1), ((2, 3), (0, 1)), ((4,), 0), ((2, 3, 2), None)]:
    row(rf.sh_flip_axis, normal(s), axis, targets=[np.flip])
row(rf.sh_roll_flat, normal((2, 3)), targets=[np.roll])
for s, shift, axis in [
    ((5,), 2, None),
    ((2, 3), 1, 0),
    ((2, 3), -1, 1),
    ((2, 3), 4, None),
    ((2, 3), (1, 2), (0, 1)),
]:
    row(rf.sh_roll, normal(s), shift, axis, targets=[np.roll])
row(rf.sh_triu_default, normal((3, 3)), targets=[np.triu])
for k in [0, 1, -1]:
    row(rf.sh_triu, normal((3, 4)), k, targets=[np.triu])
    row(rf.sh_tril, normal((4, 3)), k, targets=[np.tril])

# np.take: repeated and negative indices add up in the adjoint
TAKE = np.array([0, 2, 2, -1])
for s, indices, axis in [
    ((4, 3), TAKE, 0),
    ((3, 4), np.array([[0, 1], [3, 3]]), 1),
    ((2, 3), np.array([5, 0, 5]), None),
    ((2, 3), TAKE, -1),
]:
    row(rf.sh_take, normal(s), Const(indices), axis, targets=[np.take], f32=axis == 0)
row(rf.sh_take_wrap, normal((3, 2)), Const(np.array([4, -1, 0])), targets=[np.take])
row(rf.sh_take_method, normal((2, 3)), Const(np.array([[0, 5], [5, 3]])), targets=["take"])

DOT_ND = None  # fixed; the rows stay as regression tests
DOT_SCALAR = None  # fixed; the rows stay as regression tests
for sx, sy, bug, bug_wrt in [
    ((2, 3), (3, 4), None, None),
    ((3,), (3,), None, None),
    ((2, 3), (3,), None, None),
    ((3,), (3, 4), None, None),
    ((2, 2, 3), (3,), None, None),
    ((2, 2, 3), (2, 3, 4), DOT_ND, None),
    (PY, (3,), DOT_SCALAR, None),
    ((2, 3), (), DOT_SCALAR, None),
]:
    row(rf.sh_dot, normal(sx), normal(sy), targets=[np.dot], wrt=BOTH, xfail=bug, xfail_wrt=bug_wrt)
row(rf.sh_dot_method, normal((2, 3)), normal((3, 4)), targets=["dot"], wrt=BOTH)
row(rf.sh_dot_method, normal((3,)), normal((3,)), targets=["dot"], wrt=BOTH)

for sx, sy, axis in [((3,), (3,), 0), ((3,), (3,), 1), ((2, 3), (2, 3), -1), ((), (), 0)]:
    row(rf.sh_stack_axis, normal(sx), normal(sy), axis, targets=[np.stack], wrt=BOTH)
row(rf.sh_stack, normal((2, 3)), normal((2, 3)), targets=[np.stack], wrt=BOTH)
VSTACK_1D = None  # fixed; the rows stay as regression tests
row(rf.sh_vstack, normal((2, 3)), normal((1, 3)), targets=[np.vstack], wrt=BOTH)
row(rf.sh_vstack, normal((3,)), normal((3,)), targets=[np.vstack], wrt=BOTH, xfail=VSTACK_1D)
row(rf.sh_vstack, normal((3,)), normal((2, 3)), targets=[np.vstack], wrt=BOTH, xfail=VSTACK_1D)
row(rf.sh_concatenate, normal((2, 3)), normal((1, 3)), targets=[np.concatenate], wrt=BOTH)
row(rf.sh_concatenate, normal((2,)), normal((3,)), targets=[np.concatenate], wrt=BOTH)
CONCAT_NONE = None  # fixed; the rows stay as regression tests
for sx, sy, axis, bug in [
    ((2, 3), (2, 1), -1, None),
    ((2, 3), (2, 1), 1, None),
    ((1, 3), (2, 3), 0, None),
    ((2, 2), (3,), None, CONCAT_NONE),
]:
    row(
        rf.sh_concatenate_axis,
        normal(sx),
        normal(sy),
        axis,
        targets=[np.concatenate],
        wrt=BOTH,
        xfail=bug,
    )
for s in [PY, ()]:
    row(rf.sh_array_of_floats, normal(s), normal(s), targets=[np.array], wrt=BOTH)
for s in [(), (2, 3)]:
    row(rf.sh_array_copy, normal(s), targets=[np.array])
    row(rf.sh_asarray, normal(s), targets=[np.asarray])
row(rf.sh_array_copy, normal(PY), targets=[np.array])
row(rf.sh_asarray_list, normal((3,)), normal((3,)), targets=[np.asarray], wrt=BOTH)
row(rf.sh_asarray_list, normal(PY), normal(PY), targets=[np.asarray], wrt=BOTH)
for sx, sy in [(PY, PY), ((3,), (3,)), ((2, 3), (3,)), ((3,), PY)]:
    row(rf.sh_builtin_sum, normal(sx), normal(sy), targets=[builtins.sum], wrt=BOTH)
    row(rf.sh_builtin_sum_start, normal(sx), normal(sy), targets=[builtins.sum], wrt=BOTH)
for sx, sy in [(PY, PY), ((3,), (3,)), ((2, 3), (3,))]:
    row(rf.sh_builtin_list, normal(sx), normal(sy), targets=[builtins.list], wrt=BOTH)
    row(rf.sh_builtin_tuple, normal(sx), normal(sy), targets=[builtins.tuple], wrt=BOTH)
for s in [PY, (), (3,)]:
    row(rf.ew_full, normal(s), targets=[np.full])
for s in [PY, ()]:
    row(rf.ew_full_like, normal(s), targets=[np.full_like])
for s in [PY, ()]:
    row(rf.sh_builtin_float, normal(s), targets=[builtins.float])

# Linear algebra -----------------------------------------------------------

for sx, sy in [((3,), (4,)), ((2, 2), (3,)), ((), (3,))]:
    row(rf.la_outer, normal(sx), normal(sy), targets=[np.outer], wrt=BOTH)
row(rf.la_einsum_matmul, normal((2, 3)), normal((3, 4)), targets=[np.einsum], wrt=BOTH)
row(rf.la_einsum_batched, normal((2, 2, 3)), normal((2, 3, 2)), targets=[np.einsum], wrt=BOTH)
row(rf.la_einsum_implicit, normal((3,)), normal((3,)), targets=[np.einsum], wrt=BOTH)
row(rf.la_einsum_sum_away, normal((2, 3)), targets=[np.einsum])
row(rf.la_einsum_three, normal((2, 3)), normal((3,)), targets=[np.einsum], wrt=BOTH)
for sx, sy in [((4,), (4,)), ((2, 3), (2, 3))]:
    row(rf.la_vdot, normal(sx), normal(sy), targets=[np.vdot], wrt=BOTH)
for n, batch in [(1, ()), (3, ()), (3, (2,))]:
    row(rf.la_inv, wellcond(n, batch), targets=[np.linalg.inv], f32=n == 3 and not batch)
    row(rf.la_det_batched, wellcond(n, batch), targets=[np.linalg.det])
row(rf.la_det, wellcond(3), targets=[np.linalg.det], f32=True)
for a, b in [
    (wellcond(3), normal((3,))),
    (wellcond(3), normal((3, 2))),
    (wellcond(3, (2,)), normal((2, 3, 2))),
]:
    row(rf.la_solve, a, b, targets=[np.linalg.solve], wrt=BOTH)
for s in [(3, 3), (3, 4), (4, 2)]:
    row(rf.la_trace, normal(s), targets=[np.trace])
    row(rf.la_trace_method, normal(s), targets=["trace"])
for s, offset in [((3, 3), 1), ((3, 4), -1), ((3, 4), 2)]:
    row(rf.la_trace_offset, normal(s), offset, targets=[np.trace])
TRACE_3D = None  # fixed; the rows stay as regression tests
row(rf.la_trace_axes, normal((2, 3, 3)), 1, 2, targets=[np.trace])
row(rf.la_trace_axes, normal((2, 3, 4)), -2, -1, targets=[np.trace])
row(rf.la_trace_axes, normal((3, 3, 3)), 0, 1, targets=[np.trace], xfail=TRACE_3D)
row(rf.la_trace_3d_default, normal((3, 3, 3)), targets=[np.trace], xfail=TRACE_3D)
row(rf.la_trace_3d_default, normal((3, 4, 2)), targets=[np.trace], xfail=TRACE_3D)
row(rf.la_trace_axes, normal((3, 2, 3)), 0, 2, targets=[np.trace], xfail=TRACE_3D)
for s, k in [((3,), 0), ((3,), 1), ((3,), -2), ((3, 3), 0), ((3, 3), 1), ((3, 4), -1), ((4, 3), 2)]:
    row(rf.la_diag, normal(s), k, targets=[np.diag])
row(rf.la_diag_default, normal((3,)), targets=[np.diag])
row(rf.la_diag_default, normal((3, 4)), targets=[np.diag])


# More elementwise functions -------------------------------------------------

for fn, target, dom in [
    (rf.u_sinc, np.sinc, normal),
    (rf.u_deg2rad, np.deg2rad, normal),
    (rf.u_radians, np.radians, normal),
    (rf.u_rad2deg, np.rad2deg, normal),
    (rf.u_degrees, np.degrees, normal),
]:
    for s in [PY, (), (3,), (2, 3)]:
        row(fn, dom(s), targets=[target], f32=s == (2, 3))
row(rf.u_sinc, with_zero((2, 3)), targets=[np.sinc])  # the slope at 0 is 0
row(rf.u_sinc, Const(0.0, "zero:float"), targets=[np.sinc], float_ok=True)
for sx, sy in PAIRS:
    row(rf.b_logaddexp2, normal(sx), normal(sy), targets=[np.logaddexp2], wrt=BOTH)
    for fn, target in [(rf.b_fmax, np.fmax), (rf.b_fmin, np.fmin)]:
        row(fn, grid(sx), grid(sy, 0.05), targets=[target], wrt=BOTH)
    row(rf.b_copysign, away(sx), away(sy), targets=[np.copysign], wrt=BOTH)
    row(
        rf.b_float_power,
        pos(sx),
        normal(sy),
        targets=[np.float_power],
        wrt=BOTH,
        f32=(sx, sy) in [((3, 4), (4,)), ((2, 3), (2, 3))],
    )
row(rf.b_logaddexp2, normal((2, 3)), normal((3,)), targets=[np.logaddexp2], wrt=BOTH, f32=True)
row(rf.b_fmax, grid((3, 4)), grid((4,), 0.05), targets=[np.fmax], wrt=BOTH, f32=True)
row(rf.b_copysign, away((3, 4)), away((4,)), targets=[np.copysign], wrt=BOTH, f32=True)

# More reductions and scans ----------------------------------------------------

for shp, axis in [((5,), None), ((5,), 0), ((2, 3), None), ((2, 3), 0), ((2, 3), -1)]:
    row(rf.red_cumprod, away(shp, 0.5, 1.5), axis, targets=[np.cumprod], f32=shp == (2, 3))
    row(rf.red_cumprod, with_zero(shp), axis, targets=[np.cumprod])
row(rf.red_cumprod, away((2, 3, 4), 0.5, 1.5), 1, targets=[np.cumprod])
row(rf.meth_cumprod, away((3, 2), 0.5, 1.5), targets=["cumprod"])
row(rf.meth_cumprod, with_zero((3, 2)), targets=["cumprod"])
for fn, target in [(rf.red_nansum, np.nansum), (rf.red_nanmean, np.nanmean)]:
    for shp, axis, keepdims in [
        ((4, 3), None, False),
        ((4, 3), 0, True),
        ((4, 3), -1, False),
        ((2, 4, 3), (0, 2), False),
    ]:
        row(fn, with_nan(shp), axis, keepdims, targets=[target], f32=axis == 0)
    row(fn, normal((2, 3)), 1, False, targets=[target])
for shp, axis in [((4,), None), ((2, 3), None), ((2, 3), 1), ((2, 3, 4), (0, 2))]:
    row(rf.red_average, normal(shp), axis, targets=[np.average])
for sx, sw, axis, keepdims in [
    ((2, 3), (2, 3), None, False),
    ((2, 3), (2, 3), 0, False),
    ((2, 3), (3,), 1, False),
    ((2, 3), (3,), -1, True),
    ((3, 4, 2), (4,), 1, False),
    ((3, 4, 2), (3, 4, 2), (0, 2), True),
]:
    row(
        rf.red_average_weights,
        normal(sx),
        pos(sw),
        axis,
        keepdims,
        targets=[np.average],
        wrt=BOTH,
        f32=sw == (3,) and not keepdims,
    )
row(rf.red_average_returned, normal((3, 2)), pos((3, 2)), targets=[np.average], wrt=BOTH)
row(rf.red_average_returned, normal((3, 2)), pos((3,)), targets=[np.average], wrt=BOTH)

# norm, every ord: vectors (an int axis, or 1-D) and matrices (two axes, or 2-D)
for ord_ in [None, 2, np.inf, -np.inf, 0, 1, -1, 3, 0.5, -2.5]:
    dom = distinct if ord_ in (np.inf, -np.inf) else away
    row(rf.norm_ord, dom((5,)), ord_, targets=[np.linalg.norm], f32=ord_ in (1, 3))
    row(rf.norm_ord_axis, dom((3, 4)), ord_, 1, targets=[np.linalg.norm])
    row(rf.norm_ord_keepdims, dom((2, 3, 4)), ord_, 0, targets=[np.linalg.norm])
for ord_ in [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]:
    dom = distinct if ord_ in (np.inf, -np.inf, 1, -1) else normal
    row(rf.norm_ord, dom((3, 4)), ord_, targets=[np.linalg.norm], f32=ord_ in ("nuc", 2))
    row(rf.norm_ord, dom((4, 3)), ord_, targets=[np.linalg.norm])
    row(rf.norm_ord_axis, dom((3, 2, 4)), ord_, (2, 0), targets=[np.linalg.norm])
    row(rf.norm_ord_keepdims, dom((2, 3, 4)), ord_, (-1, 1), targets=[np.linalg.norm])
row(rf.norm_ord1_literal, away((4,)), targets=[np.linalg.norm])
row(rf.norm_ord1_literal, distinct((3, 3)), targets=[np.linalg.norm])
row(rf.norm_ord_inf_literal, distinct((4,)), targets=[np.linalg.norm])

# More shapes, joins, splits and gathers ---------------------------------------

for s in [PY, (), (3,), (2, 3), (2, 3, 4)]:
    row(rf.sh_atleast_3d, normal(s), targets=[np.atleast_3d], f32=s == (3,))
for sx, sy in [((), (3,)), ((3,), (2, 3)), (PY, (2, 2, 2))]:
    row(rf.sh_atleast_2d_two, normal(sx), normal(sy), targets=[np.atleast_2d], wrt=BOTH)
for sx, sy in [((3,), (2,)), ((2, 3), (2, 1)), ((), (2,)), ((2, 1, 3), (2, 2, 3))]:
    row(rf.sh_hstack, normal(sx), normal(sy), targets=[np.hstack], wrt=BOTH, f32=sx == (3,))
for s in [(2, 3), (2, 3, 4)]:
    row(rf.sh_hstack_array, normal(s), targets=[np.hstack])
for sx, sy in [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3, 1), (2, 3, 2)), ((), ())]:
    row(rf.sh_dstack, normal(sx), normal(sy), targets=[np.dstack], wrt=BOTH)
for sx, sy in [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (2, 1)), ((), ())]:
    row(rf.sh_column_stack, normal(sx), normal(sy), targets=[np.column_stack], wrt=BOTH)
for shp, sections, axis in [
    ((6,), 3, 0),
    ((2, 6), 2, 1),
    ((2, 6), [1, 4], -1),
    ((4, 3), [1, 1, 3], 0),
]:
    row(rf.sh_split, normal(shp), sections, axis, targets=[np.split], f32=shp == (6,))
for s in [(5,), (5, 2)]:
    row(rf.sh_array_split, normal(s), targets=[np.array_split])
for shp, repeats, axis in [
    ((3,), 2, None),
    ((2, 3), 2, None),
    ((2, 3), 3, 1),
    ((2, 3), [1, 0, 2], -1),
    ((2, 3), np.array([2]), 0),
    ((), 3, None),
]:
    row(rf.sh_repeat, normal(shp), repeats, axis, targets=[np.repeat], f32=repeats == 2)
row(rf.sh_repeat_method, normal((2, 3)), targets=["repeat"])
for shp, reps in [((3,), 2), ((2, 3), (2, 1)), ((3,), (2, 2)), ((2, 3), 3), ((), (2, 3))]:
    row(rf.sh_tile, normal(shp), reps, targets=[np.tile], f32=reps == 2)
for shp, width in [((3,), 2), ((2, 3), (1, 2)), ((2, 3), ((0, 1), (2, 0))), ((2, 2, 2), 1)]:
    row(rf.sh_pad, normal(shp), width, targets=[np.pad], f32=width == 2)
for sv in [PY, ()]:
    row(rf.sh_pad_value, normal((2, 3)), normal(sv), targets=[np.pad], wrt=BOTH)
for shp, idx, axis in [
    ((3, 4), [[0, 3, 3], [1, 1, 0], [2, 0, 1]], 1),
    ((3, 4), [[0], [2], [2]], -1),
    ((3, 4), [[2, 0, 2, 1]], 0),
    ((5,), [4, 0, 0, 2], 0),
    ((2, 3), [5, 0, 5], None),
]:
    row(rf.sh_take_along_axis, normal(shp), ints(idx), axis, targets=[np.take_along_axis])
row(
    rf.sh_take_along_axis,
    normal((3, 4)),
    ints([[0, 3, 3]]),
    1,
    targets=[np.take_along_axis],
    f32=True,
    name="take_along_axis_f32",
)
for shp, axis in [((5,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 2), 1), ((3, 4), None)]:
    row(rf.sh_sort, distinct(shp), axis, targets=[np.sort], f32=shp == (3, 4) and axis == 0)
row(rf.sh_sort_default, distinct((3, 4)), targets=[np.sort])

# More linear algebra ----------------------------------------------------------

for sx, sy in [((2, 3), (3, 2)), ((3,), (2,)), ((3,), (2, 2)), ((2, 1, 2), (2, 3)), ((), (2,))]:
    row(rf.la_kron, normal(sx), normal(sy), targets=[np.kron], wrt=BOTH, f32=sx == (2, 3))
for sx, sy, axes in [
    ((2, 3), (3, 4), 1),
    ((2, 3, 4), (3, 4, 2), 2),
    ((2, 3), (4,), 0),
    ((2, 3, 4), (4, 2, 3), ([1, 2], [2, 0])),
    ((3, 2), (2, 3), ([0, 1], [1, 0])),
    ((3, 2), (4, 3), (0, -1)),
]:
    row(
        rf.la_tensordot,
        normal(sx),
        normal(sy),
        axes,
        targets=[np.tensordot],
        wrt=BOTH,
        f32=axes == 1,
    )
row(rf.la_tensordot_default, normal((4, 2, 3)), normal((2, 3)), targets=[np.tensordot], wrt=BOTH)
for subscripts, shp in [
    ("ii->", (3, 3)),
    ("ii", (3, 3)),
    ("ii->i", (3, 3)),
    ("bii->b", (2, 3, 3)),
    ("iji->j", (3, 2, 3)),
    ("...ii->...i", (2, 3, 3)),
    ("i...->...", (3, 2, 2)),
    ("...", (2, 3)),
    ("ij...->...j", (2, 3)),
]:
    row(
        rf.la_einsum,
        subscripts,
        normal(shp),
        targets=[np.einsum],
        wrt=(1,),
        f32=subscripts == "ii->",
    )
for subscripts, sx, sy in [
    ("...ij,...jk->...ik", (2, 2, 3), (3, 4)),
    ("...ij,...jk", (2, 1, 2, 3), (3, 3, 4)),
    ("ii,ij->j", (3, 3), (3, 2)),
    ("iij,jk->ik", (2, 2, 3), (3, 4)),
    ("ij,ij->", (2, 3), (2, 3)),
    ("i...,...i->...", (3, 1, 2), (2, 2, 3)),
]:
    row(
        rf.la_einsum_two,
        subscripts,
        normal(sx),
        normal(sy),
        targets=[np.einsum],
        wrt=((1, 2), 1, 2),
    )
for n, batch in [(1, ()), (3, ()), (3, (2,))]:
    row(rf.la_slogdet, wellcond(n, batch), targets=[np.linalg.slogdet], f32=n == 3 and not batch)
    row(rf.la_cholesky, spd(n, batch), targets=[np.linalg.cholesky], f32=n == 3 and not batch)
    row(rf.la_cholesky_upper, spd(n, batch), targets=[np.linalg.cholesky])
    row(rf.la_eigh, sym(n, batch), targets=[np.linalg.eigh], f32=n == 3 and not batch)
    row(rf.la_eigh_upper, sym(n, batch), targets=[np.linalg.eigh])
    row(rf.la_svd_values_hermitian, sym(n, batch), targets=[np.linalg.svd])
    row(rf.la_pinv_hermitian, sym(n, batch), targets=[np.linalg.pinv])
row(
    rf.la_slogdet,
    Dom("negdet", (3, 3), lambda r, s: -(r.standard_normal(s) + 3 * np.eye(3))),
    targets=[np.linalg.slogdet],
)
for s in [(3, 3), (4, 2), (2, 4), (2, 3, 2)]:
    row(rf.la_svd_values, normal(s), targets=[np.linalg.svd], f32=s == (4, 2))
    row(rf.la_svd, normal(s), False, targets=[np.linalg.svd], f32=s == (4, 2))
    row(rf.la_qr, normal(s), targets=[np.linalg.qr], f32=s == (4, 2))
    row(rf.la_qr_r, normal(s), targets=[np.linalg.qr])
    row(rf.la_pinv, normal(s), targets=[np.linalg.pinv], f32=s == (4, 2))
for s in [(3, 3), (2, 3, 3), (4, 2), (2, 4)]:
    row(rf.la_svd, normal(s), True, targets=[np.linalg.svd])


# Axes, flips, differences, appends ----------------------------------------------


def distinct_nan(shape):
    """``distinct`` values with a nan in every other row (a unique nanmax/nanmin)."""

    def make(r, s):
        v = distinct(s)(r)
        v.reshape(-1, s[-1])[::2, 1] = np.nan
        return v

    return Dom("distinct_nan", shape, make)


for s, a1, a2 in [((2, 3), 0, 1), ((2, 3, 4), 0, 2), ((2, 3, 4), 1, -1), ((3,), 0, 0)]:
    row(rf.sh_swapaxes, normal(s), a1, a2, targets=[np.swapaxes], f32=s == (2, 3))
row(rf.sh_swapaxes_method, normal((2, 3, 4)), targets=["swapaxes"], f32=True)
for s, src, dst in [((2, 3, 4), 0, -1), ((2, 3, 4), (0, 1), (2, 0)), ((2, 3), -1, 0)]:
    row(rf.sh_moveaxis, normal(s), src, dst, targets=[np.moveaxis], f32=s == (2, 3))
for s, k, axes in [
    ((2, 3), 1, (0, 1)),
    ((2, 3), 2, (0, 1)),
    ((2, 3), -1, (1, 0)),
    ((2, 3), 5, (0, 1)),
    ((2, 3, 4), 3, (1, 2)),
]:
    row(rf.sh_rot90, normal(s), k, axes, targets=[np.rot90], f32=k == 1)
row(rf.sh_rot90_default, normal((3, 2, 2)), targets=[np.rot90])
for s in [(2, 3), (2, 3, 2)]:
    row(rf.sh_fliplr, normal(s), targets=[np.fliplr], f32=s == (2, 3))
for s in [(3,), (2, 3)]:
    row(rf.sh_flipud, normal(s), targets=[np.flipud], f32=s == (2, 3))
for s, n, axis in [((5,), 1, -1), ((5,), 3, 0), ((4, 3), 1, 0), ((4, 3), 2, -1), ((2, 4, 3), 2, 1)]:
    row(rf.sh_diff, normal(s), n, axis, targets=[np.diff], f32=(n, axis) == (1, 0))
row(rf.sh_diff, normal((3, 2)), 0, 0, targets=[np.diff])
row(rf.sh_diff_default, normal((2, 4)), targets=[np.diff])
for sp, sq in [(PY, (1, 3)), ((), (2, 3)), ((1, 3), PY)]:
    row(
        rf.sh_diff_ends,
        normal((4, 3)),
        normal(sp),
        normal(sq),
        targets=[np.diff],
        wrt=((0, 1, 2), 0, 1, 2),
        f32=sp == (1, 3),
    )
for sx, sv, axis in [((2, 3), (1, 3), 0), ((2, 3), (2, 2), 1), ((2, 3), (2, 2), -1)]:
    row(rf.sh_append, normal(sx), normal(sv), axis, targets=[np.append], wrt=BOTH, f32=axis == 0)
for sx, sv in [((2, 3), (3,)), ((3,), PY), ((2, 2), (2, 3)), (PY, ())]:
    row(rf.sh_append_flat, normal(sx), normal(sv), targets=[np.append], wrt=BOTH)
row(rf.sh_astype_bool, away((2, 3)), targets=["astype"], f32=True)
for s in [(3,), (2, 3)]:  # never within 0.04 of an integer or of 0: the casts are flat
    row(rf.sh_array_int_cast, grid(s, 0.05), targets=[np.array, np.asarray])

# Diagonals, products, powers, eigvalsh, lstsq ------------------------------------

for s, offset, a1, a2 in [
    ((3, 4), 0, 0, 1),
    ((3, 4), 1, 0, 1),
    ((4, 3), -2, 0, 1),
    ((3, 4), 0, 1, 0),
    ((2, 3, 4), 1, 1, 2),
    ((3, 2, 3), -1, -1, 0),
]:
    row(rf.la_diagonal, normal(s), offset, a1, a2, targets=[np.diagonal], f32=offset == 1)
row(rf.la_diagonal_method, normal((3, 4)), targets=["diagonal"])
row(rf.la_diagonal_method, normal((2, 3, 3)), targets=["diagonal"])
for sx, sy in [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (4, 3)),
    ((2, 3), (4, 3)),
    ((2, 2, 3), (1, 3)),
    ((), (3,)),
    ((2, 3), PY),
]:
    f32 = (sx, sy) == ((2, 3), (4, 3))  # np.inner(x32, 0.5) is float64: no weak scalars
    row(rf.la_inner, normal(sx), normal(sy), targets=[np.inner], wrt=BOTH, f32=f32)
# 3-vectors only: 2-vectors are refused (test_cross_of_two_vectors_is_refused)
for sx, sy in [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((4, 1, 3), (2, 3)),
    ((2, 3), (2, 3)),
    ((1, 3), (4, 3)),
]:
    row(rf.la_cross, normal(sx), normal(sy), targets=[np.cross], wrt=BOTH, f32=sx == (2, 3))
row(rf.la_cross_axis, normal((3, 4)), normal((4, 3)), 0, -1, 0, targets=[np.cross], wrt=BOTH)
row(rf.la_cross_axis, normal((3, 4)), normal((3, 4)), 0, 0, -1, targets=[np.cross], wrt=BOTH)
row(rf.la_cross_same_axis, normal((3, 2)), normal((3, 1)), 0, targets=[np.cross], wrt=BOTH)
for n, batch, power in [(3, (), 1), (3, (), 2), (3, (), 3), (2, (2,), 4), (3, (), 0), (3, (), -2)]:
    row(
        rf.la_matrix_power,
        wellcond(n, batch),
        power,
        targets=[np.linalg.matrix_power],
        f32=power == 3,
        rtol=1e-5,
    )
for sx, sy, sz in [((2, 3), (3, 4), (4, 2)), ((3,), (3, 4), (4,)), ((3,), (3, 2), (2, 4))]:
    row(
        rf.la_multi_dot,
        normal(sx),
        normal(sy),
        normal(sz),
        targets=[np.linalg.multi_dot],
        wrt=((0, 1, 2), 0, 1, 2),
        f32=sx == (2, 3),
    )
for sx, sy in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2))]:
    row(rf.la_multi_dot_two, normal(sx), normal(sy), targets=[np.linalg.multi_dot], wrt=BOTH)
for n, batch in [(1, ()), (3, ()), (3, (2,))]:
    row(rf.la_eigvalsh, sym(n, batch), targets=[np.linalg.eigvalsh], f32=n == 3 and not batch)
    row(rf.la_eigvalsh_upper, sym(n, batch), targets=[np.linalg.eigvalsh])
for a, b in [
    (normal((4, 3)), normal((4,))),
    (normal((5, 2)), normal((5, 3))),
    (wellcond(3), normal((3,))),
    (normal((2, 4)), normal((2,))),
]:
    row(rf.la_lstsq, a, b, targets=[np.linalg.lstsq], wrt=BOTH, f32=a.shape == (4, 3))
    row(rf.la_lstsq_residuals, a, b, targets=[np.linalg.lstsq], wrt=BOTH)

# The nan reductions, ptp, median, trapezoid ----------------------------------------

NAN_VARIANTS = [
    ((4, 3), None, False),
    ((4, 3), 0, True),
    ((4, 3), -1, False),
    ((2, 4, 3), (0, 2), False),
]
for shp, axis, keepdims in NAN_VARIANTS:
    for fn, target in [(rf.red_nanmax, np.nanmax), (rf.red_nanmin, np.nanmin)]:
        row(fn, distinct_nan(shp), axis, keepdims, targets=[target], f32=axis == 0)
    row(rf.red_nanprod, with_nan(shp), axis, keepdims, targets=[np.nanprod], f32=axis == 0)
    for fn, target in [(rf.red_nanvar, np.nanvar), (rf.red_nanstd, np.nanstd)]:
        for ddof in (0, 1):
            row(fn, with_nan(shp), axis, ddof, keepdims, targets=[target], f32=axis == 0)
row(rf.red_nanmax, distinct((2, 3)), 1, False, targets=[np.nanmax])
row(rf.red_nanprod, with_zero((2, 3)), 1, False, targets=[np.nanprod])
row(rf.red_nanvar, normal((2, 3)), None, 1, False, targets=[np.nanvar])
for shp, axis, keepdims in [
    ((5,), None, False),
    ((3, 4), None, True),
    ((3, 4), 0, False),
    ((3, 4), -1, True),
    ((2, 3, 4), (0, 2), False),
]:
    row(rf.red_ptp, distinct(shp), axis, keepdims, targets=[np.ptp], f32=axis == 0)
    row(rf.red_median, distinct(shp), axis, keepdims, targets=[np.median], f32=axis == 0)
row(rf.red_median, distinct((3, 5)), 1, False, targets=[np.median])
for shp, axis in [((5,), -1), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1)]:
    row(rf.red_trapezoid, normal(shp), axis, targets=[np.trapezoid], f32=axis == 0)
for sy, sx, axis in [((5,), (5,), -1), ((3, 4), (4,), 1), ((3, 4), (3,), 0), ((3, 4), (3, 4), 0)]:
    row(
        rf.red_trapezoid_x,
        normal(sy),
        normal(sx),
        axis,
        targets=[np.trapezoid],
        wrt=BOTH,
        f32=sy == (3, 4) and axis == 1,
    )
for sd in [PY, ()]:
    row(rf.red_trapezoid_dx, normal((3, 4)), pos(sd), targets=[np.trapezoid], wrt=BOTH)

# real and conj of real values: the identity ------------------------------------------

for fn, target in [
    (rf.u_real, np.real),
    (rf.u_real_attr, ".real"),
    (rf.u_conj, np.conj),
    (rf.u_conjugate, np.conjugate),
    (rf.u_conj_method, "conj"),
    (rf.u_conjugate_method, "conjugate"),
]:
    for s in [PY, (), (3,), (2, 3)]:
        if s is PY and isinstance(target, str):
            continue  # a Python float has .real and .conjugate(), but not .conj()
        row(fn, normal(s), targets=[target], f32=s == (2, 3))
# np.real of a complex value (tests/test_complex_spectral.py has the complex rules' rows)
row(rf.u_real_of_complex, normal((3,)), targets=[np.real])


# The array-API spellings (numpy 2), positive, nancumsum ------------------------------

for s in [PY, (), (3,), (2, 3)]:
    row(rf.u_positive, normal(s), targets=[np.positive], f32=s == (2, 3))
for shp, axis in [((4, 3), None), ((4, 3), 0), ((4, 3), -1), ((2, 4, 3), 1)]:
    row(rf.red_nancumsum, with_nan(shp), axis, targets=[np.nancumsum], f32=axis == 0)
for s in [(2, 3), (2, 3, 4)]:
    row(rf.sh_matrix_transpose, normal(s), targets=[np.matrix_transpose], f32=s == (2, 3))
    row(rf.sh_linalg_matrix_transpose, normal(s), targets=[np.linalg.matrix_transpose])
    row(rf.sh_mT, normal(s), targets=[".mT"], f32=s == (2, 3))
for sx, sy in [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 2, 3), (3,))]:
    f32 = sx == (2, 3)
    row(rf.sh_linalg_matmul, normal(sx), normal(sy), targets=[np.linalg.matmul], wrt=BOTH, f32=f32)
row(rf.la_linalg_outer, normal((3,)), normal((4,)), targets=[np.linalg.outer], wrt=BOTH, f32=True)
row(rf.la_linalg_tensordot, normal((2, 3)), normal((3, 4)), targets=[np.linalg.tensordot], wrt=BOTH)
for sx, sy, axis in [((3,), (3,), -1), ((2, 3), (3,), -1), ((3, 2), (3, 1), 0)]:
    row(rf.la_linalg_cross, normal(sx), normal(sy), axis, targets=[np.linalg.cross], wrt=BOTH)
for s, offset in [((3, 4), 0), ((3, 4), 1), ((2, 4, 3), -1)]:
    row(rf.la_linalg_diagonal, normal(s), offset, targets=[np.linalg.diagonal], f32=offset == 1)
    row(rf.la_linalg_trace, normal(s), offset, targets=[np.linalg.trace], f32=offset == 1)
for sx, sy, axis in [
    ((3,), (3,), -1),
    ((2, 3), (3,), -1),
    ((2, 3), (2, 3), 0),
    ((4, 1, 3), (2, 3), -1),
]:
    row(rf.la_vecdot, normal(sx), normal(sy), axis, targets=[np.vecdot], wrt=BOTH, f32=sx == (2, 3))
row(rf.la_linalg_vecdot, normal((2, 3)), normal((3,)), targets=[np.linalg.vecdot], wrt=BOTH)


# --------------------------------------------------------------------------
# Cases


def _rng(key):
    return np.random.default_rng(zlib.crc32(key.encode()))


def _wrt_label(wrt):
    return "wrt=" + (",".join(map(str, wrt)) if isinstance(wrt, tuple) else str(wrt))


def _unique_ids(rows):
    seen = {}
    for r in rows:
        base = r.id
        n = seen.get(base, 0)
        seen[base] = n + 1
        if n:
            r.name = f"{base}#{n}"


_unique_ids(ROWS)


def _cases(rows, only=lambda r: True):
    out = []
    for r in rows:
        if not only(r):
            continue
        for w in r.wrt:
            marks = ()
            if r.xfail and (r.xfail_wrt is None or w in r.xfail_wrt):
                marks = (pytest.mark.xfail(strict=True, reason=r.xfail),)
            out.append(pytest.param(r, w, id=f"{r.id}-{_wrt_label(w)}", marks=marks))
    return out


def _check_leaf(g, a, path, float_ok=False):
    if float_ok and isinstance(a, np.ndarray) and a.ndim == 0 and type(g) is float:
        return
    if isinstance(a, np.ndarray):
        # a 0-d array may get a numpy scalar of its dtype (np.float64 is 0-d array-like)
        kinds = (np.ndarray, np.generic) if a.ndim == 0 else np.ndarray
        assert isinstance(g, kinds), f"{path}: argument is an array, gradient is {g!r}"
        assert np.shape(g) == a.shape, f"{path}: shape {np.shape(g)}, argument {a.shape}"
        assert g.dtype == a.dtype, f"{path}: dtype {g.dtype}, argument {a.dtype}"
    else:
        assert np.ndim(g) == 0, f"{path}: a Python float got a gradient of shape {np.shape(g)}"


def _run(r, wrt, dtype):
    key = f"{r.id}|{np.dtype(dtype).name}"
    args = r.make(_rng(key), dtype)
    pristine = copy.deepcopy(args)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    # rows differentiate arguments a rule holds constant (copysign's sign): zeros, checked
    actual = call_twice(grad(r.func, wrt=wrt, allow_unused=True), *args)
    fd.assert_same(list(args), list(pristine), path="argument")
    if not isinstance(wrt, tuple):
        actual = (actual,)
    assert isinstance(actual, tuple) and len(actual) == len(indices)
    for i, g in zip(indices, actual):
        _check_leaf(g, args[i], f"grad[{i}]", r.float_ok)
    expected = fd.numeric_grad(r.func, args, indices)
    return actual, expected


@pytest.mark.parametrize("r,wrt", _cases(ROWS))
def test_rule(r, wrt):
    actual, expected = _run(r, wrt, np.float64)
    fd.assert_close(actual, expected, rtol=r.rtol, atol=r.atol, path="grad vs fd")


def _f32_cases():
    out = []
    for p in _cases(ROWS, only=lambda r: r.f32):
        r, w = p.values
        marks = p.marks
        if r.f32_xfail and (r.f32_xfail_wrt is None or w in r.f32_xfail_wrt):
            marks = (pytest.mark.xfail(strict=True, reason=r.f32_xfail),)
        out.append(pytest.param(r, w, id=p.id, marks=marks))
    return out


@pytest.mark.parametrize("r,wrt", _f32_cases())
def test_rule_float32(r, wrt):
    actual, expected = _run(r, wrt, np.float32)
    fd.assert_close(actual, expected, rtol=2e-3, atol=2e-4, path="float32 grad vs fd")


# --------------------------------------------------------------------------
# vjp: <dout, J v> == <J^T dout, v>

VJP_ROWS = [
    (rf.v_tanh, (normal((3, 4)),), 0),
    (rf.v_matmul, (normal((2, 3)), normal((3, 4))), (0, 1)),
    (rf.v_matmul, (normal((3,)), normal((3, 4))), (0, 1)),
    (rf.v_broadcast_mul, (normal((3, 1)), normal((4,))), (0, 1)),
    (rf.v_sum_axis, (normal((3, 4)),), 0),
    (rf.v_var_keepdims, (normal((3, 4)),), 0),
    (rf.v_transpose, (normal((2, 3, 4)),), 0),
    (rf.v_concatenate, (normal((2, 3)), normal((2, 2))), (0, 1)),
    (rf.v_solve, (wellcond(3), normal((3, 2))), (0, 1)),
    (rf.v_cumsum, (normal((2, 3)),), 0),
    (rf.v_maximum, (grid((3, 4)), grid((4,), 0.05)), (0, 1)),
    (rf.v_split, (normal((2, 5)),), 0),
    (rf.v_take_along_axis, (normal((2, 3)),), 0),
    (rf.v_pad, (normal((2, 3)),), 0),
    (rf.v_repeat, (normal((2, 3)),), 0),
    (rf.v_tile, (normal((2, 3)),), 0),
    (rf.v_einsum_diag, (normal((3, 3)), normal((2, 3))), (0, 1)),
    (rf.v_kron, (normal((2, 3)), normal((3, 2))), (0, 1)),
    (rf.v_tensordot, (normal((2, 3, 4)), normal((4, 2, 5))), (0, 1)),
    (rf.v_slogdet, (wellcond(3, (2,)),), 0),
    (rf.v_cholesky, (spd(3, (2,)),), 0),
    (rf.v_eigh, (sym(3),), 0),
    (rf.v_svd, (normal((4, 3)),), 0),
    (rf.v_qr, (normal((4, 3)),), 0),
    (rf.v_pinv, (normal((2, 4)),), 0),
    (rf.v_swapaxes, (normal((2, 3, 4)),), 0),
    (rf.v_rot90, (normal((2, 3, 4)),), 0),
    (rf.v_diagonal, (normal((3, 2, 4)),), 0),
    (rf.v_diff, (normal((5, 2)),), 0),
    (rf.v_append, (normal((2, 3)), normal((2, 2))), (0, 1)),
    (rf.v_inner, (normal((2, 3)), normal((4, 3))), (0, 1)),
    (rf.v_cross, (normal((2, 3)), normal((3,))), (0, 1)),
    (rf.v_matrix_power, (wellcond(3, (2,)),), 0),
    (rf.v_multi_dot, (normal((3,)), normal((3, 4)), normal((4, 2))), (0, 1, 2)),
    (rf.v_eigvalsh, (sym(3, (2,)),), 0),
    (rf.v_lstsq, (normal((5, 3)), normal((5, 2))), (0, 1)),
    (rf.v_nanvar, (with_nan((4, 3)),), 0),
    (rf.v_median, (distinct((3, 4)),), 0),
    (rf.v_ptp, (distinct((3, 4)),), 0),
    (rf.v_trapezoid, (normal((4, 3)), normal((4,))), (0, 1)),
    (rf.v_vecdot, (normal((2, 3)), normal((4, 1, 3))), (0, 1)),
    (rf.v_linalg_diagonal, (normal((2, 3, 4)),), 0),
]


@pytest.mark.parametrize(
    "func,specs,wrt",
    VJP_ROWS,
    ids=[f"{f.__name__}({','.join(map(repr, s))})" for f, s, _ in VJP_ROWS],
)
def test_vjp_inner_product(func, specs, wrt):
    rng = _rng("vjp|" + func.__name__ + repr(specs))
    args = tuple(s(rng) for s in specs)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    out = func(*copy.deepcopy(args))
    dout = rng.standard_normal(np.shape(out))
    tangents = [rng.standard_normal(np.shape(args[i])) for i in indices]
    cot = call_twice(vjp(func, wrt=wrt), *args, dout)
    cot = cot if isinstance(wrt, tuple) else (cot,)
    for i, g in zip(indices, cot):
        _check_leaf(g, args[i], f"vjp[{i}]")
    jv = fd.numeric_jvp(func, args, indices, tangents)
    lhs = fd.inner(dout, jv)
    rhs = fd.inner(list(cot), tangents)
    assert abs(lhs - rhs) <= 1e-7 * (1.0 + abs(lhs)), f"<dout, J v> = {lhs!r}, <vjp, v> = {rhs!r}"


# --------------------------------------------------------------------------
# Gradients that are not implemented must raise, never return a wrong gradient

UNSUPPORTED = [
    (rf.sh_pad_reflect, (normal((4,)),)),
    (rf.la_svd_full_extra, (normal((4, 2)),)),
    (rf.la_qr_complete, (normal((4, 2)),)),
    (rf.la_lstsq_singular_values, (normal((4, 3)), normal((4,)))),
]


@pytest.mark.parametrize(
    "func,specs",
    UNSUPPORTED,
    ids=[f"{f.__name__}({','.join(repr(_spec(a)) for a in s)})" for f, s in UNSUPPORTED],
)
def test_unsupported_gradient_raises(func, specs):
    rng = _rng("unsupported|" + func.__name__ + repr(specs))
    args = [_spec(s)(rng) for s in specs]
    args.append(_weight(func, args, rng, np.float64))
    with pytest.raises((NotImplementedError, TranspileError)):
        grad(func)(*args)


@pytest.mark.parametrize(
    "sx,sy,sc",  # sc: the shape of np.cross(x, y) where numpy still computes it
    [((2,), (2,), ()), ((2,), (3,), (3,)), ((3, 2), (2,), (3,)), ((2, 3), (2, 2), (2, 3))],
)
@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_cross_of_two_vectors_is_refused(sx, sy, sc):
    """numpy 2.0 deprecated np.cross of 2-vectors and 2.5 raises for it: the gradient and
    the tangent raise a ValueError on every numpy (numpy's own from 2.5, whose primal
    raises first; transpile's, which says what to write instead, before), never a
    gradient that works on one numpy and fails on the next."""
    rng = _rng("cross2|" + repr((sx, sy)))
    x, y = rng.normal(size=sx), rng.normal(size=sy)
    c = rng.normal(size=sc)
    pattern = "3-vectors only|3-dimensional vectors"
    with pytest.raises(ValueError, match=pattern):
        grad(rf.la_cross, wrt=(0, 1))(x, y, c)
    with pytest.raises(ValueError, match=pattern):
        jvp(rf.la_cross)(x, y, c, np.ones_like(x))


# --------------------------------------------------------------------------
# Coverage: every registered rule has a row, and every row exercises its targets


def _registered():
    """(callables, method names, attribute names, binary ops, unary ops) of the registry,
    cross-checked against the rule declarations of the family modules it is built from."""
    reg = build_registry()
    funcs = list(reg.keepalive)
    assert {id(f) for f in funcs} == set(reg.functions)
    table_funcs, methods, attributes, operators = [], set(), set(), set()
    for family in FAMILIES:
        for decl, template in declarations(family):
            if template is None:
                assert decl.kind is not Kind.RULE
                continue
            table_funcs += decl.objects
            methods |= set(decl.methods)
            attributes |= set(decl.attributes)
            operators |= set(decl.operators) if not decl.sequences else set()
    assert {id(f) for f in table_funcs} == set(reg.functions)
    assert methods == set(reg.methods)
    assert attributes == set(reg.attributes)
    assert operators == set(reg.binary) | set(reg.unary)
    return funcs, methods, attributes, set(reg.binary), set(reg.unary)


def _resolve(node, namespace):
    """The object a dotted name refers to in ``namespace`` (then builtins), or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    if node.id in namespace:
        obj = namespace[node.id]
    elif hasattr(builtins, node.id):
        obj = getattr(builtins, node.id)
    else:
        return None
    for p in reversed(parts):
        if not hasattr(obj, p):
            return None
        obj = getattr(obj, p)
    return obj


def _used(func):
    """What ``func``'s source uses: resolved callables, method names, attribute names
    (as '.name'), and gast operator classes."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    namespace = func.__globals__
    callees, used = [], set()
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called.add(id(node.func))
            obj = _resolve(node.func, namespace)
            if obj is not None:
                callees.append(obj)
            elif isinstance(node.func, ast.Attribute):
                used.add(node.func.attr)
        elif isinstance(node, (ast.BinOp, ast.UnaryOp)):
            used.add(getattr(gast, type(node.op).__name__))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in called:
            if _resolve(node, namespace) is None:
                used.add("." + node.attr)
    return callees, used


def _targets_of_rows():
    # the complex and FFT rules have their rows in tests/spectral_funcs.py, the
    # convolution rules theirs in tests/convolution_funcs.py
    rows = ROWS + spectral_funcs.ROWS + convolution_funcs.ROWS
    return [t for r in rows for t in r.targets]


def test_every_rule_has_a_row():
    funcs, methods, attributes, binary, unary = _registered()
    targets = _targets_of_rows()
    missing = [
        getattr(f, "__qualname__", repr(f)) for f in funcs if not any(t is f for t in targets)
    ]
    missing += [f"method .{m}()" for m in sorted(methods) if m not in targets]
    missing += [f"attribute .{a}" for a in sorted(attributes) if "." + a not in targets]
    missing += [f"operator {op.__name__}" for op in binary | unary if op not in targets]
    assert not missing, f"registered rules without a row: {missing}"


def test_rows_exercise_their_targets():
    for r in ROWS:
        callees, used = _used(r.func)
        for t in r.targets:
            if isinstance(t, str) or (isinstance(t, type) and issubclass(t, gast.AST)):
                assert t in used, f"{r.id}: target {t!r} not used by {r.func.__name__}"
            else:
                assert any(c is t for c in callees), (
                    f"{r.id}: target {t!r} not called by {r.func.__name__}"
                )


def test_every_wrapper_has_a_row():
    """No wrapper in rule_funcs.py is dead: each is in a row, a vjp row or a norm row."""
    used = {r.func for r in ROWS} | {f for f, *_ in VJP_ROWS} | {f for f, _ in UNSUPPORTED}
    wrappers = {
        f for name, f in vars(rf).items() if inspect.isfunction(f) and f.__module__ == rf.__name__
    }
    assert not wrappers - used, sorted(f.__name__ for f in wrappers - used)


def test_fmax_fmin_send_the_gradient_past_a_nan():
    """``np.fmax``/``np.fmin`` ignore a nan operand: the other one gets the gradient."""
    x, y = np.array([1.0, np.nan, 3.0]), np.array([np.nan, 2.0, 1.0])
    c = np.array([1.0, 2.0, 3.0])
    dx, dy = grad(rf.b_fmax, wrt=(0, 1))(x, y, c)
    np.testing.assert_array_equal(dx, [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(dy, [0.0, 2.0, 0.0])
    dx, dy = grad(rf.b_fmin, wrt=(0, 1))(x, y, c)
    np.testing.assert_array_equal(dx, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(dy, [0.0, 2.0, 3.0])
