"""Exact algebraic rewrites of a specialized body.

The adjoint of a binary cross-entropy ``y * np.log(p) + (1 - y) * np.log(1 - p)`` of
a sigmoid ``p`` comes out of the composite rules (``composites.log_sigmoid``) as
``y * (1 - p) - (1 - y) * p``: four elementwise operations and three temporaries the
size of the batch, where ``y - p`` is the same value (``a (1 - p) - (1 - a) p = a - p``
for any numbers). Once specialization has removed the shape helpers that stood
between the terms, ``complements`` rewrites it so; the temporaries it no longer reads
are then dead code.
"""

import gast

from transpile import defuse


def complements(body):
    """``t = a * (1 - p) - (1 - a) * p`` (factors in either order, ``1 - a`` written
    there or bound once to a name) as ``t = a - p``, for names ``a`` and ``p``."""
    index = defuse.Index(body)
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
