"""Calls to the user's own functions: each is transpiled into a forward function that
returns its result and what its adjoint needs, and that adjoint.

``differentiate`` is called by the reverse sweep for an active call. It binds the
call's arguments to the callee's parameters, differentiates with respect to those
that carry a varied value, tells the callee which parameters receive lists or
tuples, and returns the names the generated code calls the pair by. A recursive
call (the callee is being transpiled around this one, for the same parameters)
calls the pair that transpilation makes: ``f_fwd`` calls ``f_fwd``, ``f_bwd`` calls
``f_bwd`` (``recursion``).
"""

import inspect

import gast

from transpile.core import recursion
from transpile.core.errors import TranspileError, at
from transpile.core.ir import MISSING
from transpile.core.nodes import all_stmts
from transpile.front import bound_functions, higher, objects, parse, varargs
from transpile_runtime import instances


def differentiate(fn, ctx, call, callee, stmt, act):
    """``(fwd_name, bwd_name, differentiated parameter names, argument nodes)``."""
    callee, made = instances.unwrapped(callee)
    sig = inspect.signature(callee)
    try:
        bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError as exc:
        raise at(
            fn.parsed, stmt, f"call to {callee.__name__}() does not match its signature: {exc}"
        ) from None
    try:
        tree = parse.run(callee).tree
    except TranspileError as exc:
        raise at(
            fn.parsed,
            stmt,
            f"no derivative rule for {callee.__name__}(), and its "
            f"source is not available ({exc.what})",
            "define it with `def` in a file, or wrap the value in "
            "stop_gradient(...) if it is a constant",
        ) from None
    why = higher.refusal(callee)  # a gradient called: located at the user's call
    if why is not None:
        raise at(fn.parsed, stmt, why, higher.LOOP_HINT)
    params, arguments, count = _spread_arguments(sig, bound, tree)
    wrt, nodes = [], []
    for pname, node in arguments.items():
        if isinstance(node, gast.Name) and act.is_varied(stmt, node.id):
            wrt.append(params.index(pname))
            nodes.append(node)
    sequences = frozenset(
        pname
        for pname, node in arguments.items()
        if isinstance(node, gast.Name) and node.id in fn.kinds.sequences
    )
    gen = ctx.transpile(
        callee,
        tuple(wrt),
        "split",
        stack=ctx.stack,
        sequences=sequences,
        functions=functions_passed(fn, callee, arguments),
        varargs=count,
        classes=objects.passed(fn, ctx, arguments, made),
        updates_followed=callee in fn.updates_followed,
        checkpoint=False if ctx.checkpoint is False else None,  # hvp: no markers below
    )
    if id(gen) not in fn.callee_names:
        fwd_name, bwd_name = _bind_pair(fn, ctx, gen, tree.name)
        fn.callees.append(gen)
        fn.callee_names[id(gen)] = (fwd_name, bwd_name)
    fwd_name, bwd_name = fn.callee_names[id(gen)]
    return fwd_name, bwd_name, [params[i] for i in wrt], nodes


def _bind_pair(fn, ctx, gen, base):
    """The names the generated code calls ``gen``'s pair by, bound in ``fn.namespace``.
    A call of the function being built, for the same key, calls the pair by its own
    names (``f_fwd`` inside ``f_fwd``); another transpilation in progress (mutual
    recursion) is bound to placeholders that ``recursion.close`` fills."""
    if isinstance(gen, recursion.StandIn) and gen.frame is ctx.stack[-1]:
        names = (fn.names["fwd"], fn.names["bwd"])
    elif isinstance(gen, recursion.StandIn):
        names = tuple(map(fn.namer.fresh, recursion.pair_names(ctx.stack, gen.frame.depth, base)))
    else:
        names = (fn.namer.fresh(gen.name), fn.namer.fresh(gen.extra.name))
    fn.namespace[names[0]] = gen.function
    fn.namespace[names[1]] = gen.extra.function
    return names


def functions_passed(fn, callee, arguments):
    """The callee's parameters holding functions: its function defaults, and the
    arguments that name a function (a global such as ``np.tanh``, or a parameter of
    the caller known to hold one)."""
    found = dict(bound_functions.of_defaults(callee))
    for pname, node in arguments.items():
        obj = _function_named(fn, node)
        if obj is not MISSING and bound_functions.is_function_value(obj):
            found[pname] = obj
        else:
            found.pop(pname, None)
    return tuple(found.items())


def _function_named(fn, node):
    """What the argument ``node`` (an atom) denotes, looking through the temporary that
    A-normal form made of an attribute chain (``_t3 = np.tanh``); MISSING if unknown."""
    if not isinstance(node, gast.Name):
        return MISSING
    if node.id in fn.namer.temporaries:
        values = [
            s.value
            for s in all_stmts(fn.tree.body)
            if isinstance(s, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == node.id for t in s.targets)
        ]
        if len(values) == 1 and isinstance(values[0], gast.Attribute):
            return fn.parsed.resolve(values[0])
    return fn.parsed.resolve(node)


def _spread_arguments(sig, bound, tree):
    """``(parameters, parameter -> argument node, how *args and **kwargs are spread)``:
    the callee's parameters as ``varargs.spread`` makes them for this call (``*rest`` as
    ``rest0, rest1``, ``**options`` as one parameter per keyword), every one in its
    place, and the arguments this call passes. A parameter left at its default has a
    place but no argument: the differentiated parameters are counted by place, so
    ``h(x, off=y)`` differentiates ``off``, not the ``scale`` between them."""
    params, arguments, count, keys = [], {}, None, ()
    for pname, param in sig.parameters.items():
        value = bound.arguments.get(pname, MISSING)
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            value = () if value is MISSING else value
            names = varargs.spread_names(tree, len(value))
            arguments.update(zip(names, value))
            params.extend(names)
            count = len(value)
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            value = {} if value is MISSING else value
            keys = tuple(value)
            arguments.update(value)  # each keyword becomes a parameter of its own name
            params.extend(keys)
        else:
            params.append(pname)
            if value is not MISSING:
                arguments[pname] = value
    return params, arguments, varargs.spread_of(sig, count, keys)
