"""Functions passed as arguments: ``def predict(params, x, nonlinearity=np.tanh)``.

A parameter that the body calls is differentiated through the function it holds: the
gradient is transpiled for that function (found by rule, or by reading its source),
and its entry re-checks on every call that the argument is still that function,
transpiling again for another one. These helpers say which arguments are functions.
"""

import functools
import inspect
import types

import gast
import numpy as np

from transpile.front import parse
from transpile.rules import user_rules


def is_function_value(value) -> bool:
    """A function, builtin, ufunc, bound method or ``functools.partial``, or anything
    with a rule of the user's (an ``np.vectorize``); not a class (``dtype=np.float32``)
    nor an array."""
    if user_rules.find(value) is not None:
        return True
    return isinstance(
        value,
        (
            types.FunctionType,
            types.BuiltinFunctionType,
            types.MethodType,
            np.ufunc,
            functools.partial,
        ),
    ) or (callable(value) and type(value).__name__ == "_ArrayFunctionDispatcher")


def of_arguments(params, args) -> tuple:
    """``((parameter, function), ...)`` for the arguments that are functions."""
    return tuple((p, a) for p, a in zip(params, args) if is_function_value(a))


def of_defaults(func) -> tuple:
    """``of_arguments`` for the parameters left at their defaults."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return ()
    return tuple(
        (p.name, p.default)
        for p in sig.parameters.values()
        if p.default is not p.empty and is_function_value(p.default)
    )


def same(a: tuple, b: tuple) -> bool:
    """Whether two ``of_arguments`` results bind the same parameters to the same objects."""
    return len(a) == len(b) and all(p == q and x is y for (p, x), (q, y) in zip(a, b))


def called_without_default(func) -> tuple:
    """The parameters ``func``'s body calls that have no function default: its gradient
    waits for the functions passed."""
    try:
        tree = parse.run(func).tree
    except Exception:  # noqa: BLE001 - no source: the caller's error stands
        return ()
    params = [a.id for a in tree.args.args]
    defaults = {p for p, _ in of_defaults(func)}
    called = {
        n.func.id
        for n in gast.walk(tree)
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)
    }
    return tuple(p for p in params if p in called and p not in defaults)
