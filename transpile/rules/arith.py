"""Arithmetic operators: + - * / ** @ and unary minus.

Each template is written in terms of the result (first parameter), the operands,
and ``d[...]``, the adjoint of a value. ``ops.unbroadcast`` sums an adjoint back
to the shape of an operand that was broadcast.
"""

import builtins

import gast
import numpy as np

from runtime import ops
from transpile.template import d


def add(z, x, y):
    d[x] += ops.unbroadcast(d[z], x)
    d[y] += ops.unbroadcast(d[z], y)


def sub(z, x, y):
    d[x] += ops.unbroadcast(d[z], x)
    d[y] -= ops.unbroadcast(d[z], y)


def mul(z, x, y):
    d[x] += ops.unbroadcast(d[z] * y, x)
    d[y] += ops.unbroadcast(d[z] * x, y)


def div(z, x, y):
    d[x] += ops.unbroadcast(d[z] / y, x)
    d[y] -= ops.unbroadcast(d[z] * z / y, y)


def pow_(z, x, y):
    d[x] += ops.unbroadcast(d[z] * ops.pow_slope(x, y), x)
    d[y] += ops.unbroadcast(d[z] * ops.pow_log(z, x), y)


def pow_number(z, x, y):
    # a number exponent >= 1 or < 0 (x ** 2): the generated code folds to dx = dz * 2 * x
    d[x] += ops.unbroadcast(d[z] * y * x ** (y - 1), x)
    d[y] += ops.unbroadcast(d[z] * ops.pow_log(z, x), y)


def matmul(z, x, y):
    d[x] += ops.matmul_left(d[z], x, y)
    d[y] += ops.matmul_right(d[z], x, y)


def neg(y, x):
    d[x] -= d[y]


def pos(y, x):
    d[x] += d[y]


BINARY = {
    gast.Add: add,
    gast.Sub: sub,
    gast.Mult: mul,
    gast.Div: div,
    gast.Pow: pow_,
    gast.MatMult: matmul,
}
UNARY = {gast.USub: neg, gast.UAdd: pos}
# The ufunc spellings np.add(x, y), ... share the operator templates. A power whose
# exponent is a number literal >= 1 or < 0 takes ``pow_number`` (see ``_power_form``).
FUNCTIONS = [
    (np.add, add),
    (np.subtract, sub),
    (np.multiply, mul),
    (np.divide, div),
    (np.true_divide, div),
    (np.power, pow_),
    (builtins.pow, pow_),
]
# Integer-valued or logical results: they end variedness.
NONDIFF_BINARY = (
    gast.FloorDiv,
    gast.Mod,
    gast.BitAnd,
    gast.BitOr,
    gast.BitXor,
    gast.LShift,
    gast.RShift,
)
