"""``transpile/core/cfg.py`` on its own: the graph of every statement kind the normal form
has (straight lines, ``if``/``else``, ``for``, ``while``, ``break``, ``continue``,
``return``, nesting), and the solver on lattices whose fixed points are known by hand
(reaching definitions forwards, liveness backwards, definite assignment by
intersection), with frozensets and with ``Bits``."""

import textwrap

import gast
import pytest

from transpile.core import cfg
from transpile.core.nodes import header, loads, stores


def body(src):
    return gast.parse(textwrap.dedent(src)).body


def labels(graph):
    """Each node as a short label: ``entry``, ``exit`` or its statement's first line."""

    def label(node):
        if node is graph.entry:
            return "entry"
        if node is graph.exit:
            return "exit"
        return gast.unparse(node.stmt).splitlines()[0].rstrip(":")

    return {label(n): n for n in graph.nodes}, label


def edges(graph):
    _, label = labels(graph)
    return {(label(n), label(graph.nodes[s])) for n in graph.nodes for s in n.succ}


def test_straight_line_is_a_chain():
    g = cfg.build(body("a = 1\nb = a\nc = b"))
    assert edges(g) == {
        ("entry", "a = 1"),
        ("a = 1", "b = a"),
        ("b = a", "c = b"),
        ("c = b", "exit"),
    }


def test_if_else_joins_both_branches():
    g = cfg.build(body("if t:\n    a = 1\nelse:\n    a = 2\nb = a"))
    assert edges(g) == {
        ("entry", "if t"),
        ("if t", "a = 1"),
        ("if t", "a = 2"),
        ("a = 1", "b = a"),
        ("a = 2", "b = a"),
        ("b = a", "exit"),
    }


def test_if_without_else_falls_through_from_its_test():
    g = cfg.build(body("if t:\n    a = 1\nb = 2"))
    assert ("if t", "b = 2") in edges(g) and ("a = 1", "b = 2") in edges(g)


def test_loops_return_to_their_header_and_leave_from_it():
    for loop in ("for i in r", "while t"):
        g = cfg.build(body(f"{loop}:\n    a = 1\n    b = 2\nc = 3"))
        assert edges(g) == {
            ("entry", loop),
            (loop, "a = 1"),
            ("a = 1", "b = 2"),
            ("b = 2", loop),
            (loop, "c = 3"),
            ("c = 3", "exit"),
        }


def test_break_leaves_the_loop_and_continue_goes_back():
    g = cfg.build(
        body(
            """
            for i in r:
                if t:
                    break
                if u:
                    continue
                a = 1
            b = 2
            """
        )
    )
    e = edges(g)
    assert ("break", "b = 2") in e and ("break", "if u") not in e
    assert ("continue", "for i in r") in e and ("continue", "a = 1") not in e
    assert ("a = 1", "for i in r") in e and ("for i in r", "b = 2") in e


def test_return_goes_to_exit_and_ends_its_block():
    g = cfg.build(body("if t:\n    return a\nb = 1\nreturn b"))
    e = edges(g)
    assert ("return a", "exit") in e and ("return a", "b = 1") not in e
    assert ("return b", "exit") in e


def test_nested_loops_break_only_the_inner_one():
    g = cfg.build(
        body(
            """
            for i in r:
                for j in s:
                    break
                a = 1
            """
        )
    )
    e = edges(g)
    assert ("break", "a = 1") in e and ("for j in s", "a = 1") in e
    assert ("a = 1", "for i in r") in e and ("for i in r", "exit") in e


def test_nodes_are_found_by_statement_and_edges_are_symmetric():
    stmts = body("a = 1\nif t:\n    b = a")
    g = cfg.build(stmts)
    assert g.by_stmt[id(stmts[0])].stmt is stmts[0]
    for n in g.nodes:
        for s in n.succ:
            assert n.index in g.nodes[s].pred
        assert g.nodes[n.index] is n


# --------------------------------------------------------------------------
# The solver on known lattices


PROGRAM = """
x = 1
y = 2
while t:
    if u:
        x = y
    else:
        z = x
    y = z
w = x
"""


def _stmt(node):
    return node.stmt if node.stmt is not None else None


def reaching(graph):
    """Reaching definitions: facts are (name, line) pairs."""

    def transfer(node, fact):
        s = _stmt(node)
        if s is None or isinstance(s, (gast.If, gast.While)):
            return fact
        written = set(stores(s))
        kept = {(n, line) for n, line in fact if n not in written}
        return frozenset(kept | {(n, s.lineno) for n in written})

    return cfg.solve(graph, transfer, forward=True)


def test_reaching_definitions_through_a_loop_with_a_branch():
    g = cfg.build(body(PROGRAM))
    before, _ = reaching(g)
    by_label, _ = labels(g)
    # lines: x=1 (2), y=2 (3), x=y (6), z=x (8), y=z (9), w=x (10)
    assert before[by_label["w = x"]] == {("x", 2), ("x", 6), ("y", 3), ("y", 9), ("z", 8)}
    assert before[by_label["y = z"]] == {("x", 2), ("x", 6), ("y", 3), ("y", 9), ("z", 8)}
    assert before[by_label["x = y"]] == {("x", 2), ("x", 6), ("y", 3), ("y", 9), ("z", 8)}
    assert before[by_label["y = 2"]] == {("x", 2)}


def live(graph, use_bits=False):
    """Liveness, backwards: a name is live where a later read may see its value."""
    bits = cfg.Bits()

    def transfer(node, fact):
        s = _stmt(node)
        if s is None:
            return fact
        read = loads(header(s))
        written = [] if isinstance(s, (gast.If, gast.While)) else stores(s)
        if use_bits:
            return (fact & ~bits.of(written)) | bits.of(read)
        return (fact - set(written)) | set(read)

    if use_bits:
        solved = cfg.solve(graph, transfer, forward=False, init=0, boundary=0, join=cfg.union)
        return tuple({k: frozenset(bits.items_in(v)) for k, v in d.items()} for d in solved)
    return cfg.solve(graph, transfer, forward=False)


@pytest.mark.parametrize("use_bits", [False, True], ids=["frozensets", "bits"])
def test_liveness_backwards(use_bits):
    g = cfg.build(body(PROGRAM))
    before, after = live(g, use_bits)
    by_label, _ = labels(g)
    assert before[by_label["w = x"]] == {"x"}
    assert after[by_label["w = x"]] == frozenset()
    # at the loop's test: t and u are tested, x and y read on some path, and z read by
    # y = z on the path through x = y, which does not write it
    assert before[by_label["while t"]] == {"t", "u", "x", "y", "z"}
    assert before[by_label["x = 1"]] == {"t", "u", "z"}


def test_definite_assignment_by_intersection():
    g = cfg.build(body("if t:\n    a = 1\n    b = 1\nelse:\n    a = 2\nc = a"))
    universe = frozenset({"a", "b", "c", "t"})

    def transfer(node, fact):
        s = _stmt(node)
        if s is None or isinstance(s, gast.If):
            return fact
        return fact | set(stores(s))

    before, _ = cfg.solve(g, transfer, forward=True, union=False, init=universe)
    by_label, _ = labels(g)
    assert before[by_label["c = a"]] == {"a"}  # b only on one path


def test_bits_number_items_on_first_sight():
    bits = cfg.Bits()
    mask = bits.of(["b", "a", "b"])
    assert bits.items_in(mask) == ["b", "a"]
    assert bits.has(mask, "a") and not bits.has(mask, "c")
    assert bits.items_in(cfg.union([bits.bit("c"), mask])) == ["b", "a", "c"]


def test_leave_out_drops_simple_statements_but_never_a_jump_or_a_header():
    src = "a = 1\nfor i in r:\n    '''c'''\n    if t:\n        '''d'''\n        break\n    b = a\nreturn b"
    # the comments go; the break is asked for too, and stays
    g = cfg.build(body(src), leave_out=lambda s: isinstance(s, (gast.Expr, gast.Break)))
    assert edges(g) == {
        ("entry", "a = 1"),
        ("a = 1", "for i in r"),
        ("for i in r", "if t"),
        ("if t", "break"),
        ("if t", "b = a"),
        ("b = a", "for i in r"),
        ("for i in r", "return b"),
        ("break", "return b"),
        ("return b", "exit"),
    }
    whole = cfg.build(body(src))  # the same liveness before each statement kept

    def live(graph):
        def transfer(node, fact):
            s = node.stmt
            if s is None:
                return fact
            return (fact - set(stores(s))) | set(loads(header(s)))

        return cfg.solve(graph, transfer, forward=False)[0]

    before_whole, before_kept = live(whole), live(g)
    labelled = labels(whole)[0]
    for label, node in labels(g)[0].items():
        assert before_kept[node] == before_whole[labelled[label]], label
