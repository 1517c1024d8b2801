"""Rejects reading a view of an array after a write into that array.

``row = out[0]`` is a view: after ``out[0] = v`` it shows ``v``, but the adjoint of
whatever read ``row`` would send its gradient to the old values of ``out[0]``. Such a
read is an error (take a copy: ``row = out[0].copy()``) rather than a wrong gradient.
What is a view comes from the rules' declarations (``views.sources``): a subscript,
``.T``, ``reshape``, ``ravel``, ``swapaxes``, ``np.asarray``, the same array under
another name, an unknown callee's result; ``.copy()`` and arithmetic are new arrays,
and so is an item of an array whose number of axes is known (``out[0, 1]`` of
``out = np.zeros((2, 2))``: ``allocations``). ``retake`` has already taken again where
they are read the views it can (``late_reads``); those left are refused here.
A write inside a loop also precedes every read of the same loop in later iterations.
A write into slots apart from the view's (``row = out[0]`` and ``out[1] = v``: two
different non-negative ints at one axis) leaves the view as it was.

Also refused: a call that writes its result into an array through ``out=``. Into an
argument (or a view of one, or a value that may be one) it would change the caller's
array; into any array it is a write that differentiation does not follow (the rules
read ``np.multiply(x, 2.0)``, not what lands in ``out``).
"""

from typing import NamedTuple

import gast

from transpile.analysis import effect_calls, views
from transpile.analysis.allocations import Allocations
from transpile.core import fixpoint, printer
from transpile.core.errors import at
from transpile.core.nodes import bound_values, name_nodes


def stage(fn, ctx):
    refuse_out_writes(fn.tree, fn.parsed, fn.activity)
    effect_calls.refuse(fn.tree, fn.parsed, fn.activity)
    run(fn.tree, fn.parsed)
    return fn


def refuse_out_writes(tree, ctx, activity) -> None:
    """Raise TranspileError for a call with ``out=`` into a value the function does
    not own, or one that a differentiated value reaches (written in or overwritten)."""
    owned = None  # found at the first out=: most functions have none
    for s, _ in _in_order(tree.body, ()):
        value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if not isinstance(value, gast.Call):
            continue
        for k in value.keywords:
            if k.arg != "out":
                continue
            written = views.sources(k.value, ctx.resolve)
            call = printer.expression(value)
            owned = _owned(tree, ctx.resolve) if owned is None else owned
            if not written <= owned:
                raise at(
                    ctx,
                    s,
                    f"{call} writes into {printer.expression(k.value)}, which may be an "
                    "argument of the function (or a view of one): the caller's array would change",
                    "assign the result instead (y = ... without out=); the caller's arrays "
                    "are never modified",
                )
            read = {n.id for n in name_nodes(value) if isinstance(n, gast.Name)}
            if any(activity.is_varied(s, n) for n in read | written):
                raise at(
                    ctx,
                    s,
                    f"{call} writes into an array through out=, which is not differentiated",
                    "assign the result instead (y = ... without out=, or y[...] = ...)",
                )


def _owned(tree, resolve):
    """The local names that hold only arrays the function made (or views of them):
    every binding is ``name = value`` with a value that is new memory or shares only
    such names'. A parameter, a global, a loop variable or an unpacked name is not."""
    bound = bound_values(tree.body)
    params = {n.id for n in name_nodes(tree.args) if isinstance(n, gast.Name)}
    return fixpoint.greatest(
        bound,
        lambda n, owned: all(
            v is not None and views.sources(v, resolve) <= owned for v in bound[n]
        ),
        start=set(bound) - params,
    )


def run(tree, ctx) -> None:
    """Raise TranspileError for the first view that is read after its array was written,
    and for the first array read after a write through a view of it."""
    for s, name, view in late_reads(tree, ctx.resolve, base_reads=True):
        if isinstance(view, str):
            raise at(
                ctx,
                s,
                f"{name!r} is read after a write into {view!r}, a view of it",
                f"write into {name!r} itself ({name}[...] = ...), or make {view!r} a copy",
            )
        raise at(
            ctx,
            s,
            f"{name!r} is a view of {view.base!r}, read after a write into {view.base!r}",
            f"take a copy where it is made: {name} = {printer.expression(view.value)}.copy()",
        )


class View(NamedTuple):
    base: str
    made: int  # the position, in ``_in_order``, of the statement making it
    loops: tuple
    value: object
    through: frozenset  # the views it was made from
    path: tuple


def late_reads(tree, resolve, base_reads=False):
    """``(statement, name, View)`` for each read of a view after a write into its array
    (later in program order, or in a loop that also encloses the read), in program
    order; with ``base_reads``, also ``(statement, name, the view written)`` for an array
    read after a write through a view of it."""
    order = _in_order(tree.body, ())
    if not any(views.written_by(s) for s, _ in order):
        return  # nothing is written into: no read comes after a write
    masks = _masks(tree)
    # a write through a view of an array the function does not own is refused by
    # ``reverse`` at the write; one of an array it owns shows in that array
    owned = _owned(tree, resolve)
    paths = _paths(tree.body, ())
    items = Allocations(tree, resolve).is_item
    writes = _writes(order, resolve, (masks, items), owned, paths)
    made = {}  # view name -> [View]
    for pos, (s, loops) in enumerate(order):
        # ``r = t`` reads nothing yet: ``r`` becomes the view ``t`` is, checked where read
        for name in () if _renames(s) else sorted(_reads(s)):
            for view in made.get(name, ()):
                if _read_late(name, view, writes, pos, loops):
                    yield s, name, view
            written = _base_read_late(name, writes, pos, loops) if base_reads else None
            if written is not None:
                yield s, name, written
        _track_views(made, s, (pos, loops, paths[id(s)]), resolve, (masks, items))


def _masks(tree):
    """Names bound only to comparisons: ``x[mask]`` with such a name is a copy."""
    values = bound_values(tree.body)
    return frozenset(n for n, vs in values.items() if all(isinstance(v, gast.Compare) for v in vs))


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


def _writes(order, resolve, copies, owned, paths):
    """array name -> ``[(position, loops, the name written, its index)]`` of each write
    into it: into the name itself (``a[1] = v``: the index ``1``, else None), or into a
    view of it (a view the function may write into is one of an array it made,
    ``views.fresh``)."""
    writes, made = {}, {}
    for pos, (s, loops) in enumerate(order):
        for written in views.written_by(s):
            target = s.targets[0] if isinstance(s, gast.Assign) else None
            index = target.slice if isinstance(target, gast.Subscript) else None
            writes.setdefault(written, []).append((pos, loops, written, index))
            for base, *_ in made.get(written, ()):
                if base in owned:
                    writes.setdefault(base, []).append((pos, loops, written, None))
        _track_views(made, s, (pos, loops, paths[id(s)]), resolve, copies)
    return writes


def _paths(stmts, path):
    """id(stmt) -> the branches and loop bodies it is in, outermost first: a binding
    there replaces only the views made on that path (the other branch, or no pass of
    the loop, may leave them)."""
    found = {}
    for s in stmts:
        found[id(s)] = path
        if isinstance(s, (gast.If, gast.For, gast.While)):
            found.update(_paths(s.body, (*path, (id(s), "body"))))
            found.update(_paths(s.orelse, (*path, (id(s), "else"))))
    return found


def _read_late(name, view, writes, pos, loops):
    """Whether the read of view ``name`` at ``pos`` comes after a write into its base:
    later in program order, or in a loop that also encloses the read."""
    for wpos, wloops, written, index in writes.get(view.base, []):
        if written == name or written in view.through:
            # into the view itself (its own adjoint clears that slot), or into a view it
            # was made from: that view's own entry says whether the write came too late
            continue
        if not view.through and _disjoint(view.value, view.base, index):
            continue  # out[0] is read, out[1] written: a view or a number, it is unchanged
        later = view.made < wpos < pos
        around = set(wloops) - set(view.loops)  # loops around the write, not the view
        if later or around & set(loops):
            return True
    return False


def _base_read_late(name, writes, pos, loops):
    """The view written into array ``name`` before its read at ``pos`` (or in a loop
    that also encloses the read), or None."""
    for wpos, wloops, written, _ in writes.get(name, []):
        if written != name and (wpos < pos or set(wloops) & set(loops)):
            return written
    return None


def _disjoint(value, base, index):
    """Whether ``value``, a subscript of ``base``, and the slots a write into ``base[index]``
    reaches are apart: at one position both indices are different non-negative ints,
    every position before it an int or a slice (each the same one axis in both)."""
    if index is None or not (
        isinstance(value, gast.Subscript) and getattr(value.value, "id", None) == base
    ):
        return False
    for a, b in zip(_parts(value.slice), _parts(index)):
        if _index_int(a) is not None and _index_int(b) is not None:
            if _index_int(a) != _index_int(b):
                return True
        elif not all(_index_int(p) is not None or isinstance(p, gast.Slice) for p in (a, b)):
            return False
    return False


def _parts(index):
    return index.elts if isinstance(index, gast.Tuple) else [index]


def _index_int(node):
    """The value of a non-negative int constant, or None."""
    if isinstance(node, gast.Constant) and type(node.value) is int and node.value >= 0:
        return node.value
    return None


def _track_views(made, s, where, resolve, copies):
    """Update ``made`` for an assignment to a name at ``where`` (position, loops, path):
    a value that may share its sources' memory is a view of each of them, and of what
    each of them is a view of (made where that view was made); the binding replaces the
    views the name had on its path. ``copies``: the names holding masks, and the test
    of an item of an array (``out[0, 1]`` of a matrix: a number, no view)."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return
    target = s.targets[0].id
    pos, loops, path = where
    masks, is_item = copies
    found = []
    shared = frozenset() if is_item(s.value) else views.sources(s.value, resolve, masks)
    for source in shared:
        inherited = [v for v in made.get(source, ()) if v[0] != target]
        found += [View(*v[:4], v[4] | {source}, path) for v in inherited]  # made where v was
        if source != target:
            found.append(View(source, pos, loops, s.value, frozenset(), path))
    kept = [v for v in made.pop(target, ()) if v[5][: len(path)] != path]
    if kept or found:
        made[target] = kept + found


def _renames(s):
    return (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name)
    )


def _reads(s):
    node = (
        s.test if isinstance(s, (gast.If, gast.While)) else s.iter if isinstance(s, gast.For) else s
    )
    return {
        n.id for n in name_nodes(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
