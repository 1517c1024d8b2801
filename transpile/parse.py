"""Source to gast tree, plus the namespace that resolves the function's free names.

``run(func)`` returns a ``Parsed`` bundle: the function's ``FunctionDef`` (decorators
stripped), where it came from, and a resolver that maps a ``Name`` or an attribute
chain (``np.linalg.norm``) to the object it denotes, through closure cells, globals
and builtins. Local variables never resolve.
"""

import builtins
import inspect
import textwrap
from dataclasses import dataclass, field

import gast

from transpile.errors import TranspileError

MISSING = object()


@dataclass(frozen=True)
class Parsed:
    func: object
    tree: gast.FunctionDef
    filename: str
    line_offset: int
    free_values: dict = field(repr=False)
    local_names: frozenset = frozenset()

    def lookup(self, name: str):
        """The object a free name denotes, or MISSING for locals and unknown names."""
        if name in self.local_names:
            return MISSING
        if name in self.free_values:
            return self.free_values[name]
        if name in self.func.__globals__:
            return self.func.__globals__[name]
        return getattr(builtins, name, MISSING)

    def resolve(self, node):
        """Resolve a Name or an Attribute chain of names to its object, or MISSING."""
        if isinstance(node, gast.Name):
            return self.lookup(node.id)
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            if base is MISSING:
                return MISSING
            return getattr(base, node.attr, MISSING)
        return MISSING


def _source_error(func, why):
    code = getattr(func, "__code__", None)
    filename = code.co_filename if code else "<unknown>"
    lineno = code.co_firstlineno if code else 0
    name = getattr(func, "__qualname__", repr(func))
    return TranspileError(
        f"cannot read the source of {name}: {why}",
        filename=filename,
        lineno=lineno,
        hint="define the function with `def` in a .py file or a notebook cell; "
        "functions built by exec/eval, lambdas and builtins have no usable source",
    )


def assigned_names(tree) -> set:
    """Every name the function binds: parameters, assignment and loop targets."""
    names = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
    return names


def run(func) -> Parsed:
    """Parse ``func`` and bundle what later stages need to resolve its names."""
    if not inspect.isfunction(func):
        raise _source_error(func, "it is not a Python function")
    if func.__name__ == "<lambda>":
        raise _source_error(func, "it is a lambda")
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise _source_error(func, str(exc)) from None
    source = textwrap.dedent("".join(lines))
    module = gast.parse(source)
    tree = module.body[0]
    if isinstance(tree, gast.AsyncFunctionDef):
        raise TranspileError(
            "async def is not supported",
            filename=func.__code__.co_filename,
            lineno=first,
            hint="differentiate a plain synchronous function",
        )
    if not isinstance(tree, gast.FunctionDef):
        raise _source_error(func, "the source is not a plain `def`")
    tree.decorator_list = []
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return Parsed(
        func=func,
        tree=tree,
        filename=func.__code__.co_filename,
        line_offset=first - 1,
        free_values=closure,
        local_names=frozenset(assigned_names(tree)),
    )
