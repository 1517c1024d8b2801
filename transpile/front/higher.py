"""Higher order: a call to a gradient this library made is differentiated through the
code it runs.

``grad(f)`` returns an entry (``dispatch.Dispatcher``) whose generic gradient is
ordinary numpy code, compiled from source registered in ``linecache``: the compiler
reads it as it reads the user's functions. ``generated_callee`` maps an entry to that
function, so ``grad(grad(f))``, and ``grad`` of any function calling a gradient, is
reverse over reverse; the runtime helpers the generated code calls have their own rules
(``rules/runtime_ops.py``). ``prepare`` (from the ``parse`` stage) makes the one
in-place helper of generated code, ``ops.add_at``, a call making a new array
(``ops.scatter_added``), which has a rule. A gradient whose code records a tape (a loop) is not read again:
``tape_rule`` gives a call to it a rule by reverse over forward (``through_tape``), and
``differentiable`` wraps such a gradient given to ``grad`` or ``jvp`` in a function
calling it; ``refusal`` says why the tape's code itself is not differentiated.
"""

import inspect

import gast

from transpile.core import emit
from transpile.core.errors import TranspileError, at
from transpile.core.ir import MISSING
from transpile.front import through_tape
from transpile.rules import Match
from transpile_runtime import ops, revolve
from transpile_runtime.tape import Tape

LOOP_HINT = (
    "differentiate a function without loops twice (a loop with a fixed count can be "
    "written out), or compute the second derivative another way"
)


def generated_callee(obj):
    """The generic generated function behind the entry ``obj`` of a gradient made by this
    library (after a rebound name, the one now run), or None for any other object."""
    dispatcher = getattr(obj, "__transpile_dispatch__", None)
    if dispatcher is None:
        return None
    return dispatcher.current().generic


def differentiable(obj):
    """What to transpile to differentiate ``obj``: for the entry of a gradient made by
    this library, the generic code it runs, or, where that code records a tape, a
    function calling the entry (whose call gets ``tape_rule``); else ``obj`` itself."""
    generated = generated_callee(obj)
    if generated is None:
        return obj
    if refusal(generated) is None or obj.__transpile_dispatch__.current().spec.mode != "grad":
        return generated  # (where refused, ``prepare`` says why)
    params = list(inspect.signature(generated).parameters)
    taken = set(params)
    entry_name = f"{generated.__name__}_entry"
    while entry_name in taken:
        entry_name += "_"
    args = ", ".join(params)
    source = f"def {generated.__name__}({args}):\n    return {entry_name}({args})\n"
    label = f"{generated.__name__}, calling the gradient"
    wrapper = emit.compile_function(source, generated.__name__, {}, {entry_name: obj}, label)
    wrapper.__defaults__ = generated.__defaults__
    return wrapper


def tape_rule(obj, generated, transpile):
    """The rule (``user_rules.Found``) for calling the entry ``obj`` of a gradient whose
    generic code ``generated`` records a tape (``through_tape``, which makes its
    gradients with ``transpile``, the compiler's entry), or None."""
    if refusal(generated) is None:
        return None
    return through_tape.rule(obj, obj.__transpile_dispatch__.current(), transpile)


def classify_call(value, parsed, transpile):
    """How a right-hand side that calls a gradient made by this library is
    differentiated (a ``rules.Match``: through its generic code, or, where that records
    a tape, reverse over forward), or None for any other right-hand side."""
    if not isinstance(value, gast.Call) or any(isinstance(a, gast.Starred) for a in value.args):
        return None
    obj = parsed.resolve(value.func)
    generated = None if obj is MISSING else generated_callee(obj)
    if generated is None:
        return None
    operands = (*value.args, *(kw.value for kw in value.keywords))
    found = tape_rule(obj, generated, transpile)
    if found is not None:
        return Match("vjp", operands, callee=found)
    return Match("user", operands, callee=generated)


def is_generated(func) -> bool:
    """Made by this library: a generic gradient, a callee's forward or adjoint, or the
    entry of a gradient."""
    return (
        getattr(func, "__transpile_source__", None) is not None
        or getattr(func, "__transpile_generated__", None) is not None
    )


def refusal(func):
    """Why the generated function ``func`` cannot be differentiated again, or None."""
    if not is_generated(func):
        return None
    holder = _tape_holder(func, set())
    if holder is not None:
        return (
            f"{holder.__name__} is a gradient of a function with a loop, whose values it "
            "records on a tape; differentiating a gradient through its tape is not "
            "supported yet"
        )
    return None


def _tape_holder(func, seen):
    """``func``, or a generated function it calls (a callee's forward half), that
    records a tape; None if none does."""
    seen.add(id(func))
    cells = func.__closure__ or ()
    # a checkpointed loop's replay (``revolve``) is a tape too: its steps are read again
    if any(_holds(c, Tape) or _holds(c, revolve) for c in cells):
        return func
    for cell in cells:
        inner = _contents(cell)
        if callable(inner) and is_generated(inner) and id(inner) not in seen:
            found = _tape_holder(inner, seen)
            if found is not None:
                return found
    return None


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _holds(cell, obj):
    try:
        return cell.cell_contents is obj
    except ValueError:  # an empty cell
        return False


def stage(fn, ctx):
    """A gradient read again: refused where it records a tape; its in-place
    ``ops.add_at`` made a new array."""
    prepare(fn.parsed, ctx.func)
    return fn


def prepare(parsed, func):
    """Check the generated function ``func`` and rewrite its ``ops.add_at(buf, index, g)``
    statements as ``buf = ops.scatter_added(buf, index, g)`` (``parsed.tree`` in place);
    other functions are left alone."""
    if not is_generated(func):
        return
    why = refusal(func)
    if why is not None:
        raise TranspileError(
            why, filename=parsed.filename, lineno=parsed.line_offset + 1, hint=LOOP_HINT
        )
    _rewrite_block(parsed.tree.body, parsed)


def _rewrite_block(stmts, parsed):
    for k, stmt in enumerate(stmts):
        if _is_add_at(stmt, parsed):
            stmts[k] = _as_write(stmt, parsed)
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                _rewrite_block(inner, parsed)


def _is_add_at(stmt, parsed):
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Call)
        and parsed.resolve(stmt.value.func) is ops.add_at
    )


def _as_write(stmt, parsed):
    """``ops.add_at(buf, index, g)`` as ``buf = ops.scatter_added(buf, index, g)``: a new
    array, with a rule, where ``add_at`` writes into ``buf`` (which the compiler cannot
    always prove is not a view of an argument) and sums repeated integer indices."""
    buf, index, g = stmt.value.args
    if not isinstance(buf, gast.Name):
        raise at(
            parsed,
            stmt,
            "a gradient that adds into a part of an array is not differentiated again yet",
            "index the array itself (x[i], x[1:]) in the function differentiated twice",
        )
    func = stmt.value.func
    call = gast.Call(
        func=gast.Attribute(value=func.value, attr="scatter_added", ctx=gast.Load()),
        args=[buf, index, g],
        keywords=[],
    )
    target = gast.Name(id=buf.id, ctx=gast.Store(), annotation=None, type_comment=None)
    return gast.copy_location(gast.Assign(targets=[target], value=call, type_comment=None), stmt)
