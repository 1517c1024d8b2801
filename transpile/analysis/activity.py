"""Activity analysis: which statements need an adjoint.

A name is *varied* when it depends on a ``wrt`` argument through differentiable
operations, and *useful* when the returned value depends on it. A statement is
active when what it defines is both. ``stop_gradient``, non-differentiable
functions and integer operations end variedness, so nothing upstream of a
stopped value gets an adjoint unless another route to the output needs it. So
does a max shift whose adjoint provably sums to zero (``composites.shifts``:
the ``m`` of a log-softmax or logsumexp written out without ``stop_gradient``).
"""

import functools
from dataclasses import dataclass

import gast

from transpile.analysis import composites
from transpile.core import cfg
from transpile.core.nodes import name_nodes
from transpile.front import higher
from transpile.rules import classify, registry


@dataclass(frozen=True)
class Activity:
    matches: dict  # id(stmt) -> Match, for assignments and call statements
    varied_before: dict  # id(stmt) -> NameSet
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
    return {n.id for op in match.operands for n in name_nodes(op)}


def stage(fn, ctx):
    """Which statements need an adjoint: varied and useful."""
    wrt_names = [fn.params[i] for i in ctx.wrt]
    shifts = composites.shifts(fn.tree, fn.parsed.resolve)
    fn.activity = run(
        fn.tree.body, wrt_names, fn.parsed, registry(), fn.kinds.sequences, shifts, ctx.transpile
    )
    return fn


def run(
    body, wrt_names, parsed, registry, sequences=frozenset(), stopped=frozenset(), transpile=None
) -> Activity:
    """The activity facts of ``body``; the names in ``stopped`` (each bound once) are
    constants to differentiation, as if wrapped in ``stop_gradient``. A call to a
    gradient made by this library is classified by ``higher``, whose rules make their
    gradients with ``transpile`` (``pipeline.transpile``)."""
    graph = cfg.build(body)
    matches = {}
    for node in graph.nodes:
        s = node.stmt
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            matches[id(s)] = higher.classify_call(s.value, parsed, transpile) or classify(
                s.value, parsed, registry, sequences
            )
    bits = cfg.Bits()  # name sets as integers: a long function costs no more per statement
    effects = {}  # node -> (kind, target's bit, bits of the names it differentiates)
    for node in graph.nodes:
        s = node.stmt
        if s is None:
            continue
        if isinstance(s, gast.For):
            effects[node] = ("loop", bits.bit(s.target.id), 0)
        elif isinstance(s, gast.Return):
            names = {n.id for n in name_nodes(s.value)}
            effects[node] = ("return", 0, bits.of(names))
        else:
            target = _defined(s)
            if target is not None:
                kind = "weak" if _is_weak(s) else "strong"
                uses = 0 if target in stopped else bits.of(diff_uses(s, matches.get(id(s))))
                effects[node] = (kind, bits.bit(target), uses)

    def varied(node, fact):
        kind, target, uses = effects.get(node, (None, 0, 0))
        if kind == "loop":
            return fact & ~target
        if kind not in ("weak", "strong"):
            return fact
        if uses & fact:
            return fact | target
        return fact if kind == "weak" else fact & ~target

    def useful(node, fact):
        kind, target, uses = effects.get(node, (None, 0, 0))
        if kind == "return":
            return fact | uses
        if kind not in ("weak", "strong") or not target & fact:
            return fact
        if kind == "weak":
            return fact | uses
        return (fact & ~target) | uses

    solve = functools.partial(cfg.solve, graph, init=0, join=cfg.union)
    v_before, v_after = solve(varied, forward=True, boundary=bits.of(wrt_names))
    _, u_after = solve(useful, forward=False, boundary=0)
    key = {n: id(n.stmt) for n in graph.nodes if n.stmt is not None}

    def sets(facts):
        return {key[n]: NameSet(v, bits) for n, v in facts.items() if n in key}

    return Activity(matches, sets(v_before), sets(v_after), sets(u_after))


class NameSet:
    """A set of names held as ``cfg.Bits``: what the facts are asked is membership."""

    __slots__ = ("bits", "mask")

    def __init__(self, mask, bits):
        self.mask, self.bits = mask, bits

    def __contains__(self, name):
        return self.bits.has(self.mask, name)
