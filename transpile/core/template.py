"""Rule templates: a Python function body read once, then instantiated per use.

A template such as::

    def tanh(y, x):
        d[x] += d[y] * (1.0 - y * y)

is parsed into a ``Template``. ``expand`` substitutes the real operands for the
parameters and adjoint names for ``d[...]``; a line that writes the adjoint of an
inactive operand is dropped. Parameters whose name starts with ``_`` are options
(axis, keepdims, a where-condition): never differentiated.

The same function holds the forward rule (``jvp``), lines writing ``t[y]``, the
tangent of the result, from the tangents ``t[x]`` of the operands::

    def sum_(y, a, _axis=None, _dtype=None, _out=None, _keepdims=False, **_kwargs):
        d[a] += ops.unreduce(d[y], a, _axis, _keepdims)
        t[y] += np.sum(t[a], axis=_axis, keepdims=_keepdims)

The tangent is the sum of the lines (``-=`` subtracts one); a line all of whose
tangents are zero is dropped, and a zero tangent in a line that stays is made an
array (``ops.zeros_like``). A rule of elementwise functions needs no forward lines:
each reverse line ``d[x] += E`` with ``E`` linear in ``d[y]`` through elementwise
products is read forwards as ``t[y] += E`` with ``t[x]`` for ``d[y]`` (and the
``ops.unbroadcast`` that undid broadcasting dropped): ``Template.forward``.
"""

import functools
import inspect
import linecache
import textwrap
from typing import Any

import gast

from transpile.core import gast_tree
from transpile.core.nodes import clone, const, walked_fields
from transpile.core.nodes import name as name_node
from transpile_runtime import ops


class _Adjoints:
    """``d`` in a template: ``d[x]`` is the adjoint of ``x``. Templates are read, never run."""

    def __getitem__(self, name: object) -> Any:
        raise RuntimeError("rule templates are source to instantiate, not code to call")

    def __setitem__(self, name: object, value: object) -> None:  # d[x] += ... type-checks
        raise RuntimeError("rule templates are source to instantiate, not code to call")


d = _Adjoints()


class _Tangents:
    """``t`` in a template: ``t[x]`` is the tangent of ``x`` (forward mode)."""

    def __getitem__(self, name):
        raise RuntimeError("rule templates are source to instantiate, not code to call")


t = _Tangents()
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
    def statements(self) -> tuple:
        """Every statement of the template (gast)."""
        try:
            tree = gast_tree.parse(textwrap.dedent(_lines_of(self.func))).body[0]
        except SyntaxError:  # the lines a code object spans missed a part of it
            tree = gast_tree.parse(textwrap.dedent(inspect.getsource(self.func))).body[0]
        return tuple(tree.body)

    @functools.cached_property
    def body(self) -> tuple:
        """The template's reverse lines, ``d[x] += ...``: all but the forward lines."""
        return tuple(s for s in self.statements if not _is_forward_line(s))

    @functools.cached_property
    def forward(self):
        """The forward lines, ``t[y] += ...``: the template's own, or for a rule declared
        only for elementwise (or pointwise) functions, its reverse lines read forwards;
        None if neither."""
        own = tuple(s for s in self.statements if _is_forward_line(s))
        if own:
            return own
        declarations = getattr(self.func, "declarations", ())
        if not declarations or not all(decl.is_pointwise for decl in declarations):
            return None
        result = next(iter(self.signature.parameters))
        lines = tuple(_read_forwards(s, result) for s in self.body)
        return None if not lines or None in lines else lines

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

    @functools.cached_property
    def _plain(self):
        """``(names, defaults by name)`` where every parameter is a plain positional
        one (most templates), for ``bind`` to map positions without ``Signature.bind``;
        else None."""
        params = self.signature.parameters.values()
        if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in params):
            return None
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
        return tuple(p.name for p in params), defaults

    def _bound_by_position(self, result, args):
        """``bind`` without keywords, where every parameter is a plain positional one
        and ``args`` fit; else None (``Signature.bind`` decides)."""
        plain = self._plain
        if plain is None:
            return None
        names, defaults = plain
        given = len(args) + 1
        if given > len(names) or not all(n in defaults for n in names[given:]):
            return None
        values = dict(zip(names, (result, *args)))
        for n in names[given:]:
            values[n] = const(defaults[n])
        return values

    def bind(self, result, args, keywords):
        """Map parameter names to operand nodes; raises TypeError when they do not fit."""
        values = self._bound_by_position(result, args) if not keywords else None
        if values is not None:
            return values
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
                values[pname] = const(param.default)
            elif param.kind == param.VAR_POSITIONAL:
                values[pname] = gast.Tuple(elts=[], ctx=gast.Load())
        return values


def _read_forwards(stmt, result):
    """The forward line of the elementwise reverse line ``d[x] += E`` (``E`` reading
    ``d[result]`` once): ``t[result] += E`` with ``t[x]`` for ``d[result]``, and an
    outer ``ops.unbroadcast(E, x)`` as ``E``; None for another form."""
    operand = stmt.target.slice.id
    value = _without_unbroadcast(stmt.value)
    reads = [n for n in gast.walk(value) if _is_adjoint(n)]
    if len(reads) != 1 or reads[0].slice.id != result:
        return None
    if any(isinstance(n, gast.Attribute) and _reshapes(n.attr) for n in gast.walk(value)):
        return None
    value = clone(value)
    for n in gast.walk(value):
        if _is_adjoint(n):
            n.value, n.slice = _load("t"), _load(operand)
    target = gast.Subscript(value=_load("t"), slice=_load(result), ctx=gast.Store())
    return gast.AugAssign(target=target, op=stmt.op, value=value)


def _without_unbroadcast(value):
    """``E`` for ``ops.unbroadcast(E, x)``, else ``value``."""
    if (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and value.func.attr == "unbroadcast"
        and len(value.args) == 2
    ):
        return value.args[0]
    return value


def _is_forward_line(stmt):
    return isinstance(stmt, gast.AugAssign) and _is_tangent(stmt.target)


def _reshapes(attr):
    """Whether ``ops.<attr>`` is a helper linear in an adjoint that it sums or spreads
    (``unbroadcast``, ``unreduce``): not an elementwise factor."""
    declared = getattr(getattr(ops, attr, None), "declared", None)
    return declared is not None and declared.linear


def _is_adjoint(n):
    return isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and n.value.id == "d"


def _load(name):
    return name_node(name)


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
            items = [(elt, {**values, "position": const(k)}) for k, elt in enumerate(bound.elts)]
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
                target=name_node(target, gast.Store()),
                op=stmt.op,
                value=value,
            )
            out.append((target_param, new))
    return out


def _substitute(node, values, adjoint_of, runtime_names):
    """A copy of the template expression ``node`` with operands, adjoints (``d[x]``)
    and runtime module names put in; None when an adjoint it reads is zero."""
    zero = []
    result = _put(node, values, adjoint_of, runtime_names, zero)
    return None if zero else result


def _put(n, values, adjoint_of, runtime_names, zero):
    """``_substitute`` of one node (a function of its own, not a closure calling itself:
    that would be a reference cycle per use, holding the rule's operands)."""
    cls = n.__class__
    if cls is _SUBSCRIPT and n.value.__class__ is _NAME and n.value.id == "d":
        adj = adjoint_of(values[n.slice.id])
        if adj is None:
            zero.append(n)
            return const(0.0)
        return name_node(adj)
    if cls is _NAME:
        if n.id in values:
            return clone(values[n.id])
        if n.id in runtime_names:
            return name_node(runtime_names[n.id])
        return clone(n)
    if not n._fields:
        return n  # Load, Add, ...: shared, as clone shares them
    new = cls.__new__(cls)
    attrs = n.__dict__.copy()
    for key in walked_fields(cls):
        value = attrs.get(key)
        if value.__class__ is list:
            attrs[key] = [
                _put(v, values, adjoint_of, runtime_names, zero) if isinstance(v, _AST) else v
                for v in value
            ]
        elif isinstance(value, _AST):
            attrs[key] = _put(value, values, adjoint_of, runtime_names, zero)
    new.__dict__ = attrs
    return new


_SUBSCRIPT, _NAME, _AST = gast.Subscript, gast.Name, gast.AST


def expand_forward(template: Template, values: dict, tangent_of, zero_of, runtime_names: dict):
    """The terms of the tangent of a template's result: ``[(op, expression)]``, ``op``
    a gast ``Add`` or ``Sub``, one per forward line (per operand of a ``*operands``
    line) that reads a nonzero tangent. ``tangent_of(node)`` is the tangent's name of
    an operand, or None for a zero; ``zero_of(node)`` an expression of a zero tangent
    shaped like ``node``, for a line that also reads a nonzero one."""
    out = []
    for stmt in template.forward or ():
        read = [n.slice.id for n in gast.walk(stmt.value) if _is_tangent(n)]
        starred = [
            p
            for p in read
            if template.signature.parameters[p].kind == inspect.Parameter.VAR_POSITIONAL
        ]
        if starred:
            elts = values[starred[0]].elts
            items = [
                ({**values, starred[0]: elt}, {**values, "position": const(k)})
                for k, elt in enumerate(elts)
            ]
        else:
            items = [(values, values)]
        for these, others in items:
            if all(tangent_of(these[p]) is None for p in read):
                continue
            value = _substitute(_mark_tangents(stmt.value), others, lambda n: None, runtime_names)
            out.append((stmt.op, _substitute_tangents(value, these, tangent_of, zero_of)))
    return out


def _is_tangent(n):
    return isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and n.value.id == "t"


_MARK = "__tangent__"


def _replace(node, new):
    """``node`` with each node ``n`` replaced by ``new(n)`` where that is not None."""
    found = new(node)
    if found is not None:
        return found
    for n in list(gast.walk(node)):
        for field, child in gast.iter_fields(n):
            if isinstance(child, list):
                setattr(n, field, [_pick(new(c), c) for c in child])
            elif isinstance(child, gast.AST):
                setattr(n, field, _pick(new(child), child))
    return node


def _pick(found, old):
    return old if found is None else found


def _mark_tangents(node):
    """A copy of ``node`` with each ``t[p]`` a name ``__tangent__p``, which substitution
    of the operands leaves alone."""

    def mark(n):
        if _is_tangent(n):
            return name_node(_MARK + n.slice.id)
        return None

    return _replace(clone(node), mark)


def _substitute_tangents(node, these, tangent_of, zero_of):
    """``node`` with each marked tangent the tangent of its operand ``these[p]``: a name,
    or a zero expression."""

    def put(n):
        if isinstance(n, gast.Name) and n.id.startswith(_MARK):
            operand = these[n.id[len(_MARK) :]]
            return _tangent_node(tangent_of(operand), operand, zero_of)
        return None

    return _replace(node, put)


def _tangent_node(found, operand, zero_of):
    if found is None:
        return zero_of(operand)
    return name_node(found)
