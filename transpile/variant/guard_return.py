"""The returned gradients own their arrays: where the variant's code cannot prove a
returned array fresh, it goes through ``ops.owned`` (``cleanup/ownership.py``)."""

from transpile.cleanup import ownership


def stage(variant, ctx):
    """Returned gradients own their arrays."""
    names, body = ctx.spec.names, variant.body
    body[-1] = ownership.guard_return(body[-1], body[:-1], names["ops"], names["np"], ctx.params)
    return variant
