"""With shapes known, copies propagate, ``1 - x`` forms meet their complements and a
held call is computed once (``backend/algebra.py``)."""

from transpile.backend import algebra
from transpile.cleanup import buffers
from transpile.core import defuse


def stage(variant, ctx):
    """Copies propagated; complements and held calls simplified. One def-use index
    serves the three: copy propagation keeps it up to date, the other two rewrite
    only reads, which they do not look up."""
    names = ctx.spec.names
    index = defuse.Index(variant.body)
    body = algebra.complements(buffers.propagate(variant.body, index), index)
    variant.body = algebra.held_calls(body, names["np"], names["ops"], index)
    return variant
