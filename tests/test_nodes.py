"""``transpile/core/nodes.py`` on its own: its walks find what ``gast.walk`` finds (less the
contexts and operators they skip by design), ``clone`` copies deeply but shares the
nodes without fields, ``transform`` rewrites bottom up, and the statement helpers."""

import random
import textwrap

import gast

from transpile.core import nodes


def parse(src):
    return gast.parse(textwrap.dedent(src))


SOURCE = """
def f(x, y=2.0):
    a, b = x[1:, ::2], -y
    if a > b and not x:
        for i in range(3):
            a += np.sum([v * i for v in x], axis=0)
    while a < 1:
        a = a @ b if b else lambda q: q ** 2
    return {"k": a, **d}, f"{a!r}"
"""


def _walk_without_contexts(tree):
    skipped = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)
    return [n for n in gast.walk(tree) if not isinstance(n, skipped)]


def test_descendants_finds_what_gast_walk_finds():
    tree = parse(SOURCE)
    found = nodes.descendants(tree)
    assert found[0] is tree
    assert sorted(map(id, found)) == sorted(map(id, _walk_without_contexts(tree)))


def test_name_nodes_and_names_and_calls_agree_with_descendants():
    tree = parse(SOURCE)
    names = [n for n in nodes.descendants(tree) if isinstance(n, gast.Name)]
    assert nodes.name_nodes(tree) == names
    found_names, calls = nodes.names_and_calls(tree)
    assert found_names == names
    assert {gast.unparse(c.func) for c in calls} == {"range", "np.sum"}
    assert {n.id for n in names if isinstance(n.ctx, gast.Load)} >= {"x", "y", "np", "d"}


def test_loads_with_parents_pairs_each_read_with_its_parent():
    stmt = parse("z = a + f(b)").body[0]
    pairs = nodes.loads_with_parents(stmt.value)
    assert {(n.id, type(p).__name__) for n, p in pairs} == {
        ("a", "BinOp"),
        ("f", "Call"),
        ("b", "Call"),
    }
    assert nodes.loads_with_parents(gast.Name("q", gast.Load(), None, None)) != []


def test_clone_is_deep_and_shares_only_nodes_without_fields():
    tree = parse(SOURCE)
    copy = nodes.clone(tree)
    assert gast.dump(copy) == gast.dump(tree)
    original, copied = _walk_without_contexts(tree), _walk_without_contexts(copy)
    assert not {id(n) for n in original} & {id(n) for n in copied}
    copy.body[0].name = "g"
    nodes.name_nodes(copy)[0].id = "renamed"
    assert tree.body[0].name == "f" and nodes.name_nodes(tree)[0].id != "renamed"


def test_transform_rewrites_children_before_parents():
    tree = parse("z = (a + b) * c").body[0]
    seen = []

    def rename(node):
        seen.append(node.id)
        return nodes.name(node.id.upper(), node.ctx)

    def binop(node):
        seen.append(gast.unparse(node).strip())
        return node

    nodes.transform(tree, {gast.Name: rename, gast.BinOp: binop})
    assert gast.unparse(tree).strip() == "Z = (A + B) * C"
    assert seen.index("(A + B) * C") > seen.index("A + B") > seen.index("b")


def test_random_expressions_walk_like_gast():
    rng = random.Random(0)
    leaves = ["a", "b", "1.5", "x[i]", "f(a)"]
    ops = ["+", "*", "-", "/", "**", "@", "<", "and", "if"]
    for _ in range(200):
        expr = rng.choice(leaves)
        for _ in range(rng.randrange(1, 6)):
            op = rng.choice(ops)
            other = rng.choice(leaves)
            expr = f"({expr}) if ({other}) else 0" if op == "if" else f"({expr}) {op} {other}"
        tree = parse(f"z = {expr}")
        assert sorted(map(id, nodes.descendants(tree))) == sorted(
            map(id, _walk_without_contexts(tree))
        ), expr
        assert gast.dump(nodes.clone(tree)) == gast.dump(tree)


def test_statement_helpers():
    body = parse(
        """
        a, b = f(x)
        c += 1
        for i, (j, k) in z:
            if t:
                break
        while u:
            continue
        """
    ).body
    assert nodes.stores(body[0]) == ["a", "b"]
    assert nodes.stores(body[1]) == ["c"]
    assert nodes.stores(body[2]) == ["i", "j", "k"]
    assert gast.unparse(nodes.header(body[2])).strip() == "z"
    assert gast.unparse(nodes.header(body[3])).strip() == "u"
    assert nodes.contains_jump(body[2].body, gast.Break)
    assert not nodes.contains_jump(body[2].body, gast.Continue)
    assert len(list(nodes.all_stmts(body))) == 7
    edited = nodes.apply_edits(body, {id(body[1]): [], id(body[2].body[0]): [gast.Pass()]})
    assert len(edited) == 3 and isinstance(edited[1].body[0], gast.Pass)
    assert nodes.is_atom(nodes.const(1.0)) and nodes.is_atom(nodes.name("q"))
    assert not nodes.is_atom(body[0].value)


def test_bound_values_lists_each_binding_of_a_name():
    body = parse(
        """
        a = x * 2
        b, c = f(x)
        if t:
            a = g(b)
        for i in z:
            c = i
        a[0] = 1
        """
    ).body
    bound = nodes.bound_values(body)
    assert sorted(bound) == ["a", "b", "c", "i"]
    assert [gast.unparse(v).strip() for v in bound["a"]] == ["x * 2", "g(b)"]
    assert bound["b"] == [None] and bound["i"] == [None]
    assert bound["c"][0] is None and gast.unparse(bound["c"][1]).strip() == "i"
