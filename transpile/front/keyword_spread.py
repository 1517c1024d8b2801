"""``f(x, **d)`` at a call site, made one keyword per key: ``f(x, w=d["w"], b=d["b"])``.

The keys are known where ``d`` is a dict display (``f(x, **{"w": s})``), a name bound
once to one whose keys nothing changes (as a spread ``**kwargs`` parameter is, see
``varargs``), a global or closure dict (its keys checked on every call, as an
unrolled list's elements are: ``assumptions.Contents``), or, for a dict of unknown
keys (a parameter), where the callee is a function whose signature says which keys
the call must take: every parameter that the call does not fill otherwise, and
those with a constant default as ``d["eps"] if "eps" in d else 1e-05``; a callee with
``**kwargs`` of its own, or another default, leaves the keys open and is refused by
name, as is anything else.
"""

import inspect

import gast

from transpile.core.errors import TranspileError, at
from transpile.core.ir import MISSING
from transpile.core.nodes import clone, const
from transpile.front import parse

_MUTATORS = frozenset(("update", "pop", "popitem", "setdefault", "clear", "__setitem__"))


def popped(stmt):
    """``(name, key)`` where ``stmt`` is ``d.pop("key", ...)`` or ``x = d.pop("key",
    ...)``, else None."""
    value = getattr(stmt, "value", None)
    if not isinstance(stmt, (gast.Expr, gast.Assign)) or not isinstance(value, gast.Call):
        return None
    func, args = value.func, value.args
    if (
        isinstance(func, gast.Attribute)
        and func.attr == "pop"
        and isinstance(func.value, gast.Name)
        and 1 <= len(args) <= 2
        and isinstance(args[0], gast.Constant)
        and isinstance(args[0].value, str)
    ):
        return func.value.id, args[0].value
    return None


def mutated(walked, body=()) -> set:
    """The names of the dicts whose keys may change: written into (``d[k] = v``,
    ``del d[k]``) or given to a method that adds or removes keys (``d.update``), but
    for ``d.pop("key", ...)`` as a statement of the function's own ``body`` (run
    once, in order: ``normalize`` drops the key where it meets it)."""
    in_order = {id(s.value.func) for s in body if popped(s) is not None}
    found = set()
    for n in walked:
        kind = n.__class__
        if (
            kind is gast.Subscript
            and isinstance(n.ctx, (gast.Store, gast.Del))
            and isinstance(n.value, gast.Name)
        ) or (
            kind is gast.Attribute
            and n.attr in _MUTATORS
            and isinstance(n.value, gast.Name)
            and id(n) not in in_order
        ):
            found.add(n.value.id)
    return found


def display_keys(value):
    """The keys of the dict display ``value`` when all are strings, else None."""
    if not isinstance(value, gast.Dict) or None in value.keys:
        return None
    if not all(isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys):
        return None
    return tuple(k.value for k in value.keys)


def spread(node, parsed, dict_keys):
    """``node`` (a call) with each ``**d`` made one keyword per key of ``d``;
    ``dict_keys``: name -> the keys of the dict it is bound to, where known."""
    if not any(k.arg is None for k in node.keywords):
        return node
    keywords = []
    for kw in node.keywords:
        if kw.arg is not None:
            keywords.append(kw)
            continue
        keys = display_keys(kw.value)
        if keys is not None:
            keywords += [gast.keyword(arg=k, value=v) for k, v in zip(keys, kw.value.values)]
            continue
        keys = dict_keys.get(kw.value.id) if isinstance(kw.value, gast.Name) else None
        if keys is None:
            keys = _keys_held(parsed, kw.value)
        if keys is not None:
            keywords += [gast.keyword(arg=k, value=_item(kw.value, k)) for k in keys]
            continue
        keys, optional = _keys_the_callee_takes(node, parsed, kw)
        keywords += [gast.keyword(arg=k, value=_item(kw.value, k)) for k in keys]
        keywords += [
            gast.keyword(arg=k, value=_item_or(kw.value, k, default)) for k, default in optional
        ]
    return gast.copy_location(gast.Call(func=node.func, args=node.args, keywords=keywords), node)


def _keys_held(parsed, value):
    """The keys of the global or closure dict ``value`` names now, which the gradient
    then relies on (``parsed.contents``: checked on every call); None for another."""
    chain = _chain(value)
    if chain is None or chain.split(".")[0] in parsed.local_names:
        return None
    found = parsed.resolve(value)
    if not isinstance(found, dict) or not all(isinstance(k, str) for k in found):
        return None
    parsed.contents[chain] = tuple(found)
    return tuple(found)


def _chain(node):
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = _chain(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _item_or(value, key, default):
    """``value[key] if key in value else default``: a parameter with a default that
    ``**value`` may or may not override."""
    test = gast.Compare(left=const(key), ops=[gast.In()], comparators=[clone(value)])
    return gast.IfExp(test=test, body=_item(value, key), orelse=clone(default))


def _item(value, key):
    return gast.Subscript(value=clone(value), slice=const(key), ctx=gast.Load())


def _keys_the_callee_takes(node, parsed, kw):
    """``(keys, ((key, default node), ...))``: the parameters of the callee of ``node``
    that ``**d`` must fill (those that the call's own arguments do not), and those it
    may fill, whose default is a constant in the callee's source; refused where a
    default that is not one or ``**kwargs`` leaves the keys open, or the callee or
    ``d`` is not one that can be read twice."""
    hint = (
        "build the dict in this function as a display ({'w': w, ...}), or pass the "
        "keyword arguments one by one"
    )
    if not _readable_twice(kw.value):
        raise at(parsed, node, "**(an expression) in a call: its keys are not known", hint)
    if any(isinstance(a, gast.Starred) for a in node.args):
        raise at(parsed, node, "**d in a call with *args of unknown length", hint)
    callee = parsed.resolve(node.func)
    try:
        sig = inspect.signature(callee) if callee is not MISSING else None
    except (TypeError, ValueError):
        sig = None
    if sig is None:
        raise at(
            parsed, node, "**d in a call of a function whose parameters are not known here", hint
        )
    keys, optional, open_keys = _sorted_parameters(sig, node, _source_defaults(callee))
    if open_keys:
        raise at(
            parsed,
            node,
            f"**{_chain(kw.value) or 'd'} in a call of "
            f"{getattr(callee, '__name__', 'a function')}(): whether it holds "
            f"{open_keys[0]!r} is not known here (a default or **kwargs)",
            hint,
        )
    return tuple(keys), tuple(optional)


def _sorted_parameters(sig, node, written):
    """``(keys d must hold, (key, default) it may hold, keys left open)`` for the
    parameters of ``sig`` that the call ``node`` does not fill itself; ``written``: the
    defaults that are constants in the source."""
    given = {k.arg for k in node.keywords if k.arg is not None}
    keys, optional, open_keys = [], [], []
    positional = len(node.args)
    for i, p in enumerate(sig.parameters.values()):
        if p.kind is p.VAR_POSITIONAL:
            positional = 0
        elif p.kind is p.VAR_KEYWORD:
            open_keys.append("**" + p.name)
        elif p.kind is p.POSITIONAL_ONLY or i < positional or p.name in given:
            continue
        elif p.default is p.empty:
            keys.append(p.name)
        elif p.name in written:
            optional.append((p.name, written[p.name]))
        else:
            open_keys.append(p.name)
    return keys, optional, open_keys


def _source_defaults(callee):
    """Parameter -> its default where the ``def`` writes it as a constant (``eps=1e-5``),
    the value Python computed; empty where the source cannot be read."""
    try:
        tree = parse.run(callee).tree
    except TranspileError:
        return {}
    args = tree.args
    plain = args.posonlyargs + args.args if hasattr(args, "posonlyargs") else args.args
    pairs = list(zip(plain[len(plain) - len(args.defaults) :], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {a.id: d for a, d in pairs if isinstance(d, gast.Constant)}


def _readable_twice(value):
    """A name, or a subscript of one by constants: reading it once per key is reading
    the same dict."""
    while isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant):
        value = value.value
    return isinstance(value, gast.Name)
