"""The rule registry: what each right-hand side of a normalized statement means to
differentiation, and what the passes may assume of it.

``build_registry()`` reads the declarations of every family module (``declare``:
templates decorated with ``@rule``, and module-level ``nondiff``/``no_rule``
declarations); ``classify`` maps one normalized right-hand side to a ``Match``: a
template to expand, a non-differentiable operation, a user function to
differentiate, or a special form (copy, subscript read, container display) that
``reverse`` emits itself. ``Registry.declaration`` and its siblings give the
properties a pass needs (``Declaration``: result shape, reductions, aliasing).
"""

import importlib
import inspect
import sys
import threading
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from transpile.core import printer
from transpile.core.ir import MISSING, Annotation, annotation
from transpile.core.nodes import descendants
from transpile.core.template import parse_template
from transpile.rules import (
    arith,
    complex_numbers,
    convolution,
    elementwise,
    linalg,
    nondiff,
    reductions,
    runtime_adjoints,
    runtime_complex,
    runtime_linalg,
    runtime_ops,
    runtime_spectral,
    shape,
    user_rules,
)
from transpile.rules import sequences as sequence_rules
from transpile.rules import spectral as spectral_rules
from transpile.rules.declare import Declaration, Kind
from transpile.rules.sequences import is_sequence_op
from transpile_runtime import stop_gradient

FAMILIES = (
    arith,
    elementwise,
    complex_numbers,
    reductions,
    shape,
    linalg,
    spectral_rules,
    convolution,
    sequence_rules,
    nondiff,
)
# the helpers generated code calls, for gradients of gradients (tested on their own)
RUNTIME_FAMILIES = (
    runtime_ops,
    runtime_adjoints,
    runtime_linalg,
    runtime_complex,
    runtime_spectral,
)

# scipy is optional, and importing scipy.stats takes half a second: each family of
# scipy rules loads once the user's program has imported the module it covers
_OPTIONAL = (
    ("scipy.special", "transpile.rules.scipy_special"),
    ("scipy.stats", "transpile.rules.scipy_stats"),
    ("scipy.integrate", "transpile.rules.scipy_integrate"),
    ("scipy.linalg", "transpile.rules.scipy_linalg"),
    ("scipy.fft", "transpile.rules.scipy_fft"),
    ("scipy.signal", "transpile.rules.scipy_signal"),
)


def optional_families() -> tuple:
    """The optional rule families whose library the program has imported."""
    return tuple(
        importlib.import_module(family) for module, family in _OPTIONAL if module in sys.modules
    )


@dataclass(frozen=True)
class Registry:
    functions: dict  # id(callable) -> Template
    methods: dict  # method name -> Template
    attributes: dict  # attribute name -> Template
    binary: dict  # gast operator type -> Template
    unary: dict
    sequence: dict  # gast operator type -> Template, for + and * on lists and tuples
    keepalive: list = field(default_factory=list, repr=False)  # the callables of functions
    number_power: object = None  # the power template for a number exponent (_power_form)
    declared: dict = field(default_factory=dict, repr=False)  # (table, key) -> Declaration
    bound: dict = field(default_factory=dict, repr=False)  # a declared bound method -> itself

    def canonical(self, obj):
        """The callable whose id keys ``obj``'s rule: a bound method (``norm.logpdf``, made
        anew on each attribute access) as the one declared, equal to it (same object and
        function); a cupy function as its numpy twin."""
        if isinstance(obj, types.MethodType):
            return self.bound.get(obj, obj)
        return _numpy_twin(obj)

    def declaration(self, obj):
        """The ``Declaration`` of a callable (of a cupy function: of its numpy twin), or None."""
        return self.declared.get(("function", id(self.canonical(obj))))

    def method_declaration(self, name: str):
        """The ``Declaration`` of the method ``name`` (``x.sum()``), or None."""
        return self.declared.get(("method", name))

    def attribute_declaration(self, name: str):
        """The ``Declaration`` of the attribute ``name`` (``x.T``), or None."""
        return self.declared.get(("attribute", name))

    def operator_declaration(self, op):
        """The ``Declaration`` of an arithmetic operator (a gast operator class), or None."""
        return self.declared.get(("operator", op))

    def all_declarations(self):
        """Every declaration, once each."""
        return list({id(d): d for d in self.declared.values()}.values())


_BUILT = {}  # the optional modules imported -> the registry with their families
_LOCK = threading.Lock()


def registry() -> Registry:
    """The rule registry, built on first use, and again when the program has imported
    a library with optional rules (``optional_families``)."""
    key = tuple(module for module, _ in _OPTIONAL if module in sys.modules)
    found = _BUILT.get(key)
    if found is None:
        with _LOCK:
            if key not in _BUILT:
                _BUILT[key] = build_registry(FAMILIES + RUNTIME_FAMILIES + optional_families())
            found = _BUILT[key]
    return found


def declarations(family):
    """``(Declaration, template function or None)`` for everything ``family`` declares:
    its ``@rule`` templates and its module-level ``nondiff``/``no_rule`` tuples."""
    out = []
    for value in vars(family).values():
        if inspect.isfunction(value) and value.__module__ == family.__name__:
            out += [(decl, value) for decl in getattr(value, "declarations", ())]
        elif isinstance(value, tuple) and value and all(isinstance(v, Declaration) for v in value):
            out += [(decl, None) for decl in value]
    return out


def _keys(decl):
    keys = [("function", id(obj)) for obj in decl.objects]
    keys += [("method", m) for m in decl.methods] + [("attribute", a) for a in decl.attributes]
    keys += [("sequence" if decl.sequences else "operator", op) for op in decl.operators]
    return keys


def build_registry(families=FAMILIES) -> Registry:
    """The registry of everything ``families`` declare; a name or callable declared
    twice is an error."""
    tables = {t: {} for t in ("function", "method", "attribute", "operator", "sequence")}
    declared, keep, kept, cache = {}, [], set(), {}
    for family in families:
        for decl, template in declarations(family):
            _register(family, decl, template, declared, tables, cache)
            if template is not None:
                keep += [obj for obj in decl.objects if id(obj) not in kept]
                kept.update(id(obj) for obj in decl.objects)
    operators = tables["operator"]
    return Registry(
        tables["function"],
        tables["method"],
        tables["attribute"],
        {op: t for op, t in operators.items() if issubclass(op, gast.operator)},
        {op: t for op, t in operators.items() if issubclass(op, gast.unaryop)},
        tables["sequence"],
        keep,
        number_power=parse_template(arith.pow_number),
        declared=declared,
        bound={
            obj: obj
            for decl in declared.values()
            for obj in decl.objects
            if isinstance(obj, types.MethodType)
        },
    )


def _register(family, decl, template, declared, tables, cache):
    """Enter ``decl`` under each of its keys in ``declared``, and its template (parsed
    once per template function, through ``cache``) in the table of the key's kind."""
    for key in _keys(decl):
        if declared.get(key, decl) is not decl:
            raise ValueError(f"{family.__name__}: {key} is declared twice")
        declared[key] = decl
        if template is None:
            continue
        if template not in cache:
            cache[template] = parse_template(template)
        tables[key[0]][key[1]] = cache[template]


@dataclass(frozen=True)
class Match:
    """How one right-hand side is differentiated.

    kind: 'template' | 'nondiff' | 'copy' | 'subscript' | 'display' | 'user' |
          'vjp' (a ``defvjp`` rule: ``callee`` is its ``user_rules.Found``) |
          'unknown' (an active use is an error) | 'constant'
    operands: the operand nodes whose adjoints receive contributions.
    """

    kind: str
    operands: tuple = ()
    template: object = None
    values: dict = None
    callee: object = None
    why: str = ""


def _numpy_twin(obj):
    """The numpy function a cupy function mirrors, found by the public part of its module
    and its name (``cupy.fft._fft.fft``: ``np.fft.fft``; ``cupy.lib._routines_poly.polyval``:
    ``np.polyval``); of a ``cupyx.scipy`` function, the scipy one, where the program has
    imported its module. ``MISSING`` where there is none: ``cupyx.scipy.ndimage.convolve``
    is not ``np.convolve``, and ``cupy.fft.fft`` is not the module ``np.fft``."""
    module = getattr(obj, "__module__", "") or ""
    root, _, rest = module.partition(".")
    if root not in ("cupy", "cupyx"):
        return obj
    name = getattr(obj, "__name__", "")
    public = [part for part in rest.split(".") if part and not part.startswith("_")]
    if root == "cupyx":
        found = public[:1] == ["scipy"] and sys.modules.get(".".join(public[:2]))
        return getattr(found, name, MISSING) if found else MISSING
    namespace = np
    for part in public:  # as far as numpy has the submodules (cupy.fft.fft: np.fft)
        inner = getattr(namespace, part, None)
        if not isinstance(inner, types.ModuleType):
            break
        namespace = inner
    for twin in (getattr(namespace, name, None), getattr(np, name, None)):
        if callable(twin) and not isinstance(twin, types.ModuleType):
            return twin
    return MISSING


def classify(value, parsed, registry: Registry, sequences=frozenset()) -> Match:
    """The ``Match`` for the right-hand side ``value`` of a normalized statement;
    ``sequences`` are the names that hold lists or tuples (``kinds``)."""
    if is_sequence_op(value, sequences):
        return _classify_sequence_op(value, registry, sequences)
    classify_kind = _CLASSIFIERS.get(type(value))
    if classify_kind is None:
        return Match("unknown", why=type(value).__name__)
    return classify_kind(value, parsed, registry)


def _classify_sequence_op(value, registry, sequences):
    """List or tuple concatenation ``a + b`` or repetition ``a * n``, ``n * a``."""
    left, right = value.left, value.right
    if isinstance(value.op, gast.Mult) and not (
        isinstance(left, gast.Name) and left.id in sequences
    ):
        left, right = right, left  # n * [a]: the sequence first
    return _template(registry.sequence[type(value.op)], value, [left, right], {})


def _classify_constant(value, parsed, registry):
    return Match("constant")


def _classify_name(value, parsed, registry):
    obj = parsed.lookup(value.id)
    if obj is not MISSING:  # a global constant such as a module-level array
        return Match("nondiff")
    return Match("copy", (value,))


def _classify_binop(value, parsed, registry):
    if (
        isinstance(value.op, gast.Mult)
        and isinstance(value.left, gast.Name)
        and isinstance(value.right, gast.Name)
        and value.left.id == value.right.id
    ):
        # x * x: one contribution, 2 * x, rather than two identical ones
        return _template(registry.functions[id(np.square)], value, [value.left], {})
    tmpl = registry.binary.get(type(value.op))
    if tmpl is None:
        return Match("nondiff")
    tmpl = _power_form(tmpl, value.right, registry)
    return _template(tmpl, value, [value.left, value.right], {})


def _classify_unaryop(value, parsed, registry):
    tmpl = registry.unary.get(type(value.op))
    if tmpl is None:
        return Match("nondiff")
    return _template(tmpl, value, [value.operand], {})


def _classify_boolop(value, parsed, registry):
    # `a or b` returns one of its operands: not a constant if they are differentiated
    return Match("unknown", tuple(value.values), why="`and`/`or` on a differentiated value")


def _classify_nondiff(value, parsed, registry):
    return Match("nondiff")


def _classify_lambda(value, parsed, registry):
    """A lambda left as a value (given to a library function, as ``odeint``'s ``func``):
    the names it reads besides its parameters are its operands, so one that reads a
    differentiated value, on the output's path, is refused rather than a silent zero."""
    if annotation(value, Annotation.CONSTANT):
        return Match("nondiff")
    params = {a.id for a in value.args.args + value.args.kwonlyargs}
    free = [n for n in _read_outside_stop_gradient(value.body, parsed) if n.id not in params]
    if not free:
        return Match("nondiff")
    return Match("unknown", tuple(free), why="a lambda that reads a differentiated value")


def _read_outside_stop_gradient(node, parsed):
    """The names ``node`` reads, but not inside a ``stop_gradient(...)``."""
    if isinstance(node, gast.Name):
        return [node]
    if isinstance(node, gast.Call) and parsed.resolve(node.func) is stop_gradient:
        return []
    found = []
    for child in gast.iter_child_nodes(node):
        found += _read_outside_stop_gradient(child, parsed)
    return found


def _classify_subscript(value, parsed, registry):
    return Match("subscript", (value.value,))


def _classify_sequence_display(value, parsed, registry):
    return Match("display", tuple(value.elts))


def _classify_dict_display(value, parsed, registry):
    return Match("display", tuple(value.values))


def _classify_attribute(value, parsed, registry):
    if _is_nondiff(registry.attribute_declaration(value.attr)):
        return Match("nondiff")
    obj = parsed.resolve(value)
    if obj is not MISSING:
        return Match("nondiff")  # a module constant such as np.pi
    tmpl = registry.attributes.get(value.attr)
    if tmpl is None:
        return Match("unknown", (value.value,), why=f"attribute .{value.attr}")
    return _template(tmpl, value, [value.value], {})


def _classify_call(call, parsed, registry):
    if any(isinstance(a, gast.Starred) for a in call.args):
        return _classify_starred_call(call, parsed, registry)
    return _classify_plain_call(call, parsed, registry)


def _classify_plain_call(call, parsed, registry):
    func = call.func
    keywords = {kw.arg: kw.value for kw in call.keywords}
    operands = list(call.args) + list(keywords.values())
    obj = parsed.resolve(func)
    if obj is MISSING and isinstance(func, gast.Attribute):
        # a method on a value: x.sum(axis=0), hs.append(h)
        if _is_nondiff(registry.method_declaration(func.attr)):
            return Match("nondiff")
        tmpl = registry.methods.get(func.attr)
        if tmpl is None:
            return Match("unknown", (func.value, *operands), why=f"method .{func.attr}()")
        return _template(tmpl, call, [func.value] + list(call.args), keywords)
    if obj is MISSING:  # a local called (layer(x)): it is an operand too
        return Match("unknown", (func, *operands), why=printer.expression(func))
    return _classify_callable(obj, call, keywords, operands, registry)


def _classify_callable(obj, call, keywords, operands, registry):
    """A call of the object ``obj``: the user's rule, a template, a constant, or a user
    function to differentiate."""
    found = user_rules.find(obj)
    if found is not None:  # the user's rules come first
        return _classify_user_rule(found, call, keywords, operands)
    called, obj = obj, registry.canonical(obj)
    tmpl = registry.functions.get(id(obj))
    if tmpl is not None:
        if len(call.args) == 2:  # np.power(x, 2), pow(x, 2)
            tmpl = _power_form(tmpl, call.args[1], registry)
        return _template(tmpl, call, list(call.args), keywords)
    if nondiff.is_random(obj):
        return Match("nondiff", tuple(operands), why="random")
    if _is_nondiff(registry.declaration(obj)):
        return Match("nondiff")
    if inspect.isfunction(obj) and not _is_library(obj):
        return Match("user", tuple(operands), callee=obj)
    name = getattr(called, "__qualname__", None) or getattr(called, "__name__", repr(called))
    return Match("unknown", tuple(operands), why=f"{name}")


def _classify_user_rule(found, call, keywords, operands):
    """A call with a rule from ``user_rules``: a constant, a template (through a bound
    method, its object is the first argument), or the user's adjoint functions."""
    kind = found.rule.kind
    if kind == "nondiff":
        return Match("nondiff")
    if kind == "vjp":
        return Match("vjp", tuple(operands), callee=found)
    args = list(call.args)
    if found.prefix and isinstance(call.func, gast.Attribute) and len(found.prefix) == 1:
        args.insert(0, call.func.value)  # obj.method(x): the template's first argument is obj
    elif found.prefix or found.keywords:
        return Match("unknown", tuple(operands), why=f"a rule template through {found.called!r}")
    return _template(found.rule.template, call, args, keywords)


def _classify_starred_call(call, parsed, registry):
    """``f(*xs)``: fine where ``f`` ends differentiation (``np.random.randn(*shape)``);
    refused where a differentiated value may flow through the starred argument."""
    operands = [a.value if isinstance(a, gast.Starred) else a for a in call.args]
    operands += [kw.value for kw in call.keywords]
    obj = parsed.resolve(call.func)
    found = user_rules.find(obj) if obj is not MISSING else None
    if found is not None and found.rule.kind == "nondiff":
        return Match("nondiff")
    if found is None and (
        obj is not MISSING
        and (nondiff.is_random(obj) or _is_nondiff(registry.declaration(registry.canonical(obj))))
    ):
        return Match("nondiff")
    what = printer.expression(call.func)
    return Match(
        "refused",
        tuple(operands),
        why=f"a starred argument to {what}(...) carries a value the output depends on",
    )


# the node types of a right-hand side, each with how it is differentiated
_CLASSIFIERS = {
    gast.Constant: _classify_constant,
    gast.Name: _classify_name,
    gast.BinOp: _classify_binop,
    gast.UnaryOp: _classify_unaryop,
    gast.BoolOp: _classify_boolop,
    gast.Compare: _classify_nondiff,
    gast.JoinedStr: _classify_nondiff,
    gast.Lambda: _classify_lambda,
    gast.Subscript: _classify_subscript,
    gast.Tuple: _classify_sequence_display,
    gast.List: _classify_sequence_display,
    gast.Dict: _classify_dict_display,
    gast.Attribute: _classify_attribute,
    gast.Call: _classify_call,
}


def _is_nondiff(declaration):
    return declaration is not None and declaration.kind is Kind.NONDIFF


def _power_form(tmpl, exponent, registry):
    """``x ** 2``, a number exponent ``>= 1`` (or ``< 0``, where ``x ** y`` itself fails
    at a Python 0), takes the template whose generated code folds to ``2 * x``. Any other
    exponent keeps the guarded ``ops.pow_slope``: at ``x == 0``, ``y * x ** (y - 1)`` is
    ``0 * inf`` for ``y == 0`` (a variable may be 0 at run time) and raises
    ZeroDivisionError for a Python ``x`` when ``0 < y < 1``."""
    if (
        tmpl is registry.binary.get(gast.Pow)
        and isinstance(exponent, gast.Constant)
        and type(exponent.value) in (int, float)
        and (exponent.value >= 1 or exponent.value < 0)
    ):
        return registry.number_power
    return tmpl


_LIBRARIES = ("numpy", "cupy", "cupyx", "scipy", "transpile_runtime", "transpile")


def _is_library(func) -> bool:
    """Library functions are differentiated by rule, never by reading their source."""
    module = getattr(func, "__module__", "") or ""
    return module.split(".")[0] in _LIBRARIES


def _template(tmpl, node, args, keywords):
    try:
        values = tmpl.bind(node, args, keywords)
    except TypeError as exc:
        return Match(
            "unknown", tuple(args) + tuple(keywords.values()), why=f"these arguments ({exc})"
        )
    operands = tuple(values[p] for p in tmpl.diff_params if p in values)
    match = Match("template", operands, template=tmpl, values=values)
    # an argument the rule reads but does not differentiate (t.cdf's df) is an operand
    # too: a varied one makes the statement active, and reverse refuses it
    return Match("template", operands + blocked_operands(match), template=tmpl, values=values)


def blocked_operands(match: Match):
    """Operands a template reads but cannot differentiate (an active one is an error)."""
    if match.kind != "template":
        return ()
    tmpl = match.template
    first = next(iter(tmpl.signature.parameters))
    out = []
    for p, v in match.values.items():
        if p == first or p in tmpl.diff_params or p in tmpl.option_params:
            continue
        for n in descendants(v):
            if isinstance(n, gast.Name):
                out.append(n)
    return tuple(out)
