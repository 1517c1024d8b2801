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

The max shift of a stable log-softmax or logsumexp, written without
``stop_gradient``,

    m = np.max(z, axis=1, keepdims=True)
    out = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    out = m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))

has an adjoint that sums to zero: ``out`` does not depend on ``m`` at all
(shift invariance), so the ordinary rules would compute ``dm``, a sum that
cancels to rounding noise, and spread it back through the max (a mask, a
count, a division). ``shifts`` finds such ``m``; activity analysis treats them
as ``stop_gradient`` would, so none of that code is written, in reverse or in
forward mode. It is exact: the Jacobian of ``out`` with respect to ``m`` is
zero wherever ``out`` is read afterwards, since every route from ``m`` to the
rest of the function passes through the one statement ``out = ...``.

The names involved must each be bound exactly once, at the top level of the
function, so that ``z`` and ``p`` are the same values wherever they are read.
"""

import math

import gast
import numpy as np

from transpile.core.nodes import const, name_nodes


def store_counts(tree, nodes=None):
    """How many times each name is bound in ``tree`` (parameters included); ``nodes``:
    ``descendants(tree)``, where the caller has it."""
    stores = {}
    for node in name_nodes(tree) if nodes is None else nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
    return stores


def definitions(tree, stores=None):
    """Top-level ``name = value`` statements whose name is bound nowhere else."""
    stores = store_counts(tree) if stores is None else stores
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


def shifts(tree, resolve) -> frozenset:
    """Names ``m`` bound to a max shift ``np.max(z, axis, keepdims=True)`` whose every
    use cancels: each read of ``m`` is in ``s = z - m``, and the shifted values ``s``
    and ``m`` feed one log-softmax ``out = s - l`` or one logsumexp ``out = m + l``,
    where ``l = np.log(np.sum(np.exp(s), axis, keepdims=True))`` through single-use
    names, over the same axis. Everything else keeps its ordinary adjoint."""
    if not any(_keeps_dims(s) for s in tree.body):
        return frozenset()  # no max shift without keepdims=: nothing to count
    stores = store_counts(tree)
    defs = definitions(tree, stores)
    users = None  # found at the first max shift: most functions have none
    found = set()
    for m, value in defs.items():
        reduced = _reduction(value, resolve, (np.max, np.amax))
        if reduced is None or stores.get(reduced[0]) != 1:
            continue
        users = _top_level_readers(tree) if users is None else users
        if _shift_cancels(m, *reduced, defs, users, resolve):
            found.add(m)
    return frozenset(found)


def _keeps_dims(stmt):
    """Whether ``stmt`` may bind a max shift: ``name = f(..., keepdims=...)``."""
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    return isinstance(value, gast.Call) and any(k.arg == "keepdims" for k in value.keywords)


def _shift_cancels(m, z, axis, defs, users, resolve):
    """Whether every route from ``m`` to the rest of the function cancels."""
    shifted, rest = set(), []
    for stmt in users.get(m, ()):
        if _target(stmt, defs) is not None and _is_binop(stmt.value, gast.Sub, z, m):
            shifted.add(_target(stmt, defs))
        else:
            rest.append(stmt)
    readers = [stmt for s in sorted(shifted) for stmt in users.get(s, ())]
    chain = _log_sum_exp(readers, axis, defs, users, resolve)
    if chain is None:
        return False
    exp, l, out = chain
    if not rest:  # log-softmax: out = s - l
        return sorted(map(id, readers)) == sorted((id(exp), id(out))) and any(
            _is_binop(out.value, gast.Sub, s, l) for s in shifted
        )
    # logsumexp: out = m + l
    return (
        readers == [exp]
        and rest == [out]
        and (_is_binop(out.value, gast.Add, m, l) or _is_binop(out.value, gast.Add, l, m))
    )


def _log_sum_exp(readers, axis, defs, users, resolve):
    """``(exp statement, l, the one statement reading l)`` when one of ``readers`` is
    ``e = np.exp(s)`` and ``l = np.log(np.sum(e, axis, keepdims=True))`` follows
    through names read once; else None."""
    exps = [s for s in readers if _call_argument(s.value, resolve, (np.exp,)) is not None]
    if len(exps) != 1:
        return None
    e = _target(exps[0], defs)
    total = _single_reader(e, defs, users)
    if total is None or _reduction(total.value, resolve, (np.sum,)) != (e, axis):
        return None
    log = _single_reader(_target(total, defs), defs, users)
    if log is None or _call_argument(log.value, resolve, (np.log,)) is None:
        return None
    out = users.get(_target(log, defs), [])
    return (exps[0], _target(log, defs), out[0]) if len(out) == 1 else None


def _top_level_readers(tree):
    """For each name, the top-level statements that read it, once per read (a read
    inside a loop, a branch or a nested function is its enclosing statement's)."""
    users = {}
    for stmt in tree.body:
        for node in name_nodes(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                users.setdefault(node.id, []).append(stmt)
    return users


def _single_reader(target, defs, users):
    """The one top-level statement reading ``target``, if it binds a name once."""
    found = users.get(target, [])
    if len(found) == 1 and _target(found[0], defs) is not None:
        return found[0]
    return None


def _target(stmt, defs):
    """The name ``stmt`` binds, if it is that name's one top-level definition."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, gast.Name) and defs.get(target.id) is stmt.value:
            return target.id
    return None


def _is_binop(value, op, left, right):
    """Whether ``value`` is ``left <op> right`` for the names ``left`` and ``right``."""
    return (
        isinstance(value, gast.BinOp)
        and isinstance(value.op, op)
        and isinstance(value.left, gast.Name)
        and value.left.id == left
        and isinstance(value.right, gast.Name)
        and value.right.id == right
    )


def _reduction(value, resolve, functions):
    """``(z, axis)`` if ``value`` is ``f(z, axis, keepdims=True)`` for one of
    ``functions``, with a constant axis (None when not given) and no other option."""
    if not (
        isinstance(value, gast.Call)
        and resolve(value.func) in functions
        and 1 <= len(value.args) <= 2
        and isinstance(value.args[0], gast.Name)
    ):
        return None
    options = {k.arg: k.value for k in value.keywords}
    if len(value.args) == 2:
        if "axis" in options:
            return None
        options["axis"] = value.args[1]
    keepdims = options.pop("keepdims", None)
    axis = _constant_axis(options.pop("axis", const(None)))
    if options or axis is _NOT_CONSTANT or not _is_true(keepdims):
        return None
    return value.args[0].id, axis


_NOT_CONSTANT = object()


def _constant_axis(node):
    """An axis given as ``None``, an integer or a tuple of integers, as a value."""
    if isinstance(node, gast.Constant) and (node.value is None or type(node.value) is int):
        return node.value
    if isinstance(node, gast.Tuple) and all(
        isinstance(e, gast.Constant) and type(e.value) is int for e in node.elts
    ):
        return tuple(e.value for e in node.elts)
    return _NOT_CONSTANT


def _is_true(node):
    return isinstance(node, gast.Constant) and node.value is True


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
