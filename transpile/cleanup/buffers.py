"""Last touches on a specialized body: copies dropped, large buffers reused."""

import math

import gast
import numpy as np

from transpile.core import defuse
from transpile.core.ir import RESTORE, Annotation, annotation
from transpile.core.nodes import WALKED_FIELDS, name, name_nodes, walked_fields
from transpile.rules.declare import helper_of


def propagate_copies(body, names=None):
    """Drop ``a = b`` where ``a`` is bound only there, read only after it, and ``b`` is
    not bound again later, reading ``b`` wherever ``a`` was read (the rewrite leaves
    many such lines). In a loop body the same holds from one iteration to the next:
    every read of ``a`` follows the copy, and ``b`` does not change before the body
    ends. One pass over a def-use index: a chain ``a = b; c = a`` resolves in order.
    With ``names``, only copies between two of them."""
    return propagate(body, defuse.Index(body), names)


def propagate(stmts, index, names=None):
    """``propagate_copies`` with a def-use ``index`` of the body, kept up to date. A
    copy straight back (``a = b`` then ``b = a``: the adjoint of ``s = s + t`` in a
    loop) is dropped first: ``b`` already is ``a``'s object."""
    out = []
    stmts = list(stmts)
    for k, s in enumerate(stmts):
        if s is None:
            continue  # dropped: a copy straight back
        if isinstance(s, (gast.For, gast.While)):
            s.body = propagate(s.body, index, names)
            out.append(s)
            continue
        if not _is_copy(s):
            out.append(s)
            continue
        back = _copy_back(stmts, k)
        if back is not None:
            index.forget(stmts[back])
            stmts[back] = None
        a, b = s.targets[0].id, s.value.id
        if (names is None or (a in names and b in names)) and _copy_is_alias(s, index):
            index.forget(s)
            index.rename(a, b)
            continue
        out.append(s)
    return out


def _copy_back(stmts, k):
    """The position of ``b = a`` after the copy ``stmts[k]``, ``a = b``, with only
    comments and restore markers between them (which write neither), or None."""
    s = stmts[k]
    for j in range(k + 1, len(stmts)):
        after = stmts[j]
        if _is_copy(after):
            same = after.targets[0].id == s.value.id and after.value.id == s.targets[0].id
            return j if same else None
        if not _is_marker(after) or _restores(after) in (s.value.id, s.targets[0].id):
            return None
    return None


def _restores(s):
    """The name a ``__restore__(x)`` marker restores, or None."""
    call = s.value
    if isinstance(call, gast.Call) and call.args and isinstance(call.args[0], gast.Name):
        return call.args[0].id
    return None


def _is_marker(s):
    """A ``# grad of:`` comment or a ``__restore__(x)`` marker: it writes no name."""
    if not isinstance(s, gast.Expr):
        return False
    v = s.value
    if isinstance(v, gast.Constant):
        return isinstance(v.value, str)
    return isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and v.func.id == RESTORE


def _is_copy(s):
    return (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name)
    )


def _copy_is_alias(s, index):
    a, b = s.targets[0].id, s.value.id
    here = index.position[id(s)]
    return (
        index.write_count(a) == 1
        and not index.written_after(b, s)
        and all(index.position[id(r)] > here for _, r in index.reads.get(a, ()))
    )


_OPERATOR_UFUNCS = {
    gast.Add: "add",
    gast.Sub: "subtract",
    gast.Mult: "multiply",
    gast.Div: "true_divide",
    gast.Pow: "power",
    gast.USub: "negative",
}
REUSE_SIZE = 1 << 15  # elements; below this a new array costs less than ``out=``


def reuse_buffers(body, np_name, min_size=None):
    """Write an elementwise result into a large operand that nothing reads again.

    ``t = a + b`` becomes ``t = np.add(a, b, out=a)`` when ``a`` is an array this
    body made (by arithmetic, not a view or an argument), is read nowhere else, and
    has the result's shape and dtype: numpy does this itself for the temporaries of
    a nested expression, which one-operation-per-line code names and so keeps."""
    min_size = REUSE_SIZE if min_size is None else min_size
    # only a large result is written into a buffer, and only one of its own shape: a
    # large array too, so the other lines matter only for what they read and write
    large = {}  # position -> the array annotation of a large array assigned there
    for i, s in enumerate(body):
        info = annotation(s, Annotation.ARRAY)
        if info is not None and isinstance(s, gast.Assign) and math.prod(info[0]) >= min_size:
            large[i] = info
    if len(large) < 2:
        return body  # a buffer and a result to write into it are two
    loads, stores = _name_uses(body, {body[i].targets[0].id for i in large})
    made = {}  # name -> its array annotation, for large arrays this body made fresh
    for i, info in large.items():
        s = body[i]
        target = s.targets[0].id
        value = s.value
        buffer = _spent_operand(value, np_name, info, made, loads, i)
        if buffer is not None:
            s.value = _with_out(value, buffer, np_name)
        fresh = isinstance(value, (gast.BinOp, gast.UnaryOp)) or _is_ufunc_call(value, np_name)
        if fresh and stores.get(target) == 1:
            made[target] = info
    return body


def _name_uses(body, names):
    """``(loads, stores)`` of ``names``: name -> the positions of the statements reading
    it, and name -> how many times it is written."""
    loads, stores = {}, {}
    for i, s in enumerate(body):
        for n in name_nodes(s):
            if n.id not in names:
                continue
            if isinstance(n.ctx, gast.Load):
                loads.setdefault(n.id, set()).add(i)
            elif isinstance(n.ctx, gast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
    return loads, stores


def _spent_operand(value, np_name, info, made, loads, position):
    """The first operand of elementwise ``value`` that this body made with the same
    shape and dtype (``info``) and that only the statement at ``position`` reads."""
    for operand in _elementwise_operands(value, np_name):
        if (
            isinstance(operand, gast.Name)
            and made.get(operand.id) == info
            and loads.get(operand.id) == {position}
        ):
            return operand.id
    return None


def _is_ufunc_call(node, np_name):
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)):
        return False
    f = getattr(np, node.func.attr, None)
    return (
        getattr(node.func.value, "id", None) == np_name
        and not node.keywords
        and isinstance(f, np.ufunc)
        and f.nout == 1
        and f.signature is None
    )


def _elementwise_operands(node, np_name):
    if isinstance(node, gast.BinOp) and type(node.op) in _OPERATOR_UFUNCS:
        return [node.left, node.right]
    if isinstance(node, gast.UnaryOp) and type(node.op) in _OPERATOR_UFUNCS:
        return [node.operand]
    if _is_ufunc_call(node, np_name):
        return list(node.args)
    return []


def _with_out(node, buffer, np_name):
    out = [gast.keyword(arg="out", value=name(buffer))]
    if isinstance(node, gast.Call):
        node.keywords = out
        return node
    ufunc = gast.Attribute(
        value=name(np_name), attr=_OPERATOR_UFUNCS[type(node.op)], ctx=gast.Load()
    )
    args = [node.left, node.right] if isinstance(node, gast.BinOp) else [node.operand]
    return gast.Call(func=ufunc, args=args, keywords=out)


def written_through(body, ops_name, loop_names=None):
    """The names whose arrays ``body`` may write into: targets of an item assignment or
    an augmented assignment, ``out=`` arguments, and names given to a runtime helper
    that may write into them or hand them back (``ops.add_at(buffer, index, g)``
    writes into ``buffer``; what ``ops.unbroadcast(g, x)`` returns may be ``g``, and a
    write into it one into ``g``). A helper declared ``fresh`` writes into no argument
    and returns none (``ops.winner(d, 0.1)``), and one reads its ``shape_args`` only for
    their shape (``x`` in ``ops.unreduce(1.0, x)``): those names are not written.
    With ``loop_names`` (a dict), the same walk also puts there, for each ``for`` loop
    of ``body``, its position -> its ``gast.Name`` nodes (``name_nodes``' list, in
    another order): the specializer asks both of the same body."""
    found = set()

    def augmented(n):
        if isinstance(n.target, gast.Name):
            found.add(n.target.id)

    def item(n):
        if isinstance(n.ctx, gast.Store):
            found.update(m.id for m in name_nodes(n.value))

    def called(n):
        found.update(_written_by_call(n, ops_name))

    visit = {gast.AugAssign: augmented, gast.Subscript: item, gast.Call: called}
    if loop_names is None:
        _visit(body, visit)
        return found
    _visit([s for s in body if not isinstance(s, gast.For)], visit)
    for k, s in enumerate(body):
        if isinstance(s, gast.For):
            names = loop_names[k] = []
            _visit([s], {**visit, gast.Name: names.append})
    return found


def _visit(body, visit):
    """``visit[type(n)](n)`` for every node ``n`` of ``body`` that has one, as the walk
    meets it (``descendants``' walk, without listing the many nodes of other kinds;
    gast's classes have no subclasses)."""
    todo = list(body)
    push, fields_of, ast_type, name_type = todo.append, WALKED_FIELDS, gast.AST, gast.Name
    name_seen = visit.get(name_type)
    for n in todo:
        cls = n.__class__
        if cls is name_type:
            if name_seen is not None:
                name_seen(n)
            if getattr(n, "annotation", None) is None:
                continue  # nothing under it
        else:
            seen = visit.get(cls)
            if seen is not None:
                seen(n)
        fields = fields_of.get(cls)
        if fields is None:
            fields = walked_fields(cls)
        for field in fields:
            child = getattr(n, field, None)
            if child.__class__ is list:
                for c in child:
                    if isinstance(c, ast_type):
                        push(c)
            elif isinstance(child, ast_type):
                push(child)


def _written_by_call(call, ops_name):
    found = {m.id for k in call.keywords if k.arg == "out" for m in name_nodes(k.value)}
    f = call.func
    if isinstance(f, gast.Attribute) and getattr(f.value, "id", None) == ops_name:
        declared = helper_of(f.attr)
        if declared is not None and declared.fresh:
            return found
        shape_only = declared.shape_args if declared is not None else ()
        found |= {
            a.id
            for k, a in enumerate(call.args)
            if isinstance(a, gast.Name) and k not in shape_only
        }
    return found
