"""Which names always hold scalars, and the ``unbroadcast`` calls that this makes moot.

A scalar operand cannot broadcast its partner to a larger shape, so the partner's
adjoint needs no ``ops.unbroadcast``: ``d_t5 = d_t10`` rather than
``d_t5 = ops.unbroadcast(d_t10, _t5)`` for ``_t10 = _t5 + _t9`` of two reductions.
"""

import gast

import runtime
from transpile.parse import MISSING
from transpile.rules import reductions


def _is_scalar(node, scalars):
    if isinstance(node, gast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return isinstance(node, gast.Name) and node.id in scalars


def scalar_names(tree, parsed):
    """Names that always hold a scalar: numbers, full reductions (``np.sum(x)``,
    ``x.mean()``) and arithmetic on scalars. A scalar operand cannot broadcast the
    other operand, so its partner's adjoint needs no ``unbroadcast``."""
    reducers = {id(f) for f in reductions.FULL_REDUCERS}
    values = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            values.setdefault(n.targets[0].id, []).append(n.value)
        elif isinstance(n, (gast.For, gast.Assign)):
            for t in gast.walk(n.targets[0] if isinstance(n, gast.Assign) else n.target):
                if isinstance(t, gast.Name):
                    values.setdefault(t.id, []).append(None)

    def scalar(v, known):
        if v is None:
            return False
        if _is_scalar(v, known):
            return True
        if isinstance(v, gast.BinOp):
            return _is_scalar(v.left, known) and _is_scalar(v.right, known)
        if isinstance(v, gast.UnaryOp):
            return _is_scalar(v.operand, known)
        if isinstance(v, gast.Call):
            obj = parsed.resolve(v.func)
            if obj is runtime.stop_gradient:
                return all(_is_scalar(a, known) for a in v.args)
            full = len(v.args) == 1 and not v.keywords
            if full and id(obj) in reducers:
                return True
            if (
                isinstance(v.func, gast.Attribute)
                and not v.args
                and not v.keywords
                and v.func.attr in reductions.FULL_REDUCER_METHODS
                and parsed.resolve(v.func) is MISSING
            ):
                return True
        return False

    known = set(values)
    changed = True
    while changed:
        changed = False
        for n in list(known):
            if not all(scalar(v, known) for v in values[n]):
                known.discard(n)
                changed = True
    return known


def elide_unbroadcast(stmt, param, values, scalars):
    """``ops.unbroadcast(e, x)`` is ``e`` when every other operand is a scalar:
    a scalar cannot broadcast ``x`` to a larger shape."""
    # every other bound value, options included (a where-mask or a broadcast_to shape
    # can broadcast x too); the first value is the result node itself
    others = [v for p, v in list(values.items())[1:] if p != param]
    if not all(_is_scalar(o, scalars) for o in others):
        return stmt
    v = stmt.value
    if (
        isinstance(v, gast.Call)
        and isinstance(v.func, gast.Attribute)
        and v.func.attr == "unbroadcast"
    ):
        stmt.value = v.args[0]
    return stmt
