"""A helper passed a function made in the differentiated function, inlined at its call.

``fori_loop(0, n, lambda i, s: step(s), state)`` or ``apply_twice(act, x)`` with
``act`` a lambda or ``def`` of the function: the function passed has no object the
helper's own transpilation could be told about (it closes over the caller's values,
which may be differentiated), so the helper's body is inlined at the call, as a
local function's is (``desugar.inline``), and the function passed is then called
where the helper calls its parameter, inlined in turn.

A helper is inlined so only where its names mean there what they mean in the
caller: a module-level ``def`` of the same module, with plain parameters whose
defaults are constants, that does not call itself. Any other keeps the call, which
the reverse sweep refuses by name where it carries a differentiated value.
"""

import inspect

import gast

from transpile.core.errors import TranspileError
from transpile.core.ir import MISSING
from transpile.front import desugar, parse


def passes_local_function(node, local_functions) -> bool:
    """Whether the call ``node`` passes a lambda or a function of ``local_functions``."""
    values = list(node.args) + [k.value for k in node.keywords]
    return any(
        isinstance(v, gast.Lambda) or (isinstance(v, gast.Name) and v.id in local_functions)
        for v in values
    )


def helper(parsed, node, inlining):
    """The ``desugar.Local`` of the helper the call ``node`` calls, for inlining, or None
    where it is not one to inline (``inlining``: the helpers being inlined, by id)."""
    if not isinstance(node.func, gast.Name):
        return None
    func = parsed.resolve(node.func)
    if (
        func is MISSING
        or not inspect.isfunction(func)
        or func.__globals__ is not parsed.namespace
        or func.__code__.co_freevars
        or func.__code__.co_name == "<lambda>"
        or id(func) in inlining
    ):
        return None
    try:
        tree = parse.run(func).tree
    except TranspileError:
        return None
    params, with_defaults = desugar.parameters(tree)
    if params is None or tree.decorator_list:
        return None
    defaults = dict(zip(with_defaults, tree.args.defaults))
    if not all(isinstance(d, gast.Constant) for d in defaults.values()):
        return None
    return desugar.Local(func.__name__, tree, defaults), id(func)
