"""Values the tape records that the specialized adjoint no longer reads (a shape now
written in) are no longer pushed (``reverse/record.py``)."""

from transpile.reverse import record


def stage(variant, ctx):
    """Tape pushes nobody pops dropped."""
    names = ctx.spec.names
    variant.body = record.drop_unread(variant.body, names["tape"], names["ops"])
    return variant
