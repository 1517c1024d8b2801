"""Control-flow graph of a normalized body, and a small dataflow solver.

``build(stmts)`` gives a ``Graph`` whose nodes are simple statements and the
headers of ``if``/``for``/``while``; ``solve`` runs a forward or backward
analysis to a fixed point. Facts are frozensets; the join is union or intersection.
"""

import collections
from dataclasses import dataclass, field

import gast


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
    inputs = {n: init for n in graph.nodes}
    outputs = {n: init for n in graph.nodes}
    start = graph.entry if forward else graph.exit
    work = collections.deque(graph.nodes if forward else reversed(graph.nodes))
    queued = set(work)
    while work:
        node = work.popleft()
        queued.discard(node)
        sources = node.pred if forward else node.succ
        if node is start:
            fact_in = boundary
        else:
            facts = [outputs[s] for s in sources]
            if not facts:
                fact_in = init
            elif len(facts) == 1:
                fact_in = facts[0]
            elif join is not None:
                fact_in = join(facts)
            elif union:
                fact_in = frozenset().union(*facts)
            else:
                fact_in = frozenset.intersection(*facts)
        fact_out = transfer(node, fact_in)
        inputs[node] = fact_in
        if fact_out != outputs[node] or node is start:
            outputs[node] = fact_out
            for t in node.succ if forward else node.pred:
                if t not in queued:
                    queued.add(t)
                    work.append(t)
    if forward:
        return inputs, outputs
    return outputs, inputs
