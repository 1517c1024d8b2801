"""Small helpers of the user's, inlined where they are called.

A call of a user function is otherwise differentiated as a callee pair
(``reverse/callees``): a forward function that returns its result and what its
adjoint needs, and that adjoint. For a small helper (``def step(h, x, W): return
np.tanh(x @ W + h)``) called in a loop the pair costs two calls per step, and it keeps
its own residuals beside what the caller's tape already holds. Inlined, the helper's
lines become the caller's: the caller's tape and economies apply to them, and
``source(g)`` shows the helper's math where it is used, under the call's own
``# grad of:`` line (every inlined line is located at the call).

A helper is inlined only where that changes nothing a program can observe:

- it is a plain ``def`` (no closure, generator, lambda, gradient of ours, nor one of
  this package's markers such as ``stop_gradient``), with no rule (built in or the
  user's: ``defvjp``, ``rule``, ``nondifferentiable``) and not marked
  ``checkpoint``; its parameters are plain ones, their defaults numbers, strings or
  None, none of them called;
- its body is at most ``MAX_STATEMENTS`` assignments to names, then one ``return``:
  straight-line code (no branch, conditional expression, ``and``/``or`` or loop), no
  nested function, comprehension, lambda, starred argument, write into an array or
  attribute, nor ``locals()`` and its kind; every call in it has a rule (or is a
  helper of the user's in turn);
- every free name it reads denotes the same object in the caller (and is not a local
  there); a helper from another module may read only functions and modules there,
  whose identity the gradient's entry re-checks (``Function.inlined``, with the
  names the helpers were called by), since an array it reads would be read live
  from the caller's module;
- the call passes plain positional and keyword arguments (no lambda or function
  among them), and it is not inside a part of an expression that may not run
  (``a and h(x)``, ``h(x) if c else y``, a comprehension, a lambda, a ``while``
  test), nor inside ``stop_gradient(...)`` (there it runs as written, with no
  adjoint to economize) or a ``try`` or ``with`` block; where other calls in the statement run before it, each is a numpy
  or pure builtin function (hoisting the helper's lines above the statement must not
  reorder a random draw or a ``list.pop``).

Its parameters bound to names or constants are replaced by them; other arguments
are bound to fresh names, as are its locals (the namer avoids every name of the
caller). A helper called inside a helper is inlined in turn; a recursive one is not.
Everything else stays a callee pair.
"""

import builtins
import dataclasses
import inspect

import gast

from transpile.core import assumptions
from transpile.core.errors import TranspileError
from transpile.core.ir import MISSING
from transpile.core.nodes import (
    assign,
    clone,
    const,
    descendants,
    name,
    name_nodes,
    names_and_calls,
    transform,
)
from transpile.front import bound_functions, fence, higher, inplace, parse
from transpile.front.naming import Namer
from transpile.rules import registry, user_rules
from transpile_runtime import instances, stop_gradient

MAX_STATEMENTS = 12  # a helper longer than this is a callee pair: its source reads better
MAX_DEPTH = 8  # helpers inlined inside helpers, at most

_REFUSED_NODES = (  # what would not stay straight-line code, or could rebind names
    gast.IfExp,
    gast.BoolOp,
    gast.Lambda,
    gast.ListComp,
    gast.SetComp,
    gast.DictComp,
    gast.GeneratorExp,
    gast.NamedExpr,
    gast.Yield,
    gast.YieldFrom,
    gast.Await,
    gast.Starred,
    gast.FunctionDef,
    gast.ClassDef,
)
_DYNAMIC = frozenset(("locals", "vars", "globals", "eval", "exec", "super", "__class__"))
_PURE_BUILTINS = frozenset(
    getattr(builtins, n)
    for n in ("abs", "float", "int", "len", "max", "min", "pow", "range", "round", "sum")
)
_OURS = frozenset(("transpile", "transpile_runtime"))
_CONSTANT_TYPES = (bool, int, float, complex, str, type(None))
_LAZY_FIELDS = {gast.IfExp: ("test",), gast.BoolOp: ()}  # what always runs of them
_OPAQUE = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def stage(fn, ctx):
    """Inline the small helpers the function calls (this module's docstring)."""
    inliner = _Inliner(fn.parsed)
    body = inliner.block(fn.parsed.tree.body, (instances.unwrapped(ctx.func)[0],))
    if not inliner.inlined:
        return fn
    # the reads the entry re-checks: the helpers' own globals (in their modules), and
    # the names the calls named them by, which the caller's text no longer mentions
    reads = [assumptions.collect(h.parsed)[0] for h in inliner.inlined]
    fn.inlined = assumptions.merge(*reads, inliner.call_reads)
    fn.parsed.tree.body = body
    fn.parsed = dataclasses.replace(
        fn.parsed, local_names=fn.parsed.local_names | frozenset(inliner.new_names)
    )
    return fn


@dataclasses.dataclass(frozen=True, eq=False)
class _Helper:
    func: object
    parsed: object  # parse.Parsed of the helper: its reads join the caller's checks
    body: list  # the statements before the return, then the return
    signature: inspect.Signature
    assigned: frozenset  # the names its body assigns
    free: frozenset  # the names it reads that are not its own


def readable_helper(obj):
    """The ``_Helper`` for a function small and plain enough to inline, else None."""
    parsed = _parsed(obj) if _plain_function(obj) else None
    if parsed is None:
        return None
    body = list(parsed.tree.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    signature = inspect.signature(obj)
    if not (_simple_body(parsed.tree, body) and _constant_defaults(signature)):
        return None
    calls = [c for s in body for c in descendants(s) if _is_call(c)]
    if not all(_known_call(c, parsed) for c in calls):
        return None
    if any(_passes_function(c, parsed) for c in calls):
        return None  # the callee pair is made for the function passed (function_args)
    assigned, free = _names(body, {a.id for a in parsed.tree.args.args})
    return _Helper(obj, parsed, body, signature, assigned, free)


def _names(body, params):
    """``(the names body assigns, the names it reads that are neither those nor params)``."""
    nodes = [n for s in body for n in name_nodes(s)]
    assigned = frozenset(n.id for n in nodes if isinstance(n.ctx, gast.Store))
    loads = (n.id for n in nodes if isinstance(n.ctx, gast.Load))
    return assigned, frozenset(n for n in loads if n not in params and n not in assigned)


def _parsed(obj):
    """The helper's ``parse.Parsed``, or None where parse, fence or inplace would refuse it."""
    try:
        parsed = parse.run(obj)
        parse.refuse_undefined(parsed)
        fence.run(parsed)
        inplace.check(parsed, is_helper=True)
    except TranspileError:
        return None  # the callee pair says why, located at the user's call
    return parsed


def _plain_function(obj) -> bool:
    if not inspect.isfunction(obj) or obj.__code__.co_name == "<lambda>" or obj.__closure__:
        return False
    if obj.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
        return False
    if user_rules.find(obj) is not None or getattr(obj, "__transpile_checkpoint__", False):
        return False
    if (obj.__module__ or "").split(".")[0] in _OURS or _has_rule(obj):
        return False  # stop_gradient, checkpointed: markers the later stages read
    return not higher.is_generated(obj) and instances.unwrapped(obj)[0] is obj


def _has_rule(obj) -> bool:
    table = registry()
    return table.declaration(obj) is not None or id(table.canonical(obj)) in table.functions


def _is_call(node) -> bool:
    return isinstance(node, gast.Call)


def _known_call(call, parsed) -> bool:
    """Whether ``call`` has a rule (a method's, by its name), is a pure builtin or a
    function of the user's: then nothing in the helper is refused later, where the
    error would name the caller's line instead of the helper's own."""
    if isinstance(call.func, gast.Attribute) and _root(call.func) in parsed.local_names:
        return registry().method_declaration(call.func.attr) is not None
    obj = parsed.resolve(call.func)
    if obj is MISSING:
        return False
    if obj is stop_gradient or obj in _PURE_BUILTINS or user_rules.find(obj) is not None:
        return True
    return _has_rule(obj) or (inspect.isfunction(obj) and _plain_function(obj))


def _passes_function(call, parsed) -> bool:
    """Whether ``call`` passes a function (``apply(x, act=np.sin)``)."""
    for a in _arguments(call):
        if isinstance(a, gast.Lambda):
            return True
        outside = _root(a) is not None and _root(a) not in parsed.local_names
        if outside and bound_functions.is_function_value(parsed.resolve(a)):
            return True
    return False


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)


def _simple_body(tree, body) -> bool:
    """Plain parameters; assignments to names, then one ``return`` of a value; nothing
    refused in them."""
    args = tree.args
    if args.vararg or args.kwarg or args.kwonlyargs or getattr(args, "posonlyargs", []):
        return False
    if not 1 <= len(body) <= MAX_STATEMENTS:
        return False
    if not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return False
    if not all(isinstance(s, gast.Assign) and _name_targets(s.targets) for s in body[:-1]):
        return False
    params = {a.id for a in args.args}
    return not any(_refused(n, params) for s in body for n in descendants(s))


def _refused(node, params) -> bool:
    if isinstance(node, _REFUSED_NODES):
        return True
    if isinstance(node, gast.Name):
        return node.id in _DYNAMIC
    if isinstance(node, gast.Call):
        return _calls_parameter(node, params)
    return isinstance(node, gast.keyword) and node.arg in (None, "out")


def _name_targets(targets) -> bool:
    for t in targets:
        if isinstance(t, (gast.Tuple, gast.List)):
            if not all(isinstance(e, gast.Name) for e in t.elts):
                return False
        elif not isinstance(t, gast.Name):
            return False
    return True


def _calls_parameter(call, params) -> bool:
    """A parameter called (``act(x)``): which function it holds is the caller's to say."""
    return isinstance(call.func, gast.Name) and call.func.id in params


def _constant_defaults(signature) -> bool:
    return all(
        p.default is inspect.Parameter.empty or type(p.default) in _CONSTANT_TYPES
        for p in signature.parameters.values()
    )


def _root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _locate(stmts, origin):
    """Every node of ``stmts`` at ``origin``'s place: errors and ``# grad of:`` lines
    name the call, in the caller's file."""
    where = {k: getattr(origin, k, None) for k in ("lineno", "col_offset")}
    where.update({k: getattr(origin, k, None) for k in ("end_lineno", "end_col_offset")})
    for s in stmts:
        for node in descendants(s):
            if "lineno" in node._attributes:
                for k, v in where.items():
                    setattr(node, k, v)


class _Inliner:
    def __init__(self, parsed):
        self.parsed = parsed
        self.namer = Namer.for_tree(parsed.tree)
        self.inlined = []  # the _Helper of each helper inlined, once each
        self.new_names = set()
        self.call_reads = []  # assumptions.Read of each name a helper was called by
        self._helpers = {}  # id(function) -> _Helper or None

    def block(self, stmts, stack):
        out = []
        for stmt in stmts:
            out.extend(self.statement(stmt, stack))
        return out

    def statement(self, stmt, stack):
        """``stmt`` with the helpers it calls inlined: the lines before it, then it. Not
        inside a ``try`` or ``with`` block: those become marked regions, where a loop or
        a branch a helper's line lowers to (``sum`` of a list) is refused."""
        if isinstance(stmt, (gast.Try, gast.With)):
            return [stmt]
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                setattr(stmt, field, self.block(inner, stack))
        for handler in getattr(stmt, "handlers", None) or ():
            handler.body = self.block(handler.body, stack)
        field = _EXPRESSION_FIELD.get(type(stmt))
        if field is None or getattr(stmt, field, None) is None:
            return [stmt]
        if not any(map(self._may_inline, names_and_calls(getattr(stmt, field))[1])):
            return [stmt]  # (most lines: the rewrite below would leave them as they are)
        prelude = []
        value = self._expression(getattr(stmt, field), stmt, prelude, stack)
        setattr(stmt, field, value)
        _merge_result(stmt, field, prelude)
        return prelude + [stmt]

    def _expression(self, node, stmt, prelude, stack):
        """``node`` with each helper call that always runs replaced by its result's name,
        its lines appended to ``prelude``; bottom up, in the order Python evaluates."""
        if isinstance(node, _OPAQUE) or self._stopped(node):
            return node  # a stopped call runs as written: no adjoint to economize
        fields = _LAZY_FIELDS.get(type(node))
        if fields is None:
            fields = [f for f in node._fields if f != "ctx"]
        for f in fields:
            child = getattr(node, f, None)
            if isinstance(child, list):
                setattr(node, f, [self._child(c, stmt, prelude, stack) for c in child])
            else:
                setattr(node, f, self._child(child, stmt, prelude, stack))
        if isinstance(node, gast.Call):
            helper = self._candidate(node, stack)
            if helper is not None and self._runs_in_order(node, stmt, stack):
                return self._inline(node, helper, stmt, prelude, stack)
        return node

    def _child(self, child, stmt, prelude, stack):
        if isinstance(child, gast.keyword):
            child.value = self._expression(child.value, stmt, prelude, stack)
            return child
        if isinstance(child, gast.expr):
            return self._expression(child, stmt, prelude, stack)
        return child

    def _stopped(self, node) -> bool:
        return (
            isinstance(node, gast.Call)
            and _root(node.func) not in self.parsed.local_names
            and self.parsed.resolve(node.func) is stop_gradient
        )

    def _candidate(self, call, stack):
        """The ``_Helper`` that ``call`` calls, if it may be inlined here."""
        if len(stack) >= MAX_DEPTH or not self._plain_call(call):
            return None
        obj = self.parsed.resolve(call.func)
        if obj is MISSING or any(obj is f for f in stack):
            return None
        if id(obj) not in self._helpers:
            self._helpers[id(obj)] = readable_helper(obj)
        helper = self._helpers[id(obj)]
        if helper is None or helper.func is not obj or not self._same_names(helper):
            return None
        try:
            helper.signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError:
            return None  # the callee pair reports the mismatch at the call
        return helper

    def _may_inline(self, call) -> bool:
        """Whether ``call`` may be of a helper, asked without reading any function's
        source: what ``_candidate`` asks first (a plain call of a plain function)."""
        if not self._plain_call(call):
            return False
        obj = self.parsed.resolve(call.func)
        return obj is not MISSING and _plain_function(obj)

    def _plain_call(self, call) -> bool:
        """A call of a global's by name, with no ``*args`` or ``**kwargs`` spread."""
        root = _root(call.func)
        if root is None or root in self.parsed.local_names or root in self.parsed.bound:
            return False
        if any(isinstance(a, gast.Starred) for a in call.args):
            return False
        if any(k.arg is None for k in call.keywords):
            return False
        return not any(self._function_argument(a) for a in _arguments(call))

    def _function_argument(self, node) -> bool:
        """A lambda or a function passed: the callee pair is made for the function."""
        if isinstance(node, gast.Lambda):
            return True
        if _root(node) is None or _root(node) in self.parsed.local_names:
            return False
        return bound_functions.is_function_value(self.parsed.resolve(node))

    def _same_names(self, helper) -> bool:
        """Whether each free name of the helper denotes in the caller what it does in
        the helper's own module (a name of another module: only a function or module)."""
        parsed = self.parsed
        foreign = helper.func.__globals__ is not parsed.namespace
        for n in helper.free:
            if n in parsed.local_names or n in parsed.cells or n in parsed.bound:
                return False
            mine, theirs = parsed.lookup(n), helper.parsed.lookup(n)
            if mine is MISSING or mine is not theirs:
                return False
            if foreign and not assumptions.is_code(mine):
                return False
        return True

    def _runs_in_order(self, call, stmt, stack) -> bool:
        """Whether the calls of ``stmt`` that run before ``call`` (other than those
        around it or in its arguments) may run after its lines instead: numpy's, pure
        builtins, helpers inlined themselves."""
        inside = {id(n) for n in descendants(call)}
        around = _ancestors(stmt, call)
        for other in descendants(stmt):
            if not isinstance(other, gast.Call) or id(other) in inside or id(other) in around:
                continue
            if not self._pure(other, stack):
                return False
        return True

    def _pure(self, call, stack) -> bool:
        if _root(call.func) in self.parsed.local_names:
            return False
        obj = self.parsed.resolve(call.func)
        if obj is MISSING:
            return False
        if obj is stop_gradient or obj in _PURE_BUILTINS:
            return True
        module = getattr(obj, "__module__", None) or ""
        if module.split(".")[0] == "numpy" and "random" not in module:
            return True
        return self._candidate(call, stack) is not None

    def _inline(self, call, helper, stmt, prelude, stack):
        """The helper's lines for ``call`` appended to ``prelude``; its result's name."""
        bound = helper.signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        replace, binds = {}, []
        for pname, param in helper.signature.parameters.items():
            value = bound.arguments.get(pname, MISSING)
            if value is MISSING:
                value = const(param.default)
            plain = _is_literal(value) or isinstance(value, gast.Name)
            if plain and pname not in helper.assigned:
                replace[pname] = value
                continue
            fresh = self._fresh(pname)
            binds.append(assign(fresh, value, stmt))
            replace[pname] = name(fresh)
        for local in helper.assigned - set(replace):
            replace[local] = name(self._fresh(local))
        body = [_substituted(s, replace) for s in clone(helper.body)]
        result = self._fresh(helper.func.__name__.strip("_") + "_out")
        lines = binds + body[:-1] + [assign(result, body[-1].value, stmt)]
        _locate(lines, stmt)
        if not any(h is helper for h in self.inlined):
            self.inlined.append(helper)
        self.call_reads.append(self._read_of(call.func, helper.func))
        prelude.extend(self.block(lines, stack + (helper.func,)))
        return name(result)

    def _read_of(self, node, obj):
        parts = []
        while isinstance(node, gast.Attribute):
            parts.append(node.attr)
            node = node.value
        chain = ".".join([node.id, *reversed(parts)])
        return assumptions.Read(chain, obj, self.parsed.namespace, self.parsed.cells.get(node.id))

    def _fresh(self, base):
        new = self.namer.fresh(base)
        self.new_names.add(new)
        return new


# the field of each statement that holds an expression run before the statement does
# its work (a ``while`` test runs again each time round: never hoisted from)
_EXPRESSION_FIELD = {
    gast.Assign: "value",
    gast.AugAssign: "value",
    gast.AnnAssign: "value",
    gast.Return: "value",
    gast.Expr: "value",
    gast.If: "test",
    gast.For: "iter",
}


def _arguments(call):
    return [*call.args, *(k.value for k in call.keywords)]


def _ancestors(stmt, target) -> set:
    """The ids of the nodes of ``stmt`` that contain ``target``."""
    parents = {}
    for node in descendants(stmt):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    found, node = set(), parents.get(id(target))
    while node is not None:
        found.add(id(node))
        node = parents.get(id(node))
    return found


def _substituted(stmt, replace):
    """``stmt`` with the helper's names replaced: a parameter by its argument (a name
    or a constant), every other name it binds by its fresh name."""

    def visit(node):
        new = replace.get(node.id)
        if new is None:
            return node
        if isinstance(new, gast.Name):
            return name(new.id, node.ctx)
        return clone(new)  # a literal

    return transform(stmt, {gast.Name: visit})


def _is_literal(node) -> bool:
    """A constant, or a negated one (``-0.5``)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant)


def _merge_result(stmt, field, prelude):
    """``h = step_out`` after ``step_out = <value>`` becomes ``h = <value>``: the
    result's name is printed only where the call was part of a larger expression."""
    value = getattr(stmt, field)
    if not (isinstance(stmt, (gast.Assign, gast.Return)) and isinstance(value, gast.Name)):
        return
    last = prelude[-1] if prelude else None
    if (
        isinstance(last, gast.Assign)
        and len(last.targets) == 1
        and isinstance(last.targets[0], gast.Name)
        and last.targets[0].id == value.id
    ):
        prelude.pop()
        setattr(stmt, field, last.value)
