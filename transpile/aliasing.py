"""Rejects reading a view of an array after a write into that array.

``row = out[0]`` is a view: after ``out[0] = v`` it shows ``v``, but the adjoint of
whatever read ``row`` would send its gradient to the old values of ``out[0]``. Such a
read is an error (take a copy: ``row = out[0].copy()``) rather than a wrong gradient.
A write inside a loop also precedes every read of the same loop in later iterations.
"""

import gast

from transpile.errors import at
from transpile.nodes import name_nodes


def stage(fn, ctx):
    run(fn.tree, fn.parsed)
    return fn


def run(tree, ctx) -> None:
    """Raise TranspileError for the first view that is read after its array was written."""
    order = _in_order(tree.body, ())
    writes = _writes(order)
    views = {}  # view name -> (base, position, loops)
    for pos, (s, loops) in enumerate(order):
        for name in _reads(s):
            if name in views:
                _check_read(ctx, s, name, views[name], writes, pos, loops)
        _track_views(views, s, pos, loops)


def _in_order(stmts, loops):
    """``(stmt, ids of the loops enclosing it)`` for every statement, in program order."""
    order = []
    for s in stmts:
        order.append((s, loops))
        if isinstance(s, (gast.For, gast.While)):
            order += _in_order(s.body, (*loops, id(s)))
        elif isinstance(s, gast.If):
            order += _in_order(s.body, loops)
            order += _in_order(s.orelse, loops)
    return order


def _writes(order):
    """base -> ``[(position, loops)]`` of each write into a slot of that array."""
    writes = {}
    for pos, (s, loops) in enumerate(order):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            writes.setdefault(s.targets[0].value.id, []).append((pos, loops))
    return writes


def _check_read(ctx, s, name, view, writes, pos, loops):
    """Raise if the read of view ``name`` at ``pos`` comes after a write into its base:
    later in program order, or in a loop that also encloses the read."""
    base, made, made_loops = view
    for wpos, wloops in writes.get(base, []):
        later = made < wpos < pos
        around = set(wloops) - set(made_loops)  # loops around the write, not the view
        if later or around & set(loops):
            raise at(
                ctx,
                s,
                f"{name!r} is a view of {base!r}, read after a write into {base!r}",
                f"take a copy where it is made: {name} = {base}[...].copy()",
            )


def _track_views(views, s, pos, loops):
    """Update ``views`` for an assignment to a name: a subscript makes a view, a
    name copies what it names, anything else ends the view."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return
    target = s.targets[0].id
    views.pop(target, None)
    v = s.value
    if isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name):
        views[target] = (v.value.id, pos, loops)
    elif isinstance(v, gast.Name) and v.id in views:
        views[target] = views[v.id]


def _reads(s):
    node = (
        s.test if isinstance(s, (gast.If, gast.While)) else s.iter if isinstance(s, gast.For) else s
    )
    return {
        n.id for n in name_nodes(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
