"""Last touches: constants folded, default arguments of helpers dropped, empty
branches and orphan comments removed.

* folding: ``2 - 1`` is ``1``, ``x ** 1`` is ``x``, ``e * 1.0`` is ``e``;
* default arguments: ``ops.unreduce(g, x, None, False)`` is ``ops.unreduce(g, x)``
  (both in one walk, ``fold_and_drop_defaults``).
* ``tidy``: empty branches and loops go; a comment with nothing under it goes.
"""

import functools
import inspect

import gast

from transpile.analysis import views
from transpile.cleanup.zeros import in_place_base
from transpile.core.ir import COMMENT
from transpile.core.nodes import WALKED_FIELDS, all_stmts, const, walked_fields
from transpile_runtime import ops


def stage(fn, ctx):
    """Fold, drop defaults and tidy every function to be compiled."""
    for out in fn.outputs:
        out.body = tidy(fold_and_drop_defaults(out.body, fn.names["ops"]))
    return fn


def _fold_unary(node):
    operand = node.operand
    if (
        isinstance(node.op, gast.USub)
        and isinstance(operand, gast.Constant)
        and _number(operand.value)
    ):
        return gast.copy_location(const(-operand.value), node)
    return node


def _fold_binary(node):
    left, right = node.left, node.right
    lc = isinstance(left, gast.Constant) and _number(left.value)
    rc = isinstance(right, gast.Constant) and _number(right.value)
    if isinstance(right, gast.UnaryOp) and isinstance(right.op, gast.USub):
        flipped = {gast.Add: gast.Sub, gast.Sub: gast.Add}.get(type(node.op))
        if flipped is not None:  # a + -b is a - b, a - -b is a + b
            new = gast.BinOp(left=left, op=flipped(), right=right.operand)
            return gast.copy_location(new, node)
    if lc and rc:
        try:
            value = _OPS[type(node.op)](left.value, right.value)
        except (KeyError, ArithmeticError):
            return node
        return gast.copy_location(const(value), node)
    if rc and right.value == 1 and isinstance(node.op, (gast.Pow, gast.Mult, gast.Div)):
        return left
    if lc and left.value == 1 and isinstance(node.op, gast.Mult):
        return right
    return node


_FOLD = {gast.UnaryOp: _fold_unary, gast.BinOp: _fold_binary}


_OPS = {
    gast.Add: lambda a, b: a + b,
    gast.Sub: lambda a, b: a - b,
    gast.Mult: lambda a, b: a * b,
    gast.Div: lambda a, b: a / b,
}


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fold_constants_in(stmt):
    """Fold the constants of one statement (in place); returns it."""
    return _rewrite(stmt, _FOLD)


_NAME, _CONSTANT, _AST = gast.Name, gast.Constant, gast.AST


def _rewrite(node, visit):
    """``transform(node, visit)`` (``visit`` rewriting neither names nor constants)
    without a call for a constant or a name without an annotation, which hold no
    node to rewrite: a third of the nodes or more."""
    cls = node.__class__
    fields = WALKED_FIELDS.get(cls)
    if fields is None:
        fields = walked_fields(cls)
    for field in fields:
        child = getattr(node, field, None)
        if child.__class__ is list:
            if child:
                _rewrite_all(child, visit)
            continue
        kind = child.__class__
        if kind is _NAME and getattr(child, "annotation", None) is None or kind is _CONSTANT:
            continue
        if isinstance(child, _AST) and child._fields:
            new = _rewrite(child, visit)
            if new is not child:
                setattr(node, field, new)
    rewrite = visit.get(cls)
    return node if rewrite is None else rewrite(node)


def _rewrite_all(nodes, visit):
    """``_rewrite`` each node of the list ``nodes`` in place."""
    for k, c in enumerate(nodes):
        kind = c.__class__
        if kind is _NAME and getattr(c, "annotation", None) is None or kind is _CONSTANT:
            continue
        if isinstance(c, _AST) and c._fields:
            new = _rewrite(c, visit)
            if new is not c:
                nodes[k] = new


def tidy(stmts):
    """Drop empty compound statements, and comments with no statement under them."""
    out = []
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s = _tidy_compound(s)
            if s is None:
                continue
        out.append(s)
    return _drop_strays(out)


def _tidy_compound(s):
    """A branch or loop with its blocks tidied, or None where nothing real is left in
    it. A branch whose body is empty but not its ``else`` is turned around."""
    s.body = tidy(s.body)
    s.orelse = tidy(s.orelse)
    if isinstance(s, gast.If) and not _real(s.body) and not _real(s.orelse):
        return None
    if isinstance(s, gast.For) and not _real(s.body):
        return None
    if not s.body:
        s.body = [gast.Pass()]
    if isinstance(s, gast.If) and not _real(s.body) and _real(s.orelse):
        s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
        s.body, s.orelse = s.orelse, []
    return s


def _drop_strays(stmts):
    """``stmts`` without comments that head nothing (at the end, before another comment
    or a return) or repeat the comment before them in the same stretch, and without
    ``pass`` where other statements stand."""
    cleaned = []
    last_comment = None
    alone = len(stmts) == 1
    for i, s in enumerate(stmts):
        kind = s.__class__
        if kind is gast.Expr and _is_comment(s):
            nxt = stmts[i + 1] if i + 1 < len(stmts) else None
            ends = nxt is None or _is_comment(nxt) or isinstance(nxt, gast.Return)
            if ends or s.value.value == last_comment:
                continue
            last_comment = s.value.value
        elif kind in _COMPOUND_KINDS:
            last_comment = None
        elif kind is gast.Pass and not alone:
            continue
        cleaned.append(s)
    return cleaned


_COMPOUND_KINDS = frozenset((gast.If, gast.For, gast.While))


def _is_comment(s):
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Constant)
        and isinstance(s.value.value, str)
        and s.value.value.startswith(COMMENT)
    )


def _real(stmts):
    return any(not _is_comment(s) and not isinstance(s, gast.Pass) for s in stmts)


def fold_and_drop_defaults(body, ops_name):
    """Constants folded and helpers' default arguments dropped, in one walk.

    ``t = e * 1.0`` makes a new array: folded to ``t = e`` it would be ``e``'s array
    under a second name, so where the function writes into any array in place (the
    user's ``out[i] = v``, an adjoint's ``ops.add_at(dq, ...)``) such a statement is
    kept as it is, and a write into one name cannot show through the other."""
    visit = dict(_FOLD)
    visit[gast.Call] = functools.partial(_drop_defaults, ops_name=ops_name)
    writes = _writes_in_place(body)
    return [s if writes and _folds_to_alias(s) else _rewrite(s, visit) for s in body]


def _writes_in_place(body):
    """Whether any statement of ``body`` writes into an array in place."""
    return any(
        isinstance(s, gast.AugAssign)
        or _may_write_in_place(s)
        and (views.written_by(s) or in_place_base(s))
        for s in all_stmts(body)
    )


def _may_write_in_place(s):
    """Whether ``s`` has one of the only forms ``written_by`` and ``in_place_base`` may
    find a write in (into a subscript, by a call): most statements have neither,
    and need no more question."""
    if isinstance(s, gast.Assign):
        return isinstance(s.targets[0], gast.Subscript) or isinstance(s.value, gast.Call)
    return isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)


def _folds_to_alias(s):
    """Whether folding ``s`` would make it ``name = other_name``."""
    if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.BinOp)):
        return False
    folded = _fold_binary(s.value)
    return folded is not s.value and isinstance(folded, gast.Name)


def _drop_defaults(node, ops_name):
    f = node.func
    if not (
        isinstance(f, gast.Attribute)
        and isinstance(f.value, gast.Name)
        and f.value.id == ops_name
        and hasattr(ops, f.attr)
    ):
        return node
    params = _parameters(f.attr)
    while node.args and len(node.args) <= len(params):
        if not _is_default(node.args[-1], params[len(node.args) - 1]):
            break
        node.args.pop()
    return node


@functools.cache
def _parameters(helper):
    return list(inspect.signature(getattr(ops, helper)).parameters.values())


def _is_default(arg, param):
    if not isinstance(arg, gast.Constant) or param.default is inspect.Parameter.empty:
        return False
    default = param.default
    return arg.value is default or type(arg.value) is type(default) and arg.value == default
