"""Activity analysis: which statements need an adjoint.

A name is *varied* when it depends on a ``wrt`` argument through differentiable
operations, and *useful* when the returned value depends on it. A statement is
active when what it defines is both. ``stop_gradient``, non-differentiable
functions and integer operations end variedness, so nothing upstream of a
stopped value gets an adjoint unless another route to the output needs it.
"""

from dataclasses import dataclass

import gast

from transpile import cfg
from transpile.nodes import descendants
from transpile.rules import classify, registry


@dataclass(frozen=True)
class Activity:
    matches: dict  # id(stmt) -> Match, for assignments and call statements
    varied_before: dict  # id(stmt) -> frozenset of names
    varied_after: dict
    useful_after: dict

    def is_varied(self, stmt, name: str) -> bool:
        return name in self.varied_before.get(id(stmt), ())

    def defines_active(self, stmt) -> bool:
        """Whether ``stmt`` needs an adjoint."""
        target = _defined(stmt)
        if target is None:
            return False
        if _is_weak(stmt):
            value = _weak_value(stmt)
            return target in self.useful_after[id(stmt)] and any(
                isinstance(v, gast.Name) and self.is_varied(stmt, v.id) for v in value
            )
        return target in self.varied_after[id(stmt)] and target in self.useful_after[id(stmt)]


def _defined(stmt):
    if isinstance(stmt, gast.Assign):
        t = stmt.targets[0]
        if isinstance(t, gast.Name):
            return t.id
        if isinstance(t, gast.Subscript):
            return t.value.id
    if _is_append(stmt):
        return stmt.value.func.value.id
    return None


def _is_append(stmt):
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Attribute)
        and stmt.value.func.attr == "append"
        and isinstance(stmt.value.func.value, gast.Name)
    )


def _is_weak(stmt):
    return _is_append(stmt) or (
        isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)
    )


def _weak_value(stmt):
    if _is_append(stmt):
        return list(stmt.value.args)
    return [stmt.value]


def diff_uses(stmt, match) -> set:
    """Names whose adjoints ``stmt`` contributes to, if it is active."""
    if _is_weak(stmt):
        return {v.id for v in _weak_value(stmt) if isinstance(v, gast.Name)}
    if match is None or match.kind in ("nondiff", "constant"):
        return set()
    return {n.id for op in match.operands for n in descendants(op) if isinstance(n, gast.Name)}


def stage(fn, ctx):
    """Which statements need an adjoint: varied and useful."""
    wrt_names = [fn.params[i] for i in ctx.wrt]
    fn.activity = run(fn.tree.body, wrt_names, fn.parsed, registry(), fn.kinds.sequences)
    return fn


def run(body, wrt_names, parsed, registry, sequences=frozenset()) -> Activity:
    graph = cfg.build(body)
    matches = {}
    for node in graph.nodes:
        s = node.stmt
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            matches[id(s)] = classify(s.value, parsed, registry, sequences)
    uses = {
        id(n.stmt): diff_uses(n.stmt, matches.get(id(n.stmt)))
        for n in graph.nodes
        if n.stmt is not None
    }

    def varied(node, fact):
        s = node.stmt
        if s is None:
            return fact
        if isinstance(s, gast.For):
            return fact - {s.target.id}
        target = _defined(s)
        if target is None:
            return fact
        hit = bool(uses[id(s)] & fact)
        if _is_weak(s):
            return fact | {target} if hit else fact
        return fact | {target} if hit else fact - {target}

    def useful(node, fact):
        s = node.stmt
        if s is None:
            return fact
        if isinstance(s, gast.Return):
            return fact | {n.id for n in descendants(s.value) if isinstance(n, gast.Name)}
        target = _defined(s)
        if target is None or target not in fact:
            return fact
        if _is_weak(s):
            return fact | uses[id(s)]
        return (fact - {target}) | uses[id(s)]

    v_before, v_after = cfg.solve(graph, varied, forward=True, boundary=frozenset(wrt_names))
    _, u_after = cfg.solve(graph, useful, forward=False)
    key = {n: id(n.stmt) for n in graph.nodes if n.stmt is not None}
    return Activity(
        matches,
        {key[n]: v for n, v in v_before.items() if n in key},
        {key[n]: v for n, v in v_after.items() if n in key},
        {key[n]: v for n, v in u_after.items() if n in key},
    )
