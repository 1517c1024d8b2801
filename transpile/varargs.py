"""``*args`` parameters, for one number of arguments.

``def f(x, *rest)`` called with three arguments is transpiled as
``def f(x, rest0, rest1): rest = (rest0, rest1); ...``: a tuple the function builds,
which the rest of the compiler differentiates like any other. The gradient of a
function taking ``*args`` is made per number of arguments at its first call with it;
a callee's, per call site.
"""

import dataclasses

import gast

from transpile.nodes import assign, descendants, name


def spread_names(tree, count) -> list:
    """The parameters ``*args`` becomes for ``count`` arguments: clear of every name
    ``tree`` uses, and the same for the same tree."""
    base = tree.args.vararg.id
    taken = {n.id for n in descendants(tree) if isinstance(n, gast.Name)}
    suffix = ""
    while any(f"{base}{suffix}{i}" in taken for i in range(count)):
        suffix += "_"
    return [f"{base}{suffix}{i}" for i in range(count)]


def spread(parsed, count):
    """``parsed`` with its ``*args`` parameter made ``count`` plain ones."""
    tree = parsed.tree
    names = spread_names(tree, count)
    vararg = tree.args.vararg.id
    tree.args.args = tree.args.args + [name(n, gast.Param()) for n in names]
    tree.args.vararg = None
    packed = assign(vararg, gast.Tuple(elts=[name(n) for n in names], ctx=gast.Load()), tree)
    tree.body.insert(0, packed)
    return dataclasses.replace(parsed, local_names=parsed.local_names | set(names))
