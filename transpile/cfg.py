"""Control-flow graph of a normalized body, and a small dataflow solver.

``build(stmts)`` gives a ``Graph`` whose nodes are simple statements and the
headers of ``if``/``for``/``while``; ``solve`` runs a forward or backward
analysis to a fixed point. Facts are frozensets joined by union or intersection,
or anything with a ``join`` of its own; ``Bits`` numbers a universe of items so
that a set of them is a Python integer, whose union and difference cost a few
machine words however many items a long function has.
"""

import collections
from dataclasses import dataclass, field

import gast


class Bits:
    """Items numbered on first sight; a set of them is an int with their bits set."""

    def __init__(self):
        self.number = {}
        self.items = []

    def bit(self, item) -> int:
        k = self.number.get(item)
        if k is None:
            k = self.number[item] = len(self.items)
            self.items.append(item)
        return 1 << k

    def of(self, items) -> int:
        mask = 0
        for item in items:
            mask |= self.bit(item)
        return mask

    def has(self, mask, item) -> bool:
        k = self.number.get(item)
        return k is not None and bool(mask >> k & 1)

    def items_in(self, mask):
        """The items of ``mask``, in the order they were numbered."""
        out, k = [], 0
        while mask:
            if mask & 1:
                out.append(self.items[k])
            mask >>= 1
            k += 1
        return out


def _joined(sources, outputs, join, init):
    """The fact flowing into a node: its one source's as it is, or the join of them."""
    if not sources:
        return init
    if len(sources) == 1:
        return outputs[sources[0]]
    return join([outputs[s] for s in sources])


def _union(facts):
    return frozenset().union(*facts)


def _intersection(facts):
    return frozenset.intersection(*facts)


def union(facts):
    """The join of ``Bits`` facts."""
    out = 0
    for f in facts:
        out |= f
    return out


@dataclass(eq=False)
class Node:
    stmt: object  # a gast statement, or None for entry/exit
    succ: list = field(default_factory=list)
    pred: list = field(default_factory=list)


@dataclass
class Graph:
    entry: Node
    exit: Node
    nodes: list
    by_stmt: dict


def build(stmts) -> Graph:
    entry, exit_ = Node(None), Node(None)
    graph = Graph(entry, exit_, [entry], {})

    def add(stmt, fringe):
        node = Node(stmt)
        graph.nodes.append(node)
        graph.by_stmt[id(stmt)] = node
        for f in fringe:
            _link(f, node)
        return node

    def block(body, fringe, loop):
        for stmt in body:
            fringe = one(stmt, fringe, loop)
        return fringe

    def one(stmt, fringe, loop):
        if isinstance(stmt, gast.If):
            head = add(stmt, fringe)
            return block(stmt.body, [head], loop) + block(stmt.orelse, [head], loop)
        if isinstance(stmt, (gast.For, gast.While)):
            head = add(stmt, fringe)
            inner = {"head": head, "breaks": []}
            for tail in block(stmt.body, [head], inner):
                _link(tail, head)
            return [head] + inner["breaks"]
        node = add(stmt, fringe)
        if isinstance(stmt, gast.Break):
            loop["breaks"].append(node)
            return []
        if isinstance(stmt, gast.Continue):
            _link(node, loop["head"])
            return []
        if isinstance(stmt, (gast.Return, gast.Raise)):
            _link(node, exit_)
            return []
        return [node]

    for tail in block(stmts, [entry], None):
        _link(tail, exit_)
    graph.nodes.append(exit_)
    return graph


def _link(a, b):
    a.succ.append(b)
    b.pred.append(a)


def solve(
    graph: Graph,
    transfer,
    *,
    forward: bool,
    init=frozenset(),
    union: bool = True,
    boundary=frozenset(),
    join=None,
):
    """Return ``(before, after)`` dicts of facts per node, in execution order.

    ``transfer(node, fact) -> fact``; ``boundary`` is the fact at entry (forward)
    or at exit (backward); ``init`` is the optimistic start for other nodes. Facts
    are frozensets joined by union (or intersection), or anything with a ``join``
    of a list of facts. A node with one predecessor takes its fact as it is, so
    straight-line code costs one transfer per statement.
    """
    if join is None:
        join = _union if union else _intersection
    inputs = {n: init for n in graph.nodes}
    outputs = {n: init for n in graph.nodes}
    if forward:
        start, order, upstream, downstream = graph.entry, graph.nodes, "pred", "succ"
    else:
        start, order, upstream, downstream = graph.exit, graph.nodes[::-1], "succ", "pred"
    work = collections.deque(order)
    queued = set(work)
    while work:
        node = work.popleft()
        queued.discard(node)
        sources = getattr(node, upstream)
        fact_in = boundary if node is start else _joined(sources, outputs, join, init)
        fact_out = transfer(node, fact_in)
        inputs[node] = fact_in
        if fact_out != outputs[node] or node is start:
            outputs[node] = fact_out
            for t in getattr(node, downstream):
                if t not in queued:
                    queued.add(t)
                    work.append(t)
    return (inputs, outputs) if forward else (outputs, inputs)
