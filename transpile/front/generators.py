"""Generators consumed by the function: ``yield`` made an append to a list returned.

A helper of yours that ``yield``s (``for i in ...: yield W[i], b[i]``) and is
iterated by the function differentiated (``for w, b in unpack(params)``,
``list(unpack(params))``, ``sum(...)``) is differentiated as the function that
returns the list of what it yields, which is what consuming it gives:

    def unpack(params):                   def unpack(params):
        for i in range(0, n, 2):              items = []
            yield params[i], params[i + 1]    for i in range(0, n, 2):
                                                  items.append((params[i], params[i + 1]))
                                              return items

The body runs to its end at the call, before the loop that consumes it (a generator
runs between the loop's steps): the values are the same where the generator reads
nothing the loop changes and is consumed whole. ``fence`` lets only statements
``yield value`` through (``own_yields``); ``yield from``, a ``yield`` whose value is
used and ``return value`` in a generator stay refused.
"""

import gast

from transpile.core.errors import at
from transpile.core.nodes import assign, call, descendants, name

_YIELDS = (gast.Yield, gast.YieldFrom)


def stage(fn, ctx):
    """A generator's ``yield`` statements made appends to the list it returns."""
    tree = fn.parsed.tree
    if own_yields(tree):
        items = fn.namer.fresh("items")
        body = _Appends(items).block(tree.body)
        start = assign(items, gast.List(elts=[], ctx=gast.Load()), tree.body[0])
        end = gast.copy_location(gast.Return(value=name(items)), tree.body[-1])
        tree.body = [start, *body, end]
    return fn


def own_yields(tree, nodes=None):
    """The ``yield`` nodes of the function ``tree`` itself (not of functions in it);
    ``nodes``: its ``descendants``, where the caller has them."""
    if nodes is None:
        nodes = descendants(tree)
    if not any(n.__class__ in _YIELDS for n in nodes):
        return []  # the usual case, without the slower walk that skips functions in it
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            continue
        if isinstance(node, (gast.Yield, gast.YieldFrom)):
            found.append(node)
        todo.extend(gast.iter_child_nodes(node))
    return found


def check(parsed, yields):
    """Refuse the generators ``stage`` cannot make a list of; returns the ids of the
    ``yield`` statements it can."""
    statements = set()
    for s in _statements(parsed.tree.body):
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Yield):
            statements.add(id(s.value))
        if isinstance(s, gast.Return) and s.value is not None:
            raise at(
                parsed,
                s,
                "a generator that returns a value",
                "end the generator with a bare `return` (or none), and yield the value",
            )
    for y in yields:
        if id(y) not in statements:
            what = "yield from" if isinstance(y, gast.YieldFrom) else "a yield whose value is used"
            raise at(
                parsed,
                y,
                f"{what} in a generator that is differentiated",
                "yield each value in a statement of its own (`for v in it: yield v`)",
            )
    return statements


def _statements(stmts):
    for s in stmts:
        yield s
        if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(s, field, None) or [])
        for h in getattr(s, "handlers", None) or []:
            yield from _statements(h.body)


class _Appends:
    def __init__(self, items):
        self.items = items

    def block(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Yield):
                value = s.value.value or gast.Constant(value=None, kind=None)
                append = gast.Attribute(value=name(self.items), attr="append", ctx=gast.Load())
                s = gast.copy_location(gast.Expr(value=call(append, [value], s)), s)
            elif isinstance(s, gast.Return):
                s = gast.copy_location(gast.Return(value=name(self.items)), s)
            elif not isinstance(s, (gast.FunctionDef, gast.ClassDef)):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list):
                        setattr(s, field, self.block(inner))
                for h in getattr(s, "handlers", None) or []:
                    h.body = self.block(h.body)
            out.append(s)
        return out
