"""Comprehensions, lambdas and nested functions, rewritten as the statements they run.

``normalize`` differentiates loops, appends and plain calls; these helpers turn the
other spellings of the same computation into them, as plain (not yet normalized)
statements that ``normalize`` then puts in A-normal form:

- a list comprehension or generator expression is a loop appending to a new list
  (a generator is consumed once where numeric code uses one: ``sum(...)``,
  ``np.stack(...)``), a dict comprehension a loop filling a new dict, a set
  comprehension ``set`` of such a list;
- ``map(f, xs, ys)`` is ``[f(x, y) for x, y in zip(xs, ys)]``;
- a call of a lambda or of a function defined inside the differentiated function is
  its body, inlined at the call: parameters bound to the arguments, the callee's own
  names renamed apart, ``return`` an assignment. A closure reads the enclosing
  function's variables where the call happens, which is what Python's late binding
  does too.

The comprehension's variables and the inlined function's locals get fresh names, so
they never clobber the enclosing function's.
"""

from dataclasses import dataclass

import gast

from transpile.core.errors import at
from transpile.core.ir import Annotation, annotate
from transpile.core.nodes import assign, clone, const, descendants, name, transform
from transpile.front import lower

COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp)


def comprehension(node, namer, parsed, into=None):
    """``(statements, result)`` that build what comprehension ``node`` builds (in the
    name ``into``, where given: a list or dict of the function's own, written into later
    as any other)."""
    for gen in node.generators:
        if gen.is_async:
            raise at(parsed, node, "an async comprehension is not supported")
    renames = {}
    for gen in node.generators:
        for n in descendants(gen.target):
            if isinstance(n, gast.Name) and n.id not in renames:
                renames[n.id] = namer.fresh(n.id)
    node = clone(node)
    first_iter = node.generators[0].iter
    for part in _comprehension_scope(node):
        _rename(part, renames)
    node.generators[0].iter = first_iter  # evaluated in the enclosing scope
    items = into or namer.fresh("items")
    if isinstance(node, gast.DictComp):
        start = gast.Dict(keys=[], values=[])
        slot = gast.Subscript(value=name(items), slice=node.key, ctx=gast.Store())
        inner = [gast.Assign(targets=[slot], value=node.value, type_comment=None)]
    else:
        start = gast.List(elts=[], ctx=gast.Load())
        append = gast.Attribute(value=name(items), attr="append", ctx=gast.Load())
        inner = [gast.Expr(value=gast.Call(func=append, args=[node.elt], keywords=[]))]
    for gen in reversed(node.generators):
        for test in reversed(gen.ifs):
            inner = [gast.If(test=test, body=inner, orelse=[])]
        inner = [
            gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)
        ]
    stmts = [assign(items, start, node)] + inner
    for s in stmts:
        _locate(s, node)
    result = name(items)
    if isinstance(node, gast.SetComp):
        result = gast.Call(func=name("set"), args=[result], keywords=[])
    return stmts, result


def _comprehension_scope(node):
    """The parts of a comprehension evaluated in its own scope."""
    parts = [gen.target for gen in node.generators]
    parts += [test for gen in node.generators for test in gen.ifs]
    parts += [gen.iter for gen in node.generators[1:]]
    if isinstance(node, gast.DictComp):
        return parts + [node.key, node.value]
    return parts + [node.elt]


def mapped(node):
    """``map(f, *sequences)`` as the list comprehension it computes."""
    func, sequences = node.args[0], node.args[1:]
    # comprehension() gives the loop variables fresh names; these only must not
    # capture a name that ``func`` reads
    taken = {n.id for n in descendants(func) if isinstance(n, gast.Name)}
    bases = ["item"] if len(sequences) == 1 else [f"item{k}" for k in range(len(sequences))]
    targets = [name(_unused(b, taken), gast.Store()) for b in bases]
    loads = [name(t.id) for t in targets]
    if len(sequences) == 1:
        target, source = targets[0], sequences[0]
    else:
        target = gast.Tuple(elts=targets, ctx=gast.Store())
        source = gast.Call(func=name("zip"), args=list(sequences), keywords=[])
    gen = gast.comprehension(target=target, iter=source, ifs=[], is_async=0)
    elt = gast.Call(func=func, args=loads, keywords=[])
    return gast.copy_location(gast.ListComp(elt=elt, generators=[gen]), node)


def unused_name(base, node):
    """``base``, or ``base_``..., not among the names ``node`` reads."""
    return _unused(base, {n.id for n in descendants(node) if isinstance(n, gast.Name)})


def _unused(base, taken):
    while base in taken:
        base += "_"
    return base


def sorted_by_index(node, namer):
    """``(statements, value)`` computing ``sorted(xs, key=k)`` as
    ``[xs[i] for i in sorted(range(len(xs)), key=lambda i: k(xs[i]))]``: the order is a
    constant to differentiation (the key only compares: its lambda is annotated
    CONSTANT), the items flow through the subscripts. ``xs`` is read once, first."""
    items = namer.fresh("unsorted")
    index = namer.fresh("i")
    keywords = {k.arg: k.value for k in node.keywords}
    item = gast.Subscript(value=name(items), slice=name(index), ctx=gast.Load())
    compared = (
        gast.Call(func=keywords["key"], args=[item], keywords=[]) if "key" in keywords else item
    )
    key = gast.Lambda(
        args=gast.arguments(
            args=[name(index, gast.Param())],
            posonlyargs=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=compared,
    )
    annotate(key, Annotation.CONSTANT, True)
    count = gast.Call(func=name("len"), args=[name(items)], keywords=[])
    indices = gast.Call(func=name("range"), args=[count], keywords=[])
    order_keywords = [gast.keyword(arg="key", value=key)]
    if "reverse" in keywords:
        order_keywords.append(gast.keyword(arg="reverse", value=keywords["reverse"]))
    order = gast.Call(func=name("sorted"), args=[indices], keywords=order_keywords)
    gen = gast.comprehension(target=name(index, gast.Store()), iter=order, ifs=[], is_async=0)
    picked = gast.Subscript(value=name(items), slice=name(index), ctx=gast.Load())
    comp = gast.copy_location(gast.ListComp(elt=picked, generators=[gen]), node)
    return [assign(items, node.args[0], node)], comp


@dataclass
class Local:
    """A function the differentiated function defines: a lambda or a nested ``def``."""

    name: str
    node: object  # gast.Lambda or gast.FunctionDef
    defaults: dict  # parameter -> the atom holding its default, computed at the def


def parameters(node):
    """The parameter names of a lambda or ``def``, and of those with defaults."""
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or getattr(args, "posonlyargs", []):
        return None, None
    params = [a.id for a in args.args]
    return params, params[len(params) - len(args.defaults) :]


def inline(local, call, namer, parsed):
    """``(statements, result expression)`` running ``local``'s body for ``call``."""
    params, _ = parameters(local.node)
    bound = _bind_arguments(local, params, call, parsed)
    if isinstance(local.node, gast.Lambda):
        body, own = [clone(local.node.body)], ()
    else:
        body = [clone(s) for s in local.node.body]
        own = sorted(_locals_of(local.node) - set(params))
    renames = {n: namer.fresh(n) for n in own}
    stmts, atoms = _bind_parameters(params, bound, body, renames, namer, call)
    body = [_replace_loads(s, atoms, renames) for s in body]
    if isinstance(local.node, gast.Lambda):
        return [_locate(s, call) for s in stmts], body[0]
    for s in body:
        for n in descendants(s):
            if isinstance(n, gast.FunctionDef):
                n.name = renames.get(n.name, n.name)
    if not any(isinstance(n, gast.Return) for n in _own_statements(body)):
        return stmts + body, const(None)
    body = lower.returns(parsed, namer, body)
    return stmts + body[:-1], body[-1].value


def _bind_parameters(params, bound, body, renames, namer, call):
    """``(statements, atoms)``: a parameter the body never rebinds reads an atom
    argument itself (``atoms``); the others get a fresh name (added to ``renames``)
    assigned the argument by ``statements``."""
    bound_inside = {
        n.id
        for s in body
        for n in descendants(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param))
    }
    stmts, atoms = [], {}
    for p in params:
        arg = bound[p]
        if _is_plain(arg) and p not in bound_inside:
            atoms[p] = arg
            continue
        renames[p] = namer.fresh(p)
        stmts.append(assign(renames[p], arg, call))
    return stmts, atoms


def _is_plain(arg):
    """An argument read as it is wherever the parameter is: a name, a constant, or a
    chain of attributes of a name (``np.tanh``)."""
    while isinstance(arg, gast.Attribute):
        arg = arg.value
    return isinstance(arg, (gast.Name, gast.Constant))


def used_as_values(nodes, is_map, is_inlined=lambda call: False):
    """The names ``nodes`` (a tree's ``descendants``) read other than as a called
    function (or the function ``map`` applies, or an argument of a helper inlined at the
    call, ``is_inlined``): a local function among them cannot be inlined."""
    found = set()
    for n in nodes:
        kind = n.__class__
        if kind is gast.Call:
            if is_inlined(n):
                continue
            values = n.args[1:] + [k.value for k in n.keywords]
            values += n.args[:1] if not is_map(n) else []
        elif kind is gast.Return or kind is gast.Assign:
            values = [n.value]
        elif kind is gast.Dict:
            values = n.values
        elif kind is gast.Tuple or kind is gast.List:
            values = n.elts
        else:
            continue
        found.update(v.id for v in values if isinstance(v, gast.Name))
    return found


def _bind_arguments(local, params, call, parsed):
    """parameter -> the argument expression (or default atom) it takes at ``call``."""
    what = f"`{local.name}`" if local.name else "the lambda"
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        raise at(parsed, call, f"a starred argument to {what}, defined in this function")
    if len(call.args) > len(params):
        raise at(parsed, call, f"{what} takes {len(params)} arguments, given {len(call.args)}")
    bound = dict(zip(params, call.args))
    for k in call.keywords:
        if k.arg not in params or k.arg in bound:
            raise at(parsed, call, f"{what} has no parameter {k.arg!r}, or it is given twice")
        bound[k.arg] = k.value
    for p in params:
        if p not in bound:
            if p not in local.defaults:
                raise at(parsed, call, f"{what} is missing its argument {p!r}")
            bound[p] = clone(local.defaults[p])
    return bound


def _own_statements(stmts):
    """The statements of a function body, not those of functions it defines."""
    for s in stmts:
        yield s
        if isinstance(s, (gast.FunctionDef, gast.Lambda)):
            continue
        for field in ("body", "orelse"):
            yield from _own_statements(getattr(s, field, []) or [])


def _locals_of(fdef):
    """The names a nested ``def`` binds: parameters, assignments, loops, inner defs."""
    found = {a.id for a in fdef.args.args}
    for s in _own_statements(fdef.body):
        if isinstance(s, gast.FunctionDef):
            found.add(s.name)
            continue
        for n in (
            descendants(s) if not isinstance(s, (gast.If, gast.For, gast.While)) else _heads(s)
        ):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                found.add(n.id)
    return found


def _heads(s):
    """The nodes of a compound statement outside its blocks (a loop's target)."""
    for part in (getattr(s, "target", None), s.test if hasattr(s, "test") else None):
        if part is not None:
            yield from descendants(part)


def _rename(node, renames):
    for n in descendants(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]


def _replace_loads(node, atoms, renames):
    """``node`` with each load of a name in ``atoms`` replaced by a copy of that atom
    (all at once: ``lambda a, b: a - b`` called as ``f(b, a)``) and ``renames`` applied."""

    def visit(n):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in atoms:
            return clone(atoms[n.id])
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
        return n

    return transform(node, {gast.Name: visit})


def _is_load_of(node, param):
    return isinstance(node, gast.Name) and node.id == param and isinstance(node.ctx, gast.Load)


def _locate(stmt, origin):
    for n in descendants(stmt):
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
            gast.copy_location(n, origin)
    return stmt
