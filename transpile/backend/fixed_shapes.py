"""Which bodies have every shape fixed by the call's signature.

A shape-specialized variant is valid for every call with the signature it was
made for only if no value's shape depends on the values of the arguments. That
holds when every operation is one whose output shape follows from its input
shapes (elementwise math, reductions with constant axes, matrix products,
reshapes, ...) and every argument that sets a shape, an axis or an index is a
constant, a shape, or an integer parameter (whose value becomes part of the
signature). Which arguments are data and which static follows from the shape each
function's rule declares (``rules.declare.Shape``). ``eligible`` checks this at
transpile time, conservatively: an undeclared function, one declared VARIES, or a
value-dependent index makes the body ineligible, and the gradient simply stays
generic.

A ``for`` loop over a ``range`` of static bounds (and its ``reversed`` in the
adjoint) is allowed, with the tape that records what the adjoint reads: its trip
count is part of the signature, so every iteration runs the same operations on
shapes that the signature fixes. Branches and ``while`` loops are not.
"""

import functools

import gast
import numpy as np

from transpile.core import emit
from transpile.core.ir import MISSING
from transpile.core.nodes import name_nodes
from transpile.rules import registry
from transpile.rules.declare import Shape
from transpile_runtime.tape import Tape

# How a call's positional arguments split into data (arrays, whose shapes are part of
# the signature) and static values (constants, shapes, integer parameters), by the
# declared shape of its result: data first, then static.
_SPLITS = {
    Shape.ELEMENTWISE: lambda args: (args, []),
    Shape.ALL_DATA: lambda args: (args, []),
    Shape.STATIC_RESULT: lambda args: (args, []),
    Shape.FIRST_DATA: lambda args: (args[:1], args[1:]),
    Shape.SEQUENCE_FIRST: lambda args: (args[:1], args[1:]),
    Shape.TWO_DATA: lambda args: (args[:2], args[2:]),
    Shape.SUBSCRIPTS_FIRST: lambda args: (args[1:], args[:1]),
    Shape.FILL: lambda args: (args[1:], args[:1]),
    Shape.STATIC: lambda args: ([], args),
}


def _attribute_shape(rules, attr):
    """The declared ``Shape`` of an attribute (``x.T``, ``x.shape``) in the registry
    ``rules``; VARIES if undeclared."""
    declaration = rules.attribute_declaration(attr)
    return Shape.VARIES if declaration is None else declaration.shape


def _list_method(node):
    """Whether ``node`` is ``xs.append(value)`` or ``xs.pop()``: in a body without branches
    or ``while`` loops, a list grows and shrinks the same way on every call with the
    signature (its appends run a static number of times), so the shapes it holds are
    fixed as its values' are."""
    f = getattr(node, "func", None)
    return (
        isinstance(node, gast.Call)
        and isinstance(f, gast.Attribute)
        and isinstance(f.value, gast.Name)
        and not node.keywords
        and (f.attr, len(node.args)) in (("append", 1), ("pop", 0))
    )


def _declared_shape(rules, obj):
    """The declared ``Shape`` of a callable's result in the registry ``rules``; a ufunc
    without a declaration is elementwise; anything else undeclared is VARIES."""
    declaration = rules.declaration(obj)
    if declaration is not None:
        return declaration.shape
    return Shape.ELEMENTWISE if isinstance(obj, np.ufunc) else Shape.VARIES


def stage(fn, ctx):
    """``fn.static``: the parameters that must be ints if the gradient can have shape
    variants, else None (a callee's functions, and gradients that call user functions,
    have none)."""
    fn.static = None
    if ctx.mode != "split" and not fn.callees:
        out = fn.outputs[-1]
        # complex_ops' and spectral's helpers, as ops', take arrays and flags whose values
        # set no shape the call's other arguments do not (spectral's n, s and axes are
        # static in the transform they undo)
        helpers = (fn.names["ops"], fn.names.get("complex_ops"), fn.names.get("spectral"))
        fn.static = eligible(out.body, fn.params, _resolver(fn), helpers, fn.names.get("tape"))
    return fn


def _resolver(fn):
    """The object a name in generated code denotes: ours, or the user's."""
    return functools.partial(_resolve, fn.namespace, fn.parsed.resolve)


def _resolve(namespace, resolve_user, node):
    if isinstance(node, gast.Name) and node.id in namespace:
        return namespace[node.id]
    if isinstance(node, gast.Attribute):
        base = _resolve(namespace, resolve_user, node.value)
        return MISSING if base is MISSING else getattr(base, node.attr, MISSING)
    return resolve_user(node)


class _Ineligible(Exception):
    """Why a body has no variants (the message), and the innermost statement of the
    body that refused them (``stmt``, set as it passes up through ``statement``)."""

    def __init__(self, why="a construct whose shapes the signature does not fix"):
        super().__init__(why)
        self.why = why
        self.stmt = None


_INDEX_WHY = (
    "an index that is not a constant, a shape or an integer parameter (a mask, an array "
    "of indices): its result's shape depends on values"
)
# why a statement of these kinds refuses variants
_STATEMENT_WHY = {
    gast.While: "a while loop: its trip count is not part of the signature",
    gast.If: "a branch: which way it goes depends on values",
    gast.For: "a for loop not over a range of static bounds: its trip count is not part "
    "of the signature",
}


def eligible(body, params, resolve, helpers, tape_name=None):
    """The parameters that must be Python ints (they set shapes or indices) if ``body``
    can be specialized per signature, else None. ``helpers``: the names of the runtime
    helper namespaces (``ops``) whose calls' arguments are all data."""
    return refusal(body, params, resolve, helpers, tape_name)[0]


def refusal(body, params, resolve, helpers, tape_name=None):
    """``(static parameters, None, None)`` as ``eligible`` finds them where ``body`` can
    be specialized; else ``(None, the statement of body that refuses it, why)`` (the
    innermost: a ``while`` header, the assignment whose index depends on values)."""
    checker = _Eligibility(params, resolve, helpers, tape_name)
    try:
        for stmt in body:
            checker.statement(stmt)
    except _Ineligible as refused:
        return None, refused.stmt, refused.why
    return frozenset(checker.static_params), None, None


def refusal_of(fn, ctx):
    """``(statement or None, why)``: why the gradient ``fn`` (after this stage) has no
    shape variants; ``(None, None)`` where it has them. The statement is one of its
    last output's body, None where no statement is to blame (a callee, user calls)."""
    if ctx.mode == "split":
        return None, "a function called by the gradient: only the gradient has variants"
    if fn.callees:
        return None, "it calls user functions, whose shapes it does not follow"
    helpers = (fn.names["ops"], fn.names.get("complex_ops"))
    out = fn.outputs[-1]
    static, stmt, why = refusal(out.body, fn.params, _resolver(fn), helpers, fn.names.get("tape"))
    return (None, None) if static is not None else (stmt, why)


def _named(node):
    """How the callee ``node`` is written, for a reason in words."""
    return emit.to_source(node).strip()


class _Eligibility:
    def __init__(self, params, resolve, helpers, tape_name=None):
        self.params = set(params)
        self.resolve = resolve
        self.helpers = {h for h in helpers if h}
        self.ops = helpers[0]
        self.tape = tape_name
        self.static = {}  # name -> parameters it depends on, for names holding shapes
        self.static_params = set()
        self.rules = registry()  # looked up once: each lookup checks the modules imported

    def statement(self, s):
        try:
            self._statement(s)
        except _Ineligible as refused:
            if refused.stmt is None:  # the innermost statement: a loop's body before it
                refused.stmt = s
            raise

    def _statement(self, s):
        if isinstance(s, gast.Assign) and len(s.targets) == 1:  # the most, asked first
            self.assignment(s)
            return
        if isinstance(s, gast.For):
            self.loop(s)
            return
        if isinstance(s, gast.Expr):
            self.expression_statement(s.value)
            return
        if isinstance(s, gast.Return):
            if s.value is not None:
                self.data(s.value)
            return
        if isinstance(s, gast.AugAssign):
            self.target(s.target)
            self.data(s.value)
            return
        raise _Ineligible(_STATEMENT_WHY.get(type(s), f"a {type(s).__name__} statement"))

    def assignment(self, s):
        """``target = value``: the target holds a shape-like value or data from here."""
        deps = self.static_deps(s.value)
        if deps is None:
            self.data(s.value)
        for t in s.targets:
            self.target(t)
            if isinstance(t, gast.Name):
                if deps is None:
                    self.static.pop(t.id, None)
                else:
                    self.static[t.id] = deps

    def expression_statement(self, value):
        if isinstance(value, gast.Constant) and isinstance(value.value, str):
            return  # a comment marker
        if self.ours(getattr(value, "func", None)) or _list_method(value):
            self.call(value)  # ops.add_at(buffer, index, g), tape.push(value), xs.append
            return
        raise _Ineligible("a call made for its effect, whose shapes are not followed")

    def ours(self, f):
        """Whether the callee ``f`` is a runtime helper, the tape's class or a method of
        the tape (which only moves values: no shape comes from it)."""
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            return f.value.id in self.helpers or (self.tape is not None and f.value.id == self.tape)
        return self.tape is not None and self.resolve(f) is Tape

    def loop(self, s):
        """``for t in r`` over a static range: ``t`` is static too, and the parameters
        the range depends on are part of the signature; what the body binds is data
        until the body binds it (it may differ from one iteration to the next)."""
        deps = self.static_deps(s.iter)
        if deps is None or s.orelse or not isinstance(s.target, gast.Name):
            raise _Ineligible(_STATEMENT_WHY[gast.For])
        for stored in {n.id for n in name_nodes(s) if isinstance(n.ctx, gast.Store)}:
            self.static.pop(stored, None)
        self.static[s.target.id] = deps
        self.static_params |= deps  # the trip count is part of the signature
        for stmt in s.body:
            self.statement(stmt)

    def target(self, t):
        if isinstance(t, gast.Name):
            return
        if isinstance(t, gast.Tuple):
            for e in t.elts:
                self.target(e)
            return
        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
            self.require_static(t.slice)
            return
        raise _Ineligible("an assignment to an attribute or a nested item")

    def static_deps(self, node):
        """The parameters a shape-like value depends on, or None if it is data."""
        method = _DEPS_BY_TYPE.get(type(node))
        return None if method is None else method(self, node)

    def _deps_of(self, nodes):
        """The parameters all of ``nodes`` depend on, or None if one of them is data."""
        parts = [self.static_deps(n) for n in nodes]
        return None if None in parts else frozenset().union(*parts)

    def _deps_Constant(self, node):
        return frozenset()

    def _deps_Name(self, node):
        if node.id in self.static:
            return self.static[node.id]
        return frozenset([node.id]) if node.id in self.params else None

    def _deps_Attribute(self, node):
        return (
            frozenset() if _attribute_shape(self.rules, node.attr) is Shape.STATIC_RESULT else None
        )

    def _deps_Tuple(self, node):
        return self._deps_of(node.elts)

    _deps_List = _deps_Tuple

    def _deps_Slice(self, node):
        return self._deps_of([p for p in (node.lower, node.upper, node.step) if p])

    def _deps_UnaryOp(self, node):
        return self.static_deps(node.operand)

    def _deps_BinOp(self, node):
        return self._deps_of([node.left, node.right])

    def _deps_Subscript(self, node):
        return self._deps_of([node.value, node.slice])

    def _deps_Call(self, node):
        f = self.resolve(node.func)
        if f is range or f is reversed:  # the iterations of a loop: static bounds
            return None if node.keywords else self._deps_of(node.args)
        return frozenset() if _declared_shape(self.rules, f) is Shape.STATIC_RESULT else None

    def require_static(self, node, callee=None):
        """``node`` must be static: an index, or (``callee`` given) a shape, axis or
        size argument of a call of ``callee``, named in the refusal (only when
        refused: printing the callee of every call costs more than the check)."""
        deps = self.static_deps(node)
        if deps is None:
            if callee is None:
                raise _Ineligible(_INDEX_WHY)
            raise _Ineligible(
                f"{_named(callee)}: a shape, axis or size argument that the signature does not fix"
            )
        self.static_params |= deps

    def data(self, node):
        """Check an expression whose value may be an array."""
        if isinstance(node, (gast.Name, gast.Constant)):
            return
        if isinstance(node, (gast.BinOp,)):
            self.data(node.left)
            self.data(node.right)
        elif isinstance(node, gast.UnaryOp):
            self.data(node.operand)
        elif isinstance(node, gast.Compare):
            for part in [node.left, *node.comparators]:
                self.data(part)
        elif isinstance(node, (gast.Tuple, gast.List)):
            for e in node.elts:
                self.data(e)
        elif isinstance(node, gast.Attribute) and getattr(node.value, "id", None) == self.ops:
            return  # ops.UNSET: a loop temporary before the first iteration
        elif isinstance(node, gast.Attribute):
            if _attribute_shape(self.rules, node.attr) is Shape.VARIES:
                raise _Ineligible(f".{node.attr}: its shape is not declared to follow from shapes")
            self.data(node.value)
        elif isinstance(node, gast.Subscript):
            if self.resolve(node.value) is not np.s_:  # np.s_[...] is an index, not data
                self.data(node.value)
            self.require_static(node.slice)
        elif isinstance(node, gast.Call):
            self.call(node)
        else:
            raise _Ineligible(f"a {type(node).__name__} expression, whose shapes are not followed")

    def call(self, node):
        f = node.func
        if self.ours(f) or _list_method(node):  # a helper, the tape, a list's append, pop
            data, static = node.args, []
        else:
            data, static = self.split(node)
        for a in data:
            if isinstance(a, gast.Starred):
                raise _Ineligible(f"{_named(f)}(*...): a starred argument")
            self.data(a)
        for a in static:
            self.require_static(a, f)
        for k in node.keywords:
            if k.arg is None:
                raise _Ineligible(f"{_named(f)}(**...): keywords unpacked")
            self.require_static(k.value, f)

    def split(self, node):
        """A call's arguments as (data, static), by its callee's declared shape."""
        obj = self.resolve(node.func)
        if obj is np.where and len(node.args) != 3:  # it lists indices: data-dependent shape
            raise _Ineligible("np.where(condition): its result's shape depends on values")
        shape = _declared_shape(self.rules, obj)
        split = _SPLITS.get(shape)
        if split is None:
            if shape is Shape.VARIES and self.rules.declaration(obj) is not None:
                why = "its result's shape depends on values"
            else:
                why = "its result's shape is not declared to follow from its arguments' shapes"
            raise _Ineligible(f"{_named(node.func)}: {why}")
        return split(list(node.args))


# the node types a shape-like value may be made of -> how ``static_deps`` reads them
_DEPS_BY_TYPE = {
    gast.Constant: _Eligibility._deps_Constant,
    gast.Name: _Eligibility._deps_Name,
    gast.Attribute: _Eligibility._deps_Attribute,
    gast.Tuple: _Eligibility._deps_Tuple,
    gast.List: _Eligibility._deps_List,
    gast.Slice: _Eligibility._deps_Slice,
    gast.UnaryOp: _Eligibility._deps_UnaryOp,
    gast.BinOp: _Eligibility._deps_BinOp,
    gast.Subscript: _Eligibility._deps_Subscript,
    gast.Call: _Eligibility._deps_Call,
}
