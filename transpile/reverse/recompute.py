"""Values a loop's adjoint computes again instead of recording them on the tape.

``d = h - ys[t]`` in a loop body, read by the adjoint of the lines after it (that of
``np.sum(d * d)``), would be pushed whole at every step beside ``h``. Where the values
it is made of are at hand when that step's adjoint begins (``h``, which the tape keeps
anyway for the adjoint of ``tanh``; ``ys`` and ``t``, which the loop does not rebind),
the reverse body starts with ``d = h - ys[t]`` instead, and ``d`` is neither pushed nor
popped. What the primal computed and what the adjoint computes again are then the same
operation on the same values, which holds when:

- the value is one arithmetic operation of names and constants (``a - b``, ``a * b``,
  ``-a``), written once in the loop body, outside any branch of it;
- each operand is either written in the body only before it and recorded by the tape
  anyway (the start of the reverse step sees its value at the end of the step), or not
  written in the body at all (the loop's own target, a parameter, a value made before
  the loop: the reverse loop reads what the primal loop read), or a subscript of such
  names written once before it (``ys[t]``), which is read again in its place;
- nothing after it in the body writes into an array or changes an object (a slot
  write, ``out=``, a changing method), and nothing anywhere in the function may change
  the operands that are not recorded (a call that is not a pure rule, given one of
  them or a view of one);
- the adjoint reads the value only in that step's reverse body, before the point where
  the tape would have restored it, or before the reverse loop starts (its final value).

Anything else is recorded as before: that is always right, this only saves memory.
"""

import gast

from transpile.analysis import views
from transpile.analysis.effect_calls import CHANGING
from transpile.core.ir import COMMENT, RESTORE
from transpile.core.nodes import (
    all_stmts,
    assign,
    calls_marker,
    clone,
    const,
    descendants,
    name_nodes,
    stores,
)
from transpile.rules import user_rules

_LOOPS = (gast.For, gast.While)
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)
# what a statement may do with an operand that the tape does not keep: read it
_PURE_KINDS = frozenset(["template", "subscript", "copy", "display", "constant", "nondiff"])
NOTE = COMMENT + "computed again rather than kept on the tape"


def run(fn, recorded, shape_only):
    """Rewrite ``fn.adjoint`` in place: each restore marker of a value that the reverse
    step can compute again (the module's conditions) is dropped, and the value is
    computed at the start of that reverse body. ``recorded`` are the names the tape
    would keep (``record.needed``), ``shape_only`` those it would keep as a shape.
    Returns whether anything changed."""
    primal, adjoint, markers = fn.primal, fn.adjoint, fn.emitted.restores
    whole = recorded - shape_only
    facts = (set(fn.params) | _local_names(primal), fn.parsed.resolve, fn.activity.matches)
    loop_of = _loop_of(primal)
    planned = {}  # id(reverse loop) -> (reverse loop, [(index in the primal body, stmt)])
    for loop_a, marker in _loop_markers(adjoint):
        target = marker.value.args[0].id
        stmt, kind = markers[id(marker)]
        loop_p = loop_of.get(id(stmt))
        if kind != "name" or target not in whole or loop_p is None:
            continue
        value = _plan(stmt, loop_p, whole, primal, facts)
        if value is None or not _reads_allow(adjoint, loop_a, marker, target):
            continue
        index = next(i for i, s in enumerate(loop_p.body) if s is stmt)
        again = assign(target, value, stmt)
        loop_a.body.remove(marker)
        planned.setdefault(id(loop_a), (loop_a, []))[1].append((index, again))
    for loop_a, found in planned.values():
        note = gast.copy_location(gast.Expr(value=const(NOTE)), loop_a)
        loop_a.body[:0] = [note] + [s for _, s in sorted(found, key=lambda p: p[0])]
    return bool(planned)


def _loop_of(primal):
    """id(statement) -> the loop whose body holds it directly."""
    found = {}
    for s in all_stmts(primal):
        if isinstance(s, _LOOPS):
            for b in s.body:
                found[id(b)] = s
    return found


def _loop_markers(adjoint):
    """``(reverse loop, restore marker)`` for each marker directly in a loop's body."""
    return [
        (s, b)
        for s in all_stmts(adjoint)
        if isinstance(s, gast.For)
        for b in list(s.body)
        if _is_restore(b)
    ]


def _is_restore(s):
    return isinstance(s, gast.Expr) and calls_marker(s, RESTORE)


def _plan(stmt, loop, recorded, primal, facts):
    """The value that computes ``stmt``'s again at the start of its reverse step, or
    None where that might not give the primal's value."""
    if not _one_operation(stmt):
        return None
    index = next(i for i, s in enumerate(loop.body) if s is stmt)
    writes = _writes(loop.body)
    if writes.get(stmt.targets[0].id) != [index]:
        return None
    bound, resolve, matches = facts
    fixed = _targets(loop) - set(writes)  # the reverse loop binds them to the same values
    found = _read_again(stmt.value, (index, loop, writes), recorded, bound | fixed)
    if found is None:
        return None
    value, kept, unkept = found
    watched = _aliases(primal, unkept - fixed, resolve)
    if any(_changes_after(s, watched | kept) for s in all_stmts(loop.body[index + 1 :])):
        return None
    if any(_may_change(s, watched, resolve, matches) for s in all_stmts(primal)):
        return None
    return value


def _one_operation(stmt):
    """Whether ``stmt`` is ``name = a op b`` or ``name = -a``, of names and constants."""
    v = stmt.value
    if isinstance(v, gast.BinOp) and isinstance(v.op, _ARITHMETIC):
        operands = [v.left, v.right]
    elif isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.USub):
        operands = [v.operand]
    else:
        return False
    single = len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
    return single and all(isinstance(o, (gast.Name, gast.Constant)) for o in operands)


def _read_again(v, where, recorded, local):
    """``(value, names kept by the tape, names not kept)``: ``v`` as the reverse step
    computes it again, or None."""
    value, kept, unkept = clone(v), set(), set()
    for node in [n for n in name_nodes(value) if isinstance(n, gast.Name)]:
        read = _operand(node.id, where, recorded, local)
        if read is None:
            return None
        if read == "kept":
            kept.add(node.id)
        elif read == "unkept":
            unkept.add(node.id)
        else:
            unkept |= {n.id for n in name_nodes(read) if isinstance(n, gast.Name)}
            _replace(value, node, read)
    return value, kept, unkept


def _operand(n, where, recorded, local):
    """What the reverse step reads for the operand ``n``: ``"kept"`` (the tape keeps
    it), ``"unkept"`` (the loop does not write it), the subscript it was read from
    (to read again in its place), or None (nothing gives the primal's value)."""
    index, loop, writes = where
    at = writes.get(n)
    if at is None:
        return "unkept" if n in local else None
    if all(i < index for i in at) and n in recorded:
        return "kept"
    if len(at) != 1 or at[0] >= index:
        return None
    return _subscript_read(loop.body[at[0]], writes, local)


def _subscript_read(source, writes, local):
    """The value of ``source``, ``x = base[index]``, where no name of it is written in
    the loop and each is local (a parameter, or bound by the function); else None."""
    if not (isinstance(source, gast.Assign) and isinstance(source.value, gast.Subscript)):
        return None
    read = source.value
    if not isinstance(read.value, gast.Name):
        return None
    names = {m.id for m in name_nodes(read) if isinstance(m, gast.Name)}
    if any(m in writes or m not in local for m in names):
        return None
    return clone(read)


def _replace(value, old, new):
    """Put ``new`` where ``old`` (a node of ``value``) is."""
    for parent in descendants(value):
        for field in ("left", "right", "operand"):
            if getattr(parent, field, None) is old:
                setattr(parent, field, new)


def _writes(body):
    """name -> the indices of the top-level statements of ``body`` that bind it."""
    found = {}
    for i, s in enumerate(body):
        for inner in all_stmts([s]):
            for n in stores(inner):
                found.setdefault(n, [])
                if i not in found[n]:
                    found[n].append(i)
    return found


def _targets(loop):
    if isinstance(loop, gast.For):
        return {n.id for n in name_nodes(loop.target) if isinstance(n, gast.Name)}
    return set()


def _local_names(primal):
    """The names the primal binds."""
    found = set()
    for s in all_stmts(primal):
        found |= set(stores(s))
    return found


def _aliases(primal, names, resolve):
    """``names`` and every name that may share memory with one (``views.sources``, both
    ways, a view of a view included)."""
    edges = {}
    for s in all_stmts(primal):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            t = s.targets[0].id
            for src in views.sources(s.value, resolve):
                edges.setdefault(t, set()).add(src)
                edges.setdefault(src, set()).add(t)
    found, todo = set(names), list(names)
    while todo:
        for m in edges.get(todo.pop(), ()):
            if m not in found:
                found.add(m)
                todo.append(m)
    return found


def _changes_after(s, watched):
    """Whether ``s``, after the value in the loop body, may write into an array or
    change an object the value reads."""
    if isinstance(s, gast.Assign):
        named = all(isinstance(t, (gast.Name, gast.Tuple)) for t in s.targets)
        if not named or _slots_of_tuples(s.targets):
            return True  # a slot write: its restore would come before the value's
        return any(_writes_into(c, watched) for c in _calls(s.value))
    if isinstance(s, gast.Expr):
        return not _append_elsewhere(s, watched)
    if isinstance(s, (gast.If, gast.While)):
        return any(_writes_into(c, watched) for c in _calls(s.test))
    # a loop's target is a name, its iterable an atom; a jump changes nothing
    return not isinstance(s, (gast.For, gast.Break, gast.Continue, gast.Pass))


def _may_change(s, watched, resolve, matches):
    """Whether ``s`` may change an object that ``watched`` names (which the tape does
    not keep, so nothing would undo it)."""
    if not watched:
        return False
    if isinstance(s, (gast.If, gast.For, gast.While)):
        header = s.iter if isinstance(s, gast.For) else s.test
        return bool(_mentions(header, watched)) and bool(_calls(header))
    if isinstance(s, gast.Expr):
        return bool(_mentions(s, watched)) and not _append_elsewhere(s, watched)
    if not isinstance(s, gast.Assign):
        return bool(_mentions(s, watched))
    if _writes_slot_of(s, watched):
        return True
    calls = _calls(s.value)
    if any(_writes_into(c, watched) for c in calls):
        return True
    return bool(calls) and bool(_mentions(s.value, watched)) and _impure(s, calls, resolve, matches)


def _impure(s, calls, resolve, matches):
    """Whether the calls of the assignment ``s`` may change what they are given: all but
    the rules' (pure) functions, subscripts, copies, displays and constants."""
    match = matches.get(id(s))
    if match is None or match.kind not in _PURE_KINDS:
        return True
    if match.kind == "nondiff":  # a random draw may shuffle; a user's nondifferentiable
        return match.why == "random" or any(
            user_rules.find(resolve(c.func)) is not None for c in calls
        )
    return False


def _writes_slot_of(s, watched):
    """Whether the assignment ``s`` writes into a slot of a watched name."""
    slots = [t for t in s.targets if not isinstance(t, (gast.Name, gast.Tuple))]
    return any(_root(t) in watched for t in slots + _slots_of_tuples(s.targets))


def _root(target):
    """The name under a subscript or attribute target (``a`` of ``a[0].x``)."""
    while isinstance(target, (gast.Subscript, gast.Attribute, gast.Starred)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _slots_of_tuples(targets):
    return [
        e
        for t in targets
        if isinstance(t, gast.Tuple)
        for e in t.elts
        if not isinstance(e, gast.Name)
    ]


def _calls(node):
    return [n for n in descendants(node) if isinstance(n, gast.Call)]


def _mentions(node, watched):
    return {n.id for n in name_nodes(node) if isinstance(n, gast.Name)} & watched


def _writes_into(call, watched):
    """Whether ``call`` writes through ``out=``, or is a changing method of a watched
    name (``ys.sort()``)."""
    if any(k.arg == "out" for k in call.keywords):
        return True
    func = call.func
    return (
        isinstance(func, gast.Attribute)
        and func.attr in CHANGING
        and isinstance(func.value, gast.Name)
        and func.value.id in watched
    )


def _append_elsewhere(s, watched):
    """Whether the statement ``s`` is ``x.append(...)`` of a list ``x`` not watched."""
    call = s.value
    return (
        isinstance(call, gast.Call)
        and isinstance(call.func, gast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, gast.Name)
        and call.func.value.id not in watched
        and not any(_writes_into(c, watched) for c in _calls(call))
    )


def _reads_allow(adjoint, loop_a, marker, target):
    """Whether the adjoint reads ``target`` only in ``loop_a``'s body before ``marker``,
    or in the top-level statements before the one holding ``loop_a``; and whether
    ``marker`` is its only restore."""
    restores = [s for s in all_stmts(adjoint) if _is_restore(s) and s.value.args[0].id == target]
    if restores != [marker]:
        return False
    top = next(i for i, s in enumerate(adjoint) if any(x is loop_a for x in all_stmts([s])))
    cut = next(i for i, s in enumerate(loop_a.body) if s is marker)
    allowed = {id(n) for n in _reads(loop_a.body[:cut], target)}
    return all(id(n) in allowed for n in _reads(adjoint[top:], target))


def _reads(stmts, target):
    return [
        n
        for s in all_stmts(stmts)
        if not _is_restore(s)
        for n in name_nodes(_own(s))
        if isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Load)
    ]


def _own(s):
    """What ``s`` reads itself: a block's header, else the statement."""
    if isinstance(s, (gast.If, gast.While)):
        return s.test
    if isinstance(s, gast.For):
        return s.iter
    return s
