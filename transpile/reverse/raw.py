"""Reverse-mode emission: the primal sweep and the raw adjoint sweep.

``run`` walks the normalized body once. Each active statement contributes a
block of adjoint statements, taken from its rule template; blocks are laid out
in reverse order, and a loop's adjoint is a loop running backwards. The raw
adjoint uses a few forms that ``optimize`` later resolves:

    dx += e                  accumulate (the first write becomes ``dx = e``)
    dx = __zero__(x)         dx is zero here (folded away, or ``ops.zeros_like(x)``)
    __restore__(x)           x was overwritten inside a branch or loop: if the
                             adjoint reads x, the primal pushes it on the tape
                             before the write and this pops it back
    '#grad of: ...'          a comment naming the user's line
"""

import functools
import linecache
from dataclasses import dataclass, field

import gast

from transpile.analysis import complex_use, composites, scalars, views
from transpile.cleanup import shapes
from transpile.core import printer
from transpile.core.errors import at
from transpile.core.ir import COMMENT, GRAD_HOOK, RESTORE, ZERO
from transpile.core.nodes import (
    assign,
    clone,
    const,
    contains_jump,
    descendants,
    name,
    walked_fields,
)
from transpile.core.template import expand
from transpile.front import attribute_writes, object_args
from transpile.reverse import callees, replay
from transpile.rules import blocked_operands, user_rules


@dataclass
class Emitted:
    primal: list
    adjoint: list
    restores: dict  # id(restore marker) -> (primal statement, kind)
    primal_of: dict  # adjoint name -> primal name
    result: object  # the returned atom
    callees: list = field(default_factory=list)
    scalars: frozenset = frozenset()  # names that always hold scalars
    pops: bool = False  # whether the adjoint may pop from a list (an append's, a hook's)
    walked: tuple = ()  # (tree, descendants(tree)) as the sweep read it (seeding reads it)
    complex_values: bool = False  # the function may compute with complex numbers (complex_use)
    # the adjoint of a rebound wrt parameter -> that parameter (seeding): the sweep starts
    # with it shaped like the value the parameter holds at the end, not like the argument
    at_end: dict = field(default_factory=dict)


# the origin of a statement the user's source has no place for: ``assign`` copies from
# it only its end positions, None (one for all, not a new ``pass`` per marker)
_NOWHERE = gast.Pass()


def zero_marker(adj, primal):
    return assign(adj, gast.Call(func=name(ZERO), args=[name(primal)], keywords=[]), _NOWHERE)


def comment(text, origin=None):
    node = gast.Expr(value=const(COMMENT + "grad of: " + text))
    return gast.copy_location(node, origin) if origin is not None else node


@dataclass(frozen=True)
class _Scope:
    """What the sweep needs to know besides the tree."""

    parsed: object
    namer: object
    activity: object
    runtime_names: dict
    differentiate_call: object  # (call, callee, stmt, activity) -> names of fwd and bwd
    filename: str
    line_offset: int
    bind: object = None  # (base, obj, key=None) -> the name obj is bound to in the code
    sequences: frozenset = frozenset()  # names holding lists or tuples (``kinds``)


def stage(fn, ctx):
    """The primal sweep and the raw adjoint sweep of the normalized function."""
    scope = _Scope(
        fn.parsed,
        fn.namer,
        fn.activity,
        fn.names,
        functools.partial(callees.differentiate, fn, ctx),
        fn.parsed.filename,
        fn.parsed.line_offset,
        user_rules.binder(fn.namer, fn.namespace),
        fn.kinds.sequences,
    )
    fn.emitted = run(fn.tree, scope)
    return fn


def run(tree, ctx) -> Emitted:
    rev = _Reverse(ctx)
    walked, stored = _walk(tree)  # the analyses below read the tree, each all of it
    rev.scalars = scalars.scalar_names(tree, ctx.parsed, walked)
    rev.shapes = shapes.shape_sets(tree, ctx.parsed, rev.scalars, ctx.sequences, stored)
    rev.definitions = composites.definitions(tree, composites.store_counts(tree, walked))
    rev.complex_values = complex_use.may_be_complex(tree, ctx.parsed, walked)
    rev.lambdas = gast.Lambda in set(map(type, walked))  # the kinds of node, found in C
    body = tree.body
    ret = body[-1]
    primal, adjoint = rev.block(body[:-1], depth=0)
    result = ret.value
    return Emitted(
        primal,
        adjoint,
        rev.restores,
        rev.primal_of,
        result,
        rev.callees,
        frozenset(rev.scalars),
        rev.pops,
        (tree, walked),
        rev.complex_values,
    )


_BLOCKS = (gast.If, gast.For, gast.While)


def _walk(tree):
    """``(nodes, stored)``: the nodes of ``descendants(tree)``, each top-level statement's
    together (the analyses given them count and collect them, in no order), and
    id(top-level branch or loop) -> the names stored in it, found among its nodes
    (``shapes.shape_sets`` asks them, which would walk each block again)."""
    if not any(isinstance(s, _BLOCKS) for s in tree.body):
        return descendants(tree), {}  # no block: one walk of the whole, in its order
    walked = [tree]
    stored = {}
    for part in walked_fields(tree.__class__):
        child = getattr(tree, part, None)
        for c in child if child.__class__ is list else (child,):
            if not isinstance(c, gast.AST):
                continue
            nodes = descendants(c)
            walked.extend(nodes)
            if part == "body" and isinstance(c, _BLOCKS):
                stored[id(c)] = {
                    n.id
                    for n in nodes
                    if n.__class__ is gast.Name and isinstance(n.ctx, gast.Store)
                }
    return walked, stored


class _Reverse:
    def __init__(self, ctx):
        self.ctx = ctx
        self.act = ctx.activity
        self.namer = ctx.namer
        self.restores = {}
        self.pops = False
        self.complex_values = False
        self.lambdas = True  # whether the tree may hold a lambda (``check_blocked``)
        self.primal_of = {}
        self.callees = []
        self.fresh_arrays = set()
        self.local_lists = set()

    def d(self, primal: str) -> str:
        adj = self.namer.adjoint(primal)
        self.primal_of[adj] = primal
        return adj

    def adjoint_of(self, stmt):
        def f(node):
            if isinstance(node, gast.Name) and self.act.is_varied(stmt, node.id):
                return self.d(node.id)
            return None

        return f

    # blocks -------------------------------------------------------------------
    def block(self, stmts, depth):
        primal, blocks = [], []
        for s in stmts:
            p, a = self.stmt(s, depth)
            primal.extend(p)
            if a:
                blocks.append(a)
        adjoint = []
        for a in reversed(blocks):
            adjoint.extend(a)
        return primal, adjoint

    def stmt(self, s, depth):
        if isinstance(s, gast.Assign):
            if isinstance(s.targets[0], gast.Subscript):
                return self.array_write(s, depth)
            return self.assignment(s, depth)
        if isinstance(s, gast.Expr):
            return self.call_statement(s, depth)
        if isinstance(s, gast.If):
            pb, ab = self.block(s.body, depth + 1)
            po, ao = self.block(s.orelse, depth + 1)
            primal = gast.copy_location(
                gast.If(test=s.test, body=pb or [gast.Pass()], orelse=po), s
            )
            adjoint = []
            if ab or ao:
                adjoint = [
                    gast.copy_location(
                        gast.If(test=clone(s.test), body=ab or [gast.Pass()], orelse=ao), s
                    )
                ]
            return [primal], adjoint
        if isinstance(s, gast.For):
            return self.for_loop(s, depth)
        if isinstance(s, gast.While):
            return self.while_loop(s, depth)
        return [s], []

    def for_loop(self, s, depth):
        body, init, counter = s.body, [], None
        if contains_jump(body, gast.Break):
            counter = self.namer.fresh("n")
            init = [assign(counter, const(0), s)]
            body = [_bump(counter, s)] + body
        pb, ab = self.block(body, depth + 1)
        primal = gast.copy_location(
            gast.For(target=s.target, iter=s.iter, body=pb, orelse=[], type_comment=None), s
        )
        if not ab:
            return init + [primal], []
        it = name(s.iter.id)
        if counter:
            it = gast.Subscript(
                value=it,
                slice=gast.Slice(lower=None, upper=name(counter), step=None),
                ctx=gast.Load(),
            )
        rev_iter = gast.Call(func=name("reversed"), args=[it], keywords=[])
        loop = gast.copy_location(
            gast.For(target=clone(s.target), iter=rev_iter, body=ab, orelse=[], type_comment=None),
            s,
        )
        after = [self.restore_marker(counter, init[0], "name")] if counter and depth else []
        return init + [primal], [loop] + after

    def while_loop(self, s, depth):
        counter = self.namer.fresh("n")
        init = assign(counter, const(0), s)
        pb, ab = self.block(s.body, depth + 1)
        primal = gast.copy_location(
            gast.While(test=s.test, body=[_bump(counter, s)] + pb, orelse=[]), s
        )
        if not ab:
            return [init, primal], []
        it = gast.Call(func=name("range"), args=[name(counter)], keywords=[])
        loop = gast.copy_location(
            gast.For(
                target=name(self.namer.fresh("_"), gast.Store()),
                iter=it,
                body=ab,
                orelse=[],
                type_comment=None,
            ),
            s,
        )
        after = [self.restore_marker(counter, init, "name")] if depth else []
        return [init, primal], [loop] + after

    def restore_marker(self, target, primal_stmt, kind):
        marker = gast.Expr(value=gast.Call(func=name(RESTORE), args=[name(target)], keywords=[]))
        self.restores[id(marker)] = (primal_stmt, kind)
        return marker

    # statements ---------------------------------------------------------------
    def assignment(self, s, depth):
        target = s.targets[0].id
        match = self.act.matches.get(id(s))
        if match is None:  # loop bookkeeping added here (trip counters)
            return [s], []
        if match.why == "random" and any(
            isinstance(n, gast.Name) and self.act.is_varied(s, n.id) for n in match.operands
        ):
            raise at(
                self.ctx,
                s,
                "a random draw whose parameters depend on the differentiated inputs",
                "reparameterize: draw with fixed parameters and transform it, "
                "e.g. mu + sigma * np.random.normal(size=...)",
            )
        self.track_fresh(s)
        primal = [s]
        adjoint = []
        active = self.act.defines_active(s)
        if active:
            self.check_blocked(s, match)
            primal, adjoint = self.active_assignment(s, match, target)
            if adjoint:
                adjoint.insert(0, comment(_line(self.ctx, s), s))
        if depth > 0:
            # the assignment itself (a checkpointed loop's comes after its comment)
            written = next(p for p in primal if isinstance(p, gast.Assign))
            for t in _targets(written):
                adjoint.append(self.restore_marker(t, written, "name"))
            # the old value's adjoint ends here, also when the new value is a constant
            if active or target in self.act.varied_after[id(s)] or self.act.is_varied(s, target):
                adjoint.append(zero_marker(self.d(target), target))
        return primal, adjoint

    def active_assignment(self, s, match, target):
        """The primal statement and adjoint block of an active ``target = value``: one
        method per kind of match."""
        if _pops(s.value):
            return self.popped(s, target)
        handler = getattr(self, f"adjoint_{match.kind}", None)
        if handler is None:
            raise self.no_rule(s, match)
        return handler(s, match, target)

    def popped(self, s, target):
        """``g = items.pop()`` (a gradient read again pops its items' adjoints): the
        adjoint puts ``g``'s back at the end of ``items``'s, where the backward sweep
        reaches it, the mirror of ``append``."""
        base = s.value.func.value.id
        append = gast.Call(
            func=gast.Attribute(value=name(self.d(base)), attr="append", ctx=gast.Load()),
            args=[name(self.d(target))],
            keywords=[],
        )
        return [s], [gast.Expr(value=append)]

    def no_rule(self, s, match):
        """The error for an active operation without a rule, in the user's terms."""
        what = match.why or printer.expression(s.value)
        if what in self.namer.temporaries:
            what = "the function called on this line"
        func = getattr(s.value, "func", None)
        held = isinstance(func, gast.Name) and func.id in self.ctx.parsed.bound
        if held:  # a function passed as an argument: stop_gradient is not the remedy
            return at(
                self.ctx,
                s,
                f"`{func.id}` holds {what}, which has no derivative rule and no Python "
                "source to differentiate",
                f"pass a function with a rule or with source, or give {what} a rule: "
                f"transpile.defvjp({what}, lambda g, ans, x: ...)",
            )
        made = self.ctx.parsed.resolve(func) if func is not None else None
        if object_args.is_user_class(made):
            return at(
                self.ctx,
                s,
                f"an object of class {made.__name__} is made from a value that the output "
                f"depends on, and {made.__name__}.__init__ does more than store its "
                "parameters (self.W = W)",
                "make the object outside the function you differentiate and pass it as an "
                "argument (grad(loss)(layer, x)), or hold its fields in a dict",
            )
        return at(
            self.ctx,
            s,
            f"no derivative rule for {what}, and it is applied to a value "
            "that the output depends on",
            "wrap the value in stop_gradient(...) if it should be a constant, give the "
            "function a rule (transpile.defvjp), or call a Python function (with source) "
            "that computes it with supported operations",
        )

    def adjoint_refused(self, s, match, target):
        raise at(
            self.ctx,
            s,
            match.why,
            "pass the arguments one by one (f(xs[0], xs[1])), or give the function a "
            "list parameter",
        )

    def adjoint_template(self, s, match, target):
        through = composites.log_sigmoid(s.value, self.definitions, self.ctx.parsed.resolve)
        if through is not None:
            return self.adjoint_of_log_sigmoid(s, target, *through)
        adjoint_of = self.adjoint_of(s)
        values = dict(match.values)
        result = name(target)
        values[next(iter(match.template.signature.parameters))] = result

        def adjoint_or_result(node):
            return self.d(target) if node is result else adjoint_of(node)

        names = match.template.names(self.ctx.runtime_names, self.ctx.bind)
        lines = expand(match.template, values, adjoint_or_result, names)
        lookup = self.shapes.get(id(s))
        return [s], [shapes.elide_unbroadcast(stmt, param, values, lookup) for param, stmt in lines]

    def adjoint_of_log_sigmoid(self, s, target, z, p, sign):
        """``np.log(p)`` of a sigmoid ``p`` of ``z``: ``dz += d * (1 - p)`` (``-= d * p``
        for ``np.log(1 - p)``), with no division by ``p``."""
        dz = self.adjoint_of(s)(name(z))
        if dz is None:
            return [s], []
        factor = gast.BinOp(left=const(1.0), op=gast.Sub(), right=name(p))
        dt = name(self.d(target))
        value = gast.BinOp(left=dt, op=gast.Mult(), right=factor if sign > 0 else name(p))
        return [s], [_accumulate(dz, value, gast.Sub() if sign < 0 else None)]

    def adjoint_copy(self, s, match, target):
        src = self.adjoint_of(s)(s.value)
        return [s], [_accumulate(src, name(self.d(target)))] if src else []

    def adjoint_subscript(self, s, match, target):
        adj = self.adjoint_of(s)(s.value.value)
        if adj is None:
            return [s], []
        g = name(self.d(target))
        index = self.index_value(s.value.slice)
        if self.complex_values:  # a real entry takes the real part (complex_use)
            g = gast.Call(
                func=gast.Attribute(
                    value=name(self.ctx.runtime_names["complex_ops"]),
                    attr="real_like",
                    ctx=gast.Load(),
                ),
                args=[g, name(adj), clone(index)],
                keywords=[],
            )
        call = gast.Call(
            func=gast.Attribute(
                value=name(self.ctx.runtime_names["ops"]), attr="add_at", ctx=gast.Load()
            ),
            args=[name(adj), index, g],
            keywords=[],
        )
        return [s], [gast.Expr(value=call)]

    def adjoint_display(self, s, match, target):
        if isinstance(s.value, gast.Dict):
            keys, elts = s.value.keys, s.value.values
        else:
            keys, elts = [const(i) for i in range(len(s.value.elts))], s.value.elts
        adjoint_of, dt = self.adjoint_of(s), name(self.d(target))
        out = []
        for key, elt in zip(keys, elts):
            adj = adjoint_of(elt)
            if adj:
                item = gast.Subscript(value=clone(dt), slice=clone(key), ctx=gast.Load())
                out.append(_accumulate(adj, item))
        return [s], out

    def adjoint_user(self, s, match, target):
        return self.user_call(s, match, target)

    def adjoint_vjp(self, s, match, target):
        """A call with a ``defvjp`` rule: the primal call as written; each differentiated
        argument's adjoint from the user's adjoint function (``user_rules``)."""
        try:
            lines = user_rules.adjoint_lines(
                match.callee,
                s.value,
                target,
                self.d(target),
                self.adjoint_of(s),
                self.ctx.bind,
                self.ctx.runtime_names["ops"],
            )
        except user_rules.Refused as exc:
            raise at(
                self.ctx,
                s,
                str(exc),
                "wrap that argument in stop_gradient(...) if it is a constant, or give "
                "defvjp an adjoint for it",
            ) from None
        return [s], lines

    def check_blocked(self, s, match):
        for n in blocked_operands(match):
            if self.act.is_varied(s, n.id):
                raise at(
                    self.ctx,
                    s,
                    f"the rule for this call does not differentiate its "
                    f"argument {n.id!r}, which depends on the differentiated inputs",
                    "wrap that argument in stop_gradient(...) if it is a constant",
                )
        for n in descendants(s.value) if self.lambdas else ():
            if isinstance(n, gast.Lambda):
                raise at(
                    self.ctx,
                    s,
                    "a lambda in an expression that is differentiated",
                    "define the function at module level with `def`",
                )

    def index_value(self, index):
        if isinstance(index, (gast.Name, gast.Constant)):
            return clone(index)
        np_name = self.ctx.runtime_names["np"]
        return gast.Subscript(
            value=gast.Attribute(value=name(np_name), attr="s_", ctx=gast.Load()),
            slice=clone(index),
            ctx=gast.Load(),
        )

    def user_call(self, s, match, target):
        call = s.value
        loop = getattr(match.callee, "__transpile_revolve__", None)
        if loop is not None:  # a checkpointed loop (``loops``)
            return replay.call(self, s, loop, target)
        fwd, bwd, wrt_params, arg_nodes = self.ctx.differentiate_call(
            call, match.callee, s, self.act
        )
        base = match.callee.__name__
        saved = self.namer.fresh(f"{base if base.isidentifier() else 'lambda_'}_saved")
        new_call = gast.Call(func=name(fwd), args=clone(call.args), keywords=clone(call.keywords))
        checkpointed = getattr(match.callee, "__transpile_checkpoint__", False)
        if checkpointed:
            # the call runs as written in the primal sweep, keeping nothing; the adjoint
            # sweep runs the forward function again for what its adjoint reads
            again = gast.Subscript(value=new_call, slice=const(1), ctx=gast.Load())
            primal = gast.copy_location(assign(saved, again, s), s)
        else:
            pair = [name(target, gast.Store()), name(saved, gast.Store())]
            primal = gast.copy_location(
                gast.Assign(
                    targets=[gast.Tuple(elts=pair, ctx=gast.Store())],
                    value=new_call,
                    type_comment=None,
                ),
                s,
            )
        temps = [self.namer.temp() for _ in wrt_params]
        for t, node in zip(temps, arg_nodes):
            self.primal_of[t] = node.id
        back = gast.Call(func=name(bwd), args=[name(saved), name(self.d(target))], keywords=[])
        unpack = gast.Assign(
            targets=[gast.Tuple(elts=[name(t, gast.Store()) for t in temps], ctx=gast.Store())],
            value=back,
            type_comment=None,
        )
        adjoint = [unpack]
        adjoint_of = self.adjoint_of(s)
        for t, node in zip(temps, arg_nodes):
            adjoint.append(_accumulate(adjoint_of(node), name(t)))
        if checkpointed:
            return [clone(s)], [primal, *adjoint]
        return [primal], adjoint

    def track_fresh(self, s):
        target = s.targets[0].id
        v = s.value
        # an allocation, a copy, arithmetic, a ufunc: the declarations say (views.fresh)
        fresh = views.fresh(v, self.ctx.parsed.resolve, self.fresh_arrays)
        if isinstance(v, (gast.List, gast.Dict)):
            self.local_lists.add(target)
            fresh = True
        if fresh:
            self.fresh_arrays.add(target)
        else:
            self.fresh_arrays.discard(target)

    def array_write(self, s, depth):
        sub = s.targets[0]
        base = sub.value.id
        if base not in self.fresh_arrays:
            raise at(
                self.ctx,
                s,
                f"writing into {base!r}, which may be an argument of the function or a view of one",
                f"make a copy first ({base} = {base}.copy() or np.zeros_like(...)); the "
                "caller's arrays are never modified",
            )
        adjoint = []
        useful = base in self.act.useful_after[id(s)]
        varied_value = isinstance(s.value, gast.Name) and self.act.is_varied(s, s.value.id)
        if useful and (varied_value or self.act.is_varied(s, base)):
            dbase = name(self.d(base))
            slot = gast.Subscript(value=dbase, slice=clone(sub.slice), ctx=gast.Load())
            # the slot is cleared next: read a copy, not a view
            slot = gast.Call(
                func=gast.Attribute(
                    value=name(self.ctx.runtime_names["ops"]), attr="copy", ctx=gast.Load()
                ),
                args=[slot],
                keywords=[],
            )
            adjoint.append(comment(_line(self.ctx, s), s))
            if varied_value:
                ub = gast.Call(
                    func=gast.Attribute(
                        value=name(self.ctx.runtime_names["ops"]),
                        attr="unbroadcast",
                        ctx=gast.Load(),
                    ),
                    args=[slot, clone(s.value)],
                    keywords=[],
                )
                adjoint.append(_accumulate(self.d(s.value.id), ub))
            clear = gast.Assign(
                targets=[
                    gast.Subscript(
                        value=name(self.d(base)), slice=clone(sub.slice), ctx=gast.Store()
                    )
                ],
                value=const(0.0),
                type_comment=None,
            )
            adjoint.append(clear)
        adjoint.append(self.restore_marker(base, s, "slot"))
        return [s], adjoint

    def call_statement(self, s, depth):
        """A call for its effect: ``hs.append(h)`` has an adjoint (a pop); a method that
        changes a differentiated value is refused; anything else is a constant."""
        func = s.value.func
        if isinstance(func, gast.Name) and func.id == GRAD_HOOK:
            return [], self.grad_hook(s)
        attribute_writes.check(self.ctx.parsed, s, self.act.is_varied)
        if (
            isinstance(func, gast.Attribute)
            and func.attr == "append"
            and isinstance(func.value, gast.Name)
        ):
            return self.append(s, func.value.id)
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and self.act.is_varied(s, func.value.id)
        ):
            raise at(
                self.ctx,
                s,
                f"the method .{func.attr}() changes a value that is differentiated",
                "build a new value instead (only list.append is supported)",
            )
        return [s], []

    def grad_hook(self, s):
        """The block of ``with insert_grad_of(x) as dx:``, where the backward sweep
        reaches it, with ``dx`` the adjoint of ``x`` there."""
        x, dx, text = s.value.args[0].id, s.value.args[1].value, s.value.args[2].value
        adj = self.d(x)
        self.pops = True  # the user's lines may pop from an adjoint list
        block = gast.parse(text).body
        for stmt in block:
            for n in descendants(stmt):
                if isinstance(n, gast.Name) and n.id == dx:
                    n.id = adj
                if hasattr(n, "lineno"):
                    gast.copy_location(n, s)
        return [comment(f"insert_grad_of({x})", s), *block]

    def append(self, s, base):
        """``base.append(item)``: the adjoint pops the item's adjoint off ``d[base]``. On
        a list the function did not make, an append that no differentiated value takes
        part in (``self.log.append(step)``) runs as written."""
        item = s.value.args[0] if s.value.args else None
        varied_item = isinstance(item, gast.Name) and self.act.is_varied(s, item.id)
        if base not in self.local_lists and not (varied_item or self.act.is_varied(s, base)):
            return [s], []
        if base not in self.local_lists:
            raise at(
                self.ctx,
                s,
                f"appending to {base!r}, which was not created in this function",
                f"build a new list: {base} = list({base})",
            )
        useful = base in self.act.useful_after[id(s)]
        if not (useful and (varied_item or self.act.is_varied(s, base))):
            return [s], []
        self.pops = True
        pop = gast.Call(
            func=gast.Attribute(value=name(self.d(base)), attr="pop", ctx=gast.Load()),
            args=[],
            keywords=[],
        )
        if varied_item:
            return [s], [comment(_line(self.ctx, s), s), _accumulate(self.d(item.id), pop)]
        return [s], [gast.Expr(value=pop)]


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


def _accumulate(target: str, value, op=None):
    return gast.AugAssign(target=name(target, gast.Store()), op=op or gast.Add(), value=value)


def _targets(stmt):
    t = stmt.targets[0]
    if isinstance(t, gast.Tuple):
        return [e.id for e in t.elts]
    return [t.id]


def _bump(counter, origin):
    return assign(counter, gast.BinOp(left=name(counter), op=gast.Add(), right=const(1)), origin)


def _line(ctx, node):
    lineno = getattr(node, "lineno", None)
    if not lineno:
        return ""
    return linecache.getline(ctx.filename, lineno + ctx.line_offset).strip()
