"""A variant reads as one writes by hand: a temporary or an adjoint read once is
written where it is read (``dh`` into the next layer's line, ``dW`` into the return;
``cleanup/inline.py``); a fused line keeps its name, which its comment shows. The
facts the stages kept on nodes are dropped before printing."""

import gast

from transpile.cleanup import inline
from transpile.core.ir import Annotation, strip_annotations
from transpile.core.nodes import descendants


def stage(variant, ctx):
    """Temporaries and adjoints read once printed where they are read."""
    spec = ctx.spec
    adjoints = spec.adjoint_names - _fused_targets(variant.body, variant.fused)
    variant.body = inline.compact(variant.body, spec.names, spec.namer, also=adjoints)
    for stmt in variant.body:
        for node in descendants(stmt):
            if not _FACTS.isdisjoint(node.__dict__):  # few nodes carry one
                strip_annotations(node)
    return variant


_FACTS = frozenset(key.attribute for key in Annotation)  # the attributes facts are kept in


def _fused_targets(body, fused):
    """The names assigned a value computed by fused code (``fused``: its names)."""
    if not fused:
        return frozenset()
    return frozenset(
        s.targets[0].id
        for s in body
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and any(isinstance(n, gast.Name) and n.id in fused for n in descendants(s.value))
    )
