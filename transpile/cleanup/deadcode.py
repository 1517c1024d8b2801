"""Dead code: assignments whose values nobody reads, and that have no effect.

One backward dataflow solve of *strong* liveness over the nested blocks: a
removable statement whose targets are dead does not make its operands live, so a
chain of values feeding only dead ones dies in the same solve.
"""

import functools
from typing import NamedTuple

import gast

import transpile_runtime as runtime
from transpile.core import cfg
from transpile.core.ir import MISSING
from transpile.core.nodes import apply_edits, header, loads, stores
from transpile.rules import registry
from transpile.rules.declare import helper_of


def stage(fn, ctx):
    """Remove the dead assignments of every function to be compiled."""
    pure = purity(fn.parsed, fn.names)
    for out in fn.outputs:
        out.body = dead_code(out.body, pure)
    return fn


def dead_code(body, is_pure, live_out=(), reads=loads):
    """Remove assignments whose targets are never read and whose values are pure.

    One backward dataflow solve of *strong* liveness: a removable statement whose
    targets are dead does not make its operands live, so a chain of values feeding
    only dead ones dies in the same solve (no repeated rounds). Live sets are ``Bits``.
    ``reads(node)``: the names a statement (or a compound statement's header) reads.
    """
    liveness = _StrongLiveness(is_pure, reads)
    liveness.block(body, liveness.bits.of(live_out), liveness.bits.of(live_out), None)
    edits = {
        key: []
        for key, (_, written, after) in liveness.after.items()
        if written is not None and not written & after
    }
    return apply_edits(body, edits) if edits else body


class _Loop(NamedTuple):
    after: int  # what is live after the loop (where a ``break`` goes)
    head: int  # what is live before its header (where a ``continue`` goes)


class _StrongLiveness:
    """The backward solve of ``dead_code`` over the nested blocks, as ``cfg.solve``
    would do it over ``cfg.build``'s graph (the same equations, so the same least
    fixed point) without building the graph: a block is read backwards once, a loop
    until what is live before its header stops growing. As in that graph, a loop's
    ``else`` block is not read."""

    def __init__(self, is_pure, reads):
        self.is_pure, self.reads = is_pure, reads
        self.bits = cfg.Bits()
        self.effects = {}  # id(statement) -> (statement, (kills, reads, targets if removable))
        # id(statement) -> (statement, its targets if removable, what is live after it)
        self.after = {}

    def block(self, stmts, live, boundary, loop):
        """What is live before ``stmts``, given ``live`` after them."""
        for s in reversed(stmts):
            live = self.one(s, live, boundary, loop)
        return live

    def one(self, s, live, boundary, loop):
        cls = s.__class__
        if cls is gast.If:
            live = self.block(s.body, live, boundary, loop) | self.block(
                s.orelse, live, boundary, loop
            )
        elif cls is gast.For or cls is gast.While:
            return self.loop(s, live, boundary)
        elif cls is gast.Break:
            live = loop.after
        elif cls is gast.Continue:
            live = loop.head
        elif cls is gast.Return or cls is gast.Raise:
            live = boundary
        return self.transfer(s, live)

    def loop(self, s, live, boundary):
        """What is live before the loop ``s``, with ``live`` after it: from nothing live
        before the header, the body read again until that holds still."""
        head = 0
        while True:
            out = self.block(s.body, head, boundary, _Loop(live, head)) | live
            new = self.transfer(s, out)
            if new == head:
                return head
            head = new

    def transfer(self, s, live):
        """What is live before ``s``, given ``live`` after it (which is kept for it)."""
        kills, reads, written = self.effects_of(s)
        self.after[id(s)] = (s, written, live)
        if written is not None and not written & live:
            return live  # dead: its reads keep nothing alive
        return (live & ~kills) | reads

    def effects_of(self, s):
        """``(names it kills, names it reads, its targets if it is removable)``."""
        found = self.effects.get(id(s))
        if found is None:
            found = self.effects[id(s)] = (s, self._effects(s))
        return found[1]

    def _effects(self, s):
        bits = self.bits
        h = header(s)
        if isinstance(s, gast.For):
            return bits.of(stores(s)), bits.of(self.reads(h)), None
        if h is not s:
            return 0, bits.of(self.reads(h)), None
        written = stores(s)
        targets = bits.of(written)
        kills = 0 if isinstance(s, gast.AugAssign) else targets
        removable = written and _removable(s, self.is_pure)
        return kills, bits.of(self.reads(s)), targets if removable else None


def _removable(s, is_pure):
    """An assignment to names (or tuples of them) of a value with no effect."""
    if not isinstance(s, (gast.Assign, gast.AugAssign)):
        return False
    if isinstance(s, gast.Assign) and not all(
        isinstance(t, (gast.Name, gast.Tuple)) for t in s.targets
    ):
        return False
    return is_pure(s.value)


def purity(parsed, names):
    """``value -> bool``: whether evaluating a right-hand side has no effect but its result."""
    return functools.partial(_is_pure, parsed, names)


def _is_pure(parsed, names, value):
    """Whether evaluating ``value`` has no effect but its result."""
    if not isinstance(value, gast.Call):
        return True
    f = value.func
    if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
        if f.value.id == names["ops"]:  # a helper that checks may raise: it stays
            return not getattr(helper_of(f.attr), "checks", False)
        if f.value.id == names["tape"] or f.attr in ("pop", "append"):
            return False
    obj = parsed.resolve(f)
    if obj is MISSING:
        return _pure_unresolved(f, names)
    return _pure_object(obj)


_PURE_BUILTINS = (range, len, min, max, abs, int, float, reversed)


def _pure_unresolved(f, names):
    """A call the user's names do not resolve: a method on a value, or a name the
    generated code binds (``np``, builtins)."""
    if isinstance(f, gast.Attribute):
        return f.attr in registry().methods or f.attr == "shape"
    return getattr(f, "id", None) == names["np"] or getattr(f, "id", None) in {
        b.__name__ for b in _PURE_BUILTINS
    }


def _pure_object(obj):
    if obj is runtime.stop_gradient:
        return True
    module = getattr(obj, "__module__", "") or ""
    if module.startswith("numpy.random"):
        return False
    return id(obj) in registry().functions or module.startswith("numpy") or obj in _PURE_BUILTINS
