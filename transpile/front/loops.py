"""Checkpointed loops: ``for t in checkpointed(range(T), snapshots=20):`` (and ``while
checkpointed(cond, snapshots=k):``) become a call of a loop function whose body is a
*step*, so that the gradient keeps a few states instead of every step's values.

The marker returns its argument at run time, as ``stop_gradient`` does. In reverse mode
this stage moves the marked loop's body into a step function of its own,
``f_step(t, *state, *consts) -> state``: ``state`` holds the names the body assigns and
that are read again (by the next step or after the loop), ``consts`` the function's
other locals the body reads; globals and closure variables are read by the step as the
user's function reads them. The loop itself becomes ``state = f_loop(range(T), *state,
*consts)``, a function with the user's loop in it (run as written where nothing is
differentiated) that carries the step on it; ``replay`` makes the call's primal and
adjoint from the step's forward and adjoint pair (``runtime/revolve.py`` schedules
them). ``grad(f, checkpoint=k)`` marks every loop of ``f``'s body (not those nested in
others) with ``k`` snapshots; ``checkpoint=False`` and forward mode drop the markers
(forward mode keeps no tape), and the loop runs and is differentiated as written.

What a step cannot do is refused by name: leave the loop (``break``, ``return``), change
a list or an array made outside the loop in place (a step runs again in the backward
sweep), iterate over differentiated values (``replay``).
"""

import linecache
from dataclasses import dataclass

import gast

from transpile.core import emit
from transpile.core.errors import at
from transpile.core.nodes import clone, const, function_def, name
from transpile_runtime import checkpointed

REVERSE_MODES = ("grad", "value_and_grad", "vjp", "split")
_HINT = "write the loop without checkpointed(...), or move this out of the loop"


@dataclass(frozen=True)
class Loop:
    """What ``replay`` needs of a checkpointed loop, carried by its loop function."""

    step: object  # step(item, *state, *consts) -> state; no item for a while loop
    cond: object  # while loops: cond(*state, *consts) -> bool; None for a for loop
    snapshots: int
    carried: int  # how many leading arguments (after a for loop's items) are the state
    line: str  # the user's loop header, for the generated comment


def stage(fn, ctx):
    """Marked loops (and, with ``checkpoint=k``, the function's own loops) replaced by
    calls of their loop functions; the markers dropped where nothing is taped."""
    tree = fn.parsed.tree
    keep = ctx.mode in REVERSE_MODES and ctx.checkpoint is not False
    default = ctx.checkpoint if keep and isinstance(ctx.checkpoint, int) else None
    tree.body = _Rewrite(fn, ctx, keep, default).block(tree.body, top=True)
    return fn


class _Rewrite:
    def __init__(self, fn, ctx, keep, default):
        self.fn, self.ctx, self.keep, self.default = fn, ctx, keep, default
        self.parsed = fn.parsed

    def block(self, stmts, top=False):
        out = []
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                replaced = self.loop(s, top)
                if replaced is not s:  # the step's own transpilation sees the loops inside
                    out.append(replaced)
                    continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(s, field, self.block(inner))
            out.append(s)
        return out

    def marker(self, node):
        """The marker call's ``(argument, snapshots)``, or None if ``node`` is none."""
        if not (isinstance(node, gast.Call) and self.parsed.resolve(node.func) is checkpointed):
            return None
        keywords = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 + ("snapshots" not in keywords and len(node.args) > 1) or (
            set(keywords) - {"snapshots"}
        ):
            raise at(
                self.parsed,
                node,
                "checkpointed(...) takes the iterable (or the condition) and snapshots=",
                "write checkpointed(range(T), snapshots=20)",
            )
        count = keywords.get("snapshots", node.args[1] if len(node.args) > 1 else const(20))
        value = count.value if isinstance(count, gast.Constant) else self.parsed.resolve(count)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise at(
                self.parsed,
                node,
                "checkpointed(..., snapshots=) needs a number >= 1 known when the gradient is made",
                "write the number, or a global name of it",
            )
        return node.args[0], value

    def loop(self, s, top):
        head = s.iter if isinstance(s, gast.For) else s.test
        found = self.marker(head)
        if found is None and top and self.default is not None:
            found = head, self.default
        if found is None:
            return s
        if isinstance(s, gast.For):
            s.iter = found[0]
        else:
            s.test = found[0]
        if not self.keep:
            return s
        return _replace(self.fn, self.ctx, s, found[1])


def _replace(fn, ctx, loop, snapshots):
    """The call of the loop function that stands for ``loop``."""
    parsed = fn.parsed
    _refuse_jumps(parsed, loop)
    if loop.orelse:
        raise at(parsed, loop, "a checkpointed loop with an else: block", _HINT)
    names = _Names(parsed.tree, loop)
    targets = names.stored(loop.target) if isinstance(loop, gast.For) else set()
    read_after = targets & names.loaded_outside
    if read_after:
        raise at(
            parsed,
            loop,
            f"the loop variable {min(read_after)!r} is read after the checkpointed loop",
            "copy it to another name inside the loop",
        )
    stored = names.stored_body - targets
    unbound = sorted(stored & names.loaded_outside - names.bound_before)
    if unbound:
        raise at(
            parsed,
            loop,
            f"{unbound[0]!r} is first assigned in the checkpointed loop and read after it",
            f"give {unbound[0]!r} a value before the loop",
        )
    carried = names.ordered(
        stored & (names.loaded_outside | (names.bound_before & names.loaded_body))
    )
    local = names.locals_
    consts = names.ordered((names.loaded_body - stored - targets) & local)
    _refuse_effects(parsed, loop, stored | targets, local)
    base = parsed.name if parsed.name.isidentifier() else "lambda_"
    step_name, loop_name = fn.namer.fresh(f"{base}_step"), fn.namer.fresh(f"{base}_loop")
    info = _functions(fn, ctx, loop, carried, consts, step_name, loop_name, snapshots)
    parsed.bound[loop_name] = fn.namespace[loop_name] = info  # run as written where inactive
    fn.namespace[step_name] = info.__transpile_revolve__.step  # the primal calls it by name
    args = ([clone(loop.iter)] if isinstance(loop, gast.For) else []) + [
        name(n) for n in carried + consts
    ]
    value = gast.Call(func=name(loop_name), args=args, keywords=[])
    target = gast.Tuple(elts=[name(n, gast.Store()) for n in carried], ctx=gast.Store())
    if len(carried) == 1:  # a state of one value is passed and returned bare (revolve)
        target = name(carried[0], gast.Store())
    stmt = gast.Assign(targets=[target], value=value, type_comment=None)
    for node in gast.walk(stmt):  # every new node at the loop's line, for the comments
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            gast.copy_location(node, loop)
    return stmt


def _functions(fn, ctx, loop, carried, consts, step_name, loop_name, snapshots):
    """The loop function (with its ``Loop`` on it) and the step it carries, compiled
    against the user's globals and closure cells."""
    is_for = isinstance(loop, gast.For)
    state = gast.Tuple(elts=[name(n) for n in carried], ctx=gast.Load())
    if len(carried) == 1:
        state = name(carried[0])
    params = [name(n, gast.Param()) for n in carried + consts]
    body = [clone(s) for s in loop.body]
    if is_for and isinstance(loop.target, gast.Name):
        head = [name(loop.target.id, gast.Param())]
    elif is_for:
        item = fn.namer.fresh("item")
        head = [name(item, gast.Param())]
        body.insert(
            0, gast.Assign(targets=[clone(loop.target)], value=name(item), type_comment=None)
        )
    else:
        head = []
    step = _compile(fn, ctx, step_name, head + params, body + [gast.Return(value=state)])
    cond = None
    if not is_for:
        cond = _compile(
            fn, ctx, f"{step_name}_cond", clone(params), [gast.Return(value=clone(loop.test))]
        )
    items = fn.namer.fresh("items")
    whole = clone(loop)
    if is_for:
        whole.iter = name(items)
    looped = _compile(
        fn,
        ctx,
        loop_name,
        ([name(items, gast.Param())] if is_for else []) + clone(params),
        [whole, gast.Return(value=clone(state))],
    )
    line = emit_line(fn.parsed, loop)
    looped.__transpile_revolve__ = Loop(step, cond, snapshots, len(carried), line)
    return looped


def emit_line(parsed, node):
    return linecache.getline(parsed.filename, node.lineno + parsed.line_offset).strip()


def _compile(fn, ctx, fname, params, body):
    args = gast.arguments(
        args=params,
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    tree = function_def(fname, args, body)
    source = emit.to_source(tree)
    cells = dict(fn.parsed.cells)
    # closure variables become free variables of the compiled function, then the user's cells
    bound = dict.fromkeys(cells)
    label = f"{fname}, a checkpointed loop of {fn.parsed.name}"
    return emit.compile_function(source, fname, ctx.func.__globals__, bound, label, cells)


class _Names:
    """Which names the loop's body stores and loads, and which the rest of the function
    binds before it and reads outside it."""

    def __init__(self, tree, loop):
        self.order = {}
        self.stored_body, self.loaded_body = set(), set()
        self.loaded_outside = set()
        self.bound_before = _parameters(tree.args)
        self.locals_ = set(self.bound_before)
        inside = {id(n) for n in gast.walk(loop)}
        for node in gast.walk(tree):
            if isinstance(node, gast.Name):
                self.visit(node, id(node) in inside, loop.lineno)
        if isinstance(loop, gast.For):  # its header is read by the loop function, not the step
            self.loaded_body = {
                n.id
                for s in loop.body
                for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            }

    def visit(self, node, inside, line):
        self.order.setdefault(node.id, len(self.order))
        store = isinstance(node.ctx, (gast.Store, gast.Del))
        if store:
            self.locals_.add(node.id)
        if inside:
            (self.stored_body if store else self.loaded_body).add(node.id)
        elif store and getattr(node, "lineno", 0) < line:
            self.bound_before.add(node.id)
        elif not store:
            self.loaded_outside.add(node.id)

    @staticmethod
    def stored(target):
        return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}

    def ordered(self, names):
        return sorted(names, key=lambda n: self.order[n])


def _parameters(args):
    found = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs}
    return found | {a.id for a in (args.vararg, args.kwarg) if a is not None}


def _refuse_jumps(parsed, loop):
    """``break``/``continue`` of this loop, and ``return``/``yield`` anywhere in it."""

    def visit(stmts, nested):
        for s in stmts:
            if isinstance(s, (gast.Return, gast.Global, gast.Nonlocal)) or any(
                isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(s)
            ):
                what = type(s).__name__.lower()
                raise at(parsed, s, f"a {what} statement in a checkpointed loop", _HINT)
            if isinstance(s, (gast.Break, gast.Continue)) and not nested:
                what = type(s).__name__.lower()
                raise at(
                    parsed,
                    s,
                    f"{what} in a checkpointed loop: its steps are replayed one by one",
                    "compute a flag and skip the step's work with if, or leave the loop unmarked",
                )
            if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
                raise at(parsed, s, "a def or class inside a checkpointed loop", _HINT)
            inner = nested or isinstance(s, (gast.For, gast.While))
            for field in ("body", "orelse", "finalbody", "handlers"):
                part = getattr(s, field, None)
                if isinstance(part, list):
                    visit([p for p in part if isinstance(p, gast.stmt)], inner)

    visit(loop.body, False)


def _refuse_effects(parsed, loop, inside, local):
    """A write into, or a method call on, a value made outside the loop: the backward
    sweep runs steps again, so the effect would happen again."""
    for node in gast.walk(gast.Module(body=loop.body, type_ignores=[])):
        base = None
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(
            node.ctx, (gast.Store, gast.Del)
        ):
            base = node.value
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
            func = node.value.func
            base = func.value if isinstance(func, gast.Attribute) else None
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if isinstance(base, gast.Name) and base.id not in inside and base.id in local:
            raise at(
                parsed,
                node,
                f"the checkpointed loop changes {base.id!r}, made before it, in place; "
                "the backward sweep runs its steps again",
                f"build a new value each step ({base.id} = ...), e.g. a running sum "
                "instead of a list appended to",
            )
