"""Refuses a call of a user function made for its effect alone on differentiated values.

``project(vx, vy)`` as a statement, with a helper that updates ``vx`` in place: numpy
changes the caller's array, while the derivative differentiates values that are
assigned, so the update would be lost (a wrong gradient, not an error). Such a call
is refused where the helper may write into what it is passed: an augmented
assignment, a slot or attribute write, ``out=`` or a changing method (``sort``,
``fill``, ``append``) on a parameter or a view of one (``views.sources``), or a call
passing one on to another function. A helper that only reads (a log, a check) is left
alone: the result it does not return cannot reach the output.
"""

import inspect

import gast

from transpile.analysis import views
from transpile.core import fixpoint, printer
from transpile.core.errors import TranspileError, at
from transpile.core.nodes import descendants, name_nodes
from transpile.front import parse
from transpile.rules import registry

# methods that change the object they are called on (lists, dicts, arrays)
CHANGING = frozenset(
    [
        "append",
        "extend",
        "insert",
        "pop",
        "popitem",
        "remove",
        "clear",
        "update",
        "setdefault",
        "reverse",
        "sort",
        "fill",
        "put",
        "itemset",
        "resize",
        "partition",
        "setfield",
    ]
)


def refuse(tree, ctx, activity) -> None:
    """Raise TranspileError for a statement ``f(...)`` of a user function ``f`` that may
    write into its arguments, called with a differentiated value."""
    for s in descendants(tree):
        if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)):
            continue
        func = ctx.resolve(s.value.func)
        if not _user_function(func):
            continue
        varied = [
            n.id
            for n in name_nodes(s.value)
            if isinstance(n, gast.Name) and activity.is_varied(s, n.id)
        ]
        if varied and _may_write_arguments(func):
            name = func.__name__
            raise at(
                ctx,
                s,
                f"{printer.expression(s.value)} is called for its effect alone, and {name}() "
                "may update what it is passed in place: the derivative would not see that",
                f"make {name}() return new values (v = v - ..., not v -= ...) and assign "
                f"them: {varied[0]} = {name}(...)",
            )


def _user_function(obj) -> bool:
    """Whether ``obj`` is a Python function of the user's, which no rule describes."""
    if not inspect.isfunction(obj):
        return False
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] in ("numpy", "scipy", "transpile", "transpile_runtime"):
        return False
    return registry().declaration(obj) is None


def _may_write_arguments(func) -> bool:
    try:
        parsed = parse.run(func)
    except (TranspileError, OSError, TypeError, SyntaxError):
        return True  # its source cannot be read: it might
    tree = parsed.tree
    shared = _shared_with_parameters(tree, parsed.resolve)
    return any(_writes_into(node, shared, parsed.resolve) for node in descendants(tree))


def _shared_with_parameters(tree, resolve):
    """The parameters and the names that may be them or views of them."""
    shared = {n.id for n in name_nodes(tree.args) if isinstance(n, gast.Name)}
    bound = {}  # name -> the values assigned to a target holding it
    for s in descendants(tree):
        if isinstance(s, gast.Assign):
            for n in (n for t in s.targets for n in name_nodes(t)):
                if isinstance(n, gast.Name):
                    bound.setdefault(n.id, []).append(s.value)
    return fixpoint.least(
        bound,
        lambda n, shared: any(views.sources(v, resolve) & shared for v in bound[n]),
        start=shared,
    )


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _writes_into(node, shared, resolve) -> bool:
    """Whether ``node`` may write into an array or list of ``shared``."""
    if isinstance(node, gast.AugAssign):
        return _root(node.target) in shared
    if isinstance(node, gast.Assign):
        return any(
            isinstance(t, (gast.Subscript, gast.Attribute)) and _root(t) in shared
            for t in node.targets
        )
    if not isinstance(node, gast.Call):
        return False
    if any(k.arg == "out" for k in node.keywords):
        return True
    f = node.func
    if isinstance(f, gast.Attribute) and f.attr in CHANGING and _root(f.value) in shared:
        return True
    passed = {n.id for a in node.args for n in name_nodes(a) if isinstance(n, gast.Name)}
    return bool(passed & shared) and _user_function(resolve(f))
