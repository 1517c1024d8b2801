"""``transpile/core/defuse.py`` on its own: what the index records of each statement kind,
and that its rewrites (``rename``, ``forget``, ``drop_read``, ``move_reads``) keep it
equal to an index built afresh from the rewritten body."""

import textwrap

import gast

from transpile.core.defuse import Index
from transpile.core.nodes import assign, name


def body(src):
    return gast.parse(textwrap.dedent(src)).body


def table(index):
    """The index as plain data: name -> [(ctx, statement position)] per table."""

    def plain(t):
        return {
            k: [(type(n.ctx).__name__, index.position[id(s)]) for n, s in v]
            for k, v in sorted(t.items())
            if v
        }

    return plain(index.writes), plain(index.reads)


SOURCE = """
a = x + 1
if a > 0:
    b = a * 2
    for i in range(n):
        b += i
else:
    b = 0
while b > a:
    b = b - 1
c = b
"""


def test_reads_and_writes_in_program_order():
    stmts = body(SOURCE)
    index = Index(stmts)
    writes, reads = table(index)
    # positions: 0 a=, 1 if, 2 b=, 3 for, 4 b+=, 5 b=0, 6 while, 7 b=b-1, 8 c=
    assert writes == {
        "a": [("Store", 0)],
        "b": [("Store", 2), ("Store", 4), ("Store", 5), ("Store", 7)],
        "c": [("Store", 8)],
        "i": [("Store", 3)],
    }
    assert reads["a"] == [("Load", 1), ("Load", 2), ("Load", 6)]
    assert reads["b"] == [("Store", 4), ("Load", 6), ("Load", 7), ("Load", 8)]  # += reads b
    assert reads["i"] == [("Load", 4)]
    assert reads["n"] == [("Load", 3)] and reads["x"] == [("Load", 0)]
    assert index.write_count("b") == 4 and index.read_count("c") == 0
    assert [index.position[id(s)] for s in index.reading("a")] == [1, 2, 6]


def test_only_indexes_the_names_asked_for():
    index = Index(body(SOURCE), only={"b"})
    assert set(index.writes) == {"b"} and set(index.reads) == {"b"}


def test_written_after():
    stmts = body(SOURCE)
    index = Index(stmts)
    assert index.written_after("b", stmts[0])
    assert not index.written_after("a", stmts[0])
    assert not index.written_after("c", stmts[-1])


def test_rename_matches_a_fresh_index():
    stmts = body(SOURCE)
    index = Index(stmts)
    index.rename("a", "a2", writes=True)
    assert table(index) == table(Index(stmts))
    assert "a = a2" not in gast.unparse(gast.Module(body=stmts, type_ignores=[]))
    assert gast.unparse(stmts[0]).startswith("a2 = ")


def test_rename_of_reads_only_leaves_the_writes():
    stmts = body("a = 1\nb = a\nc = a")
    index = Index(stmts)
    index.rename("a", "z")
    assert gast.unparse(stmts[0]).strip() == "a = 1"
    assert [gast.unparse(s).strip() for s in stmts[1:]] == ["b = z", "c = z"]
    writes, reads = table(index)
    assert reads == {"z": [("Load", 1), ("Load", 2)]} and writes["a"] == [("Store", 0)]


def test_forget_and_add_match_a_fresh_index():
    stmts = body("a = 1\nb = a\nc = b + a")
    index = Index(stmts)
    index.forget(stmts[1])
    stmts.pop(1)
    replacement = assign("b", name("a"), stmts[0])
    stmts.insert(1, replacement)
    index.add(replacement)
    fresh = Index(stmts)
    # positions differ (the new statement is numbered last); the entries do not
    assert {k: len(v) for k, v in index.reads.items() if v} == {
        k: len(v) for k, v in fresh.reads.items() if v
    }
    assert {k: [s for _, s in v] for k, v in index.writes.items() if v} == {
        k: [s for _, s in v] for k, v in fresh.writes.items() if v
    }


def test_drop_read_and_move_reads():
    stmts = body("a = 1\nb = a + a\nc = 2")
    index = Index(stmts)
    first = index.reads["a"][0][0]
    index.drop_read(first)
    assert len(index.reads["a"]) == 1
    index.move_reads(stmts[1], stmts[2])
    assert [s for _, s in index.reads["a"]] == [stmts[2]]
    assert "b" not in index.writes or not index.writes["b"]


def test_rename_onto_a_name_in_use_keeps_program_order():
    stmts = body("p = a\nq = b\nr = a\ns = b")
    index = Index(stmts)
    index.rename("b", "a")
    assert table(index) == table(Index(stmts))
    assert [index.position[id(s)] for _, s in index.reads["a"]] == [0, 1, 2, 3]
