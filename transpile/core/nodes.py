"""Small helpers for building and reading gast nodes, shared by the passes."""

import gast

_AST = gast.AST
_NAME = gast.Name


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


_LOAD, _STORE = gast.Load(), gast.Store()  # shared, as ``ast.parse`` shares them


def name(id_, ctx=None):
    """``gast.Name(id=id_, ctx=ctx)``, made without gast's generic constructor (the
    compiler makes tens of thousands)."""
    node = _new(gast.Name)
    node.__dict__ = {"id": id_, "ctx": ctx or _LOAD, "annotation": None, "type_comment": None}
    return node


def _new(cls):
    return cls.__new__(cls)


def assign(target: str, value, origin):
    node = gast.Assign(targets=[name(target, _STORE)], value=value, type_comment=None)
    return located(node, origin)


def call(func, args, origin, keywords=()):
    return located(gast.Call(func=func, args=list(args), keywords=list(keywords)), origin)


_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def located(node, origin):
    """``gast.copy_location(node, origin)``: the location ``origin`` has, copied where
    both are nodes with a location (statements, expressions), without gast's check of
    each attribute of both classes (the passes make a node per line they write). A
    gast class has all four location attributes or none."""
    if not origin._attributes or not node._attributes:
        return node
    found, into = origin.__dict__, node.__dict__
    for attr in _LOCATION:
        if attr in found:
            into[attr] = found[attr]
    return node


def const(value):
    node = _new(gast.Constant)
    node.__dict__ = {"value": value, "kind": None}
    return node


def loads(node):
    return [n.id for n in name_nodes(node) if isinstance(n.ctx, gast.Load)]


def loads_with_parents(node):
    """``(Name, parent)`` for every name read in ``node`` (``parent`` is None when
    ``node`` is itself the name), in one walk (``descendants``' order of parents)."""
    if isinstance(node, gast.Name):
        return [(node, None)] if isinstance(node.ctx, gast.Load) else []
    found, todo = [], [node]
    push, walked, ast_type = todo.append, _WALKED, _AST
    name_type, load = gast.Name, gast.Load
    for parent in todo:
        fields = walked.get(parent.__class__)
        if fields is None:
            fields = _walked_fields(parent.__class__)
        for field in fields:
            child = getattr(parent, field, None)
            for c in child if child.__class__ is list else (child,):
                if c.__class__ is name_type:
                    if c.ctx.__class__ is load:
                        found.append((c, parent))
                elif isinstance(c, ast_type):
                    push(c)
    return found


def stores(stmt):
    if isinstance(stmt, gast.Assign):
        out = []
        for t in stmt.targets:
            if isinstance(t, gast.Name):
                out.append(t.id)
            elif isinstance(t, gast.Tuple):
                out.extend(e.id for e in t.elts if isinstance(e, gast.Name))
        return out
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        return [stmt.target.id]
    if isinstance(stmt, gast.For):
        return [n.id for n in descendants(stmt.target) if isinstance(n, gast.Name)]
    return []


def header(stmt):
    """What a CFG node evaluates: compound statements only evaluate their header."""
    if isinstance(stmt, gast.If):
        return stmt.test
    if isinstance(stmt, gast.For):
        return stmt.iter
    if isinstance(stmt, gast.While):
        return stmt.test
    return stmt


def apply_edits(stmts, edits):
    out = []
    for s in stmts:
        if id(s) in edits:
            out.extend(edits[id(s)])
            continue
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = apply_edits(s.body, edits)
            s.orelse = apply_edits(s.orelse, edits)
        out.append(s)
    return out


def all_stmts(stmts):
    for s in stmts:
        yield s
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from all_stmts(s.body)
            yield from all_stmts(s.orelse)


def bound_values(stmts) -> dict:
    """name -> the values assigned to it anywhere in ``stmts``: the value of ``name =
    value``, None where the name is bound by unpacking or as a loop's target."""
    bound = {}
    for s in all_stmts(stmts):
        if isinstance(s, gast.Assign):
            for t in s.targets:
                for n in name_nodes(t):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        bound.setdefault(n.id, []).append(s.value if t is n else None)
        elif isinstance(s, gast.For):
            for n in name_nodes(s.target):
                if isinstance(n, gast.Name):
                    bound.setdefault(n.id, []).append(None)
    return bound


def contains_jump(stmts, kind) -> bool:
    """Whether ``stmts`` hold a ``kind`` (Break, Continue) outside nested loops."""
    for s in stmts:
        if isinstance(s, kind):
            return True
        if isinstance(s, gast.If) and (
            contains_jump(s.body, kind) or contains_jump(s.orelse, kind)
        ):
            return True
    return False


def calls_marker(stmt, marker: str) -> bool:
    """Whether ``stmt`` is ``marker(...)`` or ``x = marker(...)`` (reverse's markers)."""
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, (gast.Expr, gast.Assign))
        and isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id == marker
    )


def function_def(fname: str, args, body):
    return gast.FunctionDef(
        name=fname,
        args=args,
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )


_WALKED = {}  # node class -> the fields descendants() looks into
# the same table, for the walks written out in the passes' hot paths (inline, tidy,
# buffers): read it, and call ``walked_fields`` for a class not in it yet
WALKED_FIELDS = _WALKED
# fields not walked: a name's context (Load, Store) and an operation's operator (Add,
# USub, Lt...) are read through their owner, never walked to (nodes without fields,
# shared); identifiers, flags, comments hold no node
_NOT_NODES = frozenset(
    (
        *("ctx", "op", "ops"),
        *("type_comment", "id", "attr", "arg", "kind", "is_async", "level", "module"),
    )
)
_NOT_NODES_OF = {
    gast.Constant: frozenset(("value",)),
    gast.FunctionDef: frozenset(("name",)),
    gast.ClassDef: frozenset(("name",)),
    gast.alias: frozenset(("name", "asname")),
}


def walked_fields(cls):
    """The fields of ``cls`` that may hold nodes (those ``descendants`` walks)."""
    fields = _WALKED.get(cls)
    return _walked_fields(cls) if fields is None else fields


def _walked_fields(cls):
    skip = _NOT_NODES | _NOT_NODES_OF.get(cls, frozenset())
    fields = tuple(f for f in cls._fields if f not in skip)
    _WALKED[cls] = fields
    return fields


def descendants(node):
    """``node`` and every node under it, breadth first, as a list: ``gast.walk`` without
    its generator (the passes walk every statement several times), and without the
    expression contexts and operators (``gast.Load``, ``gast.Add``: read them as
    ``name.ctx``, ``binop.op``)."""
    todo = [node]  # a queue: the loop reads what it appends
    push, walked, ast_type = todo.append, _WALKED, _AST
    for n in todo:
        fields = walked.get(n.__class__)
        if fields is None:
            fields = _walked_fields(n.__class__)
        for field in fields:
            child = getattr(n, field, None)
            if child.__class__ is list:
                for c in child:
                    if isinstance(c, ast_type):
                        push(c)
            elif isinstance(child, ast_type):
                push(child)
    return todo


def name_nodes(node):
    """The ``gast.Name`` nodes in ``node`` (itself included), in ``descendants``' order.
    ``descendants``' loop written again: the passes ask this most often, and here it
    can skip the inside of a name (its annotation, when it has none)."""
    found, todo = [], [node]
    push, walked, ast_type, name_type = todo.append, _WALKED, _AST, gast.Name
    for n in todo:
        cls = n.__class__
        if cls is name_type:
            found.append(n)
            if getattr(n, "annotation", None) is None:
                continue
        fields = walked.get(cls)
        if fields is None:
            fields = _walked_fields(cls)
        for field in fields:
            child = getattr(n, field, None)
            if child.__class__ is list:
                for c in child:
                    if isinstance(c, ast_type):
                        push(c)
            elif isinstance(child, ast_type):
                push(child)
    return found


def loads_and_stores(node):
    """``({ids read}, {ids bound})``: the names in ``node`` (itself included) in a
    ``Load`` and in a ``Store`` context, as ``name_nodes`` finds them, gathered as they
    are met (a loop's probe asks this of the whole loop)."""
    loads, stores, todo = set(), set(), [node]
    push, walked, ast_type, name_type = todo.append, _WALKED, _AST, gast.Name
    load, store = gast.Load, gast.Store
    for n in todo:
        cls = n.__class__
        if cls is name_type:
            ctx = n.ctx.__class__
            if ctx is load:
                loads.add(n.id)
            elif ctx is store:
                stores.add(n.id)
            if n.annotation is None:
                continue
        fields = walked.get(cls)
        if fields is None:
            fields = _walked_fields(cls)
        for field in fields:
            child = getattr(n, field, None)
            if child.__class__ is list:
                for c in child:
                    if isinstance(c, ast_type):
                        push(c)
            elif isinstance(child, ast_type):
                push(child)
    return loads, stores


def names_and_calls(node):
    """The ``gast.Name`` and the ``gast.Call`` nodes in ``node``, in ``descendants``'
    order: ``name_nodes``' loop, keeping the calls too."""
    names, calls, todo = [], [], [node]
    push, walked, ast_type = todo.append, _WALKED, _AST
    name_type, call_type = gast.Name, gast.Call
    for n in todo:
        cls = n.__class__
        if cls is name_type:
            names.append(n)
            if getattr(n, "annotation", None) is None:
                continue
        elif cls is call_type:
            calls.append(n)
        fields = walked.get(cls)
        if fields is None:
            fields = _walked_fields(cls)
        for field in fields:
            child = getattr(n, field, None)
            if child.__class__ is list:
                for c in child:
                    if isinstance(c, ast_type):
                        push(c)
            elif isinstance(child, ast_type):
                push(child)
    return names, calls


def readers(bindings):
    """For ``bindings`` (name -> the values bound to it, gast nodes or markers), name ->
    the names bound to a value that reads it: whom a fixed point over the bindings must
    look at again when what it knows of a name changes."""
    found = {}
    for n, values in bindings.items():
        for v in values:
            if isinstance(v, _AST):
                for m in name_nodes(v):
                    found.setdefault(m.id, set()).add(n)
    return found


def transform(node, visit):
    """Rewrite ``node`` bottom up, in place: each child is rewritten first, then
    ``visit[type(node)](node)``, where there is one, returns the node's replacement.
    ``gast.NodeTransformer`` without its per-node method lookup, and skipping the
    nodes without fields and the fields that hold no nodes (as ``descendants``)."""
    fields = _WALKED.get(node.__class__)
    if fields is None:
        fields = _walked_fields(node.__class__)
    for field in fields:
        child = getattr(node, field, None)
        if child.__class__ is list:
            for k, c in enumerate(child):
                if isinstance(c, _AST) and c._fields:
                    new = transform(c, visit)
                    if new is not c:
                        child[k] = new
        elif isinstance(child, _AST) and child._fields:
            new = transform(child, visit)
            if new is not child:
                setattr(node, field, new)
    rewrite = visit.get(node.__class__)
    return node if rewrite is None else rewrite(node)


def clone(node):
    """A deep copy of a gast node or a list of them (``copy.deepcopy`` without its memo).
    Nodes without fields (``Load``, ``Add``, ...) are shared, as ``ast.parse`` shares
    them: nothing writes to one, and a third of a tree's nodes are of these kinds. The
    node's attributes are copied at once, then the fields that hold nodes (those
    ``descendants`` walks) are copied deeply."""
    if node.__class__ is list:
        return [clone(n) for n in node]
    if not isinstance(node, _AST) or not node._fields:
        return node
    cls = node.__class__
    new = cls.__new__(cls)
    attrs = node.__dict__.copy()
    if cls is _NAME and attrs.get("annotation") is None:
        new.__dict__ = attrs  # a third of a tree's nodes: nothing under them to copy
        return new
    fields = _WALKED.get(cls)
    if fields is None:
        fields = _walked_fields(cls)
    for field in fields:
        value = attrs.get(field)
        if value.__class__ is list:
            attrs[field] = [clone(v) if isinstance(v, _AST) else v for v in value]
        elif isinstance(value, _AST) and value._fields:
            attrs[field] = clone(value)
    new.__dict__ = attrs
    return new
