"""Shape facts that make ``ops.unbroadcast`` moot.

Elementwise operations give their result the broadcast of their operands' shapes.
``shape_sets`` describes each value by the set of *shape atoms* it was broadcast
from: a number or a full reduction contributes nothing, an opaque value (an
argument, a matrix product, a slice) is its own atom. Two values with the same set
have the same shape. In ``z = x + y``, the adjoint of ``x`` needs no
``ops.unbroadcast(dz, x)`` when ``y``'s set is contained in ``x``'s: ``y`` cannot
have broadcast ``x`` to a larger shape.

Atoms are per block and per assignment, so a name re-assigned in a loop is a new
atom after each assignment; the facts hold within one execution of a block.
"""

import bisect

import gast

from transpile.analysis import kinds
from transpile.cleanup import deadcode
from transpile.core.nodes import all_stmts, header, name_nodes, names_and_calls, stores
from transpile.rules import registry
from transpile.rules.declare import ELEMENTWISE, helper_of


def stage(fn, ctx):
    """Where a value is read only for its shape, read its sources' shapes instead; what
    was computed only for its shape is then dead, and removed."""
    pure = deadcode.purity(fn.parsed, fn.names)
    for out in fn.outputs:
        out.body = read_shapes_from_sources(
            out.body, fn.parsed, fn.names["ops"], pure, fn.params, fn.kinds.sequences
        )
    return fn


def shape_sets(tree, parsed, scalars, sequences=frozenset(), stored=None):
    """``id(stmt) -> function(node) -> frozenset | None``: the shape set of an operand
    just before ``stmt`` runs (None for a value the analysis cannot describe).
    ``sequences``: the names holding lists or tuples (``kinds``); ``stored``: id(branch
    or loop) -> the names stored in it, where the caller has them (for some)."""
    reader = _ShapeSets(parsed, scalars, sequences, stored or {})
    reader.block(tree.body)
    return reader.facts


class _ShapeSets:
    """The walk of ``shape_sets`` (a class, not nested functions calling each other:
    those would be a reference cycle holding every fact)."""

    def __init__(self, parsed, scalars, sequences, stored):
        self.parsed, self.scalars, self.sequences = parsed, scalars, sequences
        self.stored = stored  # id(branch or loop) -> the names stored in it, for some
        self.facts = {}
        self.history = _History()

    def block(self, stmts):
        history = self.history
        for s in stmts:
            facts = self.facts[id(s)] = _Lookup(history, history.tick(), self.scalars)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                t = s.targets[0].id
                found = _value_set(s.value, facts, self.parsed, self.sequences)
                gen = history.gen(t) + 1
                history.set(t, found if found is not None else frozenset({(t, gen)}), gen)
            elif isinstance(s, (gast.If, gast.For, gast.While)):
                self.compound(s)

    def compound(self, s):
        history = self.history
        assigned = self.stored.get(id(s))
        if assigned is None:
            assigned = {n.id for n in name_nodes(s) if isinstance(n.ctx, gast.Store)}
        # a later iteration sees new values
        shift = 0 if isinstance(s, gast.If) else 1000
        entry = {n: history.gen(n) + shift for n in assigned}
        for part in (s.body, s.orelse):
            history.tick()
            for n in assigned:  # each part starts from what held before the statement
                history.set(n, None, entry[n])
            self.block(part)
        history.tick()
        for n in assigned:
            history.set(n, None, entry[n] - shift + 100000)


class _History:
    """Every name's shape set and generation over time, so that the facts before each
    statement are a position in it rather than a copy of every name's (which would make
    the analysis quadratic in the function's length)."""

    def __init__(self):
        self.now = 0
        self.times = {}  # name -> [time, ...], increasing
        self.states = {}  # name -> [(shape set or None, generation), ...]

    def tick(self):
        self.now += 1
        return self.now

    def set(self, name, shape_set, gen):
        self.times.setdefault(name, []).append(self.now)
        self.states.setdefault(name, []).append((shape_set, gen))

    def gen(self, name):
        states = self.states.get(name)
        return states[-1][1] if states else 0

    def before(self, name, time):
        """``(shape set or None, generation)`` of ``name`` as it stood before ``time``."""
        times = self.times.get(name)
        if not times:
            return None, 0
        i = bisect.bisect_left(times, time)
        return self.states[name][i - 1] if i else (None, 0)


class _Lookup:
    """The shape sets of the operands just before one statement runs: what the
    history holds before that time, which later statements do not change. A name's is
    kept once found: the adjoint's lines of the statement ask it again (one line per
    operand asks every operand's: ``elide_unbroadcast``)."""

    def __init__(self, history, time, scalars):
        self.history, self.time, self.scalars = history, time, scalars
        self.found = {}  # name -> its shape set

    def __call__(self, node):
        if isinstance(node, gast.Constant):
            return frozenset() if _is_number_or_none(node.value) else None
        if isinstance(node, gast.Name):
            found = self.found.get(node.id)
            if found is None:
                found = self.found[node.id] = self._name_set(node.id)
            return found
        return None

    def _name_set(self, n):
        if n in self.scalars:
            return frozenset()
        shape_set, gen = self.history.before(n, self.time)
        return shape_set if shape_set is not None else frozenset({(n, gen)})


def _is_number_or_none(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def elementwise_operands(v, parsed, sequences=frozenset()):
    """The operands of an elementwise operation (its result has their broadcast shape:
    an operator or a function declared ELEMENTWISE), or None when ``v`` is not one
    (``x * 2`` of a list ``x``, one of ``sequences``, repeats it: twice as long)."""
    rules = registry()
    if kinds.is_sequence_op(v, sequences):
        return None
    if isinstance(v, (gast.BinOp, gast.UnaryOp)):
        declaration = rules.operator_declaration(type(v.op))
        if declaration is None or declaration.shape is not ELEMENTWISE:
            return None
        return [v.left, v.right] if isinstance(v, gast.BinOp) else [v.operand]
    if isinstance(v, gast.Compare):
        return [v.left, *v.comparators]
    if isinstance(v, gast.Call) and not v.keywords:
        declaration = rules.declaration(parsed.resolve(v.func))
        if declaration is not None and declaration.shape is ELEMENTWISE:
            return list(v.args)
    return None


def _value_set(v, lookup, parsed, sequences):
    if isinstance(v, (gast.Constant, gast.Name)):
        return lookup(v)
    operands = elementwise_operands(v, parsed, sequences)
    if operands is None:
        return None
    sets = [lookup(o) for o in operands]
    if any(s is None for s in sets):
        return None
    return frozenset().union(*sets)


def elide_unbroadcast(stmt, param, values, lookup):
    """``ops.unbroadcast(e, x)`` is ``e`` when no other operand (options included: a
    where-mask or clip bounds broadcast too) has a shape atom that ``x`` lacks."""
    v = stmt.value
    if not (
        isinstance(v, gast.Call)
        and isinstance(v.func, gast.Attribute)
        and v.func.attr == "unbroadcast"
    ):
        return stmt
    mine = lookup(values[param]) if lookup else None
    others = [lookup(o) if lookup else None for p, o in list(values.items())[1:] if p != param]
    if mine is not None and all(o is not None and o <= mine for o in others):
        stmt.value = v.args[0]
    return stmt


def classify_reads(stmts, ops_name, skip=lambda stmt: False, walk=names_and_calls):
    """``(shape_reads, other_reads)``: for each name read only for its shape, the
    ``(call, position)`` pairs reading it; and the names read anywhere else. ``walk``:
    ``names_and_calls``, or a caller's cache of it."""
    return _classify(stmts, lambda node: _reads_in(node, ops_name, walk), skip)


def _classify(stmts, reads_in, skip=lambda stmt: False):
    """``classify_reads`` with ``reads_in(node)`` giving what ``_reads_in`` gives."""
    shape_reads, other_reads = {}, set()
    for stmt in all_stmts(stmts):
        if skip(stmt):
            continue
        loads, shaped = reads_in(header(stmt))
        shape_args = set()
        for arg, call, position in shaped:
            shape_args.add(id(arg))
            shape_reads.setdefault(arg.id, []).append((call, position))
        other_reads.update(n.id for n in loads if id(n) not in shape_args)
    return shape_reads, other_reads


def _reads_in(node, ops_name, walk=names_and_calls):
    """``(loads, shaped)``: the names ``node`` reads (``gast.Name`` nodes, in order) and
    its reads only for a shape, ``(name, call, position)``, in one walk (``walk``:
    ``names_and_calls`` or a cache of it)."""
    names, calls = walk(node)
    shaped = []
    for call in calls:
        for position in _shape_positions(call, ops_name):
            arg = call.args[position]
            if isinstance(arg, gast.Name):
                shaped.append((arg, call, position))
    return [n for n in names if isinstance(n.ctx, gast.Load)], shaped


class _ReadsMemo:
    """``_reads_in`` of each header, found once: the two classifications and the
    dead-code solve between them ask it of the same statements, which the solve only
    removes (a class, not a closure over a dict: entries hold their node, so an ``id``
    is never reused under them)."""

    def __init__(self, ops_name):
        self.ops_name, self.found = ops_name, {}

    def __call__(self, node):
        entry = self.found.get(id(node))
        if entry is None:
            entry = self.found[id(node)] = (node, _reads_in(node, self.ops_name))
        return entry[1]


def read_shapes_from_sources(body, parsed, ops_name, is_pure, params=(), sequences=frozenset()):
    """Where a top-level value is read only for its shape, read its sources instead,
    and remove what was computed only for its shape.

    ``_t5 = np.log(p)`` read only as ``ops.unbroadcast(g, _t5)`` becomes
    ``ops.unbroadcast(g, p)``, and ``ops.unmean(g, _t11)`` of ``_t11 = y * _t5 + ...``
    becomes ``ops.unmean(g, ops.broadcast_like(y, p))``. A source is a name written
    once in the function (or a parameter never written), so it holds the same value
    wherever the adjoint reads it. One dead-code solve in which a shape read of a
    value with sources reads the sources: a value left with no other live read dies
    in it, however long the chain of values read only for their shapes, and its shape
    reads are then made reads of its sources (or of a value with the same sources
    that is computed anyway, ``p`` for ``log(p)``, which reads best)."""
    sources = _elementwise_sources(body, parsed, _write_counts(body, params), sequences)
    sources = {n: found for n, found in sources.items() if found and found != {n}}
    if not sources:
        return body  # no value has sources to read its shape from
    reads_in = _ReadsMemo(ops_name)
    shape_reads, other_reads = _classify(body, reads_in)
    if all(n in other_reads or n not in sources for n in shape_reads):
        return body  # every value read for its shape is read otherwise too: all stay

    body = deadcode.dead_code(body, is_pure, reads=_reads_through_sources(reads_in, sources))
    _read_sources_of_removed(body, sources, shape_reads, ops_name)
    return body


def _read_sources_of_removed(body, sources, shape_reads, ops_name):
    """The shape reads of the values no longer computed made reads of their sources.
    ``shape_reads``: as ``_classify`` found them before the dead code went (the solve
    only removes statements: those of the removed ones are rewritten unseen)."""
    written = {t for stmt in all_stmts(body) for t in stores(stmt)}
    alike = {}  # sources -> the values with them that are computed anyway, in order
    for t, found in sources.items():
        if t in written:
            alike.setdefault(found, []).append(t)
    for n, found in shape_reads.items():
        if n in sources and n not in written:
            names = _source_names(n, sources[n], alike)
            for call, position in found:
                call.args[position] = _shape_like(names, ops_name)


def _reads_through_sources(reads_in, sources):
    """``reads(node)`` for the dead-code solve: the names ``node`` reads, a shape read
    of a value with ``sources`` being a read of those."""

    def reads(node):
        loads, shaped_reads = reads_in(node)
        shape_args = {id(arg) for arg, _, _ in shaped_reads}
        found, shaped = [], set()
        for n in loads:
            if id(n) in shape_args and n.id in sources:
                shaped |= sources[n.id]
            else:
                found.append(n.id)
        return found + sorted(shaped)

    return reads


def _write_counts(body, params):
    """name -> how many times it is written (a parameter once, on entry)."""
    counts = {p: 1 for p in params}
    for stmt in all_stmts(body):
        for t in stores(stmt):
            counts[t] = counts.get(t, 0) + 1
    return counts


def _elementwise_sources(body, parsed, counts, sequences):
    """name -> the names whose broadcast shape it has, for names written once at the
    top level by an elementwise operation on names written once (or numbers)."""
    sources = {}
    for stmt in body:  # top level only: written once, in order
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        t = stmt.targets[0].id
        if counts.get(t) != 1:
            continue
        operands = elementwise_operands(stmt.value, parsed, sequences)
        if operands is None:
            continue
        found = _operand_sources(operands, sources, counts)
        if found is not None:
            sources[t] = found
    return sources


def _operand_sources(operands, sources, counts):
    """The sources of the shape of an elementwise result, or None where an operand is
    neither a number nor a name written once."""
    found = set()
    for o in operands:
        if isinstance(o, gast.Constant):
            continue
        if not isinstance(o, gast.Name) or counts.get(o.id, 0) > 1:
            return None
        found |= sources.get(o.id, {o.id})
    return frozenset(found)


def _source_names(n, found, alike):
    """The names to read ``n``'s shape from: its sources ``found``, or one value of the
    same sources that is computed anyway (``p`` for ``log(p)``), which reads best."""
    names = sorted(found)
    twins = [t for t in alike.get(found, ()) if t != n]
    if twins and len(names) > 1:
        names = twins[:1]
    return names


def _shape_like(names, ops_name):
    """A fresh node with the broadcast shape of ``names``: the name itself when there is
    one, else ``ops.broadcast_like(*names)``."""
    if len(names) == 1:
        return _name(names[0])
    return gast.Call(
        func=gast.Attribute(value=_name(ops_name), attr="broadcast_like", ctx=gast.Load()),
        args=[_name(m) for m in names],
        keywords=[],
    )


def _shape_positions(node, ops_name):
    """The positions of a helper call's arguments read only for their shape (dtype and
    array module): the helper's declared ``shape_args``."""
    if not (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and getattr(node.func.value, "id", None) == ops_name
    ):
        return ()
    declared = helper_of(node.func.attr)
    positions = declared.shape_args if declared is not None else ()
    return tuple(p for p in positions if p < len(node.args))


def _name(n):
    return gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)
