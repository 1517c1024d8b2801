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

from typing import NamedTuple

import gast

from transpile.analysis import changes, views
from transpile.core.ir import COMMENT, RESTORE
from transpile.core.nodes import (
    all_stmts,
    assign,
    clone,
    const,
    descendants,
    header,
    name_nodes,
    stores,
)

_LOOPS = (gast.For, gast.While)
_BLOCKS = (gast.If, gast.For, gast.While)
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)
NOTE = COMMENT + "computed again rather than kept on the tape"


class Recomputed(NamedTuple):
    """What ``run`` changed: the statements put in the adjoint (none: nothing changed);
    per reverse loop given some, ``(index of the top-level adjoint statement holding
    it, the loop targets bound where they are, those statements)``; the names whose
    restore markers were dropped."""

    statements: list
    loops: list
    dropped: set


def run(fn, kept, loads, assigned) -> Recomputed:
    """Rewrite ``fn.adjoint`` in place: each restore marker of a value that the reverse
    step can compute again (the module's conditions) is dropped, and the value is
    computed at the start of that reverse body. ``kept``: the names the tape would keep
    (``record.needed``), and those it would keep as a shape; ``loads``: a
    ``record.HeaderLoads``, ``loads(stmt)`` the names the header of an adjoint statement
    reads, ``loads.walk(node)`` the names and calls of a primal header; ``assigned``:
    ``assigned_sources`` of the primal."""
    nothing = Recomputed([], [], set())
    loop_of = _loop_of(fn.primal)
    if not loop_of:
        return nothing  # no loop: no reverse step to compute a value in
    recorded, shape_only = kept
    whole = recorded - shape_only
    index, candidates = _candidates(fn, loop_of, whole, loads)
    if not candidates:
        return nothing
    facts = _Facts(fn, whole, assigned, loads)
    planned = {}  # id(reverse loop) -> (reverse loop, [(index in the primal body, stmt)])
    dropped, dropped_names = set(), set()
    for loop_a, marker, cut, stmt, loop_p in candidates:
        value = facts.plan(stmt, loop_p)
        if value is None or not index.reads_allow(loop_a, cut, stmt.targets[0].id):
            continue
        where = facts.body(loop_p).index_of[id(stmt)]
        again = assign(stmt.targets[0].id, value, stmt)
        dropped.add(id(marker))
        dropped_names.add(marker.value.args[0].id)
        planned.setdefault(id(loop_a), (loop_a, []))[1].append((where, again))
    # where each changed loop is, found before any body changes (which moves what is in it)
    places = {key: index.bound_at(fn.adjoint, loop_a) for key, (loop_a, _) in planned.items()}
    added, loops = [], []
    for key, (loop_a, found) in planned.items():
        note = gast.copy_location(gast.Expr(value=const(NOTE)), loop_a)
        kept = [s for s in loop_a.body if id(s) not in dropped]
        again = [s for _, s in sorted(found, key=lambda p: p[0])]
        loop_a.body = [note] + again + kept
        added += [note] + again
        loops.append((*places[key], [note] + again))
    return Recomputed(added, loops, dropped_names)


def _candidates(fn, loop_of, whole, loads):
    """``(_AdjointIndex, [(reverse loop, marker, its index there, primal statement, primal
    loop)])``: the restore markers directly in a reverse loop's body of one operation
    in a loop's body whose name the tape would keep whole (``whole``)."""
    usable = {}  # id(primal stmt) -> whether its restore may be computed again instead
    for stmt, kind in fn.emitted.restores.values():
        if kind == "name" and id(stmt) in loop_of and _one_operation(stmt):
            usable[id(stmt)] = stmt.targets[0].id in whole
    restored = fn.emitted.restores.values()
    targets = {stmt.targets[0].id for stmt, _ in restored if usable.get(id(stmt))}
    if not targets:
        return None, []
    index = _AdjointIndex(fn.adjoint, loads, targets)
    candidates = []
    for loop_a, marker, cut in index.loop_markers:
        stmt, kind = fn.emitted.restores[id(marker)]
        if kind == "name" and usable.get(id(stmt)):
            candidates.append((loop_a, marker, cut, stmt, loop_of[id(stmt)]))
    return index, candidates


def _loop_of(primal):
    """id(statement) -> the loop whose body holds it directly."""
    found = {}
    for s in all_stmts(primal):
        if isinstance(s, _LOOPS):
            for b in s.body:
                found[id(b)] = s
    return found


def is_restore(s):
    """Whether ``s`` is a restore marker, ``__restore__(x)`` (``calls_marker``, spelled
    out: ``record`` and this module ask it of every adjoint statement)."""
    if s.__class__ is not gast.Expr:
        return False
    call = s.value
    return (
        call.__class__ is gast.Call and call.func.__class__ is gast.Name and call.func.id == RESTORE
    )


def assigned_sources(primal, resolve):
    """id(stmt) -> ``views.sources`` of its value, for each ``name = value`` of
    ``primal`` at any depth: what ``record`` and this module ask of each."""
    found = {}
    for s in all_stmts(primal):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            found[id(s)] = views.sources(s.value, resolve)
    return found


def _one_operation(stmt):
    """Whether ``stmt`` is ``name = a op b`` or ``name = -a``, of names and constants."""
    if not isinstance(stmt, gast.Assign):
        return False
    v = stmt.value
    if isinstance(v, gast.BinOp) and isinstance(v.op, _ARITHMETIC):
        operands = [v.left, v.right]
    elif isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.USub):
        operands = [v.operand]
    else:
        return False
    single = len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
    return single and all(isinstance(o, (gast.Name, gast.Constant)) for o in operands)


class _Facts:
    """What the plans of one function share, each found once: the names it binds, what
    may share memory, what may change in place, and each loop body's writes."""

    def __init__(self, fn, whole, assigned, loads):
        self.whole = whole
        self.bound = set(fn.params)
        # id(stmt) -> changes.header_calls(stmt), for the summary and bodies: the calls
        # of the header's walk, which ``loads`` (``record.HeaderLoads``) keeps for
        # ``record.run``, which reads its names
        self.calls = {}
        walk = loads.walk
        for s in all_stmts(fn.primal):
            self.bound.update(stores(s))
            self.calls[id(s)] = walk(header(s))[1]
        self.edges = _view_edges(fn.primal, assigned)
        self.out, self.changeable = changes.summary(
            fn.primal, fn.parsed.resolve, fn.activity.matches, self.calls
        )
        self.bodies = {}

    def body(self, loop):
        found = self.bodies.get(id(loop))
        if found is None:
            found = self.bodies[id(loop)] = _Body(loop, self.calls)
        return found

    def plan(self, stmt, loop):
        """The value that computes ``stmt``'s again at the start of its reverse step, or
        None where that might not give the primal's value."""
        body = self.body(loop)
        index = body.index_of[id(stmt)]
        if body.writes.get(stmt.targets[0].id) != [index]:
            return None
        fixed = body.fixed  # the reverse loop binds them to the same values
        local = _Either(self.bound, fixed)
        found = _read_again(stmt.value, (index, loop, body.writes), self.whole, local)
        if found is None:
            return None
        value, kept, unkept = found
        watched = _closure(self.edges, unkept)
        if body.hard_after[index] or body.changed_after[index] & (watched | kept):
            return None
        if watched and (self.out or watched & self.changeable):
            return None
        return value


class _Body:
    """A loop body's facts: the top-level statements writing each name, and, after each
    statement, whether one may write into an array and which objects are changed
    (``calls``: id(stmt) -> ``changes.header_calls(stmt)``)."""

    def __init__(self, loop, calls):
        self.index_of = {id(s): i for i, s in enumerate(loop.body)}
        self.writes = {}
        # each top-level statement with the statements inside it, at any depth
        inners = [list(all_stmts([s])) if isinstance(s, _BLOCKS) else (s,) for s in loop.body]
        for i, inner in enumerate(inners):
            for n in sorted({n for x in inner for n in stores(x)}):
                self.writes.setdefault(n, []).append(i)
        self.fixed = {n for n in _targets(loop) if n not in self.writes}
        self.hard_after, self.changed_after = self._after(inners, calls)

    @staticmethod
    def _after(inners, calls):
        """``(hard_after, changed_after)``: after each statement (``inners``, each with the
        statements inside it), whether a later one may write into an array, and the
        objects later ones change."""
        count = len(inners)
        hard_after, changed_after = [False] * count, [frozenset()] * count
        hard, names = False, frozenset()
        for i in range(count - 1, -1, -1):
            hard_after[i], changed_after[i] = hard, names
            inner = inners[i]
            hard = hard or any(changes.hard(x, calls[id(x)]) for x in inner)
            for x in inner:
                new = changes.changed(x, calls[id(x)])
                if new and not new <= names:
                    names = names | new
        return hard_after, changed_after


class _Either:
    """Membership in either of two sets, without making their union."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __contains__(self, n):
        return n in self.a or n in self.b


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


def _target_names(loop):
    """The names a ``for`` loop's target binds (all its names, as ``record`` reads it)."""
    return {n.id for n in name_nodes(loop.target)}


def _targets(loop):
    if isinstance(loop, gast.For):
        return {n.id for n in name_nodes(loop.target) if isinstance(n, gast.Name)}
    return set()


def _view_edges(primal, assigned):
    """name -> the names it may share memory with (``views.sources``, in ``assigned``,
    both ways; a loop's target, the items of its iterable)."""
    edges = {}
    for s in all_stmts(primal):
        pairs = []
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            pairs = [(s.targets[0].id, src) for src in assigned[id(s)]]
        elif isinstance(s, gast.For):
            items = [n.id for n in name_nodes(s.iter) if isinstance(n, gast.Name)]
            pairs = [(t, src) for t in _targets(s) for src in items]
        for t, src in pairs:
            edges.setdefault(t, set()).add(src)
            edges.setdefault(src, set()).add(t)
    return edges


def _closure(edges, names):
    """``names`` and every name that may share memory with one, a view of a view too."""
    found, todo = set(names), list(names)
    while todo:
        for m in edges.get(todo.pop(), ()):
            if m not in found:
                found.add(m)
                todo.append(m)
    return found


class _AdjointIndex:
    """Where the adjoint reads each of ``targets`` (the path of blocks to each read:
    ``(block, index)`` pairs from the top), how many restores each name has, and the
    restore markers directly in a loop's body, with their index there."""

    def __init__(self, adjoint, loads, targets):
        self.reads, self.restores, self.places, self.loop_markers = {}, {}, {}, []
        todo = [(adjoint, None, None, ())]
        for block, owner, key, path in todo:
            for i, s in enumerate(block):
                if is_restore(s):
                    n = s.value.args[0].id
                    self.restores[n] = self.restores.get(n, 0) + 1
                    if isinstance(owner, gast.For) and key[1] == "body":
                        self.loop_markers.append((owner, s, i))
                    continue
                read = loads(s)
                blocked = isinstance(s, (gast.If, gast.For, gast.While))
                if not blocked and targets.isdisjoint(read):
                    continue  # neither a block nor a read of a target: nothing to keep
                here = path + ((key, i),)
                for n in read:
                    if n in targets:
                        self.reads.setdefault(n, []).append(here)
                if blocked:
                    self.places[id(s)] = here
                    todo.append((s.body, s, (id(s), "body"), here))
                    todo.append((s.orelse, s, (id(s), "orelse"), here))

    def bound_at(self, adjoint, loop_a):
        """``(index of the top-level statement of ``adjoint`` holding ``loop_a``, the
        targets of the loops whose body holds what ``loop_a``'s body holds)``."""
        path = self.places[id(loop_a)]
        node, bound = adjoint[path[0][1]], set()
        for (_, field), i in path[1:]:
            if field == "body" and isinstance(node, gast.For):
                bound |= _target_names(node)
            node = getattr(node, field)[i]
        return path[0][1], bound | _target_names(loop_a)

    def reads_allow(self, loop_a, cut, target):
        """Whether the adjoint reads ``target`` only in ``loop_a``'s body before its
        index ``cut`` (the restore marker), or in the top-level statements before the
        one holding ``loop_a``; and whether that marker is its only restore."""
        if self.restores.get(target) != 1:
            return False
        top = self.places[id(loop_a)][0][1]
        key = (id(loop_a), "body")
        for path in self.reads.get(target, ()):
            if path[0][1] < top or any(k == key and i < cut for k, i in path):
                continue
            return False
        return True
