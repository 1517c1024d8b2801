"""Shape facts that make ``ops.unbroadcast`` moot.

Elementwise operations give their result the broadcast of their operands' shapes.
``shape_sets`` describes each value by the set of *shape atoms* it was broadcast
from: a number or a full reduction contributes nothing, an opaque value (an
argument, a matrix product, a slice) is its own atom. Two values with the same set
have the same shape. In ``z = x + y``, the adjoint of ``x`` needs no
``ops.unbroadcast(dz, x)`` when ``y``'s set is contained in ``x``'s: ``y`` cannot
have broadcast ``x`` to a larger shape.

Atoms are per block and per assignment, so a name re-assigned in a loop is a new
atom after each assignment; the facts hold within one execution of a block.
"""

import gast

import runtime
from transpile.rules import elementwise

_ELEMENTWISE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.Mod, gast.FloorDiv)
_NOT_ELEMENTWISE = {"full", "full_like"}


def shape_sets(tree, parsed, scalars):
    """``id(stmt) -> function(node) -> frozenset | None``: the shape set of an operand
    just before ``stmt`` runs (None for a value the analysis cannot describe)."""
    elementwise_fns = {id(f) for f, t in elementwise.REVERSE if t.__name__ not in _NOT_ELEMENTWISE}
    facts = {}

    def block(stmts, env, gen):
        for s in stmts:
            facts[id(s)] = _Lookup(dict(env), dict(gen), scalars)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                t = s.targets[0].id
                found = _value_set(s.value, facts[id(s)], parsed, elementwise_fns)
                gen[t] = gen.get(t, 0) + 1
                env[t] = found if found is not None else frozenset({(t, gen[t])})
            elif isinstance(s, (gast.If, gast.For, gast.While)):
                assigned = {
                    n.id
                    for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
                }
                inner_env = {k: v for k, v in env.items() if k not in assigned}
                inner_gen = dict(gen)
                if not isinstance(s, gast.If):  # a later iteration sees new values
                    for n in assigned:
                        inner_gen[n] = inner_gen.get(n, 0) + 1000
                for part in (s.body, s.orelse):
                    block(part, dict(inner_env), dict(inner_gen))
                for n in assigned:
                    gen[n] = gen.get(n, 0) + 100000
                    env.pop(n, None)

    block(tree.body, {}, {})
    return facts


class _Lookup:
    def __init__(self, env, gen, scalars):
        self.env, self.gen, self.scalars = env, gen, scalars

    def __call__(self, node):
        if isinstance(node, gast.Constant):
            return frozenset() if _is_number_or_none(node.value) else None
        if isinstance(node, gast.Name):
            if node.id in self.scalars:
                return frozenset()
            if node.id in self.env:
                return self.env[node.id]
            return frozenset({(node.id, self.gen.get(node.id, 0))})
        return None


def _is_number_or_none(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def _value_set(v, lookup, parsed, elementwise_fns):
    if isinstance(v, (gast.Constant, gast.Name)):
        return lookup(v)
    operands = None
    if isinstance(v, gast.BinOp) and isinstance(v.op, _ELEMENTWISE_OPS):
        operands = [v.left, v.right]
    elif isinstance(v, gast.UnaryOp):
        operands = [v.operand]
    elif isinstance(v, gast.Compare):
        operands = [v.left, *v.comparators]
    elif isinstance(v, gast.Call) and not v.keywords:
        obj = parsed.resolve(v.func)
        if id(obj) in elementwise_fns or obj is runtime.stop_gradient:
            operands = list(v.args)
    if operands is None:
        return None
    sets = [lookup(o) for o in operands]
    if any(s is None for s in sets):
        return None
    return frozenset().union(*sets)


def elide_unbroadcast(stmt, param, values, lookup):
    """``ops.unbroadcast(e, x)`` is ``e`` when no other operand (options included: a
    where-mask or clip bounds broadcast too) has a shape atom that ``x`` lacks."""
    v = stmt.value
    if not (
        isinstance(v, gast.Call)
        and isinstance(v.func, gast.Attribute)
        and v.func.attr == "unbroadcast"
    ):
        return stmt
    mine = lookup(values[param]) if lookup else None
    others = [lookup(o) if lookup else None for p, o in list(values.items())[1:] if p != param]
    if mine is not None and all(o is not None and o <= mine for o in others):
        stmt.value = v.args[0]
    return stmt
