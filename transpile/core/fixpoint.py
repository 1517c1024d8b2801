"""The one way the analyses compute a fact over a function's bindings, to a fixed point.

A binding analysis asks, of each name, whether it holds some property given what is
known of the others: a name is a list if every value bound to it is one (``kinds``),
a scalar if every value is (``scalars``), owned if every value is memory the function
made (``aliasing``). ``least`` grows the set of names that have the property from
nothing, ``greatest`` shrinks it from every candidate; either looks again only at the
names bound to a value that reads a name whose fact changed (``nodes.readers``), so a
function costs time linear in its bindings, not in their product. ``reachable`` is
the closure of a relation (a view of a view is a view; a copy of a copy is tied).
The dataflow facts that follow control flow use ``cfg.solve`` instead.
"""

from transpile.core.nodes import readers


def least(bindings, holds, start=()):
    """The smallest set of names, holding ``start``, closed under adding a bound name
    ``n`` for which ``holds(n, found)``. ``bindings``: name -> the values bound to it
    (gast nodes, or markers that read nothing)."""
    found = set(start)
    looked_up = readers(bindings)
    todo = [n for n in bindings if n not in found]
    while todo:  # a name found may make those bound from it found too
        n = todo.pop()
        if n not in found and holds(n, found):
            found.add(n)
            todo.extend(looked_up.get(n, ()))
    return found


def greatest(bindings, holds, start=None):
    """The largest set of names within ``start`` (default: every bound name) in which
    every name ``n`` has ``holds(n, kept)``."""
    kept = set(bindings) if start is None else set(start)
    looked_up = readers(bindings)
    todo = list(kept)
    while todo:  # a name dropped may make those bound from it drop too
        n = todo.pop()
        if n in kept and not holds(n, kept):
            kept.discard(n)
            todo.extend(looked_up.get(n, ()))
    return kept


def reachable(edges, start):
    """The names reached from those in ``start`` through ``edges`` (name -> names),
    the starting names included."""
    found = set(start)
    todo = list(found)
    while todo:
        for m in edges.get(todo.pop(), ()):
            if m not in found:
                found.add(m)
                todo.append(m)
    return found
