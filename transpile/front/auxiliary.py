"""``has_aux=True``: the function returns ``(value, aux)``; only ``value`` is
differentiated, and ``aux`` comes back as the function computed it.

On the normalized tree, whose one exit is ``return r``: the value differentiated is the
first entry of ``r``, and the whole ``r`` is what the generated function returns beside
the gradients (``assemble`` reads ``fn.whole_result``). Where every binding of ``r`` is a
pair written out (``r = (loss, aux)``, the usual ``return loss, aux``), the value is
bound from the pair's first entry as it is made, so ``aux`` reaches no differentiated
value and gets no adjoint; otherwise (``r = helper(x)``) the value is ``r[0]``, after a
check that ``r`` is a pair.
"""

import gast

from transpile.core.errors import at
from transpile.core.nodes import all_stmts, assign, call, clone, const, name


def stage(fn, ctx):
    """With ``ctx.has_aux``: bind ``value`` to the first entry of the returned pair, and
    return ``value``; ``fn.whole_result`` names the pair."""
    if not ctx.has_aux:
        return fn
    body = fn.tree.body
    ret = body[-1]
    if not (isinstance(ret, gast.Return) and isinstance(ret.value, gast.Name)):
        raise at(fn.parsed, ret, "has_aux=True needs a function that returns (value, aux)")
    whole, value = ret.value.id, fn.namer.fresh("value")
    bindings = [s for s in all_stmts(body) if _binds(s, whole)]
    if bindings and all(isinstance(s.value, gast.Tuple) for s in bindings):
        for s in bindings:
            if len(s.value.elts) != 2:
                raise at(fn.parsed, s, "has_aux=True needs a function that returns (value, aux)")
        first = bindings[0].value.elts[0]
        if len(bindings) == 1 and bindings[0] in body and isinstance(first, gast.Name):
            value = first.id  # straight-line code: the value's own name, no copy
        else:
            edits = {id(s): [assign(value, clone(s.value.elts[0]), s), s] for s in bindings}
            fn.tree.body = _edited(body, edits)
    else:
        ops = gast.Attribute(value=name(fn.names["ops"]), attr="aux_pair", ctx=gast.Load())
        first = gast.Subscript(value=name(whole), slice=const(0), ctx=gast.Load())
        body[-1:] = [
            gast.copy_location(gast.Expr(value=call(ops, [name(whole)], ret)), ret),
            assign(value, first, ret),
            ret,
        ]
    ret.value = name(value)
    fn.whole_result = whole
    return fn


def _binds(stmt, target):
    return (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id == target
    )


def _edited(stmts, edits):
    out = []
    for s in stmts:
        for field in ("body", "orelse"):
            if isinstance(s, (gast.If, gast.For, gast.While)):
                setattr(s, field, _edited(getattr(s, field), edits))
        out.extend(edits.get(id(s), [s]))
    return out
