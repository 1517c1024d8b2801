"""Control-flow graph of a normalized body, and a small dataflow solver.

``build(stmts)`` gives a ``Graph`` whose nodes are simple statements and the
headers of ``if``/``for``/``while``; ``solve`` runs a forward or backward
analysis to a fixed point. Facts are frozensets joined by union or intersection,
or anything with a ``join`` of its own; ``Bits`` numbers a universe of items so
that a set of them is a Python integer, whose union and difference cost a few
machine words however many items a long function has.
"""

import collections
from dataclasses import dataclass

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


class Node:
    """A statement (or None for entry and exit) and its edges, as positions in
    ``Graph.nodes``: references would make every graph a reference cycle, which only
    the cyclic garbage collector frees (slowly, for graphs of thousands of nodes)."""

    __slots__ = ("index", "pred", "stmt", "succ")

    def __init__(self, stmt, index):
        self.stmt, self.index, self.succ, self.pred = stmt, index, [], []


@dataclass
class Graph:
    entry: Node
    exit: Node  # made once the body is read
    nodes: list
    by_stmt: dict


def build(stmts, leave_out=None) -> Graph:
    """The graph of ``stmts``. ``leave_out(stmt) -> bool``, asked of each simple
    statement that does not jump: True for one that matters nothing to the analysis
    (its fact passes through unchanged), which then has no node to solve for."""
    return _Builder(leave_out).graph_of(stmts)


class _Builder:
    """Reads a body into a ``Graph`` (a class, not nested functions: those would call
    each other through their closures, a reference cycle holding the graph)."""

    def __init__(self, leave_out):
        self.leave_out = leave_out

    def graph_of(self, stmts):
        self.graph = Graph(Node(None, 0), None, [], {})
        self.graph.nodes.append(self.graph.entry)
        self.returns = []
        tails = self.block(stmts, [self.graph.entry], None)
        self.graph.exit = exit_ = Node(None, len(self.graph.nodes))
        self.graph.nodes.append(exit_)
        for node in self.returns + tails:
            _link(node, exit_)
        return self.graph

    def add(self, stmt, fringe):
        node = Node(stmt, len(self.graph.nodes))
        self.graph.nodes.append(node)
        self.graph.by_stmt[id(stmt)] = node
        for f in fringe:
            _link(f, node)
        return node

    def block(self, body, fringe, loop):
        for stmt in body:
            fringe = self.one(stmt, fringe, loop)
        return fringe

    def one(self, stmt, fringe, loop):
        if isinstance(stmt, gast.If):
            head = self.add(stmt, fringe)
            return self.block(stmt.body, [head], loop) + self.block(stmt.orelse, [head], loop)
        if isinstance(stmt, (gast.For, gast.While)):
            head = self.add(stmt, fringe)
            inner = {"head": head, "breaks": []}
            for tail in self.block(stmt.body, [head], inner):
                _link(tail, head)
            return [head] + inner["breaks"]
        if self.leave_out is not None and not isinstance(stmt, _JUMPS) and self.leave_out(stmt):
            return fringe
        node = self.add(stmt, fringe)
        if isinstance(stmt, gast.Break):
            loop["breaks"].append(node)
            return []
        if isinstance(stmt, gast.Continue):
            _link(node, loop["head"])
            return []
        if isinstance(stmt, (gast.Return, gast.Raise)):
            self.returns.append(node)
            return []
        return [node]


_JUMPS = (gast.Break, gast.Continue, gast.Return, gast.Raise)


def _link(a, b):
    a.succ.append(b.index)
    b.pred.append(a.index)


def _directed(graph, forward):
    """``(the start node's index, the nodes in visiting order, each node's sources,
    each node's targets)`` for a solve in that direction."""
    nodes = graph.nodes
    preds, succs = [n.pred for n in nodes], [n.succ for n in nodes]
    if forward:
        return graph.entry.index, nodes, preds, succs
    return graph.exit.index, nodes[::-1], succs, preds


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
    nodes = graph.nodes
    inputs, outputs = [init] * len(nodes), [init] * len(nodes)
    start, order, upstream, downstream = _directed(graph, forward)
    work = collections.deque(n.index for n in order)
    queued = bytearray(b"\x01") * len(nodes)  # 1 where the node waits in ``work``
    pop, push = work.popleft, work.append
    while work:
        k = pop()
        queued[k] = 0
        sources = upstream[k]
        if k == start:
            fact_in = boundary
        elif len(sources) == 1:  # straight-line code: the one source's fact as it is
            fact_in = outputs[sources[0]]
        else:
            fact_in = _joined(sources, outputs, join, init)
        fact_out = transfer(nodes[k], fact_in)
        inputs[k] = fact_in
        if fact_out != outputs[k] or k == start:
            outputs[k] = fact_out
            for t in downstream[k]:
                if not queued[t]:
                    queued[t] = 1
                    push(t)
    before, after = dict(zip(nodes, inputs)), dict(zip(nodes, outputs))
    return (before, after) if forward else (after, before)
