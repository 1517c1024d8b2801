"""Parameter defaults as the values Python computed when the ``def`` ran.

A default is evaluated once, at the ``def``, in the scope around it: an enclosing
function's locals (``def f(x, k=float(i) * 2.0)`` in a factory) or a global as it
was then. The generated functions repeat the user's signature, so their defaults
are those values: a number, string, bool or None as a constant, anything else (an
array, a tuple) under a name bound to the value. A function default keeps its
expression where that still names it (the entry re-checks what a function default
denotes); one that no longer resolves is bound by value too.
"""

import builtins

import gast

from transpile.nodes import const, descendants, name

_CONSTANTS = (int, float, bool, str, type(None))


def run(fn, func) -> None:
    """Replace the default expressions of ``fn.parsed.tree`` by ``func``'s defaults."""
    args = fn.parsed.tree.args
    positional = list(func.__defaults__ or ())
    if len(positional) == len(args.defaults):
        params = [a.id for a in args.args][len(args.args) - len(positional) :]
        args.defaults = [
            _value_node(fn, p, e, v) for p, e, v in zip(params, args.defaults, positional)
        ]
    keywords = func.__kwdefaults__ or {}
    args.kw_defaults = [
        e if e is None or a.id not in keywords else _value_node(fn, a.id, e, keywords[a.id])
        for a, e in zip(args.kwonlyargs, args.kw_defaults)
    ]


def _value_node(fn, param, expr, value):
    if type(value) in _CONSTANTS:
        return gast.copy_location(const(value), expr)
    if callable(value) and _resolves(fn.parsed, expr):
        return expr
    n = _free_name(fn, f"{param}_default")
    fn.parsed.bound[n] = value
    fn.namespace[n] = value
    return gast.copy_location(name(n), expr)


def _resolves(parsed, expr):
    """Whether every name ``expr`` reads is a global, closure variable or builtin."""
    known = parsed.namespace.keys() | parsed.free_values.keys()
    return all(
        n.id in known or hasattr(builtins, n.id)
        for n in descendants(expr)
        if isinstance(n, gast.Name)
    )


def _free_name(fn, base):
    parsed = fn.parsed
    taken = {n.id for n in descendants(parsed.tree) if isinstance(n, gast.Name)}
    taken |= set(parsed.namespace) | set(parsed.cells) | set(parsed.bound) | set(dir(builtins))
    candidate, k = base, 1
    while candidate in taken:
        candidate, k = f"{base}_{k}", k + 1
    return candidate
