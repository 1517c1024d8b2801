"""What the simplifications left unread is removed (``cleanup/deadcode.py``)."""

from transpile.cleanup import deadcode


def stage(variant, ctx):
    """Assignments nobody reads removed."""
    variant.body = deadcode.dead_code(variant.body, ctx.spec.is_pure)
    return variant
