"""What loops and branches record on the tape: a to-be-recorded analysis.

Inside ``if``/``for``/``while`` a value that is overwritten stays where it is, so
the adjoint can read an older value only if the primal recorded it. ``reverse``
leaves a restore marker after the adjoint of each such write; ``needed`` finds the
names the adjoint actually reads after the restore point (a view of an array
counts as the array), and ``run`` turns the needed markers into ``tape.pop()``
and the matching ``tape.push(...)`` before the write. An array that the adjoint
reads only for its shape is recorded as its shape (``ops.shape_of``), never whole.
"""

import itertools

import gast

from transpile.cleanup import shapes
from transpile.core import fixpoint
from transpile.core.errors import at
from transpile.core.nodes import (
    all_stmts,
    assign,
    clone,
    const,
    descendants,
    header,
    name,
    name_nodes,
    names_and_calls,
    stores,
)
from transpile.front.exceptions import is_attempt
from transpile.reverse import recompute

_BLOCKS = (gast.If, gast.For, gast.While)


def stage(fn, ctx):
    """Resolve the restore markers: what the adjoint reads back is pushed on the tape by
    the primal; names the adjoint reads that only a branch or loop binds start as None."""
    names = fn.names
    tried = attempts(fn.primal)
    for block in tried:
        for s in block:
            if isinstance(s, _BLOCKS):
                raise at(
                    fn.parsed,
                    s,
                    "a branch or loop (from a conditional expression, a call inlined or a "
                    "sum over a sequence) inside a try block",
                    "compute it before the try, or in a function of yours called in the try block",
                )
    # the names bound in the blocks of lowered try statements are recorded whole, so
    # that a block that raised can be undone
    attempted = {n for block in tried for b in block for n in stores(b)}
    # the adjoint's statements are read by each pass below, and the primal's headers by
    # recompute (their calls) and run (the names the blocks store)
    loads = HeaderLoads()
    wanted, shape_only = _wanted(fn, loads, attempted)
    primal, adjoint, pushed, nested = run(
        fn.primal,
        fn.adjoint,
        fn.emitted.restores,
        wanted,
        fn.params,
        names,
        fn.namer,
        fn.kinds.dicts,
        shape_only,
        loads,
    )
    top_reads = set()  # without a branch or loop in the primal, none needs binding first
    if nested:
        top_reads = {n for st in adjoint if not isinstance(st, _BLOCKS) for n in loads(st)}
    primal = prebind(primal, top_reads, fn.params, nested)
    if pushed:
        tape = gast.Call(func=name(names["Tape"]), args=[], keywords=[])
        primal = [assign(names["tape"], tape, gast.Pass())] + primal
    fn.primal, fn.adjoint = primal, adjoint
    return fn


def _wanted(fn, loads, attempted):
    """``(needed(...), the names recorded as their shape)`` for ``fn.adjoint``, after
    ``recompute`` took out what it computes again. Without a restore marker nothing is
    recorded: no name or slot is needed, and no shape."""
    if not fn.emitted.restores:
        return (set(), set()), set()
    ops, adjoint_names = fn.names["ops"], fn.adjoint_names
    # a value the adjoint reads only for its shape is recorded as its shape: an array
    # whole would keep every iteration's temporary alive until the sweep comes back
    # (``ops.shape_of`` keeps a Python number as it is, and an array of another
    # library as a stand-in of that library)
    # the sweep's lines before its first block read the values the primal left (a
    # rebound parameter's first zero, ``zeros``): what they read needs nothing recorded
    first = _before_first_block(fn.adjoint)
    shape_reads, other_reads = _classify_reads(
        fn.adjoint, ops, loads, skip=lambda s: id(s) in first or _is_restore(s)
    )
    shape_only = set(shape_reads) - other_reads - attempted
    assigned = recompute.assigned_sources(fn.primal, fn.parsed.resolve)
    view_of = _views(fn.primal, assigned)
    steps = {}  # what needed_after reads of this first pass
    wanted = needed(fn.adjoint, adjoint_names, view_of, loads, steps)
    changed = recompute.run(fn, (wanted[0], shape_only), loads, assigned)
    if changed.statements:  # what the values computed again read is kept instead
        more_shape_reads, more_other_reads = _classify_reads(changed.statements, ops, loads)
        shape_only = (set(shape_reads) | set(more_shape_reads)) - other_reads
        shape_only = shape_only - more_other_reads - attempted
        wanted = needed_after(wanted, steps, changed, (adjoint_names, view_of, loads))
    return wanted, shape_only


class HeaderLoads:
    """The names and calls of each statement's header (all of a simple statement), found
    once per statement however many passes ask (of the adjoint: the shape-only reads,
    ``needed`` twice, ``recompute``'s index, the top-level reads; of the primal:
    ``recompute``'s calls, the names ``run`` finds stored in blocks): ``loads(stmt)``
    are the names it reads, ``loads.walk(node)`` is ``names_and_calls(node)``. A node
    is known by its id and kept, so that no id is reused while this lives; nothing may
    change a header after it was read here."""

    def __init__(self):
        self._found = {}  # id(node) -> (node, its names, its calls)
        self._read = {}  # id(stmt) -> (stmt, the names its header reads): asked most

    def walk(self, node):
        hit = self._found.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._found[id(node)] = (node, *names_and_calls(node))
        return hit[1], hit[2]

    def __call__(self, stmt):
        hit = self._read.get(id(stmt))
        if hit is None or hit[0] is not stmt:
            names = self.walk(header(stmt))[0]
            read = [n.id for n in names if isinstance(n.ctx, gast.Load)]
            hit = self._read[id(stmt)] = (stmt, read)
        return hit[1]


def prebind(primal, needed_names, params, nested=None):
    """``primal`` with ``name = None`` first for each of ``needed_names`` that only a
    branch or a loop binds: what reads it after the primal sweep runs whether or not
    they ran. ``nested``: the names the top-level branches and loops of ``primal``
    bind, where the caller has them (``run``)."""
    top = set(params)
    for st in primal:
        if not isinstance(st, _BLOCKS):
            top |= set(stores(st))
    if nested is None:
        nested = set()
        for st in primal:
            if isinstance(st, _BLOCKS):
                nested |= _stored_in(st)
    missing = sorted((needed_names & nested) - top)
    return [assign(n, const(None), gast.Pass()) for n in missing] + primal


def run(primal, adjoint, markers, needed, params, names, namer, dicts, shape_only, loads=None):
    """Turn restore markers into tape pops in the adjoint and pushes in the primal.

    ``needed`` is the pair ``(names, slots)`` from ``needed``; a marker whose name is not
    needed is dropped. A write that no loop encloses runs at most once: its old value
    is kept in a name (``h_old = h`` ... ``h = h_old``) rather than on the tape. Returns
    ``(primal, adjoint, whether anything is on the tape, the names the top-level
    branches and loops of the primal bind)``.

    A key written into one of ``dicts`` (local dicts) may be new: its old value is kept
    as ``ops.MISSING`` then, and restoring it removes the key again. ``shape_only``:
    the names recorded as their shape (``ops.shape_of``). ``loads``: a ``HeaderLoads``
    that may have walked the primal's headers already.
    """
    ops = names["ops"]
    loads = HeaderLoads() if loads is None else loads
    restores = _Restores(markers, needed, names, namer, dicts, _in_loops(primal), shape_only)
    adjoint = restores.convert(adjoint)
    hoisted = set()  # ids of the pushes before a lowered try's block
    primal = _with_pushes(primal, restores.pushes, hoisted)
    pushed = restores.pushed
    # a value pushed before its first write in a loop must exist: start it as None (or,
    # when only its shape is recorded, as ops.UNSET, which has an empty shape)
    defined, nested = set(params), set()
    out = []
    for s in primal:
        if isinstance(s, (gast.If, gast.For, gast.While)) or id(s) in hoisted:
            if id(s) in hoisted:
                inner = {n.id for n in name_nodes(s) if isinstance(n, gast.Name)}
            else:
                inner = _stored_in(s, loads)
                nested |= inner
            for n in sorted((inner & pushed) - defined):
                unset = (
                    gast.Attribute(value=name(ops), attr="UNSET", ctx=gast.Load())
                    if n in shape_only
                    else const(None)
                )
                out.append(assign(n, unset, s))
            defined |= inner
        else:
            defined |= set(stores(s))
        out.append(s)
    return out, adjoint, bool(restores.taped), nested


def _stored_in(block, loads=None):
    """The names stored to anywhere in ``block``: those in the header of each statement
    in it (all of a simple statement) and in each loop's target, which together are all
    of it; ``loads``: a ``HeaderLoads`` to walk the headers through."""
    walk = (loads or HeaderLoads()).walk
    found = set()
    for s in all_stmts([block]):
        names = walk(header(s))[0]
        if isinstance(s, gast.For):
            names = names + name_nodes(s.target)
        found.update(n.id for n in names if isinstance(n.ctx, gast.Store))
    return found


class _Restores:
    """Restore markers made pops (from the tape, or from a name kept for a write no loop
    encloses), and the pushes they need, per primal statement. (A class: a nested
    function calling itself would be a reference cycle holding all of this.)"""

    def __init__(self, markers, needed, names, namer, dicts, looped, shape_only):
        self.markers, self.needed, self.namer, self.dicts = markers, needed, namer, dicts
        self.tape, self.ops = names["tape"], names["ops"]
        self.looped, self.shape_only = looped, shape_only
        self.pushes = {}  # id(primal stmt) -> its push statements
        self.pushed = set()
        self.taped = []

    def convert(self, stmts):
        out = []
        for s in stmts:
            if _is_restore(s):
                self.restore(s, out)
                continue
            if isinstance(s, (gast.If, gast.For, gast.While)):
                s.body = self.convert(s.body) or [gast.Pass()]
                s.orelse = self.convert(s.orelse)
            out.append(s)
        return out

    def restore(self, s, out):
        target = s.value.args[0].id
        primal_stmt, kind = self.markers[id(s)]
        if target not in self.needed[kind == "slot"]:
            return
        self.pushed.add(target)
        kept = None
        if self.namer is not None and id(primal_stmt) not in self.looped:
            kept = self.namer.fresh(f"{target}_old")
            pop = name(kept)
        else:
            self.taped.append(target)
            pop = _method_call(self.tape, "pop", [])
        value = self.popped(s, target, primal_stmt, kind, pop, out)
        # pops run in marker order, so pushes go in reverse of it
        if kept is not None:
            push = assign(kept, value, primal_stmt)
        else:
            push = gast.Expr(value=_method_call(self.tape, "push", [value]))
        self.pushes.setdefault(id(primal_stmt), []).insert(0, push)

    def popped(self, s, target, primal_stmt, kind, pop, out):
        """Append to ``out`` what puts ``pop`` back; return what the push records."""
        ops = self.ops
        if kind == "slot" and _base_name(primal_stmt.targets[0]) in self.dicts:
            sub = primal_stmt.targets[0]
            out.append(_ops_call(ops, "restore_item", sub, pop))
            return _ops_call(ops, "saved_item", sub).value
        if kind == "slot":
            sub = clone(primal_stmt.targets[0])
            out.append(gast.Assign(targets=[sub], value=pop, type_comment=None))
            read = clone(sub)
            read.ctx = gast.Load()
            return _method_call(ops, "copy", [read])
        out.append(assign(target, pop, s))
        if target in self.shape_only:
            return _method_call(ops, "shape_of", [name(target)])
        return name(target)


def _method_call(owner, attr, args):
    """``owner.attr(*args)``, ``owner`` a name."""
    return gast.Call(
        func=gast.Attribute(value=name(owner), attr=attr, ctx=gast.Load()), args=args, keywords=[]
    )


def _base_name(target):
    return target.value.id if isinstance(target.value, gast.Name) else None


def _ops_call(ops, helper, sub, *args):
    """``ops.helper(base, key, *args)`` for the subscript ``sub``, as a statement."""
    call = gast.Call(
        func=gast.Attribute(value=name(ops), attr=helper, ctx=gast.Load()),
        args=[clone(sub.value), clone(sub.slice), *args],
        keywords=[],
    )
    for n in descendants(call):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return gast.Expr(value=call)


def _in_loops(stmts, inside=False, found=None):
    """The ids of the statements that a loop encloses."""
    found = set() if found is None else found
    for s in stmts:
        if inside:
            found.add(id(s))
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if inner and isinstance(s, _BLOCKS):
                _in_loops(inner, inside or isinstance(s, (gast.For, gast.While)), found)
    return found


def _classify_reads(stmts, ops_name, loads, skip=None):
    """``shapes.classify_reads`` of ``stmts``, restore markers (or the statements
    ``skip`` says) left out: names read where a shape is enough
    (``ops.unbroadcast(g, x)``), and those read otherwise."""
    return shapes.classify_reads(stmts, ops_name, skip=skip or _is_restore, walk=loads.walk)


_is_restore = recompute.is_restore


def _before_first_block(stmts):
    """The ids of the statements of ``stmts`` before its first branch or loop."""
    first = set()
    for s in stmts:
        if isinstance(s, _BLOCKS):
            break
        first.add(id(s))
    return first


def needed(adjoint, adjoint_names, view_of, loads, steps=None):
    """``(names, slots)``: what a name restore needs (the name is read later) and what a
    slot restore needs (the array, or a view of it, is read later); ``view_of`` is
    ``_views`` of the primal, ``loads`` a ``HeaderLoads``; ``steps``, where given,
    gets index in ``adjoint`` -> (the names restored there, those unpacked there) for
    each top-level statement read (``needed_after``).

    A read before any restore of that name sees its final primal value, which is
    still there, so it does not make the loops record the name. Reading a view of
    an array counts as reading the array, whose written slots must be restored."""
    names, slots, restored = set(), set(), set()
    for i, s in enumerate(adjoint):
        if not restored and not isinstance(s, _BLOCKS) and not _is_restore(s):
            continue  # nothing restored yet, and no restore here: no read can need one
        reads, unpacked, markers = set(), set(), set()
        _scan([s], (reads, unpacked, markers), loads)
        reads = reads - unpacked - adjoint_names
        names |= {n for n in reads if n in restored or n in markers}
        for n in list(reads):
            reads |= view_of.get(n, set())
        slots |= {n for n in reads if n in restored or n in markers}
        restored |= markers
        if steps is not None:
            steps[i] = (markers, unpacked)
    return names, slots


def needed_after(wanted, steps, changed, reading):
    """``needed`` again after ``recompute`` changed the adjoint (``changed``), from
    ``wanted`` and ``steps`` of the first pass, without reading the adjoint again: a
    name whose restore was dropped is restored nowhere now, so nothing needs it; what
    the statements put in read may need what is restored before or in the top-level
    statement holding them (``reading``: ``(adjoint_names, view_of, loads)``)."""
    adjoint_names, view_of, loads = reading
    names, slots = wanted[0] - changed.dropped, wanted[1] - changed.dropped
    for top, bound, statements in changed.loops:
        live = set()  # restored before or in the top-level statement, and still
        for i, (markers, _) in steps.items():
            if i <= top:
                live |= markers
        live -= changed.dropped
        reads = set()
        _scan(statements, (reads, set(), set()), loads)
        reads = reads - bound - steps[top][1] - adjoint_names
        names |= reads & live
        for n in list(reads):
            reads |= view_of.get(n, set())
        slots |= reads & live
    return names, slots


def _views(primal, assigned):
    """For each name, the names that may be views of it (``row = out[0]``, ``r = out.T``:
    ``views.sources``, in ``assigned``: ``recompute.assigned_sources``), or the same
    object under another name."""
    edges = {}
    for s in all_stmts(primal):
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            continue
        target, v = s.targets[0].id, s.value
        for source in assigned[id(s)]:
            edges.setdefault(target, set()).add(source)
            if isinstance(v, gast.Name):  # the same object under two names
                edges.setdefault(source, set()).add(target)
    return {n: _reachable(edges, n) for n in edges}  # a view of a view is a view


def _reachable(edges, start):
    """The names ``start`` reaches through ``edges`` (name -> names), itself excluded."""
    return fixpoint.reachable(edges, edges.get(start, ())) - {start}


def free_loads(stmts, exclude, header_loads=None):
    """Names read by ``stmts`` that they do not define themselves (``header_loads``: a
    ``HeaderLoads`` to read the statements through)."""
    loads, unpacked = set(), set()
    _scan(stmts, (loads, unpacked, set()), header_loads or HeaderLoads())
    return loads - unpacked - set(exclude)


def _with_pushes(stmts, pushes, hoisted):
    """``stmts`` with the pushes recorded for each statement (by ``id``) before it. In
    the block of a lowered try (the branch after ``caught = __try__(...)``), every push
    comes before the branch, and the branch taken when the block raised pops them back: an
    exception part-way leaves the tape, and the names the adjoint reads, as they were
    before the block, whose adjoint does not run then."""
    out = []
    for i, s in enumerate(stmts):
        out.extend(pushes.get(id(s), []))
        if i and s.__class__ is gast.If and is_attempt(stmts[i - 1], s):
            first = [p for b in s.orelse for p in pushes.pop(id(b), [])]
            out.extend(first)
            hoisted.update(map(id, first))
            s.orelse = _with_pushes(s.orelse, pushes, hoisted)
            undo = [_undo(p) for p in reversed(first)]
            s.body = undo + _with_pushes(s.body, pushes, hoisted)
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _with_pushes(s.body, pushes, hoisted)
            s.orelse = _with_pushes(s.orelse, pushes, hoisted)
        out.append(s)
    return out


def attempts(primal):
    """The blocks of the lowered try statements in ``primal``: what raises there."""
    found = []
    blocks = [primal] + [
        b for s in all_stmts(primal) if isinstance(s, _BLOCKS) for b in (s.body, s.orelse)
    ]
    for block in blocks:
        for head, s in itertools.pairwise(block):
            # a lowered try's block is a branch: asked of the branches only
            if s.__class__ is gast.If and is_attempt(head, s):
                found.append(s.orelse)
    return found


def _undo(push):
    """The statement putting back what ``push`` recorded: ``x = tape.pop()`` for
    ``tape.push(x)``, ``x = x_old`` for ``x_old = x``."""
    if isinstance(push, gast.Assign):
        return assign(push.value.id, name(push.targets[0].id), push)
    return assign(push.value.args[0].id, _method_call(push.value.func.value.id, "pop", []), push)


def _scan(block, found, header_loads):
    """Add to ``found``, ``(loads, unpacked, restored)``, the names ``block`` reads, the
    names its tuple assignments bind, and the names its restore markers restore: one
    walk for what ``free_loads`` and ``needed`` ask. A loop binds its target before each
    pass: what its body reads of the target is not read from outside."""
    loads, unpacked, restored = found
    for s in block:
        if _is_restore(s):
            restored.add(s.value.args[0].id)
            continue
        loads.update(header_loads(s))
        if isinstance(s, gast.Assign):
            for t in s.targets:
                if isinstance(t, gast.Tuple):
                    unpacked.update(e.id for e in t.elts if isinstance(e, gast.Name))
        elif isinstance(s, gast.For):
            inner = set()
            _scan(s.body, (inner, unpacked, restored), header_loads)
            loads.update(inner - {n.id for n in name_nodes(s.target)})
            _scan(s.orelse, found, header_loads)
        elif isinstance(s, (gast.If, gast.While)):
            _scan(s.body, found, header_loads)
            _scan(s.orelse, found, header_loads)


def drop_unread(body, tape_name, ops_name):
    """``body`` without the tape records that nothing reads back: a name whose every
    push is ``tape.push(n)`` or ``tape.push(ops.shape_of(n))`` and that no statement
    from its first ``n = tape.pop()`` on reads (a specialized variant reads no shape
    that its rewrite made known). Its pushes and pops go together, so every other
    pop still meets its own push."""
    pushes, pops = {}, {}
    for s in all_stmts(body):
        n = _pushed_name(s, tape_name, ops_name)
        if n is not None:
            pushes.setdefault(n, []).append(s)
        n = _popped_name(s, tape_name)
        if n is not None:
            pops.setdefault(n, []).append(s)
    dropped = set()
    first_pop, last_read = _pop_and_read_positions(body, tape_name)
    for n, popped in pops.items():
        read_after = last_read.get(n, -1) >= first_pop[n]
        if len(pushes.get(n, ())) == len(popped) and not read_after:
            dropped |= {id(p) for p in popped + pushes[n]}
    return _without(body, dropped) if dropped else body


def _pop_and_read_positions(body, tape_name):
    """``(name -> index of the top-level statement holding its first pop, name -> index
    of the last top-level statement reading it)``, in one walk of ``body``."""
    first_pop, last_read = {}, {}
    for i, s in enumerate(body):
        for x in all_stmts([s]):
            n = _popped_name(x, tape_name)
            if n is not None:
                first_pop.setdefault(n, i)
        for x in name_nodes(s):
            if isinstance(x, gast.Name) and isinstance(x.ctx, gast.Load):
                last_read[x.id] = i
    return first_pop, last_read


def _pushed_name(s, tape_name, ops_name):
    """``n`` of ``tape.push(n)`` or ``tape.push(ops.shape_of(n))``, else None."""
    call = s.value if isinstance(s, gast.Expr) else None
    if not _is_method(call, tape_name, "push") or len(call.args) != 1:
        return None
    arg = call.args[0]
    if _is_method(arg, ops_name, "shape_of") and len(arg.args) == 1:
        arg = arg.args[0]
    return arg.id if isinstance(arg, gast.Name) else None


def _popped_name(s, tape_name):
    """``n`` of ``n = tape.pop()``, else None."""
    popped = isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
    if popped and _is_method(s.value, tape_name, "pop") and not s.value.args:
        return s.targets[0].id
    return None


def _is_method(node, base, attr):
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == attr
        and isinstance(node.func.value, gast.Name)
        and node.func.value.id == base
    )


def _without(stmts, dropped):
    """``stmts`` without the statements whose ids are in ``dropped``, at any depth (a
    block left empty gets ``pass``)."""
    out = []
    for s in stmts:
        if id(s) in dropped:
            continue
        if isinstance(s, _BLOCKS):
            s.body = _without(s.body, dropped) or [gast.Pass()]
            s.orelse = _without(s.orelse, dropped)
        out.append(s)
    return out
