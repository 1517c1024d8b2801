"""Rule templates: a Python function body read once, then instantiated per use.

A template such as::

    def tanh(y, x):
        d[x] += d[y] * (1.0 - y * y)

is parsed into a ``Template``. ``expand`` substitutes the real operands for the
parameters and adjoint names for ``d[...]``; a line that writes the adjoint of an
inactive operand is dropped. Parameters whose name starts with ``_`` are options
(axis, keepdims, a where-condition): never differentiated.
"""

import functools
import inspect
import linecache
import textwrap

import gast

from transpile.nodes import clone


class _Adjoints:
    """``d`` in a template: ``d[x]`` is the adjoint of ``x``. Templates are read, never run."""

    def __getitem__(self, name):
        raise RuntimeError("rule templates are source to instantiate, not code to call")


d = _Adjoints()
position = 0  # in a template over *operands: the index of the operand whose adjoint it is


class Template:
    """A rule template: its signature and body read on first use (most programs use a
    handful of the rules, and reading a function's source or signature costs)."""

    def __init__(self, func):
        self.func = func
        self.name = func.__name__

    @functools.cached_property
    def signature(self):
        return inspect.signature(self.func)

    @functools.cached_property
    def option_params(self) -> frozenset:
        """The parameters never differentiated."""
        return frozenset(p for p in self.signature.parameters if p.startswith("_"))

    @functools.cached_property
    def body(self) -> tuple:
        """The template's statements (gast)."""
        try:
            tree = gast.parse(textwrap.dedent(_lines_of(self.func))).body[0]
        except SyntaxError:  # the lines a code object spans missed a part of it
            tree = gast.parse(textwrap.dedent(inspect.getsource(self.func))).body[0]
        return tuple(tree.body)

    @functools.cached_property
    def diff_params(self) -> frozenset:
        """The parameters whose adjoint the body writes."""
        return frozenset(s.target.slice.id for s in self.body if isinstance(s, gast.AugAssign))

    def names(self, runtime_names: dict, bind) -> dict:
        """The generated code's names for the module references in the template's lines
        (``np``, ``ops``); ``bind(base, obj)`` binds another object (user templates, and
        the objects a built-in template names with ``declare.binds``)."""
        bound = getattr(self.func, "binds", None)
        if not bound:
            return runtime_names
        return {**runtime_names, **{n: bind(n, obj) for n, obj in bound.items()}}

    def bind(self, result, args, keywords):
        """Map parameter names to operand nodes; raises TypeError when they do not fit."""
        params = self.signature.parameters
        keywords = {
            (f"_{k}" if k not in params and f"_{k}" in params else k): v
            for k, v in keywords.items()
        }
        bound = self.signature.bind(result, *args, **keywords)
        values = {}
        for pname, param in self.signature.parameters.items():
            if pname in bound.arguments:
                v = bound.arguments[pname]
                if param.kind == param.VAR_POSITIONAL:
                    v = gast.Tuple(elts=list(v), ctx=gast.Load())
                elif param.kind == param.VAR_KEYWORD:
                    continue
                values[pname] = v
            elif param.default is not inspect.Parameter.empty:
                values[pname] = gast.Constant(value=param.default, kind=None)
            elif param.kind == param.VAR_POSITIONAL:
                values[pname] = gast.Tuple(elts=[], ctx=gast.Load())
        return values


def _lines_of(func):
    """The source of ``func``, cut from its file by the lines its code spans: the code
    object knows them, so the tokenizing of ``inspect.getsource`` (most of the time a
    small gradient spends on its rules) is not needed."""
    code = func.__code__
    lines = linecache.getlines(code.co_filename)
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=0)
    return "".join(lines[code.co_firstlineno - 1 : last])


def parse_template(func) -> Template:
    return Template(func)


def expand(template: Template, values: dict, adjoint_of, runtime_names: dict):
    """Instantiate ``template``.

    ``values`` maps parameter names to operand nodes; ``adjoint_of(node)`` returns
    the adjoint name of an active operand, or None; ``runtime_names`` renames the
    template's module references (``np``, ``ops``) to the generated code's names.
    """
    out = []
    for stmt in template.body:
        target_param = stmt.target.slice.id
        bound = values[target_param]
        param = template.signature.parameters[target_param]
        if param.kind == param.VAR_POSITIONAL:
            # d[operands] for *operands: one line per operand, `position` its index
            items = [
                (elt, {**values, "position": gast.Constant(value=k, kind=None)})
                for k, elt in enumerate(bound.elts)
            ]
        else:
            items = [(bound, values)]
        for node, these in items:
            target = adjoint_of(node)
            if target is None:
                continue
            value = _substitute(stmt.value, these, adjoint_of, runtime_names)
            if value is None:
                continue
            new = gast.AugAssign(
                target=gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None),
                op=stmt.op,
                value=value,
            )
            out.append((target_param, new))
    return out


def _substitute(node, values, adjoint_of, runtime_names):
    """A copy of the template expression ``node`` with operands, adjoints (``d[x]``)
    and runtime module names put in; None when an adjoint it reads is zero."""
    zero = []

    def put(n):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and n.value.id == "d":
            adj = adjoint_of(values[n.slice.id])
            if adj is None:
                zero.append(n)
                return gast.Constant(value=0.0, kind=None)
            return gast.Name(id=adj, ctx=gast.Load(), annotation=None, type_comment=None)
        if isinstance(n, gast.Name):
            if n.id in values:
                return clone(values[n.id])
            if n.id in runtime_names:
                return gast.Name(
                    id=runtime_names[n.id], ctx=gast.Load(), annotation=None, type_comment=None
                )
            return clone(n)
        if not n._fields:
            return n  # Load, Add, ...: shared, as clone shares them
        new = n.__class__.__new__(n.__class__)
        for key, value in n.__dict__.items():
            if isinstance(value, gast.AST):
                value = put(value)
            elif value.__class__ is list:
                value = [put(v) if isinstance(v, gast.AST) else v for v in value]
            new.__dict__[key] = value
        return new

    result = put(node)
    return None if zero else result
