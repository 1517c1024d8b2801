"""Generated code as a person would write it: temporaries used once printed inline.

The stages work on one operation per line, which is what ``--dump`` shows. The
code compiled and shown by ``source()`` puts a temporary's expression where it is
used when that changes nothing: the temporary is made by the compiler (``_t3``,
``d_t3``), written once and read once, in the same block, after it, by a
statement that is not a loop or branch header; nothing between the two writes a
name the expression reads or has an effect; and the line stays short. Then the
temporaries left are numbered afresh in order (``_t1, _t2, ...``), and an adjoint
temporary whose primal one is gone is called ``g1, g2, ...`` (a gradient).
"""

from itertools import chain, compress, zip_longest
from operator import attrgetter
from typing import NamedTuple

import gast

from transpile.cleanup import regions
from transpile.core import defuse, emit, printer
from transpile.core.nodes import WALKED_FIELDS, clone, descendants, name_nodes, walked_fields
from transpile.rules.declare import helper_of

_MAX_LINE = 92  # characters of the statement after inlining, indentation excluded
_REACH = 6  # statements: a value is inlined only into one this close
_FOLD_REACH = 16  # ... and an update folded into its definition from this far
_IMPURE_METHODS = {"pop", "push", "append", "fill", "sort"}
_COMPOUND = (gast.If, gast.For, gast.While)


def stage(fn, ctx):
    """Inline the outputs' temporaries (keeping the one-per-line form where ``entry``
    makes shape variants from it). A gradient with shape variants runs them (its first
    call the probe): its own code is compacted when its source is first read
    (``out.compact``), from a copy of the one-per-line form, which the entry keeps."""
    walked = {}  # the statements' names and calls, from one walk over each (_Memo.walked)
    for out in fn.outputs:
        if out is fn.outputs[-1] and fn.static is not None:
            if _left_to_the_entry(fn, ctx, out):
                out.anf, out.body = out.body, None
                out.compact = _Later(out.anf, fn.names, fn.namer)
                continue
            out.anf = _copy_block(out.body, walked)  # the copy's walk is the index's
        out.body = compact(out.body, fn.names, fn.namer, renumber=False, walked=walked)
    # one numbering for all: a callee's forward and adjoint functions share the saved names
    everything = [*(o.args for o in fn.outputs), *(s for o in fn.outputs for s in o.body or ())]
    _renumber(everything, fn.namer, walked)
    return fn


def _left_to_the_entry(fn, ctx, out):
    """Whether compacting ``out`` can wait for its source to be read: where the entry
    compiles it when first needed (``emit.compiled_by_entry``), but not where every
    stage's output is shown (``ctx.eager``) or regions are printed back (``regions``,
    after this stage)."""
    return (
        emit.compiled_by_entry(fn, ctx, out.args)
        and not ctx.eager
        and not regions.has_markers(out.body)
    )


class _Later:
    """``compact`` of a copy of a gradient's one-per-line body, made when called (its
    temporaries numbered, as ``stage`` numbers them)."""

    def __init__(self, body, names, namer):
        self.body, self.names, self.namer = body, names, namer

    def __call__(self):
        return compact([clone(s) for s in self.body], self.names, self.namer)


def compact(body, names, namer, renumber=True, also=frozenset(), walked=None):
    """``body`` with its single-use temporaries (and names in ``also``) inlined, updates
    folded into the definition before them, and (with ``renumber``) the temporaries
    left renumbered. ``walked``: ``_Memo.walked``, kept for a later ``_renumber``."""
    index = defuse.Index([], only=set(namer.temporaries) | set(also))
    memo = _Memo(names, {} if walked is None else walked)
    _index(body, index, memo)
    _inline_block(body, index, memo)
    _fold_updates(body, memo)
    return _renumber(body, namer, memo.walked) if renumber else body


def _index(stmts, index, memo):
    """``defuse.Index``'s walk, a simple statement's names taken from its facts: one
    walk over a statement gives both."""
    for s in stmts:
        if isinstance(s, _COMPOUND):
            index.add(s)
            _index(s.body, index, memo)
            _index(s.orelse, index, memo)
        else:
            index.add(s, memo.names_in(s))


def _fold_updates(stmts, memo):
    """``a = X`` followed (with nothing reading ``a`` or changing what ``X`` reads in
    between) by ``a = a + Y`` is ``a = X + Y``: one line for one value."""
    for s in stmts:
        if isinstance(s, _COMPOUND):
            _fold_updates(s.body, memo)
            _fold_updates(s.orelse, memo)
    updated = {t for t in map(_self_update_target, stmts) if t is not None}
    if not updated:
        return  # nothing to fold into a definition
    i = 0
    while i < len(stmts):
        j = _update_of(stmts, i, memo, updated)
        if j is None:
            i += 1
            continue
        update = stmts[j].value
        update.left = stmts[i].value
        memo.folded_into(stmts[j], stmts[i])
        del stmts[i]


def _update_of(stmts, i, memo, updated):
    """The position of the update folding into ``stmts[i]``, or None. ``updated``: the
    names some statement of ``stmts`` updates (``a = a OP Y``); no other can fold."""
    s = stmts[i]
    if not (_single_name_assignment(s) and s.targets[0].id in updated):
        return None
    if not memo.pure_statement(s):
        return None
    a = s.targets[0].id
    read = memo.loads(s)
    for j in range(i + 1, min(len(stmts), i + 1 + _FOLD_REACH)):
        later = stmts[j]
        if isinstance(later, (gast.If, gast.For, gast.While)):
            return None
        if a in memo.names_of(later):
            return j if _updates(later, a, s, memo) else None
        if memo.stored(later) & read or not memo.pure_statement(later):
            return None
    return None


def _self_update_target(s):
    """``a`` where ``s`` is ``a = a OP Y``, else None."""
    if not _single_name_assignment(s):
        return None
    v, a = s.value, s.targets[0].id
    if isinstance(v, gast.BinOp) and isinstance(v.left, gast.Name) and v.left.id == a:
        return a
    return None


def _single_name_assignment(s):
    return s.__class__ is _ASSIGN and len(s.targets) == 1 and s.targets[0].__class__ is _NAME


def _updates(later, a, first, memo):
    """Whether ``later`` is ``a = a OP Y`` (``Y`` pure and free of ``a``) and the folded
    line stays short."""
    v = getattr(later, "value", None)
    return (
        _single_name_assignment(later)
        and later.targets[0].id == a
        and isinstance(v, gast.BinOp)
        and isinstance(v.left, gast.Name)
        and v.left.id == a
        and a not in _names(v.right)
        and _pure(v.right, memo.names)
        and memo.length(later) + memo.length(first) <= _MAX_LINE + len(a)
    )


def _inline_block(stmts, index, memo):
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, _COMPOUND):
            _inline_block(s.body, index, memo)
            _inline_block(s.orelse, index, memo)
        elif s.__class__ is _ASSIGN and _try_inline(stmts, i, index, memo):
            del stmts[i]
            continue
        i += 1


def _try_inline(stmts, i, index, memo):
    """Inline ``stmts[i]`` into its reader if it may; returns whether it did."""
    s = stmts[i]
    t = _inlinable_temporary(s, index, memo)
    if t is None:
        return False
    node, reader = index.reads[t][0]
    nearby = range(i + 1, min(len(stmts), i + 1 + _REACH))
    j = next((k for k in nearby if stmts[k] is reader), None)
    if j is None or isinstance(reader, (gast.If, gast.For, gast.While)):
        return False  # in another block, or a loop or branch header
    read = memo.loads(s)
    if not all(_may_pass(between, read, memo) for between in stmts[i + 1 : j]):
        return False
    if memo.length(reader) - len(t) + memo.length(s) > _MAX_LINE:
        return False
    _replace(reader, node, s.value)
    memo.moved_into(reader, s, t)
    index.move_reads(s, reader)
    return True


def _inlinable_temporary(s, index, memo):
    """The temporary ``s`` assigns, if it is written and read once and its value pure."""
    if not _single_name_assignment(s) or s.targets[0].id not in index.only:
        return None
    t = s.targets[0].id
    if index.write_count(t) != 1 or index.read_count(t) != 1 or not memo.pure_statement(s):
        return None
    return t


def _may_pass(between, read, memo):
    """Whether a value reading ``read`` may move past the statement ``between``."""
    if isinstance(between, (gast.If, gast.For, gast.While)):
        return False
    return not memo.stored(between) & read and memo.pure_statement(between)


class _Memo:
    """What the two rewrites ask of a statement, found from one walk over it (the
    index's) and asked again for free: the names it mentions, stores and loads, the
    calls in it that have an effect, and how long it prints. Facts are made when
    first asked (most statements never are). A statement that changes (an
    expression inlined into it, an update folded) has its facts made from the two
    statements' (``moved_into``, ``folded_into``), and is printed again when next
    measured. Entries hold their statement, so an ``id`` is never reused under them."""

    def __init__(self, names, walked):
        self.names = names
        self._facts, self._length = {}, {}
        # id -> (simple statement, its Name nodes by depth, its Call nodes), from one
        # walk (``_walk``, or ``_copy_block``'s), while the statement is as walked
        self.walked = walked

    def _walk(self, stmt):
        found = self.walked.get(id(stmt))
        if found is None or found[0] is not stmt:
            levels, calls = [], []
            _note(stmt, 0, levels, calls)
            found = self.walked[id(stmt)] = (stmt, levels, calls)
        return found

    def names_in(self, stmt):
        """The ``gast.Name`` nodes of ``stmt`` in ``name_nodes``' order."""
        return chain.from_iterable(self._walk(stmt)[1])

    def _of(self, stmt):
        found = self._facts.get(id(stmt))
        if found is None:
            _, levels, calls = self._walk(stmt)
            names = chain.from_iterable(levels)
            found = self._facts[id(stmt)] = (stmt, _facts(names, calls, self.names))
        return found[1]

    def names_of(self, stmt):
        return self._of(stmt).mentioned

    def stored(self, stmt):
        return self._of(stmt).stored

    def loads(self, stmt):
        return self._of(stmt).loaded

    def pure_statement(self, stmt):
        """A statement moved past (or moved) must change no value: an assignment of
        a pure value to names, a comment, or a push on the tape (which only reads)."""
        impure = self._of(stmt).impure
        if isinstance(stmt, gast.Assign):
            return not impure and all(isinstance(t, gast.Name) for t in stmt.targets)
        if not isinstance(stmt, gast.Expr):
            return False
        v = stmt.value
        if isinstance(v, gast.Constant):
            return True
        return (
            isinstance(v, gast.Call)
            and isinstance(v.func, gast.Attribute)
            and v.func.attr == "push"
            and getattr(v.func.value, "id", None) == self.names.get("tape")
            and impure == [v]
        )

    def length(self, stmt):
        found = self._length.get(id(stmt))
        if found is None:
            found = self._length[id(stmt)] = (stmt, _length(stmt))
        return found[1]

    def moved_into(self, reader, stmt, t):
        """``stmt``'s value now sits in ``reader`` in place of its one read of ``t``
        (``stmt``'s target, written only there; the value pure): ``reader``'s facts
        are its own less ``t`` and the value's, known without a walk."""
        r, v = self._of(reader), self._of(stmt)
        drop = {t}
        facts = _Facts(
            (r.mentioned - drop) | (v.mentioned - drop),
            r.stored | (v.stored - drop),
            (r.loaded - drop) | v.loaded,
            r.impure,
        )
        self._facts[id(reader)] = (reader, facts)
        self._length.pop(id(reader), None)
        self.walked.pop(id(reader), None)

    def folded_into(self, update, first):
        """``update`` (``a = a OP Y``, ``Y`` pure and free of ``a``) now reads the
        value of ``first`` (``a = X``, pure) instead of ``a``: ``a = X OP Y``."""
        u, f = self._of(update), self._of(first)
        a = first.targets[0].id
        facts = _Facts(
            u.mentioned | f.mentioned, u.stored | f.stored, (u.loaded - {a}) | f.loaded, []
        )
        self._facts[id(update)] = (update, facts)
        self._length.pop(id(update), None)
        self.walked.pop(id(update), None)


class _Facts(NamedTuple):
    mentioned: set  # every name in the statement
    stored: set
    loaded: set
    impure: list  # the calls with an effect besides their result


def _facts(found, calls, names):
    """The facts of a statement with the Name nodes ``found`` and the Call nodes ``calls``."""
    found = list(found)
    mentioned = set(map(_ID, found))
    stored = {n.id for n in found if n.ctx.__class__ is _STORE}
    loaded = {n.id for n in found if n.ctx.__class__ is _LOAD}
    impure = [c for c in calls if not _pure_call(c, names)] if calls else []
    return _Facts(mentioned, stored, loaded, impure)


def _length(stmt):
    """About how long the statement prints: its value, and an assignment's target."""
    value = getattr(stmt, "value", None)
    if value is None:
        return 0
    size = len(printer.expression(value))
    if isinstance(stmt, gast.Assign):
        size += sum(len(printer.expression(t)) + 3 for t in stmt.targets)
    return size


def _names(node):
    return [n.id for n in name_nodes(node) if isinstance(n, gast.Name)]


def _pure(value, names):
    """No effect but its result: nothing that pops, pushes, draws, checks, or writes
    into an array (``out=``)."""
    return all(_pure_call(n, names) for n in descendants(value) if isinstance(n, gast.Call))


def _pure_call(call, names):
    if any(k.arg == "out" for k in call.keywords):
        return False  # it writes into an existing array
    f = call.func
    if isinstance(f, gast.Name):
        return True
    if not isinstance(f, gast.Attribute) or f.attr in _IMPURE_METHODS:
        return False
    owner = f.value
    while isinstance(owner, gast.Attribute):
        if owner.attr == "random":
            return False
        owner = owner.value
    if getattr(f.value, "id", None) == names.get("ops"):
        return not getattr(helper_of(f.attr), "checks", False)
    return True


def _replace(stmt, old, new):
    """Put ``new`` where ``old`` (a node in ``stmt``, there once) is: a walk breadth
    first, stopping there."""
    todo = [stmt]
    push = todo.append
    for parent in todo:
        fields = WALKED_FIELDS.get(parent.__class__)
        if fields is None:
            fields = walked_fields(parent.__class__)
        for field in fields:
            child = getattr(parent, field, None)
            if child is old:
                setattr(parent, field, new)
                return
            if child.__class__ is list:
                for k, c in enumerate(child):
                    if c is old:
                        child[k] = new
                        return
                    if isinstance(c, _AST):
                        push(c)
            elif isinstance(child, _AST):
                push(child)


def _renumber(body, namer, walked):
    """Temporaries numbered in order of first appearance; orphan adjoint ones ``g``.
    The order is ``name_nodes``' (breadth first in each of ``body``'s items), found
    from the names by depth of the statements ``walked`` has (``_Memo.walked``) and
    a walk of the others."""
    found = list(chain.from_iterable(chain.from_iterable(_levels_of(s, walked) for s in body)))
    # a node may sit in two places (a shared subtree): rename it once
    nodes = list(dict(zip(map(id, found), found)).values())
    ids = list(map(_ID, nodes))
    temporaries = namer.temporaries
    order = [name for name in dict.fromkeys(ids) if name in temporaries]
    new = _new_numbers(order)
    taken = set(ids) - set(new)
    for old, wanted in list(new.items()):
        if wanted in taken:
            new[old] = namer.fresh(wanted)
    for n in compress(nodes, map(new.__contains__, ids)):
        n.id = new[n.id]
    return body


def _levels_of(node, walked):
    """The ``gast.Name`` nodes in ``node``, a list for each depth. Those at depth ``d``
    of a compound statement are the ones at depth ``d - 1`` of its parts, part after
    part: the order a breadth-first walk (``name_nodes``) meets them in."""
    known = walked.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    if not isinstance(node, _COMPOUND):
        levels = [[node] if node.__class__ is _NAME else []]
        _note(node, 0, levels, [])
        return levels
    parts = []  # each part's levels, in order
    for field in walked_fields(node.__class__):
        child = getattr(node, field, None)
        for part in child if child.__class__ is list else (child,):
            known = walked.get(id(part))  # most parts: a statement as walked
            if known is not None and known[0] is part:
                parts.append(known[1])
            elif isinstance(part, gast.AST):
                parts.append(_levels_of(part, walked))
    by_depth = zip_longest(*parts, fillvalue=())
    return [[], *(list(chain.from_iterable(level)) for level in by_depth)]


_ID = attrgetter("id")
_NAME, _CALL, _AST, _ASSIGN = gast.Name, gast.Call, gast.AST, gast.Assign
_LOAD, _STORE = gast.Load, gast.Store


def _note(node, depth, levels, calls):
    """Note the ``gast.Name`` nodes under ``node`` (at ``depth``, itself noted if a name)
    by depth in ``levels``, and its ``gast.Call`` nodes in ``calls``: a depth's names
    in the order of a walk depth first are those of one breadth first (``name_nodes``).
    A name without an annotation (most of them) is noted without a call."""
    cls = node.__class__
    if cls is _CALL:
        calls.append(node)
    fields = WALKED_FIELDS.get(cls)
    if fields is None:
        fields = walked_fields(cls)
    depth += 1
    for field in fields:
        child = getattr(node, field, None)
        for c in child if child.__class__ is list else (child,):
            if c.__class__ is _NAME:
                while len(levels) <= depth:
                    levels.append([])
                levels[depth].append(c)
                if getattr(c, "annotation", None) is not None:
                    _note(c, depth, levels, calls)
            elif isinstance(c, _AST):
                _note(c, depth, levels, calls)


def _copy_block(stmts, walked):
    """``clone(stmts)``, walking each simple statement (``_Memo.walked``) as it is
    copied: the copy is the one walk over the statements' nodes."""
    copies = []
    for s in stmts:
        if not s._fields:  # ``pass``: shared, as ``clone`` shares it
            copies.append(s)
        elif isinstance(s, _COMPOUND):
            cls = s.__class__
            attrs = s.__dict__.copy()
            for field in walked_fields(cls):
                value = attrs.get(field)
                is_block = field in ("body", "orelse")
                attrs[field] = _copy_block(value, walked) if is_block else clone(value)
            copy = cls.__new__(cls)
            copy.__dict__ = attrs
            copies.append(copy)
        else:
            levels, calls = [], []
            copies.append(_copied(s, 0, levels, calls))
            walked[id(s)] = (s, levels, calls)
    return copies


def _copied(node, depth, levels, calls):
    """``clone(node)`` (a node with fields, at ``depth``), noting ``node``'s names and
    calls as ``_note``."""
    cls = node.__class__
    new = cls.__new__(cls)
    attrs = node.__dict__.copy()
    if cls is _NAME:
        while len(levels) <= depth:
            levels.append([])
        levels[depth].append(node)
        if attrs.get("annotation") is None:
            new.__dict__ = attrs
            return new  # most names: nothing under them to copy
    elif cls is _CALL:
        calls.append(node)
    fields = WALKED_FIELDS.get(cls)
    if fields is None:
        fields = walked_fields(cls)
    depth += 1
    for field in fields:
        value = attrs.get(field)
        if value.__class__ is list:
            attrs[field] = [
                _copied(v, depth, levels, calls) if isinstance(v, _AST) and v._fields else v
                for v in value
            ]
        elif isinstance(value, _AST) and value._fields:
            attrs[field] = _copied(value, depth, levels, calls)
    new.__dict__ = attrs
    return new


def _new_numbers(order):
    """Old temporary name -> new one: ``_t1, _t2, ...`` in order, the adjoint ``d_tK``
    of ``_tK``, and ``g1, g2, ...`` for an adjoint whose temporary is gone."""
    new = {old: f"_t{k}" for k, old in enumerate((n for n in order if not n.startswith("d")), 1)}
    orphans = 0
    for old in order:
        if old.startswith("d"):
            if old[1:] in new:
                new[old] = "d" + new[old[1:]]
            else:
                orphans += 1
                new[old] = f"g{orphans}"
    return new
