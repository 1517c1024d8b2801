"""The marked regions of ``exceptions`` printed back as ``try`` and ``with`` statements.

Every stage before this one sees a lowered ``try`` as a branch (``caught =
__try__(k, E...)`` and the ``if caught:`` after it) and a ``with`` or ``finally`` as
straight-line code between markers. Here, in each function to compile,

    caught = __try__(k, E)             try:
    if caught:                             B
        U                              except E as exception:
    else:                                  caught = 1
        B                                  e = exception     (for each e = __exception__(k))
                                           U
                                       else:
                                           caught = 0

with ``caught = ops.except_clause(exception, E1, E2)`` for several except clauses;
``x = __with__(k, cm)`` ... ``__end__(k)`` is ``with cm as x:`` around what lies
between, and ``__region__(k)`` ... ``__finally__(k)`` F ``__end__(k)`` is
``try:``/``finally: F``. A ``__try__`` whose branch the dead-code pass removed (its
block assigned nothing anyone reads) is ``caught = 0``.
"""

import gast

from transpile.core.ir import CAUGHT, END, FINALLY, REGION, TRY, WITH
from transpile.core.nodes import all_stmts, assign, calls_marker, const, descendants, name


def stage(fn, ctx):
    """Markers printed back as the ``try`` and ``with`` statements they stand for."""
    for out in fn.outputs:
        if out.body is not None:  # (None: left to ``out.compact``, where there are none)
            out.body = run(out.body, fn.namer, fn.names["ops"])
        if out.anf is not None:
            out.anf = run(out.anf, fn.namer, fn.names["ops"])
    return fn


def has_markers(body) -> bool:
    """Whether ``body`` holds a marker of a region: then ``run`` rewrites it."""
    return any(_marker(s) for s in all_stmts(body))


def run(body, namer, ops_name):
    """``body`` with its markers made ``try`` and ``with`` statements."""
    if not has_markers(body):
        return body
    caught = {}  # try number -> the statements binding what it caught (e = __exception__(k))
    for s in all_stmts(body):
        if calls_marker(s, CAUGHT):
            caught.setdefault(s.value.args[0].value, []).append(s)
    dropped = {id(s) for found in caught.values() for s in found}
    return _Printer(namer, ops_name, caught, dropped).block(body)


def _marker(s):
    value = getattr(s, "value", None)
    func = getattr(value, "func", None)
    return (
        isinstance(s, (gast.Expr, gast.Assign))
        and isinstance(value, gast.Call)
        and isinstance(func, gast.Name)
        and func.id in (TRY, WITH, REGION, FINALLY, END, CAUGHT)
    )


def _number(s):
    return s.value.args[0].value


class _Printer:
    def __init__(self, namer, ops_name, caught, dropped):
        self.namer, self.ops, self.caught, self.dropped = namer, ops_name, caught, dropped

    def block(self, stmts):
        out, i = [], 0
        while i < len(stmts):
            s = stmts[i]
            if id(s) in self.dropped:
                i += 1
            elif calls_marker(s, TRY):
                i = self.attempt(stmts, i, out)
            elif calls_marker(s, WITH) or calls_marker(s, REGION):
                i = self.region(stmts, i, out)
            else:
                for field in ("body", "orelse"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list) and isinstance(s, (gast.If, gast.For, gast.While)):
                        setattr(s, field, self.block(inner) or [gast.Pass()] * (field == "body"))
                out.append(s)
                i += 1
        return out

    def attempt(self, stmts, i, out):
        """``caught = __try__(k, E...)`` and its branch, from ``stmts[i]``: the ``try``
        statement; returns the index after them."""
        head = stmts[i]
        caught, k, types = head.targets[0].id, _number(head), head.value.args[1:]
        j = i + 1  # past what runs before the branch
        while j < len(stmts) and _before(stmts[j], caught):
            j += 1
        out.extend(stmts[i + 1 : j])
        undo, body = _parts(stmts[j] if j < len(stmts) else None, caught)
        if body is None:  # nothing of the block is left to run
            out.append(assign(caught, const(0), head))
            return j
        held = self.caught.get(k, [])
        exception = self.namer.fresh("exception") if held or len(types) > 1 else None
        if len(types) == 1:
            which = const(1)
        else:
            which = gast.Call(
                func=gast.Attribute(value=name(self.ops), attr="except_clause", ctx=gast.Load()),
                args=[name(exception), *types],
                keywords=[],
            )
        handler = gast.ExceptHandler(
            type=types[0] if len(types) == 1 else gast.Tuple(elts=list(types), ctx=gast.Load()),
            name=name(exception, gast.Store()) if exception else None,
            body=[
                assign(caught, which, head),
                *(assign(s.targets[0].id, name(exception), s) for s in held),
                *self.block(undo),
            ],
        )
        # a branch run only where the block completed (its tangents, the else clause)
        # is the try statement's else clause
        after = stmts[j + 1] if j + 1 < len(stmts) else None
        _, completed = _parts(after, caught)
        statement = gast.Try(
            body=self.block(body),
            handlers=[gast.copy_location(handler, head)],
            orelse=[assign(caught, const(0), head), *self.block(completed or [])],
            finalbody=[],
        )
        out.append(gast.copy_location(statement, head))
        return j + 1 + (completed is not None)

    def region(self, stmts, i, out):
        """A ``with`` block or a ``try``/``finally`` from ``stmts[i]`` to its end marker;
        returns the index after it."""
        start, k = stmts[i], _number(stmts[i])
        end = next(j for j in range(i + 1, len(stmts)) if _ends(stmts[j], END, k))
        inner = stmts[i + 1 : end]
        if calls_marker(start, WITH):
            target = start.targets[0] if isinstance(start, gast.Assign) else None
            item = gast.withitem(context_expr=start.value.args[1], optional_vars=target)
            statement = gast.With(items=[item], body=self.block(inner) or [gast.Pass()])
        else:
            middle = next(j for j, s in enumerate(inner) if _ends(s, FINALLY, k))
            statement = gast.Try(
                body=self.block(inner[:middle]) or [gast.Pass()],
                handlers=[],
                orelse=[],
                finalbody=self.block(inner[middle + 1 :]) or [gast.Pass()],
            )
        out.append(gast.copy_location(statement, start))
        return end + 1


def _before(s, caught):
    """Whether ``s``, between ``__try__`` and its branch, runs before the try statement:
    what the tape stage starts as None there, and the pushes of the block's values."""
    return not isinstance(s, (gast.If, gast.For, gast.While)) and caught not in {
        n.id for n in descendants(s) if isinstance(n, gast.Name)
    }


def _ends(s, marker, k):
    return calls_marker(s, marker) and _number(s) == k


def _parts(branch, caught):
    """``(undo, block)`` of the branch after ``__try__``: ``if caught: undo else: block``,
    or, turned around where nothing is undone, ``if not caught: block``."""
    if not isinstance(branch, gast.If):
        return [], None
    test = branch.test
    if isinstance(test, gast.Name) and test.id == caught and branch.orelse:
        undo = [s for s in branch.body if not isinstance(s, gast.Pass)]
        return undo, branch.orelse
    if (
        isinstance(test, gast.UnaryOp)
        and isinstance(test.op, gast.Not)
        and isinstance(test.operand, gast.Name)
        and test.operand.id == caught
        and not branch.orelse
    ):
        return [], branch.body
    return [], None
