"""Adjoints of Python's operations on lists and tuples: concatenation (``head``,
``tail``), repetition (``unrepeat``) and the builtin ``sum`` (``spread``), with the
adjoints of those for second derivatives.
"""

from .broadcast import unbroadcast, unreduce
from .declare import helper
from .structures import add, zeros_like


@helper(shares=True)
def spread(g, items):
    """Adjoint of the builtin ``sum(items)``: every item receives ``g``."""
    return [unbroadcast(g, x) for x in items]


@helper(passes=True)
def head(g, x):
    """Adjoint of the left operand ``x`` of a concatenation ``x + y`` of lists or tuples:
    the entries of its items, which come first."""
    _require_sequence(x, "+")
    return list(g[: len(x)])


@helper(passes=True)
def tail(g, y):
    """Adjoint of the right operand ``y`` of a concatenation ``x + y``: the last entries."""
    _require_sequence(y, "+")
    return list(g[len(g) - len(y) :])


@helper(passes=True)
def unrepeat(g, x):
    """Adjoint of ``x * n`` for a list or tuple ``x``: each item gets the sum of the
    entries of its ``n`` copies."""
    _require_sequence(x, "*")
    n = len(x)
    out = []
    for i in range(n):
        total = None
        for k in range(i, len(g), n):
            total = add(total, g[k])
        out.append(total)
    return out


def _require_sequence(x, op):
    if not isinstance(x, (list, tuple)):
        raise TypeError(
            f"an operand of `{op}` was taken for a list or tuple when the function was "
            f"transpiled, but at run time it is {type(x).__name__}; pass a list or a tuple"
        )


@helper(fresh=True)
def unspread(h, g):
    """The adjoint of ``g`` in ``spread(g, items)`` for the cotangent ``h`` (one entry per
    item): the entries broadcast back to ``g``'s shape and added."""
    total = zeros_like(g)
    for v in h:
        total = add(total, unreduce(v, g))
    return total


@helper(fresh=True)
def unhead(h, g):
    """The adjoint of ``g`` in ``head(g, x)`` for the cotangent ``h``: ``h``'s entries, then
    zeros for the entries of ``g`` that ``head`` left out."""
    return [*h, *(zeros_like(v) for v in g[len(h) :])]


@helper(fresh=True)
def untail(h, g):
    """The adjoint of ``g`` in ``tail(g, y)`` for the cotangent ``h``."""
    return [*(zeros_like(v) for v in g[: len(g) - len(h)]), *h]


@helper(shares=True)
def reunrepeat(h, g):
    """The adjoint of ``g`` in ``unrepeat(g, x)`` for the cotangent ``h``: each copy of an
    item gets that item's entry."""
    return [h[k % len(h)] for k in range(len(g))]
