"""A view read after a write into its array is taken again where it is read.

``r = np.ravel(out); out[0, 1] = v; y = np.sum(r)``: ``r`` shows ``v``, but the adjoint
of ``np.sum(r)`` would send its gradient to the values ``out`` had when ``r`` was made,
which ``aliasing`` refuses. The read is given the same view taken again just before it
(``r_2 = np.ravel(out); y = np.sum(r_2)``): the same memory, so the same values, and a
view taken after the writes, which differentiation follows.

Taken again only where the new view is certainly the memory the old one is: the array
is bound once, to a new C-ordered allocation (``np.zeros``, ``np.ones``, ``np.empty``,
``np.full`` without ``order=``; not ``x.copy()``, which may be a list), so that ``reshape`` and ``ravel`` of it
are views, never copies; the view is bound once, at the top level, from that array
alone with constant arguments (``.T``, ``transpose``, ``swapaxes``, ``reshape``, ``ravel``,
a subscript holding a slice or ``...``; ``out[0]`` may be a number, a copy); nothing
writes into the view; the read is a plain statement (not a loop's or a branch's test).
Every other late read is left as it is, for ``aliasing`` to refuse.
"""

import gast
import numpy as np

from transpile.analysis import aliasing, views
from transpile.analysis.allocations import Allocations
from transpile.core.nodes import all_stmts, assign, clone, name_nodes

# calls that surely make a view, the same one each time, of an array laid out as an
# allocation is (declared ``passes`` is a weaker fact: may be the array or a view of it)
_RETAKEN_FUNCTIONS = (np.transpose, np.ravel, np.swapaxes, np.reshape)
_RETAKEN_METHODS = ("reshape", "ravel", "transpose", "swapaxes")
_PLAIN = (gast.Assign, gast.Expr, gast.Return)


def stage(fn, ctx):
    fn.tree = run(fn.tree, fn.parsed, fn.namer)
    return fn


def run(tree, parsed, namer):
    """Take again, in ``tree`` (normalized, changed in place), each view that may be;
    returns ``tree``."""
    written = {w for s in all_stmts(tree.body) for w in _written(s)}
    if not any(views.written_by(s) for s in all_stmts(tree.body)):
        return tree  # nothing written into: no view read late
    known = Allocations(tree, parsed.resolve)
    edits = {}  # id(read statement) -> [(view name, its value)]
    for s, view_name, view in aliasing.late_reads(tree, parsed.resolve):
        if not isinstance(s, _PLAIN) or view.through or view_name in written:
            continue
        made = known.bound_once(view_name)
        if made is None or made.value is not view.value:
            continue
        if known.c_ordered(view.base) is not None and _view_of(view.value, view.base, known):
            taken = edits.setdefault(id(s), [])
            if view_name not in dict(taken):
                taken.append((view_name, view.value))
    if edits:
        tree.body = _apply(tree.body, edits, namer)
    return tree


def _apply(stmts, edits, namer):
    out = []
    for s in stmts:
        for field in ("body", "orelse"):
            if isinstance(s, (gast.If, gast.For, gast.While)):
                setattr(s, field, _apply(getattr(s, field), edits, namer))
        for view_name, value in edits.get(id(s), ()):
            again = namer.version(view_name)
            out.append(assign(again, clone(value), s))
            for n in name_nodes(s):
                if n.id == view_name and isinstance(n.ctx, gast.Load):
                    n.id = again
        out.append(s)
    return out


def _written(s):
    """The names ``s`` writes into through a subscript or ``out=``, or rebinds in place."""
    if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
        return {s.target.id}
    return views.written_by(s)


def _view_of(value, base, known):
    """Whether ``value`` is certainly a view of C-ordered ``base``, made from it alone
    with constant arguments."""
    if isinstance(value, gast.Attribute):
        return value.attr == "T" and _is(value.value, base)
    if isinstance(value, gast.Subscript):
        return _is(value.value, base) and _view_index(value.slice, known.constant)
    if not isinstance(value, gast.Call) or value.keywords:
        return False
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr in _RETAKEN_METHODS and _is(func.value, base):
        return all(known.constant(a) for a in value.args)
    return (
        known.resolve(func) in _RETAKEN_FUNCTIONS
        and bool(value.args)
        and _is(value.args[0], base)
        and all(known.constant(a) for a in value.args[1:])
    )


def _view_index(index, constant):
    """Whether subscripting with ``index`` is basic indexing that makes an array: it
    holds a slice or ``...`` (``out[0]`` of a vector is a number, a copy)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    sliced = False
    for p in parts:
        if isinstance(p, gast.Slice):
            bounds = (p.lower, p.upper, p.step)
            if not all(b is None or constant(b) for b in bounds):
                return False
            sliced = True
        elif isinstance(p, gast.Constant) and p.value is Ellipsis:
            sliced = True
        elif not (
            isinstance(p, gast.Constant) and (p.value is None or type(p.value) is int)
        ) and not (isinstance(p, gast.UnaryOp) and constant(p)):
            return False
    return sliced


def _is(node, name):
    return isinstance(node, gast.Name) and node.id == name
