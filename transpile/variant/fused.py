"""With ``fuse=True``, regions of elementwise lines are evaluated in blocks and chains
by numexpr (``backend/blocks.py``, ``backend/fuse.py``); otherwise nothing changes.
The names the fused code reads are bound into the variant (``variant.fused``)."""

from transpile.backend import blocks, fuse


def stage(variant, ctx):
    """Elementwise regions in blocks, chains by numexpr (fuse=True only)."""
    spec = ctx.spec
    if not spec.fuse:
        return variant
    body, blocked = blocks.blocks(variant.body, spec.names, spec.namer, ctx.metas)
    body, chained = fuse.chains(body, spec.names, spec.namer)
    variant.body, variant.fused = body, {**blocked, **chained}
    return variant
