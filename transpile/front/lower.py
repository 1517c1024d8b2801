"""Control-flow lowering: a single exit, and jumps that skip the rest of a loop body.

``returns`` turns every ``return`` into an assignment to one result variable (with
a flag and ``break`` inside loops); ``jumps`` moves what follows ``if c: break`` (or
``continue``) into the ``else`` branch, so each adjoint block runs exactly when its
primal block ran.
"""

import gast

from transpile.core.errors import at
from transpile.core.nodes import assign, const, name


class _Lowerer:
    """Single exit: every ``return`` becomes an assignment to a result variable."""

    def __init__(self, parsed, namer):
        self.parsed = parsed
        self.namer = namer
        self.result = None
        self.flag = None

    def function_body(self, body):
        if not any(isinstance(n, gast.Return) for n in _walk_stmts(body)):
            raise at(
                self.parsed,
                self.parsed.tree,
                "the function has no return statement",
                "return the scalar value to differentiate",
            )
        for node in _walk_stmts(body):
            if isinstance(node, gast.Return) and _is_none(node.value):
                raise at(
                    self.parsed,
                    node,
                    "this return gives None, which has no gradient",
                    "return the scalar value to differentiate",
                )
        if not _always_exits(body) and not _endless(body[-1]):
            raise at(
                self.parsed,
                body[-1],
                "the function can end without a return statement (it then returns None)",
                "return the scalar value to differentiate on every path",
            )
        last = body[-1] if body else None
        simple = (
            isinstance(last, gast.Return)
            and sum(isinstance(n, gast.Return) for n in _walk_stmts(body)) == 1
        )
        if simple:
            return body
        self.result = self.namer.fresh("result")
        # a flag records that a return happened, for code after a branch that may return
        self.flag = self.namer.fresh("returned")
        init = gast.Assign(
            targets=[name(self.flag, gast.Store())], value=const(False), type_comment=None
        )
        lowered = [gast.copy_location(init, body[0])] + self.block(body, in_loop=False)
        ret = gast.Return(value=name(self.result))
        return lowered + [gast.copy_location(ret, body[-1])]

    def block(self, stmts, in_loop):
        """``stmts`` with every return lowered; a statement that may return takes
        the statements after it into its own lowering, which ends the block here."""
        out = []
        for i, stmt in enumerate(stmts):
            lowered, took_rest = self._statement(stmt, stmts[i + 1 :], in_loop)
            out += lowered
            if took_rest:
                return out
        return out

    def _statement(self, stmt, rest, in_loop):
        """``(statements, took_rest)``: ``stmt`` lowered, and whether what follows it
        (``rest``) is now part of those statements, or unreachable."""
        if isinstance(stmt, gast.Return):
            return self._return(stmt, in_loop), True
        if isinstance(stmt, gast.If):
            return self._if(stmt, rest, in_loop)
        if isinstance(stmt, (gast.For, gast.While)):
            return self._loop(stmt, rest, in_loop)
        return [stmt], False

    def _return(self, stmt, in_loop):
        """``return v`` ==> ``result = v; returned = True`` (and ``break`` in a loop)."""
        value = stmt.value if stmt.value is not None else const(None)
        out = [
            gast.copy_location(
                gast.Assign(
                    targets=[name(self.result, gast.Store())], value=value, type_comment=None
                ),
                stmt,
            ),
            self._set_flag(stmt),
        ]
        if in_loop:
            out.append(gast.copy_location(gast.Break(), stmt))
        return out

    def _if(self, stmt, rest, in_loop):
        returns_in = any(isinstance(n, gast.Return) for n in _walk_stmts([stmt]))
        body_exits = _always_exits(stmt.body)
        else_exits = _always_exits(stmt.orelse)
        rest = rest if returns_in else []
        # what follows runs only on the path that did not return: it joins the
        # branch that may fall through, lowered together with it, so that a
        # return nested deeper in that branch also skips it
        if rest and body_exits and not else_exits:
            stmt.body = self.block(stmt.body, in_loop)
            stmt.orelse = self.block(stmt.orelse + rest, in_loop)
            return [stmt], True
        if rest and else_exits and not body_exits:
            stmt.body = self.block(stmt.body + rest, in_loop)
            stmt.orelse = self.block(stmt.orelse, in_loop)
            return [stmt], True
        stmt.body = self.block(stmt.body, in_loop)
        stmt.orelse = self.block(stmt.orelse, in_loop)
        if not rest:
            return [stmt], False
        if body_exits and else_exits:
            return [stmt], True  # the rest is unreachable
        return [stmt, *self._guard(rest, in_loop, stmt)], True

    def _loop(self, stmt, rest, in_loop):
        """A loop that may return breaks out of the enclosing loop too, or guards
        what follows it with the flag."""
        returns_in = any(isinstance(n, gast.Return) for n in _walk_stmts(stmt.body))
        stmt.body = self.block(stmt.body, in_loop=True)
        if not returns_in:
            return [stmt], False
        if in_loop:
            return [stmt, self._break_if_flag(stmt)], False
        if rest:
            return [stmt, *self._guard(rest, in_loop, stmt)], True
        return [stmt], False

    def _set_flag(self, origin):
        return gast.copy_location(
            gast.Assign(
                targets=[name(self.flag, gast.Store())], value=const(True), type_comment=None
            ),
            origin,
        )

    def _break_if_flag(self, origin):
        return gast.copy_location(
            gast.If(test=name(self.flag), body=[gast.Break()], orelse=[]), origin
        )

    def _guard(self, rest, in_loop, origin):
        test = gast.UnaryOp(op=gast.Not(), operand=name(self.flag))
        return [
            gast.copy_location(
                gast.If(test=test, body=self.block(rest, in_loop), orelse=[]), origin
            )
        ]


def _is_none(value):
    return value is None or isinstance(value, gast.Constant) and value.value is None


def _endless(stmt):
    """``while True:``: the only way out is a return (or a raise) inside."""
    return (
        isinstance(stmt, gast.While)
        and isinstance(stmt.test, gast.Constant)
        and bool(stmt.test.value)
        and not any(isinstance(n, gast.Break) for n in _walk_stmts(stmt.body))
    )


def _always_exits(stmts):
    for stmt in stmts:
        if isinstance(stmt, (gast.Return, gast.Raise, gast.Break, gast.Continue)):
            return True
        if isinstance(stmt, gast.If) and _always_exits(stmt.body) and _always_exits(stmt.orelse):
            return True
    # a lowered return ends with an assignment to the result followed by nothing else
    return False


def _walk_stmts(stmts):
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, gast.FunctionDef):
            continue  # its returns are its own
        for field in ("body", "orelse"):
            yield from _walk_stmts(getattr(stmt, field, []) or [])


def lower_jumps(stmts, parsed, namer, flag=None):
    """Make each adjoint block run exactly when its primal block ran: what follows
    ``if c: break`` (or ``continue``) moves into the ``else`` branch; where a jump
    happens on some paths only, a flag (``jumped``) records it and guards the rest.
    ``flag`` collects the flags of the enclosing loop."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, (gast.For, gast.While)):
            holder = []
            s.body = lower_jumps(s.body, parsed, namer, holder)
            # the loop's flags start each iteration False
            s.body = [assign(f, const(False), s) for f in holder] + s.body
            out.append(s)
            continue
        if isinstance(s, gast.If):
            s.body = lower_jumps(s.body, parsed, namer, flag)
            s.orelse = lower_jumps(s.orelse, parsed, namer, flag)
            rest = stmts[i + 1 :]
            body_jumps, else_jumps = _jumps(s.body), _jumps(s.orelse)
            if rest and (body_jumps or else_jumps):
                if body_jumps == "always" and else_jumps is None:
                    s.orelse = s.orelse + lower_jumps(rest, parsed, namer, flag)
                elif else_jumps == "always" and body_jumps is None:
                    s.body = s.body + lower_jumps(rest, parsed, namer, flag)
                elif not (body_jumps == "always" and else_jumps == "always"):
                    if flag is None:
                        raise at(parsed, s, "break or continue outside a loop")
                    # one flag per such branch: a jump in the code it guards must not
                    # change what this guard saw
                    jumped = namer.fresh("jumped")
                    flag.append(jumped)
                    _flag_jumps(s, jumped)
                    out.append(s)
                    # test the flag itself, not a value computed from it here: a jump
                    # skips this line, and the adjoint must still see that it jumped
                    out.append(
                        gast.copy_location(
                            gast.If(
                                test=name(jumped),
                                body=[gast.Pass()],
                                orelse=lower_jumps(rest, parsed, namer, flag),
                            ),
                            s,
                        )
                    )
                    return out
                out.append(s)
                return out
        out.append(s)
    return out


def _flag_jumps(stmt, flag):
    """Set ``flag`` just before every break/continue of this loop inside ``stmt``."""
    for field in ("body", "orelse"):
        block = getattr(stmt, field, None)
        if block is None or isinstance(stmt, (gast.For, gast.While)):
            continue
        new = []
        for s in block:
            if isinstance(s, (gast.Break, gast.Continue)):
                new.append(gast.copy_location(assign(flag, const(True), s), s))
            elif isinstance(s, gast.If):
                _flag_jumps(s, flag)
            new.append(s)
        setattr(stmt, field, new)


def _jumps(block):
    """'always' if the block ends in break/continue on every path, 'maybe', or None."""
    result = None
    for s in block:
        if isinstance(s, (gast.Break, gast.Continue)):
            return "always"
        if isinstance(s, gast.If):
            a, b = _jumps(s.body), _jumps(s.orelse)
            if a == "always" and b == "always":
                return "always"
            if a or b:
                result = "maybe"
    return result


def returns(parsed, namer, body):
    """``body`` with a single ``return``, its last statement."""
    return _Lowerer(parsed, namer).function_body(body)


def without_continues(stmts):
    """``stmts`` (a lowered loop body) without the ``continue`` statements of this loop:
    each already ends its path, so falling through to the end of the body is the same."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Continue):
            continue
        if isinstance(s, gast.If):
            s.body = without_continues(s.body) or [gast.Pass()]
            s.orelse = without_continues(s.orelse)
        out.append(s)
    return out


def jumps(body, parsed, namer):
    """``body`` with the statements after a ``break``/``continue`` guarded so that
    they run, and are differentiated, only when no jump happened."""
    return lower_jumps(body, parsed, namer)
