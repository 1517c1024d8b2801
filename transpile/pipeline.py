"""The compiler: the stages in order, each ``stage(fn, ctx) -> fn``.

``STAGES`` is the whole compiler, top to bottom. Each stage is one module's
``stage`` function; it reads what earlier stages put on the ``ir.Function`` being
built and adds its own part, under the fixed ``ir.Context`` of this transpilation.
``python -m transpile FILE:FUNC --dump STAGE`` prints the function after any stage.

``transpile(func, wrt, mode)`` runs them all and returns an ``ir.Generated``: the
live function and its source, cached per function (weakly), ``wrt``, mode and which
parameters hold lists, and made again when a name it relied on was rebound.
``mode`` is ``grad``, ``value_and_grad``, ``vjp``, or ``split`` (a user function
called by the one differentiated: a forward function returning its result plus
what its adjoint needs, and that adjoint); or, in forward mode (``FORWARD_STAGES``),
``jvp`` or ``tangent`` (a user function called by one in forward mode).
"""

import dataclasses
import inspect
import threading
import weakref
from typing import NamedTuple

import gast

from transpile.analysis import activity, aliasing, cuts, kinds, retake
from transpile.backend import dispatch, fixed_shapes, specialize
from transpile.cleanup import (
    copies,
    deadcode,
    inline,
    ownership,
    regions,
    shapes,
    signs,
    tidy,
    zeros,
)
from transpile.core import (
    assumptions,
    emit,
    function_cache,
    gcpause,
    progress,
    recursion,
    stack_room,
    stages,
)
from transpile.core.ir import Context, Function, Variant
from transpile.core.nodes import function_def
from transpile.core.stages import Stage
from transpile.forward import tangents as forward
from transpile.front import (
    auxiliary,
    bound_functions,
    exceptions,
    fence,
    generators,
    helpers,
    higher,
    inplace,
    loops,
    naming,
    normalize,
    objects,
    parse,
    snapshot,
)
from transpile.reverse import assemble, record, seeding
from transpile.reverse import raw as reverse
from transpile.rules import user_rules
from transpile.variant import (
    compact,
    compiled,
    complements,
    drop_unread,
    fused,
    guard_return,
    pruned,
    reuse_buffers,
    specialized,
)

STAGES = (
    # front end: the user's function, read, checked and put in A-normal form
    Stage("parse", parse.stage, "read the source; refuse a decorated or changed function"),
    Stage("higher", higher.stage, "a gradient read again: its ops.add_at makes a new array"),
    Stage("fence", fence.stage, "refuse syntax that is not differentiated, at its line"),
    Stage("helpers", helpers.stage, "small helpers of the user's inlined where they are called"),
    Stage("naming", naming.stage, "a namer clear of the user's names; np, ops, Tape names"),
    Stage("loops", loops.stage, "checkpointed loops: the body becomes a step function"),
    Stage("generators", generators.stage, "a generator's yields made appends to a list it returns"),
    Stage("exceptions", exceptions.stage, "try/except and with made branches and marked regions"),
    Stage("objects", objects.stage, "method calls become function calls; fields of views, keys"),
    Stage(
        "normalize", normalize.stage, "single exit, one operation per line, jumps lowered, renames"
    ),
    Stage("inplace", inplace.stage, "refuse an in-place update another name would see"),
    Stage("snapshot", snapshot.stage, "a list appended to after a read is read through a copy"),
    Stage(
        "auxiliary", auxiliary.stage, "has_aux: the value of a (value, aux) pair is differentiated"
    ),
    Stage("retake", retake.stage, "a view read after a write into its array is taken again there"),
    # analyses
    Stage("kinds", kinds.stage, "which names hold lists or tuples"),
    Stage("activity", activity.stage, "which values are varied and useful: what gets an adjoint"),
    Stage("cuts", cuts.stage, "the wrt parameters with no differentiated path to the output"),
    Stage("aliasing", aliasing.stage, "refuse a view read after a write into its array, out="),
    # reverse mode
    Stage("raw", reverse.stage, "the primal sweep and the raw adjoint, from rule templates"),
    Stage("seeding", seeding.stage, "the seed of the output's adjoint and the gradients' return"),
    # the adjoint made economical
    Stage("zeros", zeros.stage, "symbolic zeros resolved; first writes instead of accumulation"),
    Stage("copies", copies.stage, "copies between adjoints become one name"),
    Stage("signs", signs.stage, "unary minus moved to where it cancels"),
    Stage("record", record.stage, "what loops and branches push on the tape, and pop back"),
    # the functions to compile
    Stage("assemble", assemble.stage, "the gradient function, or a callee's forward and adjoint"),
    Stage("deadcode", deadcode.stage, "assignments nobody reads removed"),
    Stage("shapes", shapes.stage, "values needed only for their shape no longer computed"),
    Stage("tidy", tidy.stage, "constants folded, default arguments dropped, empty blocks gone"),
    Stage("ownership", ownership.stage, "returned gradients own their arrays, or are copied"),
    Stage("fixed_shapes", fixed_shapes.stage, "whether shape variants can be made, from what"),
    Stage(
        "inline",
        inline.stage,
        "temporaries used once printed where they are used (with variants: when read)",
    ),
    Stage("regions", regions.stage, "the marked regions printed back as try and with blocks"),
    # back end
    Stage("emit", emit.stage, "source printed and compiled (with variants: when needed)"),
    Stage("dispatch", dispatch.stage, "the entry: checks per call, routes to shape variants"),
)
STAGE_NAMES = tuple(s.name for s in STAGES)

# forward mode: the front end and analyses, then the jvp function written in one pass
FORWARD_STAGES = (
    *STAGES[: STAGE_NAMES.index("aliasing") + 1],
    Stage("tangents", forward.stage, "the function, each active line followed by its tangent"),
    *(s for s in STAGES if s.name in ("deadcode", "tidy", "inline", "regions", "emit")),
)

# a shape variant (made by the entry, ``dispatch``, on a signature's second call): the
# generic gradient, one operation per line, rewritten for what its probe observed
VARIANT_STAGES = (
    Stage("specialized", specialized.stage, "shapes, dtypes and integer values written in"),
    Stage("drop_unread", drop_unread.stage, "tape pushes that nothing pops dropped"),
    Stage("complements", complements.stage, "copies propagated; complements, held calls"),
    Stage("pruned", pruned.stage, "assignments nobody reads removed"),
    Stage("fused", fused.stage, "fuse=True: elementwise regions in blocks, chains by numexpr"),
    Stage("reuse_buffers", reuse_buffers.stage, "tidied; dead buffers reused for new results"),
    Stage("guard_return", guard_return.stage, "returned gradients own their arrays"),
    Stage("compact", compact.stage, "temporaries and adjoints read once written where read"),
    Stage("compiled", compiled.stage, "source printed and compiled"),
)
VARIANT_STAGE_NAMES = tuple(s.name for s in VARIANT_STAGES)


def stages_for(mode):
    """The stages that make a function of ``mode``."""
    return FORWARD_STAGES if mode in forward.MODES else STAGES


# function -> {(wrt, mode, as_tuple, sequences, ...): Generated}; a dropped function (and
# what it closes over) is freed with its entries
_CACHE = function_cache.FunctionCache("generated")
_LOCK = threading.Lock()


def transpile(
    func,
    wrt,
    mode,
    as_tuple=False,
    stack=(),
    sequences=frozenset(),
    functions=None,
    varargs=None,
    classes=(),
    fuse=False,
    has_aux=False,
    verbose=0,
    updates_followed=False,
    checkpoint=None,
):
    """The generated function for ``func``, from the cache while every name it relied
    on still denotes the same object. ``functions``: the parameters holding functions
    (``bound_functions``); by default, those whose default is a function. ``varargs``:
    how many arguments ``*args`` takes (``varargs``). ``stack``: the ``recursion.Frame``
    of each transpilation in progress around this one; a call of one of them for the
    same key gets forward references to its pair (``recursion``). ``classes``: the
    ``object_args.Layout`` of each parameter holding a user object (``objects``).
    ``fuse``: shape variants evaluate chains of elementwise operations with numexpr.
    ``has_aux``: ``func`` returns ``(value, aux)``; ``value`` is differentiated, and a
    ``value_and_grad`` returns the pair (``auxiliary``). ``verbose=2``: print each stage's
    time (work over a second says what it is doing anyway: ``progress``). ``checkpoint``:
    None, a number of snapshots for every loop of the body, or False to drop the
    ``checkpointed`` markers (``loops``)."""
    if not inspect.isfunction(func):
        parse.run(func)  # raises the located "cannot read the source" error
    if functions is None:
        functions = bound_functions.of_defaults(func)
    key = (
        tuple(wrt),
        mode,
        as_tuple,
        frozenset(sequences),
        _FunctionsKey(functions),
        varargs,
        classes,
        bool(fuse),
        bool(has_aux),
        bool(updates_followed),
        checkpoint,
    )
    key += (user_rules.version(),)  # a rule registered since: transpile again
    in_progress = recursion.find(stack, func, key)  # a recursive call: never the cache
    if in_progress is not None:
        return in_progress
    with _LOCK:
        found = _CACHE.get(func, {}).get(key)
    if found is not None and assumptions.hold(found.code_reads):
        return found
    frame = recursion.Frame(func, key, len(stack))
    ctx = Context(
        func,
        tuple(wrt),
        mode,
        as_tuple,
        frozenset(sequences),
        tuple(functions),
        varargs,
        stack + (frame,),
        transpile,
        classes=tuple(classes),
        fuse=bool(fuse),
        has_aux=bool(has_aux),
        updates_followed=bool(updates_followed),
        checkpoint=checkpoint,
    )
    steps = progress.Progress(
        f"the {mode} of {getattr(func, '__qualname__', func)}", len(stages_for(mode))
    )
    try:
        with gcpause.paused(), stack_room.room():
            fn = run(ctx, steps=steps)
    except RecursionError:
        raise stack_room.refusal(func) from None
    generated = fn.generated
    steps.done()
    if verbose >= 2:
        print(steps.report())
    generated.cuts = fn.cuts
    generated.recipe = Recipe(weakref.ref(func), key, dataclasses.replace(ctx, func=None, stack=()))
    for built in recursion.close(stack, frame, generated):
        with _LOCK:
            _CACHE.setdefault(built.func, {})[built.key] = built.generated
    return generated


class _FunctionsKey(tuple):
    """``(parameter, function)`` pairs compared by the functions' identity."""

    def __eq__(self, other):
        return bound_functions.same(self, other)

    def __hash__(self):
        return hash(tuple((p, id(f)) for p, f in self))


class Recipe(NamedTuple):
    """How a ``Generated`` was made, without keeping its function alive: what
    ``remake`` needs to run the stages again (``explain`` and ``export`` read them)."""

    func: object  # weakref.ref to the user's function
    key: tuple  # its cache key
    ctx: Context  # without the function and the stack


def remake(recipe, until):
    """The ``ir.Function`` the stages build again (through ``until``) for what
    ``recipe`` describes; the callees it calls come from the cache."""
    func = recipe.func()
    if func is None:
        raise ValueError("the function this gradient was made from no longer exists")
    frame = recursion.Frame(func, recipe.key, 0)  # its recursive calls: as when it was made
    ctx = dataclasses.replace(recipe.ctx, func=func, stack=(frame,))
    with gcpause.paused():
        return run(ctx, until=until)


def run(ctx, until=None, steps=None):
    """Run the stages in order (through ``until``, a stage name) and return the
    ``ir.Function`` they built; ``steps``: a ``progress.Progress`` told of each stage."""
    if not ctx.variant_stages:  # what the entry makes shape variants with
        ctx = dataclasses.replace(ctx, variant_stages=VARIANT_STAGES)
    if until is not None and not ctx.eager:  # each stage's output is read: made now
        ctx = dataclasses.replace(ctx, eager=True)
    return stages.run(stages_for(ctx.mode), Function(), ctx, until=until, steps=steps)


def dump(func, wrt, stage, mode="grad", args=None):
    """The source of ``func``'s gradient (or of its jvp, for ``mode="jvp"``) as it
    stands after ``stage``; for a stage of ``VARIANT_STAGES``, the shape variant for the
    example arguments ``args`` (a tuple, as the gradient is called) after that stage."""
    if stage in VARIANT_STAGE_NAMES:
        return dump_variant(func, wrt, stage, mode, args)
    names = tuple(s.name for s in stages_for(mode))
    if stage not in names:
        every = names + (() if mode in forward.MODES else VARIANT_STAGE_NAMES)
        raise ValueError(f"no stage {stage!r}; the stages are {', '.join(every)}")
    functions = bound_functions.of_defaults(func)
    ctx = Context(func, tuple(wrt), mode, functions=functions, transpile=transpile)
    fn = run(ctx, until=stage)
    return render(fn)


def dump_variant(func, wrt, stage, mode, args):
    """The shape variant of ``func``'s gradient for the arguments ``args``, after the
    variant stage ``stage`` (its first call's probe is run if it has not been)."""
    if args is None:
        raise ValueError(f"the variant stage {stage!r} needs example arguments")
    entry = transpile(func, tuple(wrt), mode, as_tuple=len(wrt) > 1).function
    made, why = variant(entry, args, until=stage)
    if made is None:
        raise ValueError(f"no shape variant is made of {func.__name__}'s {mode} {why}")
    if made.source is not None:
        return made.source
    fdef = entry.__transpile_dispatch__.current().spec.fdef
    return emit.to_source(function_def(fdef.name, fdef.args, made.body))


def variant(entry, args, until="compiled"):
    """``(ir.Variant, None)``: the shape variant of the gradient ``entry`` for the
    arguments ``args``, through the variant stage ``until`` (its first call's probe run
    if it has not been); or ``(None, why)`` where none is made and the generic code runs."""
    made, why, _ = variant_attempt(entry, args, until)
    return made, why


def variant_attempt(entry, args, until="compiled"):
    """``variant``'s answer, and a third item: where none is made because a statement
    could not be specialized, that statement of the generic body the variant stages
    read (``Dispatcher.body``, one operation per line), else None."""
    dispatcher = entry.__transpile_dispatch__.current()
    observed = dispatcher.observed(tuple(args))
    if observed is None:
        why = "for these arguments: it specializes no code of this kind, or not for them"
        return None, why, None
    try:
        made = stages.run(
            VARIANT_STAGES, Variant(dispatcher.body), dispatcher.context(*observed), until=until
        )
    except specialize.Unspecializable as exc:
        return None, f"for these arguments ({exc})", exc.stmt
    return made, None, None


def render(fn):
    """Python source for what ``fn`` holds: the functions to compile once assembled,
    the two sweeps before that, the (normalized) tree before those."""
    if fn.generated is not None:
        return fn.generated.source
    if fn.outputs:
        return "\n".join(emit.to_source(function_def(o.name, o.args, o.body)) for o in fn.outputs)
    if fn.emitted is not None:
        args = fn.tree.args
        body = fn.primal + fn.adjoint if fn.adjoint else fn.emitted.primal + fn.emitted.adjoint
        return emit.to_source(function_def("d" + fn.parsed.name, args, body or [gast.Pass()]))
    tree = fn.tree if fn.tree is not None else fn.parsed.tree
    return emit.to_source(tree)
