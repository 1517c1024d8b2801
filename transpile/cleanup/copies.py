"""Copies between adjoints: ``a = b`` where both are written once is one name.

One pass in program order over a def-use index. The kept name is the value's
origin, unless a temporary would displace a user's name (``dw`` over ``_t11``).
A constant adjoint written once (the seed 1.0 of a scalar output) is folded into
its uses.
"""

import gast

from transpile.cleanup import buffers
from transpile.cleanup.tidy import fold_constants_in
from transpile.cleanup.zeros import in_place_base
from transpile.core import defuse
from transpile.core.nodes import clone, transform


def stage(fn, ctx):
    """Propagate the copies of the adjoint sweep; the index it kept up to date is left
    for ``signs``, the next stage, which would otherwise build the same one again."""
    index = Written(fn.adjoint)
    fn.adjoint = propagate_copies(fn.adjoint, fn.adjoint_names, index)
    fn.adjoint_index = index
    return fn


def propagate_copies(body, adjoint_names, index=None):
    """Remove top-level copies ``a = b`` between adjoints that are each written once
    (and in loop bodies, those ``buffers.propagate`` finds),
    keeping the more meaningful name (``dw`` over ``_t11``, ``d_t4`` over ``d_t3``), and
    fold a constant adjoint written once (the seed 1.0 of a scalar output) into its
    uses. One pass over a def-use index (``Written(body)``, or one kept up to date
    since it was built), in program order."""
    index = Written(body) if index is None else index
    adjoint_names = set(adjoint_names)
    # a copy in a loop body aliases per pass; not where a buffer is updated in place
    # (the in-place counts would not follow the rename)
    in_loops = adjoint_names - set(index.in_place)
    out = []
    for s in body:
        if isinstance(s, (gast.For, gast.While)):
            s.body = buffers.propagate(s.body, index, in_loops)
            out.append(s)
        elif not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            out.append(s)
        elif isinstance(s.value, gast.Constant):
            if not _fold_constant(s, index, adjoint_names):
                out.append(s)
        elif not (isinstance(s.value, gast.Name) and _merge(s, index, adjoint_names)):
            out.append(s)
    return out


class Written(defuse.Index):
    """The def-use index, with in-place updates (``ops.add_at(d, ...)``) counted as
    writes of the buffer they update."""

    def __init__(self, body):
        self.in_place = {}  # buffer -> how many statements update it in place
        super().__init__(body)

    def add(self, stmt, names=None):
        if stmt.__class__ is gast.Expr and stmt.value.__class__ is gast.Constant:
            super().add(stmt, [])  # a comment: no names, none to walk for
            return
        super().add(stmt, names)
        base = in_place_base(stmt)
        if base:
            self.in_place[base] = self.in_place.get(base, 0) + 1

    def written(self, n):
        return self.write_count(n) + self.in_place.get(n, 0)


def _fold_constant(s, index, adjoint_names):
    """``d = 1.0`` (an adjoint written once): the number where ``d`` is read."""
    t = s.targets[0].id
    if t not in adjoint_names or index.written(t) != 1:
        return False
    index.forget(s)
    for reader in index.reading(t):
        fold_constants_in(_substitute(reader, t, s.value))
    index.reads.pop(t, None)
    return True


def _merge(s, index, adjoint_names):
    """``a = b`` between adjoints written once: one name for both."""
    a, b = s.targets[0].id, s.value.id
    if not (a in adjoint_names and b in adjoint_names):
        return False
    if index.written(a) != 1 or index.written(b) != 1:
        return False
    # keep the name of the value's origin, except where a temporary would displace a
    # user's name: dw over _t11 (from a callee's adjoint), dz over d_t2
    keep, drop = (a, b) if _is_temp(b) and not _is_temp(a) else (b, a)
    index.forget(s)
    index.rename(drop, keep, writes=True)
    index.in_place[keep] = index.in_place.get(keep, 0) + index.in_place.pop(drop, 0)
    adjoint_names.add(keep)
    return True


def _substitute(stmt, n, constant):
    """``stmt`` with every read of ``n`` replaced by ``constant`` (in place)."""

    def put(node):
        if node.id == n and isinstance(node.ctx, gast.Load):
            return clone(constant)
        return node

    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        for field in ("test", "iter"):
            if hasattr(stmt, field):
                setattr(stmt, field, transform(getattr(stmt, field), {gast.Name: put}))
        return stmt
    return transform(stmt, {gast.Name: put})


def _is_temp(n):
    """A compiler temporary or its adjoint (``_t11``, ``d_t4``): a user's name reads better."""
    return (n.startswith("_t") and n[2:].isdigit()) or (n.startswith("d_t") and n[3:].isdigit())
