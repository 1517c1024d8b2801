"""``+`` and ``*`` on lists and tuples: concatenation and repetition.

``kinds`` decides which operands are sequences; there the adjoint of the result is
a list with one entry per item, and each operand gets back the entries of its own
items (``ops.head`` and ``ops.tail`` split the adjoint of ``x + y``; ``ops.unrepeat``
adds up the copies of each item of ``x * n``).
"""

import gast

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, FIRST_DATA, rule
from transpile_runtime import ops

SEQUENCE_OPS = (gast.Add, gast.Mult)  # the operators that concatenate and repeat


def is_sequence_op(value, sequences) -> bool:
    """Whether a ``+`` or ``*`` concatenates or repeats (an operand is a sequence)."""
    return (
        isinstance(value, gast.BinOp)
        and isinstance(value.op, SEQUENCE_OPS)
        and any(isinstance(o, gast.Name) and o.id in sequences for o in (value.left, value.right))
    )


@rule(operators=(gast.Add,), sequences=True, shape=ALL_DATA)
def concat(z, x, y):
    d[x] += ops.head(d[z], x)
    d[y] += ops.tail(d[z], y)
    t[z] += t[x] + t[y]


@rule(operators=(gast.Mult,), sequences=True, shape=FIRST_DATA)
def repeat(z, x, _times):
    d[x] += ops.unrepeat(d[z], x)
    t[z] += t[x] * _times
