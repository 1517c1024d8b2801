"""Forward mode: the jvp function, written from the normalized body in one pass.

``run`` walks the A-normal form in order. Each statement is kept as it is; after an
active one (its target varied, and read on the way to the output) comes the line of
its tangent, taken from the forward lines of its rule (``template.expand_forward``),
under a ``# tangent of: <line>`` comment. The tangent of ``x`` is ``x_dot``
(``_t3_dot`` for a temporary, printed where it is used). Branches and loops stay what
they are: the tangent lines run where their values run, so ``break``, ``continue``
and the lowered early returns need nothing of their own, and nothing is recorded.

A value that is not varied has a zero tangent that is never written: its operands'
lines drop it, as reverse mode drops a zero adjoint (``stop_gradient`` gives no
tangent code at all). Where a name is varied on one path and not on another (a loop
accumulating into ``s = 0.0``), its tangent is made an array of zeros
(``ops.zeros_like``) where the name gets its value that is not varied.

Two modes: ``jvp``, ``f_jvp(*args, tangent) -> (out, tangent_out)``, the function
users call, whose result owns its arrays (``ops.owned``); ``tangent``, a user
function called by one in forward mode, ``f_jvp(tangents, *args)`` with a tuple of
the tangents of the arguments that carry varied values.
"""

import functools
import inspect
import linecache

import gast
import numpy as np

from transpile.analysis import views
from transpile.core import printer, recursion
from transpile.core.errors import at
from transpile.core.ir import COMMENT, Output
from transpile.core.nodes import assign, clone, const, descendants, name, stores
from transpile.core.template import expand_forward
from transpile.front import attribute_writes, objects, parse, varargs
from transpile.front.exceptions import is_attempt
from transpile.reverse import callees
from transpile.rules import blocked_operands, user_rules
from transpile_runtime import instances

MODES = ("jvp", "tangent")
_HINT = (
    "use grad or vjp for this function, or wrap the value in stop_gradient(...) if it is a constant"
)


def stage(fn, ctx):
    """``fn.outputs``: the one jvp function."""
    fn.outputs = [_Forward(fn, ctx).function()]
    return fn


class _Forward:
    def __init__(self, fn, ctx):
        self.fn, self.ctx, self.act = fn, ctx, fn.activity
        self.parsed, self.namer, self.ops = fn.parsed, fn.namer, fn.names["ops"]
        # the function made is named f_jvp: a callee's f_jvp (another f) needs another name
        self.namer.reserve(f"{fn.parsed.name}_jvp")
        self.tangents = {}
        self.last_line = None
        self.needed = _varied_names(fn.tree.body, self.act) | {fn.params[i] for i in ctx.wrt}
        self.own_name = self.namer.reserve(f"{fn.parsed.name}_jvp")  # called by no other
        self.writes = any(views.written_by(s) or _appends(s) for s in descendants(fn.tree))

    def tangent(self, primal: str) -> str:
        """The tangent's name of ``primal``: ``x_dot``; stable per name."""
        if primal not in self.tangents:
            self.tangents[primal] = self.namer.fresh(f"{primal}_dot")
            if primal in self.namer.temporaries:
                self.namer.temporaries.add(self.tangents[primal])
        return self.tangents[primal]

    def tangent_of(self, stmt):
        """``node -> its tangent's name``, None for a zero (not varied before ``stmt``)."""

        def of(node):
            if isinstance(node, gast.Name) and self.act.is_varied(stmt, node.id):
                return self.tangent(node.id)
            return None

        return of

    def zeros(self, node):
        return gast.Call(
            func=gast.Attribute(value=name(self.ops), attr="zeros_like", ctx=gast.Load()),
            args=[clone(node)],
            keywords=[],
        )

    def ops_call(self, attr, args):
        return gast.Call(
            func=gast.Attribute(value=name(self.ops), attr=attr, ctx=gast.Load()),
            args=args,
            keywords=[],
        )

    # the function ------------------------------------------------------------------
    def function(self) -> Output:
        fn, ctx = self.fn, self.ctx
        params = fn.params
        wrt = [params[i] for i in ctx.wrt]
        tangent_names = [self.tangent(p) for p in wrt]
        args = clone(fn.tree.args)
        head = []
        if ctx.mode == "jvp" and len(wrt) == 1 and not ctx.as_tuple:
            given = tangent_names[0]
        else:
            given = self.namer.fresh("tangents" if ctx.mode == "tangent" else "tangent")
            targets = gast.Tuple(
                elts=[name(t, gast.Store()) for t in tangent_names], ctx=gast.Store()
            )
            head.append(gast.Assign(targets=[targets], value=name(given), type_comment=None))
        if ctx.mode == "jvp":
            args.args = args.args + [name(given, gast.Param())]
            args.defaults = []  # the tangent comes last: every argument is asked for
        else:
            args.args = [name(given, gast.Param())] + args.args
        for p in params:
            if p in self.needed and p not in wrt:  # varied only after a loop or branch
                head.append(assign(self.tangent(p), self.zeros(name(p)), gast.Pass()))
        body = self.block(fn.tree.body[:-1])
        ret = self.ret(fn.tree.body[-1], [*params, given])
        return Output(self.own_name, args, head + body + [ret])

    def ret(self, stmt, arguments):
        result = stmt.value
        if isinstance(result, gast.Name) and self.act.is_varied(stmt, result.id):
            tangent = name(self.tangent(result.id))
        else:
            tangent = self.zeros(result)
        pair = gast.Tuple(elts=[clone(result), tangent], ctx=gast.Load())
        if self.ctx.mode == "jvp":  # nothing returned shares memory with what was given
            pair = self.ops_call("owned", [pair, *(name(a) for a in arguments)])
        return gast.copy_location(gast.Return(value=pair), stmt)

    # blocks --------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for i, s in enumerate(stmts):
            if i and is_attempt(stmts[i - 1], s):
                out.extend(self.attempt(s))
            else:
                out.extend(self.stmt(s))
        return out

    def attempt(self, s):
        """The block of a lowered try (``exceptions``): its own lines inside it, their
        tangents after it, run where it completed (a tangent's error is not the user's
        exception to catch)."""
        lines = self.block(s.orelse)
        primal = {n for b in s.orelse for n in stores(b)}
        inside = [b for b in lines if set(stores(b)) & primal or _effect(b)]
        after = [b for b in lines if not any(b is c for c in inside)]
        inside = inside or [gast.Pass()]
        attempt = gast.copy_location(gast.If(test=s.test, body=s.body, orelse=inside), s)
        if not after:
            return [attempt]
        then = gast.If(test=clone(s.test), body=[gast.Pass()], orelse=after)
        return [attempt, gast.copy_location(then, s)]

    def stmt(self, s):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            return self.array_write(s)
        if isinstance(s, gast.Assign):
            return self.assignment(s)
        if isinstance(s, gast.Expr):
            return self.call_statement(s)
        if isinstance(s, gast.If):
            body, orelse = self.block(s.body), self.block(s.orelse)
            node = gast.If(test=s.test, body=body or [gast.Pass()], orelse=orelse)
            return [gast.copy_location(node, s)]
        if isinstance(s, gast.For):
            node = gast.For(
                target=s.target, iter=s.iter, body=self.block(s.body), orelse=[], type_comment=None
            )
            return [gast.copy_location(node, s)]
        if isinstance(s, gast.While):
            node = gast.While(test=s.test, body=self.block(s.body), orelse=[])
            return [gast.copy_location(node, s)]
        return [s]

    def comment(self, s):
        text = _line(self.parsed, s)
        if text == self.last_line:
            return []
        self.last_line = text
        node = gast.Expr(value=const(COMMENT + "tangent of: " + text))
        return [gast.copy_location(node, s)]

    # statements ----------------------------------------------------------------------
    def assignment(self, s):
        """``target = value`` and the line of its tangent (for a call of a user function,
        one line giving both)."""
        target = s.targets[0].id
        if _pops(s.value) and self.act.is_varied(s, s.value.func.value.id):
            return self.popped(s, target)
        if target not in self.act.useful_after[id(s)]:
            return [s]
        match = self.act.matches.get(id(s))
        if match is None or target not in self.act.varied_after[id(s)]:
            if target in self.needed:  # varied on another path: a zero of its own
                zero = self.zeros(name(target))
                if isinstance(s.value, gast.List) and not s.value.elts:
                    zero = gast.List(elts=[], ctx=gast.Load())  # a list this code makes
                return [s, assign(self.tangent(target), zero, s)]
            return [s]
        if match.kind == "user":
            return self.comment(s) + self.tangent_user(s, match, target)
        return [s, *self.comment(s), *self.tangent_lines(s, match, target)]

    def tangent_lines(self, s, match, target):
        """The line giving ``target``'s tangent: one method per kind of match."""
        handler = getattr(self, f"tangent_{match.kind}", None)
        if handler is None:
            what = match.why or printer.expression(s.value)
            raise at(
                self.parsed,
                s,
                f"no derivative rule for {what}, and it is applied to a value that the "
                "output depends on",
                _HINT,
            )
        value = handler(s, match, target)
        if (
            self.writes
            and not views.sources(s.value, self.parsed.resolve)
            and not views.new_array(value, self.ops)
        ):
            # a new value whose tangent may be another's (x + 0.0: x_dot): where the
            # function writes in place, a write into either must not show in the other
            value = self.ops_call("copy", [value])
        return [assign(self.tangent(target), value, s)]

    def tangent_template(self, s, match, target):
        tmpl = match.template
        if tmpl.forward is None:
            raise at(
                self.parsed,
                s,
                f"no forward-mode rule for {_called(s.value)} (rule {tmpl.name!r}: it has a "
                "reverse rule only), and it is applied to a value that the output depends on",
                _HINT,
            )
        of = self.tangent_of(s)
        for n in blocked_operands(match):
            if of(n) is not None:
                raise at(
                    self.parsed,
                    s,
                    f"the rule for this call does not differentiate its argument {n.id!r}, "
                    "which depends on the differentiated inputs",
                    "wrap that argument in stop_gradient(...) if it is a constant",
                )
        values = dict(match.values)
        values[next(iter(tmpl.signature.parameters))] = name(target)
        names = tmpl.names(self.fn.names, user_rules.binder(self.namer, self.fn.namespace))
        terms = expand_forward(tmpl, values, of, self.zeros, names)
        value = _without_default_options(_sum(terms), self.fn.names["np"])
        if _elementwise(tmpl) and not _covers(value, values, tmpl, target, of):
            # x + c with only x varied: the tangent takes the result's (broadcast) shape
            value = self.ops_call("tangent_like", [value, name(target)])
        return value

    def tangent_vjp(self, s, match, target):
        """A call with a rule of ``user_rules`` that has tangent functions (a gradient
        with a tape, ``through_tape``)."""
        bind = user_rules.binder(self.namer, self.fn.namespace)
        try:
            terms = user_rules.tangent_terms(
                match.callee, s.value, target, self.tangent_of(s), bind
            )
        except user_rules.Refused as exc:
            raise at(self.parsed, s, str(exc), _HINT) from None
        value = terms[0]
        for term in terms[1:]:  # ops.add: the parts may be tuples of gradients, which + joins
            value = self.ops_call("add", [value, term])
        return value

    def tangent_copy(self, s, match, target):
        return name(self.tangent(s.value.id))

    def tangent_subscript(self, s, match, target):
        base = s.value.value
        return gast.Subscript(
            value=name(self.tangent(base.id)), slice=clone(s.value.slice), ctx=gast.Load()
        )

    def tangent_display(self, s, match, target):
        of = self.tangent_of(s)

        def item(node):
            found = of(node)
            return name(found) if found is not None else self.zeros(node)

        v = s.value
        if isinstance(v, gast.Dict):
            return gast.Dict(keys=[clone(k) for k in v.keys], values=[item(e) for e in v.values])
        return type(v)(elts=[item(e) for e in v.elts], ctx=gast.Load())

    def tangent_user(self, s, match, target):
        call = s.value
        callee, made = instances.unwrapped(match.callee)
        sig = inspect.signature(callee)
        try:
            bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            raise at(self.parsed, s, f"call to {callee.__name__}() does not match: {exc}") from None
        params, arguments, count = _spread_arguments(callee, sig, bound)
        of = self.tangent_of(s)
        varied = [(p, node) for p, node in arguments.items() if of(node) is not None]
        sequences = frozenset(
            p
            for p, node in arguments.items()
            if isinstance(node, gast.Name) and node.id in self.fn.kinds.sequences
        )
        gen = self.ctx.transpile(
            callee,
            tuple(params.index(p) for p, _ in varied),
            "tangent",
            as_tuple=True,
            stack=self.ctx.stack,
            sequences=sequences,
            varargs=count,
            classes=objects.passed(self.fn, self.ctx, arguments, made),  # self.helper(x) inside
            functions=callees.functions_passed(self.fn, callee, arguments),
            updates_followed=callee in self.fn.updates_followed,
        )
        if all(g is not gen for g in self.fn.callees):
            self.fn.callees.append(gen)
        if isinstance(gen, recursion.StandIn) and gen.frame is self.ctx.stack[-1]:
            fname = self.own_name  # it calls itself
        else:  # (a recursive call of another: a placeholder, filled once it is built)
            fname = self.namer.fresh(gen.name or f"{callee.__name__}_jvp")
        self.fn.namespace[fname] = gen.function
        given = gast.Tuple(elts=[name(of(node)) for _, node in varied], ctx=gast.Load())
        new_call = gast.Call(
            func=name(fname), args=[given, *clone(call.args)], keywords=clone(call.keywords)
        )
        pair = gast.Tuple(
            elts=[name(target, gast.Store()), name(self.tangent(target), gast.Store())],
            ctx=gast.Store(),
        )
        # the call itself gives the value and its tangent: it replaces the primal line
        return [
            gast.copy_location(gast.Assign(targets=[pair], value=new_call, type_comment=None), s)
        ]

    def array_write(self, s):
        """``z[i] = v``: the same write into ``z``'s tangent (made of zeros first where
        ``z`` was not varied)."""
        base = s.targets[0].value.id
        if base not in self.act.useful_after[id(s)] or base not in self.act.varied_after[id(s)]:
            return [s]
        of = self.tangent_of(s)
        out = [s, *self.comment(s)]
        if of(s.targets[0].value) is None:
            out.append(assign(self.tangent(base), self.zeros(name(base)), s))
        value = of(s.value)
        slot = gast.Subscript(
            value=name(self.tangent(base), gast.Load()),
            slice=clone(s.targets[0].slice),
            ctx=gast.Store(),
        )
        written = name(value) if value is not None else const(0.0)
        out.append(
            gast.copy_location(gast.Assign(targets=[slot], value=written, type_comment=None), s)
        )
        return out

    def popped(self, s, target):
        """``g = items.pop()`` (a gradient read again pops its items' adjoints): the
        tangent list is popped alongside, so that the two stay in step."""
        base = s.value.func.value.id
        pop = gast.Call(
            func=gast.Attribute(value=name(self.tangent(base)), attr="pop", ctx=gast.Load()),
            args=[],
            keywords=[],
        )
        useful = self.act.useful_after[id(s)]
        if target in useful and target in self.act.varied_after[id(s)]:
            return [s, *self.comment(s), assign(self.tangent(target), pop, s)]
        if base in useful:
            return [s, gast.copy_location(gast.Expr(value=pop), s)]
        return [s]

    def call_statement(self, s):
        """``hs.append(h)`` appends ``h``'s tangent to ``hs``'s; another method changing a
        varied value is refused, as in reverse mode."""
        attribute_writes.check(self.parsed, s, self.act.is_varied)
        func = s.value.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return [s]
        base = func.value.id
        if func.attr != "append":
            if self.act.is_varied(s, base):
                raise at(
                    self.parsed,
                    s,
                    f"the method .{func.attr}() changes a value that is differentiated",
                    "build a new value instead (only list.append is supported)",
                )
            return [s]
        if base not in self.act.useful_after[id(s)] or base not in self.act.varied_after[id(s)]:
            return [s]
        of = self.tangent_of(s)
        out = [*self.comment(s)]
        if of(func.value) is None:  # the list's tangent, zeros, before the append
            out.append(assign(self.tangent(base), self.zeros(name(base)), s))
        out.append(s)
        item = s.value.args[0]
        found = of(item)
        appended = name(found) if found is not None else self.zeros(item)
        append = gast.Call(
            func=gast.Attribute(value=name(self.tangent(base)), attr="append", ctx=gast.Load()),
            args=[appended],
            keywords=[],
        )
        out.append(gast.copy_location(gast.Expr(value=append), s))
        return out


def _spread_arguments(callee, sig, bound):
    """``(parameters, parameter -> argument node, how *args and **kwargs are spread)``:
    the callee's parameters in their places, ``*rest`` as ``rest0, rest1`` and
    ``**options`` one per keyword as ``varargs.spread`` makes them for this call, and the
    arguments the call passes (a parameter left at its default has a place, no argument:
    ``h(x, off=y)`` differentiates ``off``, not the ``scale`` between them)."""
    params, arguments, count, keys = [], {}, None, ()
    for pname, param in sig.parameters.items():
        value = bound.arguments.get(pname, inspect.Parameter.empty)
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            value = () if value is inspect.Parameter.empty else value
            names = varargs.spread_names(parse.run(callee).tree, len(value))
            arguments.update(zip(names, value))
            params.extend(names)
            count = len(value)
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            value = {} if value is inspect.Parameter.empty else value
            keys = tuple(value)
            arguments.update(value)  # each keyword becomes a parameter of its own name
            params.extend(keys)
        else:
            params.append(pname)
            if value is not inspect.Parameter.empty:
                arguments[pname] = value
    return params, arguments, varargs.spread_of(sig, count, keys)


def _pops(value):
    """Whether ``value`` is ``items.pop()``."""
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and isinstance(value.func.value, gast.Name)
        and value.func.attr == "pop"
        and not value.args
        and not value.keywords
    )


def _appends(s):
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Call)
        and isinstance(s.value.func, gast.Attribute)
        and s.value.func.attr == "append"
    )


def _varied_names(body, act):
    """Every name some statement makes varied: the names whose tangents may be read."""
    found = set()
    stack = list(body)
    while stack:
        s = stack.pop()
        stack.extend(getattr(s, "body", []) + getattr(s, "orelse", []))
        target = None
        if isinstance(s, gast.Assign):
            t = s.targets[0]
            target = t.id if isinstance(t, gast.Name) else getattr(t.value, "id", None)
        elif isinstance(s, gast.Expr) and isinstance(
            getattr(s.value, "func", None), gast.Attribute
        ):
            target = getattr(s.value.func.value, "id", None)
        if target is not None and id(s) in act.varied_after and target in act.varied_after[id(s)]:
            found.add(target)
    return found


def _without_default_options(value, np_name):
    """``value`` without the options a template spelled out at numpy's own defaults
    (``np.sum(t, axis=None, keepdims=False)`` reads as ``np.sum(t)``)."""
    for call in descendants(value):
        func = getattr(call, "func", None)
        if not (
            isinstance(call, gast.Call)
            and isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.value.id == np_name
        ):
            continue
        defaults = _numpy_defaults(func.attr)
        call.keywords = [
            k
            for k in call.keywords
            if not (
                isinstance(k.value, gast.Constant)
                and k.arg in defaults
                and k.value.value is defaults[k.arg]
            )
        ]
    return value


@functools.cache
def _numpy_defaults(attr):
    """keyword -> the default it means, for ``np.<attr>``: None, or False where numpy
    writes ``keepdims=<no value>`` (it behaves as False)."""
    try:
        params = inspect.signature(getattr(np, attr)).parameters
    except (AttributeError, TypeError, ValueError):
        return {}
    out = {}
    for k, p in params.items():
        if p.default is None:
            out[k] = None
        elif k == "keepdims" and (p.default is False or p.default is np._NoValue):
            out[k] = False
    return out


def _sum(terms):
    """``a + b - c`` of the terms ``[(Add, a), (Add, b), (Sub, c)]``."""
    value = None
    for op, term in terms:
        if value is None:
            value = term if isinstance(op, gast.Add) else gast.UnaryOp(op=gast.USub(), operand=term)
        else:
            value = gast.BinOp(
                left=value, op=gast.Add() if isinstance(op, gast.Add) else gast.Sub(), right=term
            )
    return value


def _elementwise(tmpl):
    declarations = getattr(tmpl.func, "declarations", ())
    return any(d.is_pointwise for d in declarations)


def _covers(value, values, tmpl, target, tangent_of):
    """Whether the tangent expression ``value`` has the broadcast shape of every data
    operand: it reads the result, or each operand that is not a number (or its tangent)."""
    read = {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
    if target in read:
        return True
    params = list(tmpl.signature.parameters)[1:]
    for p in params:
        if p.startswith("_") or p not in values:
            continue
        node = values[p]
        if isinstance(node, gast.Name) and node.id not in read and tangent_of(node) not in read:
            return False
    return True


def _called(value):
    if isinstance(value, gast.Call):
        return printer.expression(value.func)
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return f"the operator {type(value.op).__name__}"
    if isinstance(value, gast.Attribute):
        return f"the attribute .{value.attr}"
    return printer.expression(value)


def _effect(s):
    """A call for its effect (not a comment)."""
    return isinstance(s, gast.Expr) and not (
        isinstance(s.value, gast.Constant) and str(s.value.value).startswith(COMMENT)
    )


def _line(parsed, node):
    lineno = getattr(node, "lineno", None)
    if not lineno:
        return ""
    return linecache.getline(parsed.filename, lineno + parsed.line_offset).strip()
