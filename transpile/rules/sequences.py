"""``+`` and ``*`` on lists and tuples: concatenation and repetition.

``kinds`` decides which operands are sequences; there the adjoint of the result is
a list with one entry per item, and each operand gets back the entries of its own
items (``ops.head`` and ``ops.tail`` split the adjoint of ``x + y``; ``ops.unrepeat``
adds up the copies of each item of ``x * n``).
"""

import gast

from runtime import ops
from transpile.template import d


def concat(z, x, y):
    d[x] += ops.head(d[z], x)
    d[y] += ops.tail(d[z], y)


def repeat(z, x, _times):
    d[x] += ops.unrepeat(d[z], x)


SEQUENCE = {gast.Add: concat, gast.Mult: repeat}
