"""``*args`` and ``**kwargs`` parameters, for one number of arguments and one set of
keywords.

``def f(x, *rest)`` called with three arguments is transpiled as
``def f(x, rest0, rest1): rest = (rest0, rest1); ...``: a tuple the function builds,
which the rest of the compiler differentiates like any other. The gradient of a
function taking ``*args`` is made per number of arguments at its first call with it;
a callee's, per call site. ``def f(x, **options)`` called as ``f(x, scale=s)`` is
transpiled as ``def f(x, scale): options = {"scale": scale}; ...``, and called as
``f(x)`` as ``def f(x): options = {}; ...``: per set of keywords. Keyword-only
parameters (``def f(x, *, k=1.5)``) become plain ones after the others, still passed
by keyword (``plain_keyword_only``).
"""

import dataclasses
from typing import NamedTuple

import gast

from transpile.core.errors import TranspileError
from transpile.core.nodes import assign, const, descendants, name


class Spread(NamedTuple):
    """How a callee's ``*args`` and ``**kwargs`` are called at one site."""

    count: object  # how many arguments *args takes, or None
    keys: tuple  # the keywords **kwargs takes


def spread_names(tree, count) -> list:
    """The parameters ``*args`` becomes for ``count`` arguments: clear of every name
    ``tree`` uses, and the same for the same tree."""
    base = tree.args.vararg.id
    taken = {n.id for n in descendants(tree) if isinstance(n, gast.Name)}
    suffix = ""
    while any(f"{base}{suffix}{i}" in taken for i in range(count)):
        suffix += "_"
    return [f"{base}{suffix}{i}" for i in range(count)]


def spread(parsed, how):
    """``parsed`` with its ``*args`` parameter made ``how`` plain ones (``how`` a count,
    or a ``Spread``, which may also name the keywords of its ``**kwargs``)."""
    count, keys = (how.count, how.keys) if isinstance(how, Spread) else (how, ())
    if count is not None and parsed.tree.args.vararg is not None:
        parsed = _spread_positional(parsed, count)
    parsed = plain_keyword_only(parsed)
    if isinstance(how, Spread) and parsed.tree.args.kwarg is not None:
        parsed = _spread_keywords(parsed, keys)  # after them, as Python binds keywords
    return parsed


def plain_keyword_only(parsed):
    """``parsed`` with its keyword-only parameters made plain ones after the others (and
    its positional-only ones plain ones in their places):
    every call passes them by keyword (the caller's binding, checked against the real
    signature, ends with them), so their places change nothing. A parameter without a
    default after one with a default gets None, which no call uses: only the ``def``
    needs one."""
    args = parsed.tree.args
    if getattr(args, "posonlyargs", None):  # passed by place, as plain ones are
        args.args, args.posonlyargs = args.posonlyargs + args.args, []
    if not args.kwonlyargs:
        return parsed
    defaults = list(args.kw_defaults)
    if args.defaults or any(d is not None for d in defaults):
        first = 0 if args.defaults else next(i for i, d in enumerate(defaults) if d is not None)
        args.defaults = args.defaults + [const(None) if d is None else d for d in defaults[first:]]
    args.args = args.args + args.kwonlyargs
    args.kwonlyargs, args.kw_defaults = [], []
    return parsed


def spread_of(sig, count, keys):
    """How to spread a callee of signature ``sig`` for a call passing ``count`` values
    to its ``*args`` and the keywords ``keys`` to its ``**kwargs``: a ``Spread`` where it
    takes ``**kwargs`` (an empty one too: ``kwargs = {}``), else the count."""
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return Spread(count, tuple(keys))
    return count


def _spread_positional(parsed, count):
    """``*args`` made ``count`` parameters, and ``args = (args0, ...)`` first."""
    tree = parsed.tree
    names = spread_names(tree, count)
    vararg = tree.args.vararg.id
    tree.args.args = tree.args.args + [name(n, gast.Param()) for n in names]
    tree.args.vararg = None
    if names:  # the call fills every parameter before them: their defaults never apply
        tree.args.defaults = []
    packed = assign(vararg, gast.Tuple(elts=[name(n) for n in names], ctx=gast.Load()), tree)
    tree.body.insert(0, packed)
    return dataclasses.replace(parsed, local_names=parsed.local_names | set(names))


def _spread_keywords(parsed, keys):
    """``**kwargs`` made one parameter per keyword (named as the keyword, so that the
    call site passes them as it did), and ``kwargs = {"key": key, ...}`` first."""
    tree = parsed.tree
    kwarg = tree.args.kwarg.id
    taken = {n.id for n in descendants(tree) if isinstance(n, gast.Name)}
    clash = [k for k in keys if k in taken]
    if clash:
        raise TranspileError(
            f"the keyword {clash[0]!r}, passed to **{kwarg}, is also a name in {tree.name}",
            filename=parsed.filename,
            lineno=tree.lineno + parsed.line_offset,
            hint=f"rename the local {clash[0]!r}, or pass it in a dict parameter",
        )
    tree.args.args = tree.args.args + [name(k, gast.Param()) for k in keys]
    tree.args.kwarg = None
    if tree.args.defaults:  # passed by keyword, always: a default only keeps the def valid
        tree.args.defaults = tree.args.defaults + [const(None) for _ in keys]
    packed = gast.Dict(keys=[const(k) for k in keys], values=[name(k) for k in keys])
    tree.body.insert(0, assign(kwarg, packed, tree))
    return dataclasses.replace(parsed, local_names=parsed.local_names | set(keys))
