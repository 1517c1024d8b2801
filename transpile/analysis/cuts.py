"""Where differentiation stops: the statements that read a differentiated value and
give it no adjoint, and the ``wrt`` parameters whose every route to the output is cut.

A *cut* is a statement that reads a varied name (``activity``: it depends on a
``wrt`` argument) without differentiating it: ``stop_gradient(...)``, a function
the rules declare non-differentiable (``int()``, ``np.floor``, a comparison, a
random draw), a max shift that activity treats as stopped (``composites.shifts``),
or a value computed and discarded. ``Flow`` answers three questions on the facts
the ``activity`` stage made, with one def-use index of the normalized body (no
second activity analysis): is this statement a cut (``cut_at``), which cuts does a
value meet on its way to the output (``downstream``), and which cut took the
variedness away from an inactive statement (``upstream``, with the chain of names
that would have connected it).

The ``cuts`` stage records, for the function being differentiated, each ``wrt``
parameter that reaches the output through no differentiated statement, with the
cuts in its way (``fn.cuts``): ``api`` warns about them (``CutGradientWarning``),
and ``explain`` reports every line.
"""

import sys
import warnings
from dataclasses import dataclass

import gast

from transpile.analysis import composites
from transpile.analysis.activity import diff_uses
from transpile.core import defuse, printer
from transpile.core.ir import MISSING
from transpile.core.nodes import all_stmts, header, name_nodes
from transpile.rules import nondiff
from transpile_runtime import stop_gradient

# what a cut did to the value, in the order ``explain`` ranks a line's statements
STOPPED = "stopped"  # stop_gradient(...)
INTEGER = "integer"  # an integer or boolean result: int(), len(), a comparison
NONDIFF = "nondiff"  # a function declared non-differentiable (np.floor, np.sign, a draw)
SHIFT = "shift"  # a max shift whose adjoint sums to zero (composites.shifts)
UNUSED = "unused"  # differentiated, but the output does not depend on it
UNREAD = "unread"  # a parameter nothing reads

_INTEGER_ATTRIBUTES = frozenset(("shape", "ndim", "size", "itemsize", "nbytes", "dtype"))
_INTEGER_NAMES = frozenset(
    [
        "int",
        "bool",
        "len",
        "round",
        "range",
        "isinstance",
        "argmax",
        "argmin",
        "argsort",
        "searchsorted",
        "nonzero",
        "flatnonzero",
        "count_nonzero",
        "shape",
        "ndim",
        "size",
        "isnan",
        "isinf",
        "isfinite",
        "isclose",
        "allclose",
        "array_equal",
        "all",
        "any",
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "logical_and",
        "logical_or",
        "logical_not",
        "logical_xor",
    ]
)


class CutGradientWarning(UserWarning):
    """A ``wrt`` argument has no path to the output: its gradient is zero. The message
    names the argument and the line that cuts it; ``allow_unused=True`` silences it."""


def warn(generated):
    """Warn about each ``wrt`` parameter ``generated`` (an ``ir.Generated``, or None)
    found with no path to the output, at the first caller outside the compiler."""
    for found in getattr(generated, "cuts", ()):
        warnings.warn(
            found.message() + "; pass allow_unused=True if that is intended",
            CutGradientWarning,
            stacklevel=_outside_the_compiler(),
        )


def _outside_the_compiler():
    """The ``stacklevel`` of ``warnings.warn``, called from ``warn``, that points at the
    first frame whose module is not the compiler's (the user's ``grad(...)`` line)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and _is_compiler(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    return level


def _is_compiler(module):
    return module == "transpile" or module.startswith("transpile.")


@dataclass(frozen=True)
class Cut:
    """A statement that reads the differentiated ``name`` and gives it no adjoint."""

    kind: str  # STOPPED, INTEGER, NONDIFF, SHIFT, UNUSED or UNREAD
    what: str  # what cuts it, as a reader says it: "stop_gradient(...)", "int()"
    line: object  # the line in the user's file, or None
    name: str  # the name it cuts (a temporary of the normal form, or the user's)
    note: str = ""  # for a differentiable call: that this argument is not differentiated

    def describe(self) -> str:
        where = f" at line {self.line}" if self.line is not None else ""
        if self.kind == UNREAD:
            return f"{self.name} is never read"
        if self.kind == UNUSED:
            return f"{self.what}{where} does not reach the output"
        return f"{self.what}{where}{self.note}"


@dataclass(frozen=True)
class Unreached:
    """A ``wrt`` parameter with no differentiated path to the output."""

    param: str
    cuts: tuple  # Cut, in program order
    function: str
    filename: str

    def message(self) -> str:
        stops = [c.describe() for c in self.cuts if c.kind not in (UNUSED, UNREAD)]
        dead = [c for c in self.cuts if c.kind == UNUSED]
        why = []
        if stops:
            stops = list(dict.fromkeys(stops))
            more = f"; and {len(stops) - 3} more" if len(stops) > 3 else ""
            why.append("cut by " + "; ".join(stops[:3]) + more)
        if dead:
            shown = ", ".join(dict.fromkeys(f"{c.what} (line {c.line})" for c in dead))
            why.append(f"it only reaches {shown}, which the output does not depend on")
        why = "; ".join(why) or "it is never read"
        return (
            f"the gradient with respect to {self.param!r} of {self.function} "
            f"({self.filename}) is zero: {self.param} has no path to the output ({why})"
        )


class Flow:
    """The cuts of one normalized function, asked of its activity facts."""

    def __init__(self, fn):
        self.fn = fn
        self.act = fn.activity
        self.parsed = fn.parsed
        self.index = defuse.Index(fn.tree.body)
        self.shifts = composites.shifts(fn.tree, fn.parsed.resolve)
        self.temporaries = fn.namer.temporaries

    def line(self, stmt):
        lineno = getattr(stmt, "lineno", None)
        return None if lineno is None else lineno + self.parsed.line_offset

    def reads(self, stmt):
        """The names ``stmt`` reads (a compound statement: its header's)."""
        if isinstance(stmt, gast.Assign):
            found = name_nodes(stmt.value)
            target = stmt.targets[0]
            if not isinstance(target, gast.Name):
                found += name_nodes(target)
        else:
            found = name_nodes(header(stmt))
        return list(dict.fromkeys(n.id for n in found if isinstance(n.ctx, gast.Load)))

    def defined(self, stmt):
        """The name ``stmt`` defines (a weak update: the container), or None."""
        if isinstance(stmt, gast.Assign):
            t = stmt.targets[0]
            if isinstance(t, gast.Name):
                return t.id
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                return t.value.id
        if _is_append(stmt):
            return stmt.value.func.value.id
        return None

    def varied_in(self, stmt):
        """The names ``stmt`` reads that depend on a ``wrt`` argument there."""
        return [n for n in self.reads(stmt) if self.act.is_varied(stmt, n)]

    def differentiates(self, stmt, name):
        """Whether ``stmt`` passes an adjoint back to ``name`` (where it is active)."""
        if isinstance(stmt, gast.Return):
            return True
        if self.defined(stmt) is None:
            return False
        if self.defined(stmt) in self.shifts:
            return False
        return name in diff_uses(stmt, self.act.matches.get(id(stmt)))

    def cut_at(self, stmt, name):
        """The ``Cut`` that ``stmt`` makes of the varied ``name`` it reads, or None."""
        if not self.act.is_varied(stmt, name) or name not in self.reads(stmt):
            return None
        line = self.line(stmt)
        if isinstance(stmt, (gast.If, gast.While)):
            return Cut(INTEGER, "a branch condition", line, name)
        if isinstance(stmt, gast.For):
            return None  # the loop's body reads the elements, differentiated there
        if isinstance(stmt, gast.Expr) and not _is_append(stmt):
            return Cut(UNUSED, "a value computed and discarded", line, name)
        target = self.defined(stmt)
        if target is None or self.differentiates(stmt, name):
            return None
        if target in self.shifts:
            return Cut(SHIFT, "a max shift that the result does not depend on", line, name)
        value = stmt.value if isinstance(stmt, gast.Assign) else None
        kind, what = self.describe(value)
        match = self.act.matches.get(id(stmt))
        note = ""
        if match is not None and match.kind not in ("nondiff", "constant", "unknown"):
            shown = "an argument" if name in self.temporaries else name
            note = f", which reads {shown} but does not differentiate it"
        return Cut(kind, what, line, name, note)

    def describe(self, value):
        """(kind, what) for a right-hand side that differentiates nothing."""
        if isinstance(value, gast.Call):
            obj = self.parsed.resolve(value.func)
            if obj is stop_gradient:
                return STOPPED, "stop_gradient(...)"
            if isinstance(value.func, gast.Attribute) and obj is MISSING:
                shown = f".{value.func.attr}()"
                name = value.func.attr
            else:
                shown = printer.expression(value.func) + "()"
                name = getattr(obj, "__name__", "")
            if obj is not MISSING and nondiff.is_random(obj):
                return NONDIFF, f"{shown}, a random draw"
            return (INTEGER if name in _INTEGER_NAMES else NONDIFF), shown
        if isinstance(value, gast.Compare):
            return INTEGER, "a comparison"
        if isinstance(value, (gast.BoolOp, gast.UnaryOp)) and not isinstance(
            getattr(value, "op", None), (gast.USub, gast.UAdd)
        ):
            return INTEGER, "a logical operation"
        if isinstance(value, gast.Attribute):
            kind = INTEGER if value.attr in _INTEGER_ATTRIBUTES else NONDIFF
            return kind, f".{value.attr}"
        if value is None:
            return NONDIFF, "a statement with no derivative"
        return NONDIFF, printer.expression(value)

    def downstream(self, stmt):
        """The cuts that the value ``stmt`` defines meets on every way to the output
        (empty if some way is differentiated throughout)."""
        found, seen = [], set()
        todo = [(stmt, self.defined(stmt))]
        while todo:
            at, name = todo.pop()
            if name is None or (id(at), name) in seen:
                continue
            seen.add((id(at), name))
            onward = False
            for reader in self.index.reading(name):
                if reader is at or not self.act.is_varied(reader, name):
                    continue
                cut = self.cut_at(reader, name)
                if cut is not None:
                    found.append(cut)
                    onward = True
                elif self.differentiates(reader, name):
                    todo.append((reader, self.defined(reader)))
                    onward = True
            if not onward:  # a dead end: nothing differentiated reads it
                shown = "the value" if name in self.temporaries else name
                found.append(Cut(UNUSED, shown, self.line(at), name))
        return sorted(set(found), key=lambda c: (c.line or 0, c.what))

    def upstream(self, stmt):
        """For a statement that reads nothing varied: ``(cut, chain)``, the cut that
        took the variedness away and the names from a ``wrt`` argument to what
        ``stmt`` reads, or None if nothing it reads comes from a ``wrt`` argument."""
        start = self.reads(stmt)
        parent = {n: None for n in start}
        todo = list(start)
        while todo:
            name = todo.pop(0)
            for _, writer in self.index.writes.get(name, ()):
                for read in self.reads(writer):
                    cut = self.cut_at(writer, read)
                    if cut is not None:
                        return cut, self._chain(read, name, parent)
                    if read not in parent:
                        parent[read] = name
                        todo.append(read)
        return None

    def _chain(self, first, name, parent):
        """The names from a ``wrt`` argument through ``first`` (what the cut reads) and
        ``name`` (what it defines) to what the statement reads."""
        chain = self._back_to_argument(first)
        while name is not None:
            chain.append(name)
            name = parent[name]
        return tuple(n for n in dict.fromkeys(chain) if n not in self.temporaries)

    def _back_to_argument(self, name):
        """``[argument, ..., name]``: a way back through varied values to an argument."""
        chain, seen = [name], {name}
        while True:
            writers = self.index.writes.get(chain[0], ())
            step = next((n for _, w in writers for n in self.varied_in(w) if n not in seen), None)
            if step is None:
                return chain
            seen.add(step)
            chain.insert(0, step)


def _is_append(stmt):
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Attribute)
        and stmt.value.func.attr == "append"
        and isinstance(stmt.value.func.value, gast.Name)
    )


def unreached(fn, wrt_names, function="", filename=""):
    """``Unreached`` for each of ``wrt_names`` that no differentiated statement takes
    to the output."""
    missing = _not_differentiated(fn, wrt_names)
    if not missing:
        return ()
    flow = Flow(fn)  # only now: which cuts are in the way
    found = []
    for param in missing:
        readers = [s for s in flow.index.reading(param) if flow.act.is_varied(s, param)]
        cuts = []
        for s in readers:
            cut = flow.cut_at(s, param)
            cuts += [cut] if cut is not None else flow.downstream(s)
        if not cuts:
            cuts = [Cut(UNREAD, "never read", None, param)]
        found.append(Unreached(param, tuple(cuts), function, filename))
    return tuple(found)


def _not_differentiated(fn, wrt_names):
    """The names of ``wrt_names`` that no active statement differentiates (nor the
    return returns), in one walk that stops once every name is found: a parameter is
    usually read early, so this costs a long function next to nothing."""
    act, missing = fn.activity, dict.fromkeys(wrt_names)
    for s in all_stmts(fn.tree.body):
        if not missing:
            break
        if isinstance(s, gast.Return):
            reached = {n.id for n in name_nodes(s.value)}
        elif isinstance(s, (gast.Assign, gast.Expr)) and act.defines_active(s):
            reached = diff_uses(s, act.matches.get(id(s)))
        else:
            continue
        for name in [n for n in missing if n in reached and act.is_varied(s, n)]:
            del missing[name]
    return list(missing)


def stage(fn, ctx):
    """The ``wrt`` parameters of the differentiated function with no path to the
    output (a callee's are its caller's business: nothing is recorded for them)."""
    if ctx.mode in ("grad", "value_and_grad", "vjp"):
        wrt = [fn.params[i] for i in ctx.wrt]
        fn.cuts = unreached(fn, wrt, fn.parsed.name, fn.parsed.filename)
    return fn
