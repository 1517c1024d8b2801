"""Constants folded and blocks tidied, then an array result written into a buffer
that is dead by then, where shapes and dtypes say it fits (``cleanup/buffers.py``)."""

from transpile.cleanup import buffers, tidy


def stage(variant, ctx):
    """Tidied; dead buffers reused for results of their shape."""
    variant.body = buffers.reuse_buffers(tidy.tidy(variant.body), ctx.spec.names["np"])
    return variant
