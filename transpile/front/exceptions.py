"""``try``/``except``/``else``/``finally`` and ``with``: branches and marked regions.

``stage`` rewrites the user's function (after ``names``, before ``objects``) so that
every later pass sees only branches and plain statements. A ``try`` becomes a
branch on which clause ran, recorded as a branch's test is:

    try:                           caught = __try__(k, E1, E2)
        B                          if caught:
    except E1 as e:                    pass              (record: the undo of B's pushes)
        H1                         else:
    except E2:                         B
        H2                         if caught == 1:       (one handler: if caught:)
    else:                              e = __exception__(k)
        EL                             H1
                                   elif caught == 2:
                                       H2
                                   else:
                                       EL

``caught`` is 0 where ``B`` completed and ``i`` where the ``i``-th clause caught what
it raised; ``regions`` prints the first branch back as ``try:``/``except`` around ``B``
(``caught`` set there), so the adjoint of ``B`` runs exactly when ``B`` completed and
the adjoint of a handler when that handler ran. An exception leaves ``B`` part-way:
what its completed statements assigned is then restored before the handler runs
(``record`` pushes it before ``B`` and the handler pops it back), which is Python's
behaviour wherever the handler and what follows do not read those names; where they
may, ``check`` refuses the function, naming the variable.

``with cm as x: B`` becomes ``x = __with__(k, cm)``, ``B``, ``__end__(k)``, and
``finally: F`` marks ``__region__(k)``, the lowered try, ``__finally__(k)``, ``F``,
``__end__(k)``: straight-line code to every pass, printed back by ``regions`` as the
``with`` and ``try``/``finally`` they were, so ``__exit__`` and ``F`` run also when an
exception leaves the block.
"""

import gast

from transpile.core.errors import at
from transpile.core.ir import CAUGHT, END, FINALLY, REGION, TRY, WITH
from transpile.core.nodes import assign, call, calls_marker, const, descendants, name, stores
from transpile_runtime import insert_grad_of

_SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Pass, gast.Raise)
_JUMPS = (gast.Return, gast.Break, gast.Continue)


def stage(fn, ctx):
    """``try`` and ``with`` statements made branches and marked regions."""
    tree = fn.parsed.tree
    if any(isinstance(n, (gast.Try, gast.With)) for n in descendants(tree)):
        tree.body = _Lowering(fn.parsed, fn.namer).block(tree.body)
    return fn


def is_attempt(head, s) -> bool:
    """Whether ``s`` is the branch of the lowered try ``head`` (``caught = __try__``)."""
    return (
        calls_marker(head, TRY)
        and isinstance(s, gast.If)
        and isinstance(s.test, gast.Name)
        and s.test.id == head.targets[0].id
    )


# checks, on the user's syntax (``fence``) -------------------------------------------
def check(parsed, node) -> None:
    """Raise TranspileError where ``node`` (a ``try`` or ``with``) cannot be run as
    written and differentiated exactly."""
    if isinstance(node, gast.With):
        _check_with(parsed, node)
    else:
        _check_try(parsed, node)


def _check_with(parsed, node):
    for item in node.items:
        if item.optional_vars is not None and not isinstance(item.optional_vars, gast.Name):
            raise at(
                parsed,
                node,
                "a `with ... as` target that is not a single name",
                "bind one name (`with cm as c:`) and unpack it inside the block",
            )
    body = node.body
    last = body[-1] if body else None
    for n in _walk(body):
        if isinstance(n, _JUMPS) and not (n is last and isinstance(n, gast.Return)):
            raise at(
                parsed,
                n,
                f"`{_keyword(n)}` inside a `with` block (other than a return at its end)",
                "set a variable in the block and return (or break) after it",
            )


def _check_try(parsed, node):
    if node.finalbody:
        for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
            for n in _walk(part):
                if isinstance(n, _JUMPS):
                    raise at(
                        parsed,
                        n,
                        f"`{_keyword(n)}` in a try statement that has a `finally:` clause",
                        "set a variable in the try statement and return (or break) after it",
                    )
    for i, h in enumerate(node.handlers):
        if h.type is None and i != len(node.handlers) - 1:
            raise at(parsed, h, "a bare `except:` before other except clauses")
    if not node.handlers:
        return  # try/finally: the block runs to its end, or the exception leaves
    assigned = set()
    for k, s in enumerate(node.body):
        if not isinstance(s, _SIMPLE) and not (
            isinstance(s, gast.Return) and k == len(node.body) - 1
        ):
            raise at(
                parsed,
                s,
                f"a {_keyword(s)} statement inside a try block",
                "move it into a function of yours and call that in the try block, or "
                "compute it before the try",
            )
        _check_try_statement(parsed, s, assigned)
    _check_exposed(parsed, node)


def _check_try_statement(parsed, s, assigned):
    """One statement of a try block: no in-place change of a value (an exception may
    come after it) and no name assigned twice (what the handler restores is the value
    before the try)."""
    for n in descendants(s):
        if isinstance(n, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            raise at(
                parsed,
                s,
                "a comprehension inside a try block",
                "compute it before the try, or in a function of yours called in the try block",
            )
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, gast.Store):
            raise at(
                parsed,
                s,
                "a write into an array, list or object inside a try block",
                "compute the value in the try block and write it after the try (or in "
                "its `else:` clause)",
            )
    if isinstance(s, gast.Expr) and _method_of_local(parsed, s.value):
        raise at(
            parsed,
            s,
            "a method call that may change a value inside a try block",
            "call it after the try (or in its `else:` clause)",
        )
    for x in _stored(s):
        if x in assigned:
            raise at(
                parsed,
                s,
                f"`{x}` is assigned twice in the try block",
                f"give the second value a new name, or assign `{x}` after the try",
            )
        assigned.add(x)


def _method_of_local(parsed, value):
    f = getattr(value, "func", None)
    return (
        isinstance(value, gast.Call)
        and isinstance(f, gast.Attribute)
        and isinstance(f.value, gast.Name)
        and f.value.id in parsed.local_names
    )


def _check_exposed(parsed, node):
    """A name that a statement of the try block assigns before a later one raises holds
    the new value in Python; the handler sees the old one restored. Refuse where the
    handler, or anything after it, may read it."""
    for k, s in enumerate(node.body[:-1]):
        for x in _stored(s):
            if all(_killed(h.body, x) for h in node.handlers):
                continue
            if _read_where_caught(parsed.tree, node, k, x):
                raise at(
                    parsed,
                    s,
                    f"`{x}` is assigned in the try block before a later line of it may "
                    "raise, and is read where the except clause leads",
                    f"assign `{x}` in every except clause too, or move this line into the "
                    "`else:` clause",
                )


def _read_where_caught(tree, node, k, x):
    """Whether the function may read ``x`` other than in the lines of the try block
    after its ``k``-th and in the ``else:`` clause (which run only where it completed)."""
    safe = {id(n) for t in (*node.body[k + 1 :], *node.orelse) for n in descendants(t)}
    return any(
        isinstance(n, gast.Name)
        and n.id == x
        and isinstance(n.ctx, gast.Load)
        and id(n) not in safe
        for n in descendants(tree)
    )


def _killed(block, x):
    """Whether ``block`` assigns ``x`` at its top level before anything reads it."""
    for s in block:
        if isinstance(s, gast.Assign) and x in _stored(s):
            return x not in _names(s.value)
        if x in _names(s):
            return False
    return False


def _names(node):
    return {n.id for n in descendants(node) if isinstance(n, gast.Name)}


def _stored(s):
    if isinstance(s, gast.AnnAssign) and isinstance(s.target, gast.Name):
        return [s.target.id]
    return stores(s)


def _keyword(s):
    words = {gast.Return: "return", gast.Break: "break", gast.Continue: "continue"}
    return words.get(type(s), type(s).__name__.lower())


def _walk(stmts):
    """The statements of ``stmts`` at any depth, not entering nested functions."""
    for s in stmts:
        yield s
        if isinstance(s, (gast.FunctionDef, gast.Lambda)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _walk(getattr(s, field, None) or [])
        for h in getattr(s, "handlers", None) or []:
            yield from _walk(h.body)


# lowering ---------------------------------------------------------------------------
class _Lowering:
    def __init__(self, parsed, namer):
        self.parsed, self.namer = parsed, namer
        self.regions = 0

    def block(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.Try):
                out.extend(self.try_statement(s))
                continue
            if isinstance(s, gast.With) and not self.grad_hook(s):
                out.extend(self.with_statement(s))
                if out and isinstance(out[-1], gast.Return):
                    return out  # what follows a with block that returns never runs
                continue
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                    setattr(s, field, self.block(inner))
            out.append(s)
        return out

    def grad_hook(self, s):
        func = getattr(s.items[0].context_expr, "func", None)
        return func is not None and self.parsed.resolve(func) is insert_grad_of

    def region(self):
        self.regions += 1
        return self.regions

    def marker(self, marker, args, origin):
        return gast.copy_location(gast.Expr(value=call(name(marker), args, origin)), origin)

    def with_statement(self, s):
        """``with a as x, b: B`` ==> ``x = __with__(k, a)``, ``__with__(k + 1, b)``, B, the
        ends; a return ending ``B`` returns after the ends, as Python's does."""
        body = self.block(s.body)
        returned = None
        if body and isinstance(body[-1], gast.Return):
            result = self.namer.fresh("result")
            returned = gast.copy_location(gast.Return(value=name(result)), body[-1])
            body[-1] = assign(result, body[-1].value or const(None), body[-1])
        starts, ends = [], []
        for item in s.items:
            k = self.region()
            enter = call(name(WITH), [const(k), item.context_expr], s)
            if item.optional_vars is not None:
                starts.append(assign(item.optional_vars.id, enter, s))
            else:
                starts.append(gast.copy_location(gast.Expr(value=enter), s))
            ends.insert(0, self.marker(END, [const(k)], s))
        return starts + body + ends + ([returned] if returned else [])

    def try_statement(self, s):
        if not s.handlers:  # try/finally: nothing is caught, no branch
            return self.finally_region(s, self.block(s.body))
        k = self.region()
        caught = self.namer.fresh("caught")
        types = [h.type if h.type is not None else name("BaseException") for h in s.handlers]
        head = assign(caught, call(name(TRY), [const(k), *types], s), s)
        block = self.block(s.body)
        if block and isinstance(block[-1], (gast.Return, gast.Raise)):
            # the block ends the function (or raises): where it raised, the handlers run,
            # and the else clause never does; so every path of the branch ends
            handlers = self.handlers(s, k, caught, None)
            attempt = gast.If(test=name(caught), body=handlers, orelse=block)
            lowered = [head, gast.copy_location(attempt, s)]
        else:
            attempt = gast.If(test=name(caught), body=[gast.Pass()], orelse=block)
            branches = self.handlers(s, k, caught, self.block(s.orelse))
            lowered = [head, gast.copy_location(attempt, s), *branches]
        if not s.finalbody:
            return lowered
        return self.finally_region(s, lowered)

    def handlers(self, s, k, caught, otherwise):
        """The except clauses as a branch on ``caught`` (``otherwise``: where none ran);
        with ``otherwise`` None (none is reached then), the last clause is the else."""
        branches = otherwise
        for i in reversed(range(len(s.handlers))):
            h = s.handlers[i]
            body = self.handler(h, k)
            if branches is None:
                branches = body
                continue
            if len(s.handlers) == 1:
                test = name(caught)
            else:
                test = gast.Compare(left=name(caught), ops=[gast.Eq()], comparators=[const(i + 1)])
            branches = [gast.copy_location(gast.If(test=test, body=body, orelse=branches), h)]
        return branches

    def finally_region(self, s, lowered):
        f = self.region()
        return [
            self.marker(REGION, [const(f)], s),
            *lowered,
            self.marker(FINALLY, [const(f)], s.finalbody[0]),
            *self.block(s.finalbody),
            self.marker(END, [const(f)], s),
        ]

    def handler(self, h, k):
        """The handler's block, first binding the exception caught where it is named
        (``as e``) or raised again (a bare ``raise``)."""
        body = self.block(h.body)
        bare = [n for n in _walk(body) if isinstance(n, gast.Raise) and n.exc is None]
        exc = h.name if isinstance(h.name, str) else getattr(h.name, "id", None)
        if exc is None and not bare:
            return body
        if exc is None:
            exc = self.namer.fresh("exception")
        for r in bare:
            r.exc = name(exc)
        bind = assign(exc, call(name(CAUGHT), [const(k)], h), h)
        return [bind, *body]
