"""Copies between adjoints: ``a = b`` where both are written once is one name.

One pass in program order over a def-use index. The kept name is the value's
origin, unless a temporary would displace a user's name (``dw`` over ``_t11``).
A constant adjoint written once (the seed 1.0 of a scalar output) is folded into
its uses.
"""

import gast

from transpile import defuse
from transpile.nodes import all_stmts, clone
from transpile.tidy import fold_constants_in
from transpile.zeros import in_place_base


def stage(fn, ctx):
    """Propagate the copies of the adjoint sweep."""
    fn.adjoint = propagate_copies(fn.adjoint, fn.adjoint_names)
    return fn


def propagate_copies(body, adjoint_names):
    """Remove top-level copies ``a = b`` between adjoints that are each written once,
    keeping the more meaningful name (``dw`` over ``_t11``, ``d_t4`` over ``d_t3``), and
    fold a constant adjoint written once (the seed 1.0 of a scalar output) into its
    uses. One pass over a def-use index, in program order."""
    index = defuse.Index(body)
    in_place = {}
    for s in all_stmts(body):
        base = in_place_base(s)
        if base:
            in_place[base] = in_place.get(base, 0) + 1

    def written(n):
        return index.write_count(n) + in_place.get(n, 0)

    adjoint_names = set(adjoint_names)
    out = []
    for s in body:
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            out.append(s)
            continue
        t = s.targets[0].id
        if isinstance(s.value, gast.Constant) and t in adjoint_names and written(t) == 1:
            index.forget(s)
            for reader in index.reading(t):
                fold_constants_in(_substitute(reader, t, s.value))
            index.reads.pop(t, None)
            continue
        if not isinstance(s.value, gast.Name):
            out.append(s)
            continue
        a, b = t, s.value.id
        if not (a in adjoint_names and b in adjoint_names and written(a) == 1 and written(b) == 1):
            out.append(s)
            continue
        # keep the name of the value's origin, except where a temporary would displace a
        # user's name: dw over _t11 (from a callee's adjoint), dz over d_t2
        keep, drop = (a, b) if _is_temp(b) and not _is_temp(a) else (b, a)
        index.forget(s)
        index.rename(drop, keep, writes=True)
        in_place[keep] = in_place.get(keep, 0) + in_place.pop(drop, 0)
        adjoint_names.add(keep)
    return out


def _substitute(stmt, n, constant):
    """``stmt`` with every read of ``n`` replaced by ``constant`` (in place)."""

    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == n and isinstance(node.ctx, gast.Load):
                return clone(constant)
            return node

    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        for field in ("test", "iter"):
            if hasattr(stmt, field):
                setattr(stmt, field, Replace().visit(getattr(stmt, field)))
        return stmt
    return Replace().visit(stmt)


def _is_temp(n):
    """A compiler temporary or its adjoint (``_t11``, ``d_t4``): a user's name reads better."""
    return (n.startswith("_t") and n[2:].isdigit()) or (n.startswith("d_t") and n[3:].isdigit())
