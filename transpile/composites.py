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
    if not (
        isinstance(value, gast.Call)
        and resolve(value.func) in (np.log, math.log)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], gast.Name)
    ):
        return None
    u = value.args[0].id
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
    """``z`` if ``p`` is bound to ``1 / (1 + exp(-z))`` through single-use temporaries."""
    ratio = defs.get(p)
    if not (
        isinstance(ratio, gast.BinOp)
        and isinstance(ratio.op, gast.Div)
        and _is_one(ratio.left)
        and isinstance(ratio.right, gast.Name)
    ):
        return None
    total = defs.get(ratio.right.id)
    if not (isinstance(total, gast.BinOp) and isinstance(total.op, gast.Add)):
        return None
    sides = [total.left, total.right]
    ones = [s for s in sides if _is_one(s)]
    names = [s for s in sides if isinstance(s, gast.Name)]
    if len(ones) != 1 or len(names) != 1:
        return None
    exp = defs.get(names[0].id)
    if not (
        isinstance(exp, gast.Call)
        and resolve(exp.func) in (np.exp, math.exp)
        and len(exp.args) == 1
        and not exp.keywords
        and isinstance(exp.args[0], gast.Name)
    ):
        return None
    negation = defs.get(exp.args[0].id)
    if (
        isinstance(negation, gast.UnaryOp)
        and isinstance(negation.op, gast.USub)
        and isinstance(negation.operand, gast.Name)
    ):
        return negation.operand.id
    return None


def _is_one(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) and node.value == 1
