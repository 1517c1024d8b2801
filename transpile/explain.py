"""``explain(g)``: for every line of the differentiated function (and of the user
functions it calls), whether it has an adjoint, and if not, why.

The facts are the compiler's own: the stages are run again for the gradient
(``pipeline.remake``, from the recipe its ``Generated`` keeps): through ``cuts`` for
the normal form and its activity facts, read statement by statement through
``cuts.Flow``, and through ``inline`` for the functions compiled, whose lines under
each ``# grad of:`` comment (``# tangent of:`` for a jvp) are that line's adjoint,
located by the line number the comment node carries. A line's statements are ranked
(an adjoint wins over a stop, a stop over an integer cut, ...), and the line gets
the status and reason of its first statement:

    active     it has an adjoint (``adjoint``: the generated lines)
    stopped    stop_gradient(...) on it, or its value reaches the output only through one
    integer    an integer or boolean result of a differentiated value (int(), len(), >)
    nondiff    a non-differentiable function of a differentiated value (np.floor, a draw)
    shift      a max shift the result does not depend on (no adjoint needed)
    unused     it depends on ``wrt`` but does not reach the output
    inactive   it does not depend on ``wrt`` (``chain``: the names that would have
               connected it, up to the cut)
    control    a branch or loop header: its body's lines are explained one by one
    refused    refused in a variant: the line that keeps the gradient from having shape
               variants (a ``while`` loop, a branch, ``np.unique``, a mask index), which
               then always runs its generic code; nothing of it is differentiated

A gradient with no shape variants because of one of its lines (``fixed_shapes.refusal``
finds the generated statement; with example arguments, also one the variant stages
could not specialize for them) names that line: its ``variant`` field says why, and
that is the only line with one. Where it would be ``inactive`` or ``control`` (nothing
of it differentiated: the refusal is the news), its status is ``refused``, its reason
``no shape variant: <why>``, followed for an inactive one by ``; besides, inactive:
...`` (its ``chain`` kept); any other status (``active`` with its adjoint lines,
``stopped``, ...) is kept, its reason followed by ``; no shape variant: <why>``. The
other lines keep their statuses.

A user function called but not differentiated (its call is stopped, inactive or
unused) is listed too, each line with its call's status.
"""

import dataclasses
import html
import linecache
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

from transpile import pipeline
from transpile.analysis import cuts
from transpile.analysis.cuts import INTEGER, NONDIFF, SHIFT, STOPPED, UNUSED
from transpile.backend import fixed_shapes
from transpile.core import emit, recursion
from transpile.core.errors import TranspileError
from transpile.core.ir import COMMENT
from transpile.core.nodes import all_stmts, function_def
from transpile.front import parse

ACTIVE = "active"
INACTIVE = "inactive"
CONTROL = "control"
REFUSED = "refused"  # refused in a variant: the line that keeps shape variants from being made
# a line takes the status of its statement that comes first here
_RANK = (ACTIVE, STOPPED, INTEGER, NONDIFF, SHIFT, UNUSED, INACTIVE, CONTROL)
_NO_VARIANT = "no shape variant: "
# the comments over each line's derivative: an adjoint's (reverse mode), a tangent's (jvp)
_HEADS = ("grad of: ", "tangent of: ")
_THROUGH = "its value reaches the output only through "


@dataclass(frozen=True)
class Line:
    """One line of the user's source, and what differentiation did with it."""

    function: str  # the user's function it is in
    filename: str
    lineno: int  # in ``filename``
    text: str  # the line, stripped
    status: str  # ACTIVE, STOPPED, INTEGER, NONDIFF, SHIFT, UNUSED, INACTIVE, CONTROL, REFUSED
    reason: str  # why, in words
    generated: str = ""  # the generated function holding its adjoint
    adjoint: tuple = ()  # the generated lines of its adjoint (under its ``# grad of:``)
    adjoint_lines: tuple = ()  # their numbers, counted from 1, in ``generated``'s source
    chain: tuple = ()  # inactive: names from a ``wrt`` argument to it, cut on the way
    variant: str = ""  # why this line keeps the gradient from having shape variants


@dataclass(frozen=True)
class Function:
    """One user function explained: its generated functions and their sources."""

    name: str
    filename: str
    first_line: int  # of its ``def``
    last_line: int
    wrt: tuple  # the differentiated parameters' names
    sources: tuple  # (generated name, source) of its forward/adjoint functions
    note: str = ""  # for a function not differentiated: why
    size: int = 0  # how many of the explanation's lines, in order, are its


class Explanation:
    """The lines of ``explain(g)``: a sequence of ``Line`` records, printed as text,
    shown in Jupyter as the user's source with each line marked."""

    def __init__(self, lines, functions):
        self.lines = tuple(lines)
        self.functions = tuple(functions)

    def blocks(self):
        """``(Function, its lines)`` for each function explained, in order."""
        at = 0
        for f in self.functions:
            yield f, self.lines[at : at + f.size]
            at += f.size

    def __iter__(self):
        return iter(self.lines)

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]

    def at(self, lineno, function=None):
        """The record of line ``lineno`` (of ``function``, by name, where several
        functions are explained)."""
        for line in self.lines:
            if line.lineno == lineno and function in (None, line.function):
                return line
        raise KeyError(f"no line {lineno} in the explanation")

    def status(self):
        """``{(function, lineno): status}``: what tests and tools compare."""
        return {(line.function, line.lineno): line.status for line in self.lines}

    def __repr__(self):
        return f"<Explanation of {', '.join(f.name for f in self.functions)}: {len(self)} lines>"

    def __str__(self):
        out = []
        for f, lines in self.blocks():
            wrt = ", ".join(f.wrt)
            title = f"{f.name} ({os.path.basename(f.filename)}:{f.first_line})"
            out.append(
                title
                + (f", with respect to {wrt}" if wrt else "")
                + (f": {f.note}" if f.note else "")
            )
            for line in lines:
                out.append(f"{line.lineno:>6}  {line.status:<9} {line.text}")
                if line.reason != f.note:
                    out.append(f"{'':17}{line.reason}")
                for number, text in zip(line.adjoint_lines, line.adjoint):
                    out.append(f"{'':17}| {line.generated}:{number:<4} {text}")
            out.append("")
        return "\n".join(out).rstrip() + "\n"

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))

    def _repr_html_(self):
        colors = {
            ACTIVE: "#e6f4e6",
            STOPPED: "#fde8d0",
            INTEGER: "#f6e0f6",
            NONDIFF: "#f6e0f6",
            SHIFT: "#eeeeee",
            UNUSED: "#fff6c8",
            INACTIVE: "#eeeeee",
            CONTROL: "#ffffff",
            REFUSED: "#fbd5d5",
        }
        parts = []
        for f, lines in self.blocks():
            by_line = {line.lineno: line for line in lines}
            head = html.escape(f"{f.name} ({f.filename}:{f.first_line})")
            if f.note:
                head += " &mdash; " + html.escape(f.note)
            rows = []
            for n in range(f.first_line, f.last_line + 1):
                text = html.escape(linecache.getline(f.filename, n).rstrip("\n"))
                line = by_line.get(n)
                if line is None:
                    rows.append(
                        f"<tr><td>{n}</td><td></td><td><pre>{text}</pre></td><td></td></tr>"
                    )
                    continue
                adjoint = html.escape("\n".join(line.adjoint))
                refused = "<br><small>no variant</small>" if line.variant else ""
                rows.append(
                    f'<tr style="background:{colors[line.status]}"><td>{n}</td>'
                    f"<td><b>{line.status}</b>{refused}</td><td><pre>{text}</pre>"
                    f"<small>{html.escape(line.reason)}</small></td>"
                    f"<td><pre>{adjoint}</pre></td></tr>"
                )
            parts.append(
                f"<p><code>{head}</code></p><table style='font-size:90%'>"
                "<tr><th>line</th><th>status</th><th>source</th><th>adjoint</th></tr>"
                + "".join(rows)
                + "</table>"
            )
        return "".join(parts)


def explain(g: Callable[..., Any], *example_args: Any) -> Explanation:
    """Why each line of the function ``g`` differentiates has an adjoint or none.

    ``g`` is a gradient made by ``grad``, ``value_and_grad`` or ``vjp``. With example
    arguments (needed for one that waits for the functions it is passed, as for
    ``source``), the adjoint lines shown are those of the shape variant that runs for
    them, or the generic gradient's, with the reason none is made."""
    deferred = getattr(g, "__transpile_deferred__", None)
    if deferred is not None:
        if not example_args:
            raise TypeError("this gradient is made per call: explain it with explain(g, *args)")
        g = deferred(example_args)
    dispatcher = getattr(g, "__transpile_dispatch__", None)
    if dispatcher is not None:
        g = dispatcher.current().function  # after a rebound global: the gradient now run
    generated = getattr(g, "__transpile_generated__", None)
    if generated is None or generated.recipe is None:
        raise TypeError(f"{g!r} is not a gradient made by transpile's grad, value_and_grad or vjp")
    variant, note, failed = _variant(g, example_args)
    lines, functions = [], []
    _explain(generated, lines, functions, set(), variant, note, (g, failed))
    return Explanation(lines, functions)


def _variant(entry, example_args):
    """``(the shape variant for example_args or None, the note saying which lines
    are shown, (statement, why) where the variant stages could not specialize one)``;
    no note without example arguments."""
    if not example_args or getattr(entry, "__transpile_dispatch__", None) is None:
        return None, "", None
    # before ``compact``: one operation per line, so that each line's adjoint is its own
    made, why, stmt = pipeline.variant_attempt(entry, example_args, until="guard_return")
    if made is None:
        failed = None if stmt is None else (stmt, f"it could not be specialized {why}")
        return None, f"no shape variant is made {why}; the generic gradient's lines", failed
    return made, "the shape variant for these arguments, one operation per line", None


def _refused(entry, failed, generated, offset, user):
    """``(first line of the user statement, why)`` of the line that keeps the gradient
    ``entry`` from having shape variants (``failed``: what the variant stages could not
    specialize for the example arguments), or None where no line is to blame."""
    dispatch = getattr(entry, "__transpile_dispatch__", None)
    if dispatch is None or generated.callees:  # jvp; user functions called
        return None
    dispatcher = dispatch.current()
    if dispatcher.specializable:
        if failed is None:
            return None
        (stmt, why), body = failed, dispatcher.body
    else:
        fn = pipeline.remake(generated.recipe, until="fixed_shapes")
        stmt, why = fixed_shapes.refusal_of(fn, generated.recipe.ctx)
        body = fn.outputs[-1].body if fn.outputs else []
    line = None if stmt is None else _statement_line(body, stmt, offset, user)
    return None if line is None else (line, why)


def _statement_line(body, stmt, offset, user):
    """The user line of the generated ``stmt`` of ``body``: its own line number, or
    that of the statement before it that has one (an adjoint's, its ``# grad of:``)."""
    last = None
    for s in all_stmts(body):
        last = getattr(s, "lineno", None) or last
        if s is stmt:
            break
    else:
        last = getattr(stmt, "lineno", None)
    return None if last is None else _owner(user, last + offset)


def _refusal_and_note(top, generated, fn, user, note):
    """``(the refusing line and why, or None; the note)``: with example arguments, the
    note names the line that keeps the variant from being made."""
    if top is None:
        return None, note
    refused = _refused(*top, generated, fn.parsed.line_offset, user)
    if refused is not None and note:
        note = (
            f"no shape variant is made: line {refused[0]} refuses it; the generic gradient's lines"
        )
    return refused, note


def _with_refusal(line, refused):
    """``line``, marked as the one that refuses shape variants where it is."""
    if refused is None or refused[0] != line.lineno:
        return line
    why = refused[1]
    if line.status not in (INACTIVE, CONTROL):  # what it says of the adjoint comes first
        return dataclasses.replace(line, reason=f"{line.reason}; {_NO_VARIANT}{why}", variant=why)
    reason = _NO_VARIANT + why
    if line.status == INACTIVE:
        reason += f"; besides, inactive: {line.reason}"
    return dataclasses.replace(line, status=REFUSED, reason=reason, variant=why)


def _explain(generated, lines, functions, seen, variant=None, note="", top=None):
    """Explain ``generated`` and the callees it differentiates (each once); ``variant``:
    the shape variant whose body the gradient's adjoint lines are read from; ``top``:
    ``(the gradient's entry, what its variant stages failed on)`` for the gradient."""
    seen.add(id(generated))
    fn = pipeline.remake(generated.recipe, until="cuts")  # the normal form, analysed
    flow = cuts.Flow(fn)
    wrt = tuple(fn.params[i] for i in generated.recipe.ctx.wrt)
    user = _user_statements(generated.recipe.func())
    refused, note = _refusal_and_note(top, generated, fn, user, note)
    # later stages rewrite the tree in place: the functions compiled come from a second run
    sources, adjoints = _adjoints(_compiled(generated, variant), user)
    first = user[0][0] if user else fn.parsed.tree.lineno + fn.parsed.line_offset
    last = max((end for _, end, _ in user), default=first)
    function = Function(
        fn.parsed.name, fn.parsed.filename, first - 1, last, wrt, tuple(sources), note
    )
    forward = generated.recipe.ctx.mode in ("jvp", "tangent")
    functions.append(function)
    index, before = len(functions) - 1, len(lines)
    grouped = _grouped(fn, user)
    quiet_calls = []
    for start, _end, node in user:
        stmts = grouped.get(start, [])
        line = _line(fn, flow, wrt, start, node, stmts, adjoints)
        if line is None:
            continue
        if forward:  # forward mode: the derivative of a line is its tangent
            line = dataclasses.replace(line, reason=line.reason.replace("an adjoint", "a tangent"))
        lines.append(_with_refusal(line, refused))
        if line.status != ACTIVE:
            quiet_calls += [(m.callee, line) for m in _user_calls(flow, stmts)]
    functions[index] = dataclasses.replace(function, size=len(lines) - before)
    for callee in generated.callees:
        if isinstance(callee, recursion.StandIn) or id(callee) in seen or callee.recipe is None:
            continue
        _explain(callee, lines, functions, seen)
    explained = {(f.name, f.filename) for f in functions}
    for func, caller in quiet_calls:
        _explain_quiet(func, caller, lines, functions, explained)


def _compiled(generated, variant):
    """The functions compiled for ``generated``; the gradient's body the variant's."""
    compiled = pipeline.remake(generated.recipe, until="inline")
    if variant is not None:
        compiled.outputs[-1] = dataclasses.replace(compiled.outputs[-1], body=variant.body)
    return compiled


def _grouped(fn, user):
    """``{first line of a user statement: its statements of the normal form}``."""
    offset = fn.parsed.line_offset
    nodes = {start: node for start, _, node in user}
    grouped = {}
    for s in all_stmts(fn.tree.body):
        lineno = getattr(s, "lineno", None)
        owner = _owner(user, lineno + offset) if lineno is not None else None
        if owner is None or (isinstance(s, gast.Return) and not _returns(nodes[owner])):
            continue  # the single exit normalization made: no line of the user's
        grouped.setdefault(owner, []).append(s)
    return grouped


def _returns(node):
    return isinstance(node, gast.Return)


def _line(fn, flow, wrt, start, node, stmts, adjoints):
    """The ``Line`` of the user statement ``node`` (at ``start``) from its statements
    of the normal form; None for a simple statement that has none (a ``pass``)."""
    facts = [_fact(flow, s, wrt) for s in stmts]
    if not facts:
        if not isinstance(node, (gast.If, gast.For, gast.While)):
            return None
        facts = [(CONTROL, "a branch or loop: the lines inside are explained one by one", ())]
    # the statement ranked first; of equals, one that is itself the cut
    status, reason, chain = min(facts, key=lambda f: (_RANK.index(f[0]), _THROUGH in f[1]))
    name, numbers, text = ("", (), ())
    if status == ACTIVE:
        reason += "".join(_stopped_here(facts))
        name, numbers, text = adjoints.get(start, ("", (), ()))
        if not text and reason == "has an adjoint":
            reason = "has an adjoint, folded into the lines of the next one it feeds"
    source_line = linecache.getline(fn.parsed.filename, start).strip()
    return Line(
        fn.parsed.name,
        fn.parsed.filename,
        start,
        source_line,
        status,
        reason,
        name,
        text,
        numbers,
        chain,
    )


def _fact(flow, stmt, wrt):
    """``(status, reason, chain)`` of one normalized statement."""
    wrt_text = ", ".join(wrt) or "nothing"
    if isinstance(stmt, gast.Return):
        if flow.varied_in(stmt):
            return ACTIVE, "the output: its adjoint is the seed", ()
        return INACTIVE, f"the output does not depend on {wrt_text}", ()
    if flow.defined(stmt) is not None and flow.act.defines_active(stmt):
        return ACTIVE, "has an adjoint", ()
    found = [c for c in (flow.cut_at(stmt, n) for n in flow.varied_in(stmt)) if c is not None]
    if found:
        return _from_cut(found, "", wrt_text, flow.line(stmt))
    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        return CONTROL, "a branch or loop: the lines inside are explained one by one", ()
    if flow.varied_in(stmt):  # differentiated here, but the output does not depend on it
        return _from_cut(flow.downstream(stmt), _THROUGH, wrt_text, flow.line(stmt))
    return _inactive(flow, stmt, wrt_text)


def _inactive(flow, stmt, wrt_text):
    """A statement that reads nothing varied: the cut that made it so, if any."""
    reason = f"does not depend on {wrt_text}"
    traced = flow.upstream(stmt)
    if traced is None:
        return INACTIVE, reason, ()
    cut, chain = traced
    target = flow.defined(stmt)
    if target is not None and target not in flow.temporaries and target not in chain:
        chain += (target,)
    return INACTIVE, reason + f": {' -> '.join(chain)}, cut by {cut.describe()}", chain


def _from_cut(found, prefix, wrt_text, line):
    """The status a statement (at ``line``) gets from the cuts in its way (``prefix``:
    after it; none: on it)."""
    best = min(found, key=lambda c: _RANK.index(c.kind))
    what = best.what if best.line == line else best.describe()
    if best.kind == UNUSED:
        if best.what == "a value computed and discarded":
            return UNUSED, "its value is computed and discarded", ()
        where = "" if best.line == line else f" beyond {best.describe()}"
        return UNUSED, f"depends on {wrt_text}, but the output does not depend on it{where}", ()
    if prefix:
        return best.kind, f"no adjoint: {prefix}{what}", ()
    if best.kind == STOPPED:
        return best.kind, f"no adjoint: {what} makes it a constant", ()
    if best.kind == SHIFT:
        return best.kind, f"no adjoint: {what}", ()
    kind = "gives an integer or boolean" if best.kind == INTEGER else "is not differentiable"
    return best.kind, f"no adjoint: {what} {kind}", ()


def _stopped_here(facts):
    """For an active line that also holds a stop: a note naming it."""
    for status, reason, _ in facts:
        if status == STOPPED:
            return ["; " + reason.replace("no adjoint: ", "besides, ")]
    return []


def _user_calls(flow, stmts):
    for s in stmts:
        match = flow.act.matches.get(id(s))
        if match is not None and match.kind == "user" and match.callee is not None:
            yield match


def _explain_quiet(func, caller, lines, functions, explained):
    """A user function called only where nothing is differentiated: each of its lines
    with the status of its call."""
    try:
        parsed = parse.run(func)
    except TranspileError:  # its source cannot be read: nothing to list
        return
    key = (parsed.name, parsed.filename)
    if key in explained:
        return
    explained.add(key)
    user = _user_statements(func)
    if not user:
        return
    why = (
        f"not differentiated: called at line {caller.lineno} of {caller.function} ({caller.status})"
    )
    functions.append(
        Function(
            parsed.name,
            parsed.filename,
            user[0][0] - 1,
            max(end for _, end, _ in user),
            (),
            (),
            why,
            len(user),
        )
    )
    for start, _end, node in user:
        if isinstance(node, (gast.If, gast.For, gast.While)):
            status = CONTROL
        else:
            status = caller.status
        text = linecache.getline(parsed.filename, start).strip()
        lines.append(Line(parsed.name, parsed.filename, start, text, status, why))


def _user_statements(func):
    """``(first line, last line, node)`` of every statement of ``func`` as written
    (nested ones included; a leading docstring left out), lines counted in its file."""
    parsed = parse.run(func)
    offset = parsed.line_offset
    found = []

    def walk(body):
        for i, s in enumerate(body):
            if (
                i == 0
                and body is parsed.tree.body
                and isinstance(s, gast.Expr)
                and isinstance(s.value, gast.Constant)
                and isinstance(s.value.value, str)
            ):
                continue
            end = getattr(s, "end_lineno", None) or s.lineno
            found.append((s.lineno + offset, end + offset, s))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    walk(inner)

    walk(parsed.tree.body)
    return sorted(found, key=lambda t: t[0])


def _owner(user, line):
    """The first line of the innermost user statement that spans ``line``."""
    best = None
    for start, end, _ in user:
        if start <= line <= end:
            best = start
    return best


def _adjoints(fn, user):
    """``(sources, {user line: (generated name, line numbers, lines)})``: each
    function compiled, and the lines under each ``# grad of:`` comment."""
    sources, found = [], {}
    offset = fn.parsed.line_offset
    for out in fn.outputs:
        source = emit.to_source(function_def(out.name, out.args, out.body))
        sources.append((out.name, source))
        comments = [
            _owner(user, s.lineno + offset) if getattr(s, "lineno", None) is not None else None
            for s in all_stmts(out.body)
            if _is_grad_of(s)
        ]
        text = source.split("\n")
        heads = [
            i for i, t in enumerate(text) if t.lstrip().startswith(tuple("# " + h for h in _HEADS))
        ]
        if len(heads) != len(comments):
            continue  # cannot tell which comment is which: no adjoint lines shown
        for block, line in zip(_blocks(text, heads), comments):
            if line is None:
                continue
            _, numbers, lines_ = found.get(line, (out.name, (), ()))
            found[line] = (
                out.name,
                numbers + tuple(i + 1 for i in block),
                lines_ + tuple(text[i].strip() for i in block),
            )
    return sources, found


def _is_grad_of(stmt):
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Constant)
        and isinstance(stmt.value.value, str)
        and stmt.value.value.startswith(tuple(COMMENT + h for h in _HEADS))
    )


def _blocks(text, heads):
    """The lines under each comment at ``heads``; comments in a row share the block
    after the last (one adjoint statement made of both lines' parts)."""
    blocks = [_block(text, head) for head in heads]
    for i, head in enumerate(heads):
        if "# tangent of: " in text[head]:  # forward mode: the primal line follows
            blocks[i] = [k for k in blocks[i] if "_dot" in text[k]]
    for i in range(len(blocks) - 2, -1, -1):
        if not blocks[i] and heads[i + 1] == heads[i] + 1:
            blocks[i] = blocks[i + 1]
    return blocks


def _block(text, head):
    """The indices of the lines under the comment at ``head``: up to the next comment,
    the end of its block, or a compound statement's header."""
    indent = len(text[head]) - len(text[head].lstrip())
    block = []
    for i in range(head + 1, len(text)):
        t = text[i]
        stripped = t.lstrip()
        if not stripped:
            break
        depth = len(t) - len(stripped)
        if depth < indent or stripped.startswith("# ") or stripped.endswith(":"):
            break
        if depth == indent and stripped.startswith("return "):
            break
        block.append(i)
    return block
