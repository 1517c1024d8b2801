"""Meta-tests of the rule and helper declarations (``transpile/rules/declare.py``,
``transpile_runtime.ops.helper``): every rule, non-differentiable function and runtime helper
declares what the passes read, the declared properties hold, and no pass keeps a
side list of its own.

* every template in a family module is declared, with a valid ``Shape``; nothing
  is declared twice;
* every helper in ``transpile_runtime.ops`` declares exactly one of fresh, passes and shares
  (so ``ownership`` and ``zeros`` never guess), and every helper a template calls is
  such a helper;
* the helpers declared ``specialized`` are exactly those the specializer rewrites;
* ``linear``, ``shape_args``, ``fresh`` and ``passes`` hold on sample arguments;
* no module of ``transpile/`` keeps a list of helper names or numpy functions;
* ``np.take``, declared only in its family file (``rules/shape.py``, its helper in
  ``runtime/ops/indexing.py``), reaches every pass: its gradient is checked against finite
  differences on the first and a later call by its rows in ``test_rules.py``, and its
  later calls run a shape-specialized variant.
"""

import ast
import builtins
import inspect
import math
import pathlib
import re
import sys
import textwrap
import types

import gast
import numpy as np
import pytest

from transpile import grad, source
from transpile.backend.specialize import Specializer
from transpile.core.template import d
from transpile.rules import FAMILIES, arith, build_registry, declarations, registry
from transpile.rules import shape as shape_rules
from transpile.rules.declare import Declaration, Kind, Shape, helper_of, no_rule, rule
from transpile_runtime import ops

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _helpers():
    """The helpers of ``transpile_runtime.ops``: the public functions of its namespace,
    each defined in one of its family modules, the decorator aside."""
    found = {
        n: f
        for n, f in vars(ops).items()
        if inspect.isfunction(f) and f.__module__.startswith(ops.__name__ + ".")
        if not n.startswith("_") and f is not ops.helper
    }
    assert len(found) > 100  # the namespace re-exports the families' helpers
    return found


def _template_functions(family):
    return [
        f
        for f in vars(family).values()
        if inspect.isfunction(f)
        and f.__module__ == family.__name__
        and "d[" in inspect.getsource(f)
    ]


# --------------------------------------------------------------------------
# Rules


def test_every_template_is_declared():
    for family in FAMILIES:
        for f in _template_functions(family):
            if f is arith.pow_number:  # the number-exponent form of pow_, see _power_form
                continue
            decls = getattr(f, "declarations", ())
            assert decls, f"{family.__name__}.{f.__name__} has no @rule declaration"
            for decl in decls:
                assert decl.kind is Kind.RULE
                assert decl.objects or decl.methods or decl.attributes or decl.operators


def test_every_declaration_is_valid():
    decls = registry().all_declarations()
    assert len(decls) > 100
    for decl in decls:
        assert isinstance(decl.shape, Shape), decl
        assert decl.fresh + decl.passes + decl.shares <= 1, decl
        assert all(callable(obj) for obj in decl.objects), decl
        assert all(issubclass(op, (gast.operator, gast.unaryop)) for op in decl.operators)
        assert not decl.reduces or decl.shape is Shape.FIRST_DATA, decl
        for obj in decl.objects:  # the registry finds each object's own declaration
            assert registry().declaration(obj) is decl


def test_declarations_are_checked():
    with pytest.raises(TypeError, match="Shape"):
        no_rule(np.inner, shape="ALL_DATA")
    with pytest.raises(ValueError, match="at most one"):
        no_rule(np.inner, shape=Shape.ALL_DATA, fresh=True, passes=True)
    with pytest.raises(TypeError):
        rule(np.inner)  # shape is required


@rule(np.sinc, shape=Shape.ELEMENTWISE)
def sinc(y, x):
    d[x] += d[y] * (np.cos(np.pi * x) - y) / x


def test_a_rule_is_read_from_its_declaration_alone():
    """A family module needs nothing but its declared templates: this one declares
    ``sinc`` above, and a registry built from it has the rule and its properties."""
    reg = build_registry((sys.modules[__name__],))
    assert reg.functions[id(np.sinc)].name == "sinc"
    assert reg.functions[id(np.sinc)].diff_params == {"x"}
    assert reg.declaration(np.sinc).shape is Shape.ELEMENTWISE
    assert registry().declaration(np.sinc) is not reg.declaration(np.sinc)  # no side effect


def test_a_function_declared_twice_is_an_error():
    family = types.ModuleType("twice")
    family.NO_RULE = (
        no_rule(np.inner, shape=Shape.ALL_DATA),
        no_rule(np.inner, shape=Shape.VARIES),
    )
    with pytest.raises(ValueError, match="declared twice"):
        build_registry((family,))


def test_nondiff_declarations_have_no_template():
    reg = registry()
    for decl in reg.all_declarations():
        if decl.kind is Kind.RULE:
            continue
        assert all(id(obj) not in reg.functions for obj in decl.objects), decl
        assert all(m not in reg.methods for m in decl.methods), decl


# --------------------------------------------------------------------------
# Runtime helpers


def test_every_helper_is_declared():
    for name, f in _helpers().items():
        declared = getattr(f, "declared", None)
        assert isinstance(declared, ops.Helper), f"ops.{name} has no @helper declaration"
        assert declared.fresh + declared.passes + declared.shares == 1, name
        params = list(inspect.signature(f).parameters)
        assert all(p < len(params) for p in declared.shape_args), name
        assert helper_of(name) is declared


def test_with_helper_declarations_checked():
    with pytest.raises(ValueError, match="exactly one"):
        ops.helper(fresh=True, passes=True)
    with pytest.raises(ValueError, match="exactly one"):
        ops.helper(linear=True)


def _ops_calls(func):
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "ops"
    }


def test_every_helper_a_template_calls_is_declared():
    helpers = _helpers()
    for family in FAMILIES:
        for f in _template_functions(family):
            for used in _ops_calls(f):
                assert used in helpers, f"{f.__name__} calls ops.{used}, not a declared helper"


def test_specialized_helpers_are_those_the_specializer_rewrites():
    rewritten = {
        n
        for n, m in vars(Specializer).items()
        if inspect.isfunction(m)
        and n in _helpers()
        and list(inspect.signature(m).parameters)[:3] == ["self", "node", "metas"]
    }
    declared = {n for n, f in _helpers().items() if f.declared.specialized}
    assert declared == rewritten


def _rng():
    return np.random.default_rng(7)


# sample arguments of helpers, for the checks of their declared properties
SAMPLES = {
    "unbroadcast": lambda r: (r.normal(size=(3, 4)), r.normal(size=(4,))),
    "unabs": lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4))),
    "matmul_left": lambda r: (r.normal(size=(2, 4)), r.normal(size=(2, 3)), r.normal(size=(3, 4))),
    "matmul_right": lambda r: (r.normal(size=(2, 4)), r.normal(size=(2, 3)), r.normal(size=(3, 4))),
    "unreduce": lambda r: (r.normal(size=(3,)), r.normal(size=(3, 4)), 1),
    "unmean": lambda r: (r.normal(size=(4,)), r.normal(size=(3, 4)), 0),
    "reduced_size": lambda r: (r.normal(size=(3, 4)), 1),
    "untake": lambda r: (r.normal(size=(2, 3)), r.normal(size=(4, 3)), np.array([0, 2]), 0),
    "dot_left": lambda r: (r.normal(size=(2, 4)), r.normal(size=(2, 3)), r.normal(size=(3, 4))),
    "dot_right": lambda r: (r.normal(size=(2, 4)), r.normal(size=(2, 3)), r.normal(size=(3, 4))),
    "unvar": lambda r: (r.normal(size=(3,)), r.normal(size=(3, 4)), 1),
    "uncumsum": lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4)), 1),
    "unroll": lambda r: (r.normal(size=(5,)), 2),
    "untrace": lambda r: (1.5, r.normal(size=(3, 3))),
    "untranspose": lambda r: (r.normal(size=(2, 3)), ()),
    "cast_like": lambda r: (r.normal(size=(2, 3)), r.normal(size=(2, 3))),
    "zeros_like": lambda r: (r.normal(size=(2, 3)),),
    "copy": lambda r: (r.normal(size=(2, 3)),),
    "filled": lambda r: (r.normal(size=(2,)), 2.0, (2, 3), np.float64),
    "unreduce_extreme": lambda r: (r.normal(size=(3,)), None, r.normal(size=(3, 4)), 1),
    "unreduce_prod": lambda r: (r.normal(size=(3,)), r.normal(size=(3, 4)), 1),
    "tangent_like": lambda r: (r.normal(size=(4,)), r.normal(size=(3, 4))),
    "replaced": lambda r: ((r.normal(size=(2,)), r.normal(size=(3,))), 1, r.normal(size=(3,))),
}


def _sample(name):
    args = list(SAMPLES[name](_rng()))
    if name == "unreduce_extreme":
        args[1] = np.max(args[2], axis=1)
    return args


def _arrays(value):
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    return [value] if isinstance(value, np.ndarray) else []


def test_linear_helpers_are_linear():
    for name, f in _helpers().items():
        if not f.declared.linear:
            continue
        assert name in SAMPLES, f"ops.{name} is declared linear: add sample arguments"
        args = _sample(name)
        base = f(*args)
        for k in (-1.0, 2.5):
            scaled = f(np.multiply(k, args[0]), *args[1:])
            np.testing.assert_allclose(scaled, k * np.asarray(base), err_msg=name)


def test_shape_args_are_read_only_for_their_shape():
    for name, f in _helpers().items():
        for position in f.declared.shape_args:
            assert name in SAMPLES, f"ops.{name} declares shape_args: add sample arguments"
            args = _sample(name)
            shaped = list(args)
            shaped[position] = np.shape(args[position])
            np.testing.assert_allclose(f(*shaped), f(*args), err_msg=name)


def test_fresh_and_passing_helpers_share_as_declared():
    for name in SAMPLES:
        f = getattr(ops, name)
        args = _sample(name)
        out = f(*args)
        if not isinstance(out, np.ndarray):
            continue
        others = _arrays(args) if f.declared.fresh else _arrays(args[1:])
        assert not any(np.shares_memory(out, a) for a in others), name
        if f.declared.fresh or f.declared.passes:
            assert out.flags.writeable, name


def test_fresh_helpers_write_into_no_argument():
    # what buffers.written_through relies on: an array given to a fresh helper
    # (ops.winner(d, 0.1)) is not written through, so 1.0 * d may be d itself
    checked = 0
    for name in SAMPLES:
        f = getattr(ops, name)
        if not f.declared.fresh:
            continue
        args = _sample(name)
        before = [a.copy() for a in _arrays(args)]
        f(*args)
        for old, now in zip(before, _arrays(args)):
            np.testing.assert_array_equal(now, old, err_msg=name)
        checked += 1
    assert checked >= 8
    weights = (np.array([1.0, 3.0]), np.array([2.0, 2.0]))
    ops.winner(*weights)
    np.testing.assert_array_equal(weights[0], [1.0, 3.0])


def test_a_helper_declared_shares_may_return_a_read_only_view():
    # the reason ``shares`` exists: ownership must not take these for new arrays
    g = np.arange(9.0).reshape(3, 3)
    assert not ops.undiag(g, np.ones(3)).flags.writeable
    assert not ops.unreduce(1.0, np.ones(1 << 17)).flags.writeable


# --------------------------------------------------------------------------
# No side lists

# names of the lists the declarations replaced; none may come back
OLD_LISTS = [
    "_ALL_DATA",
    "_FIRST_DATA",
    "_TWO_DATA",
    "_LIST_FIRST",
    "_STATIC_RESULT",
    "_BUILTIN_DATA",
    "_numpy_functions",
    "FULL_REDUCERS",
    "FULL_REDUCER_METHODS",
    "FRESH_OPS",
    "_OPS_FRESH",
    "_OPS_PASS",
    "_VIEWS",
    "_LINEAR_OPS",
    "SITE_HELPERS",
    "SHAPE_POSITIONS",
    "_elementwise_fns",
    "_NOT_ELEMENTWISE",
    "_ELEMENTWISE_OPS",
    "FRESH_CALLS",
    "_FRESH_FROM_ADJOINT",
    "NONDIFF_BINARY",
    "REVERSE",
    "_SHAPE_ATTRS",
    "_DATA_ATTRS",
    "_VIEW_FIRST",
    "_VIEW_ALL",
    "_COPY_KEYWORD",
    "_VIEW_METHODS",
    "_FRESH_METHODS",
    "_REDUCTIONS",
    "_SCALAR_ATTRS",
]

# lists left in passes outside this task's files, each to become a declaration query
KNOWN = {
    ("deadcode.py", ("seed", "cotangent")),  # helpers that check, and may raise
    ("inline.py", ("seed", "cotangent")),
    ("composites.py", "(np.log, math.log)"),  # the log of a sigmoid: the exp and log rules
    ("composites.py", "(np.exp, math.exp)"),
    ("composites.py", "(np.max, np.amax)"),  # the max shift of log-softmax and logsumexp
    ("kinds.py", "(builtins.list, builtins.tuple)"),  # calls that make a sequence
    # views certain to be views of a C-ordered array (``passes`` says "may": astype, diff)
    ("retake.py", "(np.transpose, np.ravel, np.swapaxes, np.reshape)"),
}


def _sources():
    for path in sorted((ROOT / "transpile").rglob("*.py")):
        if path.parent.name != "rules":
            yield path, path.read_text()


def test_old_side_lists_are_gone():
    for path, text in _sources():
        for old in OLD_LISTS:
            assert not re.search(rf"\b{old}\b", text), f"{path.name} defines or reads {old}"


def _literal_strings(node):
    if isinstance(node, ast.Dict):
        elts = node.keys
    elif isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        elts = node.elts
    else:
        return ()
    return tuple(e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str))


def _declared_refs(node):
    """The elements of a display that name declared functions (``np.exp``, ``math.log``)."""
    out = []
    for e in node.elts:
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            module = MODULES.get(e.value.id)
            obj = getattr(module, e.attr, None) if module is not None else None
            if obj is not None and registry().declaration(obj) is not None:
                out.append(e)
    return out


MODULES = {"np": np, "numpy": np, "math": math, "builtins": builtins}


def test_no_pass_lists_helpers_or_numpy_functions():
    helpers = set(_helpers())
    found = set()
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):
            names = [s for s in _literal_strings(node) if s in helpers]
            if len(names) >= 2:
                found.add((path.name, tuple(names)))
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)) and len(_declared_refs(node)) >= 2:
                found.add((path.name, ast.unparse(node)))
    assert found <= KNOWN, sorted(found - KNOWN)


# --------------------------------------------------------------------------
# np.take: declared in its family file only, it reaches every pass


def take_rows(x, indices, c):
    return np.sum(np.take(x, indices, axis=0) * c)


def test_take_is_declared_where_its_rule_is():
    decl = registry().declaration(np.take)
    assert decl.kind is Kind.RULE and decl.shape is Shape.TWO_DATA and decl.methods == ("take",)
    (found,) = [t for d, t in declarations(shape_rules) if d is decl]
    assert found is shape_rules.take
    assert helper_of("untake").fresh and helper_of("untake").linear


def test_take_is_specialized_after_the_first_call():
    rng = np.random.default_rng(3)
    x, c = rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    indices = np.array([2, 0, 2])
    g = grad(take_rows)
    first, later = g(x, indices, c), g(x, indices, c)
    expected = np.zeros_like(x)
    np.add.at(expected, indices, c)
    np.testing.assert_allclose(first, expected)
    np.testing.assert_allclose(later, expected)
    generic, variant = source(g), source(g, x, indices, c)
    assert "ops.unreduce" in generic and "ops.untake" in generic
    assert "ops.unreduce" not in variant and "ops.untake" in variant


def test_declaration_type_is_frozen():
    decl = registry().declaration(np.take)
    assert isinstance(decl, Declaration)
    with pytest.raises(AttributeError):
        decl.shape = Shape.VARIES
