"""Derivative rules the user gives: ``defvjp``, ``rule`` (a template, inlined as the
built-in ones are) and ``nondifferentiable``.

A user rule is looked up by the object called, before the built-in rules and before
the function's source is read; through a ``functools.partial`` or a bound method, the
rule of the function it wraps applies, with the arguments it holds put first. A
``defvjp`` rule keeps the primal call as written (``y = fn(x, w)``) and calls the
user's adjoint function in the adjoint sweep (``dx = fn_vjp_x(dy, y, x, w)``), bound
into the generated code's namespace under that readable name.

Each registration bumps ``version()``, part of the gradient cache's key: a gradient
made afterwards uses the rule; one made before keeps the rules it was made with.
"""

import builtins
import functools
import inspect
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gast

from transpile.core.ir import MISSING
from transpile.core.nodes import clone, const, name
from transpile.core.template import Template

_F = TypeVar("_F", bound=Callable[..., Any])
_LOCK = threading.Lock()
# the registered rules, by the object they are given for (or ("id", id) if unhashable);
# replaced whole under the lock, so a reader sees one consistent table without it
_RULES: dict = {}
_VERSION = [0]


@dataclass(frozen=True, eq=False)
class UserRule:
    """One registration. kind: 'vjp' (``adjoints``, one per positional argument or
    None; ``tangents`` likewise for forward mode, ``(t, ans, *args, **kwargs) ->``
    the tangent's part from that argument), 'template' (``template``), or 'nondiff'."""

    fn: object
    kind: str
    adjoints: tuple = ()
    template: object = None
    tangents: tuple = ()


@dataclass(frozen=True, eq=False)
class Found:
    """A rule as it applies to the object called (``called``): ``prefix`` holds the
    arguments a partial or a bound method puts before the call's own, ``keywords``
    those a partial adds."""

    rule: UserRule
    called: object
    prefix: tuple = ()
    keywords: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        base = getattr(self.rule.fn, "__name__", None) or type(self.rule.fn).__name__
        return base if base.isidentifier() else "rule"


def version() -> int:
    """A number that changes with every registration (the gradient cache keys on it)."""
    return _VERSION[0]


def _key(obj):
    try:
        hash(obj)
    except TypeError:
        return ("id", id(obj))
    return obj


def _register(rule: UserRule):
    global _RULES
    with _LOCK:
        _RULES = {**_RULES, _key(rule.fn): rule}
        _VERSION[0] += 1


def defvjp(fn: _F, *adjoints: Callable[..., Any] | None) -> _F:
    """Give ``fn`` a derivative rule: one adjoint per positional argument, each a
    function ``(g, ans, *args, **kwargs) -> contribution`` (``g`` the adjoint of the
    result ``ans = fn(*args, **kwargs)``), or None for an argument that is not
    differentiated. A missing trailing adjoint counts as None. Returns ``fn``."""
    if not callable(fn):
        raise TypeError(f"defvjp: expected a function, got {fn!r}")
    if not adjoints:
        raise TypeError("defvjp: give one adjoint (or None) per positional argument")
    for a in adjoints:
        if a is not None and not callable(a):
            raise TypeError(f"defvjp: an adjoint must be a function or None, got {a!r}")
    _check_arity(fn, len(adjoints))
    for i, a in enumerate(adjoints):
        if a is not None:
            _check_adjoint_signature(fn, a, i)
    _register(UserRule(fn, "vjp", tuple(adjoints)))
    return fn


def _check_adjoint_signature(fn, adjoint, index):
    """Refuse an adjoint that cannot take ``(g, ans, *args)``: an autograd-style curried
    rule ``lambda ans, x: lambda g: ...`` takes one argument too few."""
    needed = _required_positional(fn)
    try:
        params = inspect.signature(adjoint).parameters.values()
    except (TypeError, ValueError):
        return
    if needed is None or any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    taken = [p.name for p in params if p.kind in kinds]
    if len(taken) >= 2 + needed:
        return
    fname = getattr(fn, "__name__", repr(fn))
    args = ", ".join(_positional(fn)[: max(needed, 1)]) or "x"
    raise TypeError(
        f"defvjp: the adjoint for argument {index} of {fname} takes ({', '.join(taken)}), but "
        f"it is called as adjoint(g, ans, {args}): g the adjoint of the result ans = "
        f"{fname}({args}), then the arguments; write `lambda g, ans, {args}: ...` (an "
        f"autograd-style `lambda ans, {args}: lambda g: ...` becomes that)"
    )


def _required_positional(fn):
    """How many positional arguments every call of ``fn`` passes, or None if unknown."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in params
    )


def _check_arity(fn, count):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return  # no signature (some builtins): the call sites tell
    kinds = [p.kind for p in params]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return
    positional = sum(
        k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for k in kinds
    )
    if count > positional:
        raise TypeError(
            f"defvjp: {count} adjoints for {getattr(fn, '__name__', fn)!r}, "
            f"which takes {positional} positional arguments"
        )


def nondifferentiable(fn: _F) -> _F:
    """Mark ``fn`` as ending differentiation: its result is a constant to it (no adjoint,
    no error), as for ``np.argmax``. Returns ``fn``."""
    if not callable(fn):
        raise TypeError(f"nondifferentiable: expected a function, got {fn!r}")
    _register(UserRule(fn, "nondiff"))
    return fn


def rule(*functions: Callable[..., Any]) -> Callable[[_F], _F]:
    """Declare the template below as the rule of ``functions``, inlined into the
    generated code as the built-in rules are::

        @rule(softplus)
        def _(y, x):
            d[x] += d[y] / (1.0 + np.exp(-x))

    The first parameter is the result, the others the call's arguments (by position or
    keyword; a parameter whose name starts with ``_`` is an option, never
    differentiated); each line is ``d[arg] += expression``."""
    if not functions or not all(callable(f) for f in functions):
        raise TypeError("rule: name the functions the template is the rule of")

    def attach(func: _F) -> _F:
        template = UserTemplate(func)
        template.check()
        for f in functions:
            _register(UserRule(f, "template", template=template))
        return func

    return attach


class UserTemplate(Template):
    """A template from the user's module: the names its lines read besides its
    parameters (``np``, a helper) are bound into the generated code as what they denote
    in the template's module, not looked up in the differentiated function's."""

    def check(self):
        """Raise ValueError unless every line is ``d[parameter] op= expression``."""
        params = list(self.signature.parameters)
        for stmt in self.body:
            if not (
                isinstance(stmt, gast.AugAssign)
                and isinstance(stmt.target, gast.Subscript)
                and isinstance(stmt.target.value, gast.Name)
                and stmt.target.value.id == "d"
                and isinstance(stmt.target.slice, gast.Name)
                and stmt.target.slice.id in params[1:]
            ):
                raise ValueError(
                    f"rule template {self.name}: each line must be `d[arg] += expression`, "
                    f"arg one of its parameters after the first (the result): {params[1:]}"
                )

    @functools.cached_property
    def free_names(self) -> tuple:
        """The names the template's expressions read that are not its parameters."""
        skip = set(self.signature.parameters) | {"d", "position"}
        found: dict = {}
        for stmt in self.body:
            for n in gast.walk(stmt.value):
                if isinstance(n, gast.Name) and n.id not in skip:
                    found[n.id] = None
        return tuple(found)

    def names(self, runtime_names, bind):
        """Each free name bound (``bind(base, obj) -> name``) to what it denotes in the
        template's module."""
        out = {}
        for n in self.free_names:
            obj = _resolve(self.func, n)
            if obj is MISSING:
                raise NameError(f"rule template {self.name} reads {n!r}, which is not defined")
            out[n] = bind(n, obj)
        return out


def _resolve(func, n):
    code = func.__code__
    if func.__closure__ and n in code.co_freevars:
        try:
            return func.__closure__[code.co_freevars.index(n)].cell_contents
        except ValueError:
            return MISSING
    if n in func.__globals__:
        return func.__globals__[n]
    return getattr(builtins, n, MISSING)


def find(obj):
    """The ``Found`` rule for calling ``obj``, looking through ``functools.partial``
    objects and bound methods to the function they wrap; None if there is none."""
    rules = _RULES
    if not rules:
        return None
    prefix, keywords, called = (), {}, obj
    for _ in range(8):  # a partial of a method of ...: a few layers at most
        found = rules.get(_key(obj))
        if found is not None:
            return Found(found, called, prefix, keywords)
        if isinstance(obj, functools.partial):
            prefix, keywords = obj.args + prefix, {**obj.keywords, **keywords}
            obj = obj.func
        elif isinstance(obj, types.MethodType):
            prefix, obj = (obj.__self__, *prefix), obj.__func__
        else:
            return None
    return None


class Refused(Exception):
    """A differentiated argument the rule has no adjoint for."""


def binder(namer, namespace):
    """``bind(base, obj, key=None) -> name``: a fresh name for ``obj`` in the generated
    code's namespace, or the one it has there already (as ``np`` has); ``key`` stands
    for ``obj`` where a new object is made for each use of the same thing."""
    names = {id(v): (k, v) for k, v in namespace.items()}

    def bind(base, obj, key=None):
        key = id(obj) if key is None else key
        if key not in names:
            names[key] = (namer.fresh(base), obj)
            namespace[names[key][0]] = obj
        return names[key][0]

    return bind


def _slots(found, call):
    """``(index, parameter name, argument node)`` for each argument of ``call``: its
    positional index in the rule's function (after what a partial or method holds),
    None for a keyword that matches no positional parameter."""
    fn = found.rule.fn
    positional = _positional(getattr(fn, "pyfunc", fn))  # an np.vectorize: its function's
    named = list(positional)
    for adjoint in found.rule.adjoints:  # else as the adjoints name them: (g, ans, x, ...)
        names = _positional(adjoint)[2:] if adjoint is not None else []
        named += names[len(named) :]
    start = len(found.prefix)
    out = []
    for i, node in enumerate(call.args):
        index = start + i
        out.append((index, named[index] if index < len(named) else f"arg{index}", node))
    for kw in call.keywords:
        index = positional.index(kw.arg) if kw.arg in positional else None
        out.append((index, kw.arg, kw.value))
    return out


def _positional(func) -> list:
    """The names of ``func``'s positional parameters ([] without a signature)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def adjoint_lines(found, call, target, d_target, adjoint_of, bind, ops_name):
    """The adjoint of ``target = call`` under a ``defvjp`` rule: for each differentiated
    argument, ``d_arg += fn_vjp_arg(d_target, target, *args, **keywords)``, summed
    over the axes it was broadcast along where another argument may broadcast it.
    Raises ``Refused`` for a differentiated argument the rule has no adjoint for."""
    slots = _slots(found, call)
    data = sum(isinstance(node, gast.Name) for _, _, node in slots)
    out = []
    for index, pname, node in slots:
        adj = adjoint_of(node)
        if adj is None:
            continue
        adjoint = _for_slot(found.rule.adjoints, index)
        if adjoint is None:
            raise Refused(
                f"the rule given for {found.name}() by defvjp has no adjoint for its "
                f"argument {pname!r}, which depends on the differentiated inputs"
            )
        value = _call(found, adjoint, (index, pname, "vjp"), (d_target, target), call, bind)
        if data > 1:
            value = _ops_call(ops_name, "unbroadcast", [value, clone(node)])
        checked = [value, clone(node), const(found.name), const(pname)]
        value = _ops_call(ops_name, "contribution", checked)  # shaped like the argument
        out.append(gast.AugAssign(target=name(adj, gast.Store()), op=gast.Add(), value=value))
    return out


def _ops_call(ops_name, helper, args):
    func = gast.Attribute(value=name(ops_name), attr=helper, ctx=gast.Load())
    return gast.Call(func=func, args=args, keywords=[])


def tangent_terms(found, call, target, tangent_of, bind):
    """The tangent of ``target = call`` under a rule with ``tangents`` (forward mode),
    as terms to add: ``fn_jvp_arg(t_arg, target, *args, **keywords)`` for each argument
    with a tangent (``tangent_of(node)`` its name, or None). Raises ``Refused`` for such
    an argument the rule has no tangent function for."""
    terms = []
    for index, pname, node in _slots(found, call):
        tangent = tangent_of(node)
        if tangent is None:
            continue
        fn = _for_slot(found.rule.tangents, index)
        if fn is None:
            raise Refused(
                f"the rule given for {found.name}() by defvjp is for reverse mode only, and "
                f"its argument {pname!r} depends on the differentiated inputs"
            )
        terms.append(_call(found, fn, (index, pname, "jvp"), (tangent, target), call, bind))
    return terms


def _for_slot(functions, index):
    """The rule's function (an adjoint or a tangent) for positional argument ``index``."""
    return functions[index] if index is not None and index < len(functions) else None


def _call(found, fn, slot, first, call, bind):
    """``name(first..., *args, **keywords)``: ``fn`` bound into the generated code as
    ``<rule>_<kind>_<argument>``, called as the call site calls the rule's function."""
    index, pname, kind = slot
    held = (*map(id, found.prefix), *((k, id(v)) for k, v in found.keywords.items()))
    fname = bind(f"{found.name}_{kind}_{pname}", _applied(found, fn), (id(fn), index, *held))
    return gast.Call(
        func=name(fname),
        args=[*(name(n) for n in first), *clone(call.args)],
        keywords=clone(call.keywords),
    )


def _applied(found, adjoint):
    """``adjoint`` called as the call site calls it: with what a partial or a bound
    method holds put first."""
    if not found.prefix and not found.keywords:
        return adjoint
    prefix, keywords = found.prefix, found.keywords

    def adjoint_through(g, ans, *args, **kwargs):
        return adjoint(g, ans, *prefix, *args, **{**keywords, **kwargs})

    adjoint_through.__name__ = getattr(adjoint, "__name__", "adjoint")
    return adjoint_through
