"""The functions to compile, made of the two sweeps.

For ``grad``, ``value_and_grad`` and ``vjp``: one function, the primal sweep then the
adjoint sweep (``value_and_grad`` returns the value too, kept before the adjoint
sweep restores older values of it). For ``split`` (a user function called by the
one being differentiated): a forward function returning its result and the values
its adjoint reads (``saved``), and the adjoint function taking them and the
output's adjoint.
"""

import gast

from transpile.cleanup.shapes import classify_reads
from transpile.core.ir import Output
from transpile.core.nodes import all_stmts, assign, clone, descendants, name, stores
from transpile.reverse.record import free_loads, prebind


def stage(fn, ctx):
    """Fill ``fn.outputs``."""
    ret = fn.adjoint[-1]
    adjoint = fn.adjoint[:-1]
    primal = fn.primal
    result = fn.emitted.result
    if ctx.mode == "value_and_grad":
        value = clone(result) if fn.whole_result is None else name(fn.whole_result)
        if isinstance(value, gast.Name) and any(
            value.id in stores(s) for s in all_stmts(adjoint)
        ):  # the adjoint sweep restores older values of it: keep the one returned
            kept = name(fn.namer.fresh("value"))
            primal = primal + [assign(kept.id, value, gast.Pass())]
            value = kept
        ret = gast.Return(value=gast.Tuple(elts=[value, ret.value], ctx=gast.Load()))
    if ctx.mode == "split":
        fn.outputs = _split(fn, ctx, primal, adjoint, ret, result)
        return fn
    base = fn.parsed.name
    fname = {"grad": f"d{base}", "value_and_grad": f"{base}_value_and_grad", "vjp": f"{base}_vjp"}
    args = clone(fn.tree.args)
    args.args = args.args + [name(a, gast.Param()) for a in fn.extra_args]
    if fn.extra_args:
        # dout comes last: the function's defaults would shift onto the wrong parameters
        # (power=3 in f(x, y, power=3) would become dout's), so every argument is asked for
        args.defaults = []
    fn.outputs = [Output(fname[ctx.mode], args, primal + adjoint + [ret])]
    return fn


def _split(fn, ctx, primal, adjoint, ret, result):
    params = fn.params
    defined = set(params) | {t for s in all_stmts(primal) for t in stores(s)}
    saved_names = free_loads(adjoint + [ret], fn.adjoint_names) - {fn.d_result}
    saved_names = sorted(saved_names & defined)
    primal = prebind(primal, set(saved_names), params)
    tape = fn.names["tape"]
    if any(isinstance(n, gast.Name) and n.id == tape for s in primal for n in descendants(s)):
        saved_names = sorted(set(saved_names) | {tape})
    saved = fn.namer.fresh("saved")
    ops_name = fn.names["ops"]
    shaped = _read_for_shape_alone(adjoint + [ret], saved_names, ops_name)
    if fn.kinds is not None:  # a list's or dict's adjoint is made entry by entry: kept whole
        shaped -= fn.kinds.sequences | fn.kinds.dicts
    kept = [
        gast.Call(
            func=gast.Attribute(value=name(ops_name), attr="shape_of", ctx=gast.Load()),
            args=[name(n)],
            keywords=[],
        )
        if n in shaped
        else name(n)
        for n in saved_names
    ]
    fwd_ret = gast.Return(
        value=gast.Tuple(
            elts=[clone(result), gast.Tuple(elts=kept, ctx=gast.Load())],
            ctx=gast.Load(),
        )
    )
    unpack = gast.Assign(
        targets=[gast.Tuple(elts=[name(n, gast.Store()) for n in saved_names], ctx=gast.Store())],
        value=name(saved),
        type_comment=None,
    )
    dres = fn.d_result or fn.namer.fresh("dout")
    bwd_args = gast.arguments(
        args=[name(saved, gast.Param()), name(dres, gast.Param())],
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    return [
        Output(fn.names["fwd"], clone(fn.tree.args), primal + [fwd_ret]),
        Output(fn.names["bwd"], bwd_args, ([unpack] if saved_names else []) + adjoint + [ret]),
    ]


def _read_for_shape_alone(adjoint, saved_names, ops_name):
    """The saved values the adjoint reads only for their shapes: the forward function
    returns their shapes (``ops.shape_of``, as a loop's tape records them), so that the
    arrays die when it returns; a helper called in a loop, or a checkpointed loop's
    step, then keeps one array less per such value."""
    shape_reads, other_reads = classify_reads(adjoint, ops_name)
    return {n for n in saved_names if n in shape_reads and n not in other_reads}
