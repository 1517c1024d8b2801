"""Exact algebraic rewrites of a specialized body.

The adjoint of a binary cross-entropy ``y * np.log(p) + (1 - y) * np.log(1 - p)`` of
a sigmoid ``p`` comes out of the composite rules (``composites.log_sigmoid``) as
``y * (1 - p) - (1 - y) * p``: four elementwise operations and three temporaries the
size of the batch, where ``y - p`` is the same value (``a (1 - p) - (1 - a) p = a - p``
for any numbers). Once specialization has removed the shape helpers that stood
between the terms, ``complements`` rewrites it so; the temporaries it no longer reads
are then dead code.

``held_calls`` reads a value where the body already holds it: a rule's template
recomputes what the primal may have named (the adjoint of ``np.sin(x) * np.cos(x)``
calls ``np.sin(x)`` and ``np.cos(x)`` again), where a hand-written gradient reads the
names it has.
"""

import math

import gast
import numpy as np

from transpile.cleanup import buffers
from transpile.core import defuse, printer
from transpile.core.nodes import all_stmts, transform


def complements(body, index=None):
    """``t = a * (1 - p) - (1 - a) * p`` (factors in either order, ``1 - a`` written
    there or bound once to a name) as ``t = a - p``, for names ``a`` and ``p``.
    ``index``: a def-use index of ``body`` whose writes are up to date (the one copy
    propagation kept), else one is built. The rewrite changes reads only: the writes
    stay up to date for ``held_calls``."""
    index = defuse.Index(body) if index is None else index
    for s in body:
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.BinOp):
            pair = _complement_pair(s.value, index)
            if pair is not None:
                a, p = pair
                s.value = gast.BinOp(left=_load(a), op=gast.Sub(), right=_load(p))
    return body


def _complement_pair(value, index):
    """``(a, p)`` if ``value`` is ``a * (1 - p) - (1 - a) * p``, else None."""
    if not isinstance(value.op, gast.Sub):
        return None
    left, right = _factors(value.left), _factors(value.right)
    if left is None or right is None:
        return None
    for a, one_minus_p in (left, left[::-1]):
        p = _one_minus(one_minus_p, index)
        if not isinstance(a, gast.Name) or p is None:
            continue
        if index.write_count(a.id) > 1 or index.write_count(p) > 1:
            continue  # a name bound twice may not be the same value at both reads
        for c, q in (right, right[::-1]):
            if isinstance(q, gast.Name) and q.id == p and _one_minus(c, index) == a.id:
                return a.id, p
    return None


def _factors(node):
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
        return node.left, node.right
    return None


def _one_minus(node, index):
    """``x`` if ``node`` is ``1 - x`` for a name ``x``, or a name bound once to that."""
    if isinstance(node, gast.Name) and index.write_count(node.id) == 1:
        ((_, stmt),) = index.writes[node.id]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            node = stmt.value
    if (
        isinstance(node, gast.BinOp)
        and isinstance(node.op, gast.Sub)
        and isinstance(node.left, gast.Constant)
        and type(node.left.value) in (int, float)
        and node.left.value == 1
        and isinstance(node.right, gast.Name)
    ):
        return node.right.id
    return None


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def held_calls(body, np_name, ops_name, index=None):
    """``np.f(a, b)`` (a ufunc of names bound at most once and numbers) read from ``t``
    where a statement before binds ``t = np.f(a, b)``, ``t`` is bound only there and
    nothing writes into it. Top-level statements only; the same ufunc of the same
    values is the same value, bit for bit. ``t`` may then live longer, as the array a
    hand-written gradient keeps for the same reason: one pass over it saved.
    ``index``: a def-use index of ``body`` whose writes are up to date, else one is
    built; the rewrite changes reads only."""
    if not any(_may_hold(s, np_name) for s in body):
        return body  # no line binds a name to a ufunc's value: none to read it from
    index = defuse.Index(body) if index is None else index
    written = _aliases_written(body, buffers.written_through(body, ops_name))
    held = {}  # the printed call -> the name holding its value

    def read_held(node):
        found = held.get(_call_key(node, np_name, index, _AFTER_ALL))
        return node if found is None else _load(found)

    for s in body:
        if held and isinstance(s, gast.Assign):
            value = transform(s.value, {gast.Call: read_held})
            if value.__class__ is not gast.Name or _unwritten_name(s, written):
                s.value = value  # (a call inside another reads the held array only)
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            key = _call_key(s.value, np_name, index, index.position[id(s)])
            if (
                isinstance(t, gast.Name)
                and key
                and index.write_count(t.id) == 1
                and t.id not in written
            ):
                held.setdefault(key, t.id)
    return body


_AFTER_ALL = math.inf  # a position after every statement of the body


def _unwritten_name(s, written):
    """Whether ``s`` binds one name that nothing writes into: ``u = t`` makes ``u`` the
    held array itself, and a write into ``u`` (``u[0] = 0``) would change ``t``."""
    target = s.targets[0] if len(s.targets) == 1 else None
    return target.__class__ is gast.Name and target.id not in written


def _aliases_written(body, written):
    """``written`` and every name copied into a name of it (``w = u``, then ``w`` written
    into: so is ``u``), at any depth of ``body``."""
    copies = [
        (s.targets[0].id, s.value.id)
        for s in all_stmts(body)
        if isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name)
    ]
    written, grew = set(written), True
    while grew:
        grew = False
        for into, source in copies:
            if into in written and source not in written:
                written.add(source)
                grew = True
    return written


def _may_hold(s, np_name):
    """Whether ``s`` binds one name to a call of a numpy ufunc (without keywords), the
    only lines ``held_calls`` takes values from. Reading held values changes only the
    calls inside a line's call, never the call itself or its target."""
    return (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and _is_ufunc_call(s.value, np_name)
    )


def _is_ufunc_call(node, np_name):
    f = getattr(node, "func", None)
    return (
        isinstance(node, gast.Call)
        and not node.keywords
        and isinstance(f, gast.Attribute)
        and isinstance(f.value, gast.Name)
        and f.value.id == np_name
        and isinstance(getattr(np, f.attr, None), np.ufunc)
    )


def _call_key(node, np_name, index, position):
    """The printed ``np.f(...)`` for a call, at ``position`` (in ``index``' program
    order), of a numpy ufunc on numbers and names bound never or once before it (so
    they hold there what they hold at any later statement), else None."""
    if not _is_ufunc_call(node, np_name):
        return None
    for a in node.args:
        if isinstance(a, gast.Name):
            bound = index.writes.get(a.id, ())
            if len(bound) > 1 or bound and index.position[id(bound[0][1])] >= position:
                return None
        elif not (isinstance(a, gast.Constant) and type(a.value) in (int, float)):
            return None
    return printer.expression(node)
