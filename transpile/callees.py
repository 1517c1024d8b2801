"""Calls to the user's own functions: each is transpiled into a forward function that
returns its result and what its adjoint needs, and that adjoint.

``differentiate`` is called by the reverse sweep for an active call. It binds the
call's arguments to the callee's parameters, differentiates with respect to those
that carry a varied value, tells the callee which parameters receive lists or
tuples, and returns the names the generated code calls the pair by.
"""

import inspect

import gast

from transpile import bound_functions, parse
from transpile.errors import TranspileError, at
from transpile.nodes import all_stmts
from transpile.parse import MISSING


def differentiate(fn, ctx, call, callee, stmt, act):
    """``(fwd_name, bwd_name, differentiated parameter names, argument nodes)``."""
    if callee in ctx.stack:
        raise at(
            fn.parsed,
            stmt,
            f"recursive call to {callee.__name__}() cannot be differentiated",
            "rewrite the recursion as a loop",
        )
    sig = inspect.signature(callee)
    try:
        bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError as exc:
        raise at(
            fn.parsed, stmt, f"call to {callee.__name__}() does not match its signature: {exc}"
        ) from None
    params = list(sig.parameters)
    wrt, nodes = [], []
    for pname, node in bound.arguments.items():
        if isinstance(node, gast.Name) and act.is_varied(stmt, node.id):
            wrt.append(params.index(pname))
            nodes.append(node)
    try:
        parse.run(callee)
    except TranspileError as exc:
        raise at(
            fn.parsed,
            stmt,
            f"no derivative rule for {callee.__name__}(), and its "
            f"source is not available ({exc.what})",
            "define it with `def` in a file, or wrap the value in "
            "stop_gradient(...) if it is a constant",
        ) from None
    sequences = frozenset(
        pname
        for pname, node in bound.arguments.items()
        if isinstance(node, gast.Name) and node.id in fn.kinds.sequences
    )
    gen = ctx.transpile(
        callee,
        tuple(wrt),
        "split",
        stack=ctx.stack + (ctx.func,),
        sequences=sequences,
        functions=_functions_passed(fn, callee, bound.arguments),
    )
    if id(gen) not in fn.callee_names:
        fwd_name = fn.namer.fresh(gen.name)
        bwd_name = fn.namer.fresh(gen.extra.name)
        fn.namespace[fwd_name] = gen.function
        fn.namespace[bwd_name] = gen.extra.function
        fn.callees.append(gen)
        fn.callee_names[id(gen)] = (fwd_name, bwd_name)
    fwd_name, bwd_name = fn.callee_names[id(gen)]
    return fwd_name, bwd_name, [params[i] for i in wrt], nodes


def _functions_passed(fn, callee, arguments):
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
