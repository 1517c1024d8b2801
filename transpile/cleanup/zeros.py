"""Symbolic zeros in the adjoint sweep.

Every adjoint starts as zero. An accumulation into a zero becomes a plain first
write (``dx = e``), a contribution computed from a zero adjoint is dropped, and a
zero becomes an array (``ops.zeros_like(x)``) only where a value must exist: where
it meets a non-zero on another path, or an in-place update needs a buffer. The
analysis is reaching definitions over the control-flow graph, run to a fixed point.
"""

import gast

from transpile.analysis import views
from transpile.core import cfg
from transpile.core.ir import RESTORE, ZERO
from transpile.core.nodes import (
    all_stmts,
    apply_edits,
    assign,
    calls_marker,
    clone,
    header,
    loads,
    loads_with_parents,
    name,
    names_and_calls,
    stores,
    transform,
)
from transpile.rules.declare import helper_of

ENTRY = "entry"


IN_PLACE_METHODS = {"pop", "append"}  # (append: the adjoint of a pop, read again)


def stage(fn, ctx):
    """Resolve the symbolic zeros of the adjoint sweep."""
    given = {fn.d_result} if ctx.mode == "split" and fn.d_result else set()
    em = fn.emitted
    inits, body = run(
        fn.adjoint,
        fn.adjoint_names,
        em.primal_of,
        fn.names["ops"],
        fn.containers,
        given,
        em.pops,
        em.at_end,
    )
    fn.adjoint = inits + body
    return fn


_SKIPPED = (gast.If, gast.For, gast.While, gast.Break, gast.Continue)


class _Definitions:
    """Every definition of every adjoint, numbered as ``cfg.Bits``: the reaching
    definitions before a statement are one integer."""

    def __init__(self):
        self.bits = cfg.Bits()  # items: (name, kind, where)
        self.of_name = {}  # name -> mask of all its definitions
        self.zeros = 0  # mask of the zero definitions

    def define(self, n, kind, where) -> int:
        bit = self.bits.bit((n, kind, where))
        self.of_name[n] = self.of_name.get(n, 0) | bit
        if kind == "zero":
            self.zeros |= bit
        return bit


class _Zeros:
    """The reaching definitions before one statement, asked per adjoint: is it zero on
    every path; and ``need``: its zero definitions must become arrays."""

    def __init__(self, fact, definitions, needed):
        self.fact, self.defs, self.needed = fact, definitions, needed

    def zero(self, n):
        reaching = self.fact & self.defs.of_name.get(n, 0)
        return not reaching & ~self.defs.zeros

    def any_zero(self, names):
        return any(self.zero(n) for n in names)

    def need(self, *names):
        for n in names:
            zeros = self.fact & self.defs.of_name.get(n, 0) & self.defs.zeros
            for _, _, where in self.defs.bits.items_in(zeros):
                self.needed.add((n, where))


def _is_zero_marker(stmt):
    return isinstance(stmt, gast.Assign) and calls_marker(stmt, ZERO)


def in_place_base(stmt):
    """The adjoint name a statement updates in place, if any."""
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        f = stmt.value.func
        if isinstance(f, gast.Attribute) and f.attr == "add_at" and stmt.value.args:
            return stmt.value.args[0].id
        if (
            isinstance(f, gast.Attribute)
            and f.attr in IN_PLACE_METHODS
            and isinstance(f.value, gast.Name)
        ):
            return f.value.id
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
        return stmt.targets[0].value.id
    return None


def _pop_base(node):
    for n in names_and_calls(node)[1]:
        if (
            isinstance(n.func, gast.Attribute)
            and n.func.attr == "pop"
            and isinstance(n.func.value, gast.Name)
        ):
            return n.func.value.id
    return None


class _Adjoints:
    def __init__(self, names, primal_of, ops_name, containers, given=(), pops=True, at_end=None):
        self.given = set(given)
        self.may_pop = pops
        self.names = names
        self.primal_of = primal_of
        self.at_end = at_end or {}  # adjoint -> the primal name shaping its first zero
        self.ops = ops_name
        self.containers = containers
        self.in_place = set()
        # per round, of the body's statements: id -> the adjoint it updates in place,
        # for those that do; and the ids of the zero markers (asked of every statement
        # by the solve and by the rewrite, found once)
        self.bases, self.markers = {}, set()
        # id(statement) -> (statement, the list it pops from): the rounds rebuild the
        # body but keep the statements they do not edit, and never edit one in place
        self.pops = {}
        self.reads = {}  # id(node) -> (node, the adjoints it reads), likewise
        self.first_writes = {}  # id -> each assignment made of an accumulation onto zero
        self.only_first_writes = False  # whether the last round made nothing else

    def zeros_like(self, adj, primal_of=None):
        primal = (primal_of or {}).get(adj) or self.primal_of.get(adj, adj)
        return gast.Call(
            func=gast.Attribute(value=name(self.ops), attr="zeros_like", ctx=gast.Load()),
            args=[name(primal)],
            keywords=[],
        )

    def run(self, body):
        for _ in range(50):
            changed, body, needed_markers = self.step(body)
            if not changed or self.only_first_writes:
                # a first write defines what the accumulation it replaces defined, and
                # reads what it read: another round would find what this one found
                return self.finish(body, needed_markers)
        raise RuntimeError("adjoint optimization did not converge")

    def reaching(self, body):
        """Reaching definitions of the adjoints before each statement, as ``Bits``; on
        the way, the ``bases``, ``markers`` and ``in_place`` of the statements of
        ``body`` (the graph builder visits each: no loop has an ``else``, which ``fence``
        refuses). An expression statement that defines no adjoint and reads none (a
        comment, a restore marker) has no node: ``step`` has nothing to do there."""
        self.bases, self.markers = {}, set()
        definitions = _Definitions()
        boundary = 0
        for n in sorted(self.names):
            boundary |= definitions.define(n, "value" if n in self.given else "zero", ENTRY)
        made_by = {}  # id(statement) -> what ``classified`` found, for those asked

        def leave_out(s):  # asked of each simple statement as the graph is built
            if s.__class__ is gast.Expr and (
                s.value.__class__ is gast.Constant or self.restores_a_primal(s)
            ):
                return True  # a comment or a restore: nothing to classify or read
            found = made_by[id(s)] = self.classified(s, definitions)
            return found is None and isinstance(s, gast.Expr) and not self.incoming(s)

        graph = cfg.build(body, leave_out=leave_out)
        found_at = [  # by node index; headers and jumps are classified here
            made_by[id(node.stmt)]
            if id(node.stmt) in made_by
            else self.classified(node.stmt, definitions)
            for node in graph.nodes
        ]
        self.in_place = set(self.bases.values())
        # by node index: (the definitions it keeps, those it makes), or None; what it
        # kills is known once every definition is numbered
        effects = [None] * len(graph.nodes)
        for k, found in enumerate(found_at):
            if found is not None:
                killed = 0
                for d in found[0]:
                    killed |= definitions.of_name[d]
                effects[k] = (~killed, found[1])

        def transfer(node, fact):
            found = effects[node.index]
            if found is None:
                return fact
            return (fact & found[0]) | found[1]

        before, _ = cfg.solve(
            graph, transfer, forward=True, boundary=boundary, init=0, join=cfg.union
        )
        return graph, before, definitions

    def restores_a_primal(self, s):
        """Whether ``s`` is ``__restore__(x)`` of names that are not adjoints: it defines
        and reads none (asked first, as a third of the statements of a loop's adjoint
        are such markers, cheaper to recognize than to classify and walk)."""
        if not calls_marker(s, RESTORE) or s.value.keywords:
            return False
        return all(a.__class__ is gast.Name and a.id not in self.names for a in s.value.args)

    def classified(self, s, definitions):
        """``s``'s in-place base and whether it is a zero marker noted, and the
        definitions it makes numbered: ``(the adjoints it defines, their mask)``, or
        None where it defines none."""
        if s is None:
            return None
        base = in_place_base(s)
        if base:
            self.bases[id(s)] = base
        kind = "value"
        if _is_zero_marker(s):
            self.markers.add(id(s))
            kind = "zero"
        defs = self.defined_by(s)
        if not defs:
            return None
        made = 0
        for d in defs:
            made |= definitions.define(d, kind, id(s))
        return defs, made

    def defined_by(self, s):
        """The adjoints a statement (re)defines: targets, in-place bases, popped lists."""
        if isinstance(s, (gast.If, gast.While)):
            return []
        defs = [n for n in stores(s) if n in self.names]
        base = self.bases.get(id(s))
        if base in self.names:
            defs.append(base)
        pop = self.popped(s)
        if pop in self.names:
            defs.append(pop)
        return defs

    def popped(self, s):
        if not self.may_pop:
            return None
        found = self.pops.get(id(s))
        if found is None:
            found = self.pops[id(s)] = (s, _pop_base(header(s)))
        return found[1]

    def step(self, body):
        """One round: decide, from where each adjoint may be zero, what each statement
        becomes. Returns ``(changed, body, needed)``; ``needed`` are the zero markers
        (or ENTRY) that must become arrays."""
        graph, before, definitions = self.reaching(body)
        edits = {}  # id(stmt) -> the statements that replace it
        needed = set()
        self.only_first_writes = True
        for node in graph.nodes:
            s = node.stmt
            if s is None or isinstance(s, _SKIPPED) or id(s) in self.markers:
                continue
            at = _Zeros(before[node], definitions, needed)
            if isinstance(s, gast.AugAssign):
                new = self.accumulation(s, at)
            elif self.bases.get(id(s)) in self.names:
                new = self.in_place_update(s, at)
            elif isinstance(s, gast.Return):
                new = self.returned(s, at)
            elif isinstance(s, gast.Assign):
                new = self.assignment(s, at)
            else:
                new = self.other(s, at)
            if new is not None:
                edits[id(s)] = new
                if not (len(new) == 1 and id(new[0]) in self.first_writes):
                    self.only_first_writes = False
        if not edits:
            return False, body, needed
        return True, apply_edits(body, edits), needed

    def incoming(self, node, skip=None):
        found = self.reads.get(id(node))
        if found is None:
            found = self.reads[id(node)] = (node, [n for n in loads(node) if n in self.names])
        return [n for n in found[1] if n != skip]

    def accumulation(self, s, at):
        """``t += e``: dropped when ``e`` is zero; a first write when ``t`` is zero."""
        pop = self.popped(s)
        incoming = self.incoming(s.value, skip=pop)
        if at.any_zero(incoming):
            return []
        at.need(*incoming)
        pre = []
        if pop and at.zero(pop):  # the list popped from is made first
            pre.append(assign(pop, self.zeros_like(pop), s))
        elif pop:
            at.need(pop)
        target = s.target.id
        if target in self.names and at.zero(target):
            return pre + [self.first_write(s)]
        if target in self.names:
            at.need(target)
        return pre + [s] if pre else None

    def in_place_update(self, s, at):
        """``ops.add_at(buf, ...)``, ``buf[i] = 0``, ``buf.pop()``: the buffer must exist."""
        base = self.bases[id(s)]
        incoming = self.incoming(s, skip=base)
        if isinstance(s, gast.Assign) and at.zero(base):
            return []  # clearing a slot of a zero
        if at.any_zero(incoming):
            return []
        at.need(*incoming)
        if at.zero(base):
            return [assign(base, self.zeros_like(base), s), s]
        at.need(base)
        return None

    def returned(self, s, at):
        """The return: a zero gradient becomes an array shaped like its argument."""
        repl = {}
        for n in self.incoming(s):
            if at.zero(n):
                repl[n] = self.zeros_like(n)
            else:
                at.need(n)
        return [_replace_names(s, repl)] if repl else None

    def assignment(self, s, at):
        """``t = f(adjoints)``: zero where an operand is (every adjoint rule is linear)."""
        incoming = self.incoming(s.value)
        if at.any_zero(incoming):
            targets = [t for t in stores(s) if t in self.names]
            return [gast.copy_location(_zero(t, self.primal_of), s) for t in targets]
        at.need(*incoming)
        return None

    def other(self, s, at):
        at.need(*self.incoming(s))

    def first_write(self, s):
        value = s.value
        if isinstance(s.op, gast.Sub):
            value = gast.UnaryOp(op=gast.USub(), operand=value)
        elif s.target.id in self.in_place and not views.new_array(value, self.ops):
            value = _copy_call(self.ops, value)
        written = assign(s.target.id, value, s)  # assign copies s's location
        self.first_writes[id(written)] = written
        if _is_zero_marker(written):  # (d += __zero__(x)): ``converted`` asks markers
            self.markers.add(id(written))
        return written

    def finish(self, body, needed):
        needed_ids = {i for _, i in needed}
        entry_names = sorted({n for n, i in needed if i == ENTRY})
        in_place = _own_buffers(
            body, self.names - self.containers, needed_ids, self.ops, set(entry_names)
        )

        inits = [assign(n, self.zeros_like(n, self.at_end), gast.Pass()) for n in entry_names]
        return inits, self.owned(self.converted(body, needed_ids, in_place))

    def owned(self, body):
        """``body`` with every adjoint that is written in place bound only to an array of
        its own: a value that may be another name's (the caller's ``dout`` checked by
        ``ops.cotangent``, an adjoint handed in) is copied first, so no write shows
        through to the caller or to another adjoint."""
        # the in-place updates of ``body`` are those the last round's ``reaching`` noted:
        # that round edited nothing or made only first writes (of accumulations), and
        # ``converted`` makes only assignments to names, none of which update in place
        written = self.in_place & self.names
        if not written:
            return body
        for s in all_stmts(body):
            if (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id in written
                and not views.new_array(s.value, self.ops)
            ):
                s.value = _copy_call(self.ops, s.value)
        given = sorted(written & self.given)  # a split function's output adjoint
        return [assign(n, _copy_call(self.ops, name(n)), gast.Pass()) for n in given] + body

    def converted(self, stmts, needed_ids, in_place):
        """``stmts`` with the zeros needed made arrays, the others gone, and accumulations
        made assignments (or kept in place, for an adjoint in ``in_place``)."""
        out = []
        for s in stmts:
            # the markers of the last round's body, and of the first writes it made: the
            # only statements it added (see ``run``)
            if id(s) in self.markers:
                if id(s) in needed_ids:
                    t = s.targets[0].id
                    out.append(assign(t, self.zeros_like(t), s))
            elif isinstance(s, gast.AugAssign) and s.target.id in self.names:
                if s.target.id in in_place:  # its own zeroed buffer, never aliased
                    out.append(s)
                else:
                    out.append(assign(s.target.id, self.added(s), s))
            else:
                if isinstance(s, (gast.If, gast.For, gast.While)):
                    s.body = self.converted(s.body, needed_ids, in_place)
                    s.orelse = self.converted(s.orelse, needed_ids, in_place)
                out.append(s)
        return out

    def added(self, s):
        """The value of the accumulation ``s`` (``t += v``) as an expression."""
        t = s.target.id
        if t not in self.containers:
            return gast.BinOp(left=name(t), op=s.op, right=s.value)
        if isinstance(s.op, gast.Sub):
            return gast.BinOp(left=name(t), op=gast.Sub(), right=s.value)
        return gast.Call(
            func=gast.Attribute(value=name(self.ops), attr="add", ctx=gast.Load()),
            args=[name(t), s.value],
            keywords=[],
        )


def _own_buffers(body, names, materialized, ops_name, zeroed_on_entry):
    """Adjoints that own their array: every write is a materialized zero or an
    accumulation, and every read makes a new array (arithmetic, a helper declared
    ``fresh`` such as a matrix product), so no other name can see the buffer. Such an
    adjoint may accumulate in place."""
    if not materialized and not zeroed_on_entry:
        return set()  # no adjoint is a zero made an array: none is a candidate
    writes = {n: ["zeros"] for n in zeroed_on_entry}
    for stmt in all_stmts(body):
        for n, kind in _writes(stmt, materialized):
            writes.setdefault(n, []).append(kind)
    candidates = {
        n
        for n in names
        if "zeros" in writes.get(n, []) and set(writes[n]) <= {"zeros", "accumulate", "folded"}
    }
    if not candidates:
        return candidates
    safe_reads, all_reads = _reads(body, ops_name)
    return {n for n in candidates if safe_reads.get(n, 0) == all_reads.get(n, 0)}


def _writes(stmt, materialized):
    """``(name, kind)`` for what ``stmt`` writes: an accumulation, a zero (made an
    array, or folded away), or anything else."""
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        return [(stmt.target.id, "accumulate")]
    if _is_zero_marker(stmt):
        return [(stmt.targets[0].id, "zeros" if id(stmt) in materialized else "folded")]
    out = [(t, "other") for t in stores(stmt)]
    base = in_place_base(stmt)
    return out + [(base, "other")] if base else out


def _reads(body, ops_name):
    """``(safe, all)`` read counts per name: a safe read makes a new array of the value
    (an operand of arithmetic or of a fresh helper), or returns it."""
    safe, every = {}, {}
    for stmt in all_stmts(body):
        for node, parent in loads_with_parents(header(stmt)):
            every[node.id] = every.get(node.id, 0) + 1
            if isinstance(stmt, gast.Return) or _fresh_use(parent, ops_name):
                safe[node.id] = safe.get(node.id, 0) + 1
    return safe, every


def _fresh_use(parent, ops_name):
    if isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare)):
        return True
    return (
        isinstance(parent, gast.Call)
        and isinstance(parent.func, gast.Attribute)
        and getattr(parent.func.value, "id", None) == ops_name
        and getattr(helper_of(parent.func.attr), "fresh", False)
    )


def _copy_call(ops_name, value):
    return gast.Call(
        func=gast.Attribute(value=name(ops_name), attr="copy", ctx=gast.Load()),
        args=[value],
        keywords=[],
    )


def _zero(target, primal_of):
    return assign(
        target,
        gast.Call(func=name(ZERO), args=[name(primal_of.get(target, target))], keywords=[]),
        gast.Pass(),
    )


def _replace_names(stmt, repl):
    def put(node):
        if isinstance(node.ctx, gast.Load) and node.id in repl:
            return clone(repl[node.id])
        return node

    return transform(clone(stmt), {gast.Name: put})


def run(body, names, primal_of, ops_name, containers, given=(), pops=True, at_end=None):
    """Resolve symbolic zeros and accumulations in ``body``; returns ``(inits, body)``:
    ``inits`` are zero arrays that must exist when the adjoint sweep starts. ``given``
    adjoints hold a value on entry (the output cotangent of a split function). Without
    ``pops`` (no statement pops from a list), no statement is searched for one.
    ``at_end``: adjoint -> the primal name whose value at the end shapes its zero in
    ``inits`` (a rebound parameter's), where that is not ``primal_of``'s."""
    return _Adjoints(set(names), primal_of, ops_name, containers, given, pops, at_end).run(body)
