"""With shapes known, copies propagate, ``1 - x`` forms meet their complements and a
held call is computed once (``backend/algebra.py``)."""

from transpile.backend import algebra
from transpile.cleanup import buffers


def stage(variant, ctx):
    """Copies propagated; complements and held calls simplified."""
    names = ctx.spec.names
    body = algebra.complements(buffers.propagate_copies(variant.body))
    variant.body = algebra.held_calls(body, names["np"], names["ops"])
    return variant
