"""The primal and the adjoint of a checkpointed loop's call (made by ``loops``).

The primal sweep runs the loop through ``revolve.run_for`` (or ``run_while``), which
calls the step as the user wrote it and keeps a few states; the adjoint sweep calls
``revolve.backward`` with the step's forward and adjoint pair, made like any helper's
(``callees``), differentiated with respect to the whole state (a value that is not
varied when the loop starts can be after a step: ``s = 0.0; s = s + ...``) and the
varied constants:

    # for t in checkpointed(range(n), snapshots=20): 20 snapshots, binomial schedule
    _t1, f_step_snapshots = revolve.run_for(f_step, range(n), 20, (h, s), (w,))
    ...
    _t4, _t5, _t6 = revolve.backward(f_step_fwd, f_step_bwd, f_step_snapshots, d_t1)
"""

import gast

from transpile.core.errors import TranspileError, UndefinedName, at
from transpile.core.ir import COMMENT
from transpile.core.nodes import clone, const, name
from transpile_runtime import revolve


class _WholeState:
    """The caller's activity, except that every name of the loop's state is varied."""

    def __init__(self, act, state):
        self.act, self.state = act, {n.id for n in state if isinstance(n, gast.Name)}

    def is_varied(self, stmt, n):
        return n in self.state or self.act.is_varied(stmt, n)


def call(rev, s, loop, target):
    """``([primal statements], [adjoint statements])`` of ``target = f_loop(...)``."""
    items, state, consts = _arguments(rev, s, loop)
    step = loop.step.__name__
    fake = gast.Call(
        func=name(step),
        args=([const(None)] if items is not None else []) + [clone(n) for n in state + consts],
        keywords=[],
    )
    try:
        fwd, bwd, _, nodes = rev.ctx.differentiate_call(
            fake, loop.step, s, _WholeState(rev.act, state)
        )
    except UndefinedName:
        raise  # waits for the name to be defined (api.until_defined)
    except TranspileError as exc:  # located in the step's generated source: say where
        raise at(
            rev.ctx, s, f"in the body of this checkpointed loop: {exc.what}", exc.hint
        ) from None
    record = rev.namer.fresh(f"{step}_snapshots")
    primal = _primal(rev.ctx.bind, s, loop, target, record, (items, state, consts))
    return primal, _adjoint(rev, s, (fwd, bwd), record, target, nodes)


def _arguments(rev, s, loop):
    """The call's ``(items or None, state, consts)``, refusing varied items."""
    args = s.value.args
    head = 0 if loop.cond is not None else 1
    items = args[0] if head else None
    if isinstance(items, gast.Name) and rev.act.is_varied(s, items.id):
        raise at(
            rev.ctx,
            s,
            "a checkpointed loop over values that depend on the differentiated inputs",
            "loop over their indices: for i in checkpointed(range(len(xs))): x = xs[i]",
        )
    state = args[head : head + loop.carried]
    if not all(isinstance(n, gast.Name) for n in state):
        raise at(rev.ctx, s, "a checkpointed loop whose state is not a variable", "")
    return items, state, args[head + loop.carried :]


def _primal(bind, s, loop, target, record, arguments):
    """The comment saying how the loop is replayed, and the call running it."""
    items, state, consts = arguments
    step = loop.step.__name__
    is_for = items is not None
    runner = gast.Attribute(
        value=name(bind("revolve", revolve)),
        attr="run_for" if is_for else "run_while",
        ctx=gast.Load(),
    )
    first = [clone(items)] if is_for else [name(bind(f"{step}_cond", loop.cond))]
    run = gast.Call(
        func=runner,
        args=[
            name(bind(step, loop.step)),
            *first,
            const(loop.snapshots),
            gast.Tuple(elts=[clone(n) for n in state], ctx=gast.Load()),
            gast.Tuple(elts=[clone(n) for n in consts], ctx=gast.Load()),
        ],
        keywords=[],
    )
    pair = gast.Tuple(
        elts=[name(target, gast.Store()), name(record, gast.Store())], ctx=gast.Store()
    )
    how = "binomial schedule" if is_for else "online schedule"
    note = gast.Expr(value=const(f"{COMMENT}{loop.line} {loop.snapshots} snapshots, {how}"))
    return [
        gast.copy_location(note, s),
        gast.copy_location(gast.Assign(targets=[pair], value=run, type_comment=None), s),
    ]


def _adjoint(rev, s, pair, record, target, nodes):
    """The call of ``revolve.backward`` and the adjoints it adds to."""
    temps = [rev.namer.temp() for _ in nodes]
    for t, node in zip(temps, nodes):
        rev.primal_of[t] = node.id
    back = gast.Call(
        func=gast.Attribute(
            value=name(rev.ctx.bind("revolve", revolve)), attr="backward", ctx=gast.Load()
        ),
        args=[name(pair[0]), name(pair[1]), name(record), name(rev.d(target))],
        keywords=[],
    )
    unpack = gast.Assign(
        targets=[gast.Tuple(elts=[name(t, gast.Store()) for t in temps], ctx=gast.Store())],
        value=back,
        type_comment=None,
    )
    adjoint = [unpack]
    adjoint_of = rev.adjoint_of(s)
    for t, node in zip(temps, nodes):
        d = adjoint_of(node) or rev.d(node.id)  # a state name not varied at the loop's start
        adjoint.append(gast.AugAssign(target=name(d, gast.Store()), op=gast.Add(), value=name(t)))
    return adjoint
