"""Arithmetic operators: + - * / ** @ and unary minus.

Each template is written in terms of the result (first parameter), the operands,
and ``d[...]``, the adjoint of a value. ``ops.unbroadcast`` sums an adjoint back
to the shape of an operand that was broadcast. The ufunc spellings (``np.add``) share
the operators' templates.
"""

import builtins

import gast
import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, ELEMENTWISE, nondiff, rule
from transpile_runtime import ops


@rule(np.add, operators=(gast.Add,), shape=ELEMENTWISE)
def add(z, x, y):
    d[x] += ops.unbroadcast(d[z], x)
    d[y] += ops.unbroadcast(d[z], y)


@rule(np.subtract, operators=(gast.Sub,), shape=ELEMENTWISE)
def sub(z, x, y):
    d[x] += ops.unbroadcast(d[z], x)
    d[y] -= ops.unbroadcast(d[z], y)


@rule(np.multiply, operators=(gast.Mult,), shape=ELEMENTWISE)
def mul(z, x, y):
    d[x] += ops.unbroadcast(d[z] * y, x)
    d[y] += ops.unbroadcast(d[z] * x, y)


@rule(np.divide, np.true_divide, operators=(gast.Div,), shape=ELEMENTWISE)
def div(z, x, y):
    d[x] += ops.unbroadcast(d[z] / y, x)
    d[y] -= ops.unbroadcast(d[z] * z / y, y)


@rule(np.power, builtins.pow, operators=(gast.Pow,), shape=ELEMENTWISE)
def pow_(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.pow_slope(x, y), x)
    d[y] += ops.unbroadcast(d[z] * ops.pow_log(z, x), y)


def pow_number(z, x, y):
    # ``pow_``'s form for a number exponent >= 1 or < 0 (x ** 2), chosen by
    # ``rules._power_form``: the generated code folds to dx = dz * 2 * x
    d[x] += ops.unbroadcast(d[z] * y * x ** (y - 1), x)
    d[y] += ops.unbroadcast(d[z] * ops.pow_log(z, x), y)
    t[z] += t[x] * y * x ** (y - 1)
    t[z] += t[y] * ops.pow_log(z, x)


@rule(operators=(gast.MatMult,), shape=ALL_DATA)
def matmul(z, x, y):
    d[x] += ops.matmul_left(d[z], x, y)
    d[y] += ops.matmul_right(d[z], x, y)
    t[z] += t[x] @ y
    t[z] += x @ t[y]


@rule(operators=(gast.USub,), shape=ELEMENTWISE)
def neg(y, x):
    d[x] -= d[y]


@rule(np.positive, operators=(gast.UAdd,), shape=ELEMENTWISE)
def pos(y, x):
    d[x] += d[y]


# Integer-valued or logical results: they end variedness.
NONDIFF = (
    nondiff(
        operators=(gast.FloorDiv, gast.Mod, gast.BitAnd, gast.BitOr, gast.BitXor, gast.Invert),
        shape=ELEMENTWISE,
    ),
    nondiff(operators=(gast.LShift, gast.RShift), shape=ELEMENTWISE),
    nondiff(operators=(gast.Not,), shape=ALL_DATA),  # a bool, whatever the operand's shape
)
