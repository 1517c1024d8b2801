"""Dead code: assignments whose values nobody reads, and that have no effect.

One backward dataflow solve of *strong* liveness over the control-flow graph: a
removable statement whose targets are dead does not make its operands live, so a
chain of values feeding only dead ones dies in the same solve.
"""

import functools

import gast

import transpile_runtime as runtime
from transpile.core import cfg
from transpile.core.ir import MISSING
from transpile.core.nodes import apply_edits, loads, stores
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
    bits = cfg.Bits()
    kept = {}  # id(statement) -> its effect, for the simple statements in the graph

    def leave_out(s):  # asked of each simple statement as the graph is built
        effect = _effect(s, bits, is_pure, reads)
        if effect is None:
            return True  # it neither kills nor reads: no node
        kept[id(s)] = effect
        return False

    graph = cfg.build(body, leave_out=leave_out)
    # by node index: (the names it keeps, those it reads, its targets if removable), or
    # None for a node that does neither (entry, exit, a jump or header that reads none)
    effects = [None] * len(graph.nodes)
    removable = []  # the nodes of removable statements
    for node in graph.nodes:
        s = node.stmt
        if s is not None:
            effect = kept[id(s)] if id(s) in kept else _effect(s, bits, is_pure, reads)
            effects[node.index] = effect
            if effect is not None and effect[2] is not None:
                removable.append(node)

    def transfer(node, fact):
        found = effects[node.index]
        if found is None:
            return fact
        keeps, reads, written = found
        if written is not None and not written & fact:
            return fact  # dead: its reads keep nothing alive
        return (fact & keeps) | reads

    _, after = cfg.solve(
        graph, transfer, forward=False, boundary=bits.of(live_out), init=0, join=cfg.union
    )
    edits = {id(node.stmt): [] for node in removable if not effects[node.index][2] & after[node]}
    return apply_edits(body, edits) if edits else body


def _effect(s, bits, is_pure, reads):
    """``(the live names it keeps, those it reads, its targets if it is removable)`` of
    one statement (a compound statement's header), as ``Bits``; None for a statement
    that does neither. Keeping every name is the mask -1."""
    if s.__class__ is gast.Expr and s.value.__class__ is gast.Constant:
        return None  # a comment
    if isinstance(s, gast.For):
        return ~bits.of(stores(s)), bits.of(reads(s.iter)), None
    if isinstance(s, (gast.If, gast.While)):
        read = bits.of(reads(s.test))
        return (-1, read, None) if read else None
    written = stores(s)
    if not written:
        read = bits.of(reads(s))
        return (-1, read, None) if read else None
    targets = bits.of(written)
    keeps = -1 if isinstance(s, gast.AugAssign) else ~targets
    return keeps, bits.of(reads(s)), targets if _removable(s, is_pure) else None


def _removable(s, is_pure):
    """An assignment to names (or tuples of them) of a value with no effect."""
    if isinstance(s, gast.Assign):
        for t in s.targets:
            if not isinstance(t, (gast.Name, gast.Tuple)):
                return False
    elif not isinstance(s, gast.AugAssign):
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
