"""A list of stages and the one driver that runs any such list.

A stage is one module's ``stage(fn, ctx) -> fn``: it reads what earlier stages put on
``fn`` and adds its own part, under a ``ctx`` fixed while the list runs. The compiler
has three lists (``pipeline.STAGES``, ``FORWARD_STAGES`` and ``VARIANT_STAGES``); each
is run by ``run``, stopped after any stage for ``--dump``.
"""

from typing import NamedTuple


class Stage(NamedTuple):
    name: str
    run: object  # (fn, ctx) -> fn
    does: str


def run(stages, fn, ctx, until=None, steps=None):
    """Run ``stages`` in order on ``fn`` (through ``until``, a stage name) and return
    what they built; ``steps``: a ``progress.Progress`` told of each stage."""
    names = [s.name for s in stages]
    if until is not None and until not in names:
        raise ValueError(f"no stage {until!r}; the stages are {', '.join(names)}")
    for stage in stages:
        if steps is not None:
            steps.step(stage.name)
        fn = stage.run(fn, ctx)
        if stage.name == until:
            break
    return fn
