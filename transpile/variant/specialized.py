"""The generic body with what the probe saw written in: shapes, dtypes and integer
values become constants, and the shape helpers they decide are resolved
(``backend/specialize.py``). The return's ownership guard is dropped here and made
again, for the variant's own code, by ``guard_return``."""

from transpile.backend import specialize
from transpile.cleanup import ownership


def stage(variant, ctx):
    """Shapes and integer values written in."""
    names = ctx.spec.names
    body = variant.body[:-1] + [ownership.unguarded(variant.body[-1], names["ops"])]
    specializer = specialize.Specializer(
        names, ctx.metas, ctx.sites, ctx.seen, ctx.spec.adjoint_names
    )
    variant.body = specializer.run(body)
    return variant
