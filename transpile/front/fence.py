"""Rejects syntax the transpiler does not differentiate, with a located error.

``run(parsed)`` walks the function once and raises ``TranspileError`` for the first
unsupported construct; it returns nothing. This is the one place syntax is refused: a
statement or expression whose type is not in ``ACCEPTED_STATEMENTS`` or
``ACCEPTED_EXPRESSIONS`` stops here (a type gast adds later too), with the hint of
``_REFUSED`` where there is one, so every later stage may assume the subset the front
end lowers to A-normal form (``tests/test_fence_syntax.py`` walks every gast type).
What numpy would update in place for another name to see is the next stage's
(``inplace``).
"""

import gast

from transpile.core.errors import at
from transpile.core.nodes import descendants
from transpile.front import exceptions, generators
from transpile_runtime import insert_grad_of, stop_gradient

# what the front end lowers (``normalize`` and its lowerings, ``exceptions``): every
# other type is refused (a ``yield`` only where ``generators`` makes it an append)
ACCEPTED_STATEMENTS = frozenset(
    (gast.AnnAssign, gast.Assert, gast.Assign, gast.AugAssign, gast.Break, gast.Continue)
    + (gast.Expr, gast.For, gast.FunctionDef, gast.If, gast.Pass, gast.Raise, gast.Return)
    + (gast.Try, gast.While, gast.With)
)
ACCEPTED_EXPRESSIONS = frozenset(
    (gast.Attribute, gast.BinOp, gast.BoolOp, gast.Call, gast.Compare, gast.Constant)
    + (gast.Dict, gast.DictComp, gast.FormattedValue, gast.GeneratorExp, gast.IfExp)
    + (gast.JoinedStr, gast.Lambda, gast.List, gast.ListComp, gast.Name, gast.SetComp)
    + (gast.Starred, gast.Subscript, gast.Tuple, gast.UnaryOp)
)
_STATEMENTS = {
    gast.AsyncWith: ("async with", "differentiate a plain synchronous function"),
    gast.AsyncFor: ("async for", "differentiate a plain synchronous function"),
    gast.AsyncFunctionDef: ("async def", "differentiate a plain synchronous function"),
    gast.Global: ("global", "pass the value in as an argument instead"),
    gast.Nonlocal: ("nonlocal", "pass the value in as an argument instead"),
    gast.Delete: ("del", "remove the `del`; rebinding the name is enough"),
    gast.ClassDef: ("a nested class", "define the class at module level"),
    gast.Import: ("import", "import at module level"),
    gast.ImportFrom: ("import", "import at module level"),
    # node types of newer Pythons, which older gast releases lack (None there)
    getattr(gast, "Match", None): ("match", "use if/elif/else"),
    getattr(gast, "TryStar", None): ("try/except*", "move it outside the differentiated function"),
    getattr(gast, "TypeAlias", None): ("a type alias", "define it at module level"),
}
_EXPRESSIONS = {
    gast.Yield: ("yield", "differentiate a function that returns its value"),
    gast.YieldFrom: ("yield from", "differentiate a function that returns its value"),
    gast.Await: ("await", "differentiate a plain synchronous function"),
    gast.NamedExpr: ("an assignment expression (:=)", "assign on a separate line"),
    gast.Set: ("a set display", "use a tuple, or build the set outside the function"),
    getattr(gast, "TemplateStr", None): ("a template string (t-string)", "use an f-string"),
}
_REFUSED = {k: v for k, v in {**_STATEMENTS, **_EXPRESSIONS}.items() if k is not None}


def stage(fn, ctx):
    """Refuse what cannot be differentiated, before anything is rewritten."""
    run(fn.parsed, called=ctx.mode in ("split", "tangent"))
    return fn


def run(parsed, called=True):
    """Raise TranspileError for the first unsupported construct in ``parsed.tree``.

    ``called``: it is called by the function differentiated (a generator may be).
    """
    tree = parsed.tree
    args = tree.args
    if args.vararg or args.kwarg or args.kwonlyargs or getattr(args, "posonlyargs", []):
        raise at(
            parsed,
            tree,
            "*args, **kwargs and keyword-only parameters are not supported "
            "in a differentiated function",
            "use plain positional parameters (with defaults if needed)",
        )
    yields = generators.own_yields(tree, descendants(tree))
    if yields and not called:
        raise at(
            parsed,
            yields[0],
            "yield is not supported in the function differentiated (a generator)",
            "differentiate a function that consumes it (`sum(gen(x))`, `for v in gen(x)`)",
        )
    allowed = generators.check(parsed, yields) if yields else set()
    for stmt in tree.body:
        _check(parsed, stmt, allowed)


def _check(parsed, root, allowed=frozenset()):
    for node in descendants(root):
        if isinstance(node, gast.Call) and _is_stop_gradient(parsed, node.func):
            continue  # anything goes inside stop_gradient(...): it is never differentiated
        kind = type(node)
        if kind is gast.With and grad_hook(parsed, node) is not None:
            continue
        if kind in (gast.Try, gast.With):
            exceptions.check(parsed, node)
        if _refused(node) and id(node) not in allowed:
            what, hint = _REFUSED.get(kind, (kind.__name__, None))
            raise at(parsed, node, f"{what} is not supported in a differentiated function", hint)
        if isinstance(node, (gast.For, gast.While)) and node.orelse:
            raise at(
                parsed,
                node,
                "a loop `else:` clause is not supported",
                "use a flag variable set before `break`",
            )
        if isinstance(node, gast.For) and not isinstance(node.target, (gast.Name, gast.Tuple)):
            raise at(
                parsed,
                node,
                "a loop target must be a name or a tuple of names",
                "assign inside the loop body instead",
            )


def _refused(node) -> bool:
    refused = _REFUSED_TYPES.get(node.__class__)
    if refused is None:
        refused = _REFUSED_TYPES[node.__class__] = _refused_type(node.__class__)
    return refused


_REFUSED_TYPES = {}  # node class -> _refused_type's answer, found on first sight


def _refused_type(kind) -> bool:
    """Whether nodes of class ``kind`` are refused: a statement or an expression of a
    type the front end does not lower."""
    if issubclass(kind, gast.stmt):
        return kind not in ACCEPTED_STATEMENTS
    return issubclass(kind, gast.expr) and kind not in ACCEPTED_EXPRESSIONS


def grad_hook(parsed, node):
    """``(x, dx)`` for ``with insert_grad_of(x) as dx:``, else None."""
    if len(node.items) != 1:
        return None
    item = node.items[0]
    call, target = item.context_expr, item.optional_vars
    if not (
        isinstance(call, gast.Call)
        and parsed.resolve(call.func) is insert_grad_of
        and len(call.args) == 1
        and isinstance(call.args[0], gast.Name)
        and isinstance(target, gast.Name)
    ):
        return None
    return call.args[0].id, target.id


def _is_stop_gradient(parsed, func):
    return parsed.resolve(func) is stop_gradient


def _inside_stop_gradient(parsed, root, target):
    for node in descendants(root):
        if (
            isinstance(node, gast.Call)
            and _is_stop_gradient(parsed, node.func)
            and any(n is target for n in descendants(node))
        ):
            return True
    return False
