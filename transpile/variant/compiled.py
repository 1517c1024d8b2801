"""The variant printed and compiled (``core/emit.py``), with the names it reads bound
in and its lines mapped to the user's (``core/tracebacks.py``)."""

from transpile.core import emit
from transpile.core.nodes import clone, function_def


def stage(variant, ctx):
    """Source printed and compiled."""
    spec = ctx.spec
    fdef = function_def(spec.fdef.name, clone(spec.fdef.args), variant.body)
    source, lines = emit.to_source_and_origins(fdef)
    used = emit.identifiers(source)
    bound = {k: v for k, v in {**spec.bound, **variant.fused}.items() if k in used}
    fn = emit.compile_function(
        source,
        spec.fdef.name,
        spec.module_globals,
        bound,
        ctx.label,
        spec.cells,
        ctx.origins(lines),
    )
    fn.__transpile_source__ = source
    variant.source, variant.function = source, fn
    return variant
