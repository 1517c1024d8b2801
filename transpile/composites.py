"""Adjoints taken through a composition at once, where that is simpler and exact.

The logistic sigmoid written out, ``p = 1.0 / (1.0 + np.exp(-z))``, is four
lines in A-normal form. Under a logarithm, as in the binary cross-entropy
``y * np.log(p) + (1 - y) * np.log(1 - p)``, differentiating line by line
divides by ``p`` and by ``1 - p`` and then multiplies back through the four
lines. The composition has a short exact adjoint:

    np.log(p)       ->  dz += d * (1.0 - p)
    np.log(1 - p)   ->  dz -= d * p

which needs no division (so no infinity where ``p`` rounds to 0 or 1) and
three numpy calls fewer per use. ``p`` keeps its ordinary adjoint for any
other use.

The names involved must each be bound exactly once, at the top level of the
function, so that ``z`` and ``p`` are the same values wherever they are read.
"""

import math

import gast
import numpy as np

from transpile.nodes import descendants


def definitions(tree):
    """Top-level ``name = value`` statements whose name is bound nowhere else."""
    stores = {}
    for node in descendants(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
    found = {}
    for s in tree.body:
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and stores.get(s.targets[0].id) == 1
        ):
            found[s.targets[0].id] = s.value
    return found


def log_sigmoid(value, defs, resolve):
    """``(z, p, sign)`` when ``value`` is ``np.log(p)`` (sign +1) or ``np.log(1 - p)``
    (sign -1) of a sigmoid ``p`` of ``z``; else None."""
    u = _call_argument(value, resolve, (np.log, math.log))
    if u is None:
        return None
    z = _sigmoid_input(u, defs, resolve)
    if z is not None:
        return z, u, 1
    rest = defs.get(u)
    if (
        isinstance(rest, gast.BinOp)
        and isinstance(rest.op, gast.Sub)
        and _is_one(rest.left)
        and isinstance(rest.right, gast.Name)
    ):
        z = _sigmoid_input(rest.right.id, defs, resolve)
        if z is not None:
            return z, rest.right.id, -1
    return None


def _sigmoid_input(p, defs, resolve):
    """``z`` if ``p`` is bound to ``1 / (1 + exp(-z))`` through single-use temporaries.

    Each step reads the definition of the name the step before found (``None``
    once a step fails, which no later step matches)."""
    total = _divisor_of_one(defs.get(p))
    exp = _addend_to_one(defs.get(total))
    negation = _call_argument(defs.get(exp), resolve, (np.exp, math.exp))
    return _negated(defs.get(negation))


def _divisor_of_one(value):
    """``d`` if ``value`` is ``1 / d``."""
    if (
        isinstance(value, gast.BinOp)
        and isinstance(value.op, gast.Div)
        and _is_one(value.left)
        and isinstance(value.right, gast.Name)
    ):
        return value.right.id
    return None


def _addend_to_one(value):
    """``e`` if ``value`` is ``1 + e`` or ``e + 1``."""
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
        return None
    sides = [value.left, value.right]
    ones = [s for s in sides if _is_one(s)]
    names = [s for s in sides if isinstance(s, gast.Name)]
    if len(ones) != 1 or len(names) != 1:
        return None
    return names[0].id


def _call_argument(value, resolve, functions):
    """``x`` if ``value`` is ``f(x)`` for one of ``functions``, with no other argument."""
    if (
        isinstance(value, gast.Call)
        and resolve(value.func) in functions
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], gast.Name)
    ):
        return value.args[0].id
    return None


def _negated(value):
    """``z`` if ``value`` is ``-z``."""
    if (
        isinstance(value, gast.UnaryOp)
        and isinstance(value.op, gast.USub)
        and isinstance(value.operand, gast.Name)
    ):
        return value.operand.id
    return None


def _is_one(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) and node.value == 1
