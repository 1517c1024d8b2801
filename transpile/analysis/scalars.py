"""Which names always hold scalars: numbers, full reductions, arithmetic on them.

A scalar output needs no run-time check before its seed 1.0, and a scalar operand
cannot broadcast its partner (``shapes`` uses that).
"""

import gast

import transpile_runtime as runtime
from transpile.core import fixpoint
from transpile.core.ir import MISSING
from transpile.core.nodes import descendants
from transpile.rules import registry


def _is_scalar(node, scalars):
    if isinstance(node, gast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return isinstance(node, gast.Name) and node.id in scalars


def _reduces(declaration):
    return declaration is not None and declaration.reduces


def scalar_names(tree, parsed, nodes=None):
    """Names that always hold a scalar: numbers, full reductions (``np.sum(x)``,
    ``x.mean()``) and arithmetic on scalars. A scalar operand cannot broadcast the
    other operand, so its partner's adjoint needs no ``unbroadcast``. ``nodes``:
    ``descendants(tree)``, where the caller has it."""
    rules = registry()
    values = _bindings(tree, descendants(tree) if nodes is None else nodes)
    return _greatest(
        values, lambda n, known: all(_scalar_value(v, known, parsed, rules) for v in values[n])
    )


def _greatest(values, holds, passes=3):
    """``fixpoint.greatest(values, holds)``, found by passes over the names still kept,
    in the order they are bound, dropping each that does not hold. The set is the same
    (``holds`` only asks whether operands are kept: a name of the greatest set is never
    dropped, and a pass that drops none leaves a set in which every name holds). In
    A-normal form a value's operands are mostly bound before it, so the first pass
    drops nearly all and the second none; ``fixpoint`` (which first finds the readers
    of every value) takes over from a third pass that still drops."""
    kept = set(values)
    for _ in range(passes):
        dropped = False
        for n in values:
            if n in kept and not holds(n, kept):
                kept.discard(n)
                dropped = True
        if not dropped:
            return kept
    return fixpoint.greatest(values, holds, start=kept)


def _bindings(tree, nodes):
    """name -> the values bound to it (among ``nodes``, the tree's); ``None`` for a
    parameter, an element of an unpacking or a loop target, which may hold anything."""
    values = {a.id: [None] for a in tree.args.args}
    for n in nodes:
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            values.setdefault(n.targets[0].id, []).append(n.value)
        elif isinstance(n, (gast.For, gast.Assign)):
            for t in descendants(n.targets[0] if isinstance(n, gast.Assign) else n.target):
                if isinstance(t, gast.Name):
                    values.setdefault(t.id, []).append(None)
    return values


def _scalar_value(v, known, parsed, rules):
    """Whether the bound value ``v`` is a scalar, given the names ``known`` to be."""
    if v is None:
        return False
    if _is_scalar(v, known):
        return True
    if isinstance(v, gast.BinOp):
        return _is_scalar(v.left, known) and _is_scalar(v.right, known)
    if isinstance(v, gast.UnaryOp):
        return _is_scalar(v.operand, known)
    if isinstance(v, gast.Call):
        return _scalar_call(v, known, parsed, rules)
    return False


def _scalar_call(v, known, parsed, rules):
    """Whether a call gives a scalar: ``stop_gradient`` of scalars, or a full reduction
    (``np.sum(x)``, ``x.mean()``)."""
    obj = parsed.resolve(v.func)
    if obj is runtime.stop_gradient:
        return all(_is_scalar(a, known) for a in v.args)
    full = len(v.args) == 1 and not v.keywords
    if full and _reduces(rules.declaration(obj)):
        return True
    return (
        isinstance(v.func, gast.Attribute)
        and not v.args
        and not v.keywords
        and _reduces(rules.method_declaration(v.func.attr))
        and obj is MISSING
    )
