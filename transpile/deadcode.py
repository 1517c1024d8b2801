"""Dead code: assignments whose values nobody reads, and that have no effect.

One backward dataflow solve of *strong* liveness over the control-flow graph: a
removable statement whose targets are dead does not make its operands live, so a
chain of values feeding only dead ones dies in the same solve.
"""

import functools

import gast

import runtime
from transpile import cfg
from transpile.nodes import apply_edits, header, loads, stores
from transpile.parse import MISSING
from transpile.rules import registry


def stage(fn, ctx):
    """Remove the dead assignments of every function to be compiled."""
    pure = purity(fn.parsed, fn.names)
    for out in fn.outputs:
        out.body = dead_code(out.body, pure)
    return fn


def dead_code(body, is_pure, live_out=()):
    """Remove assignments whose targets are never read and whose values are pure.

    One backward dataflow solve of *strong* liveness: a removable statement whose
    targets are dead does not make its operands live, so a chain of values feeding
    only dead ones dies in the same solve (no repeated rounds)."""
    graph = cfg.build(body)
    removable = {}
    for node in graph.nodes:
        s = node.stmt
        if isinstance(s, (gast.Assign, gast.AugAssign)):
            written = stores(s)
            if (
                written
                and not (
                    isinstance(s, gast.Assign)
                    and not all(isinstance(t, (gast.Name, gast.Tuple)) for t in s.targets)
                )
                and is_pure(s.value)
            ):
                removable[id(s)] = frozenset(written)

    def transfer(node, fact):
        s = node.stmt
        if s is None:
            return fact
        h = header(s)
        if isinstance(s, gast.For):
            fact = fact - set(stores(s))
            return fact | set(loads(h))
        if h is not s:
            return fact | set(loads(h))
        written = removable.get(id(s))
        if written is not None and not written & fact:
            return fact  # dead: its reads keep nothing alive
        kept = fact - set(stores(s)) if not isinstance(s, gast.AugAssign) else fact
        return kept | set(loads(s))

    _, after = cfg.solve(graph, transfer, forward=False, boundary=frozenset(live_out))
    edits = {
        id(node.stmt): []
        for node in graph.nodes
        if id(node.stmt) in removable and not removable[id(node.stmt)] & after[node]
    }
    return apply_edits(body, edits) if edits else body


def purity(parsed, names):
    """``value -> bool``: whether evaluating a right-hand side has no effect but its result."""
    return functools.partial(_is_pure, parsed, names)


def _is_pure(parsed, names, value):
    """Whether evaluating ``value`` has no effect but its result."""
    if isinstance(value, gast.Call):
        f = value.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            if f.value.id == names["ops"]:
                return f.attr not in ("seed", "cotangent")  # they check, and may raise
            if f.value.id == names["tape"] or f.attr in ("pop", "append"):
                return False
        obj = parsed.resolve(f)
        if obj is MISSING:
            if isinstance(f, gast.Attribute):  # a method on a value
                return f.attr in registry().methods or f.attr in ("shape",)
            return getattr(f, "id", None) in (
                names["np"],
                "range",
                "len",
                "min",
                "reversed",
            )
        if obj is runtime.stop_gradient:
            return True
        module = getattr(obj, "__module__", "") or ""
        if module.startswith("numpy.random"):
            return False
        return (
            id(obj) in registry().functions
            or module.startswith("numpy")
            or obj in (range, len, min, max, abs, int, float)
        )
    if isinstance(value, (gast.Lambda,)):
        return True
    return True
