"""``inline``'s one walk per statement stands in for ``name_nodes`` and ``clone``.

The renumbering of temporaries follows the order in which a breadth-first walk
(``name_nodes``) first meets them. ``inline`` finds that order from the names of
each statement by depth, noted once (as the index is built, or as the copy for
``entry`` is made), with a compound statement's levels merged from its parts';
the copy it makes for ``entry`` must be ``clone``'s. These tests check both
against the functions they stand in for, on nested loops and branches, names
shared by two statements, and an annotated name.
"""

import gast

from transpile.cleanup import inline
from transpile.core.nodes import clone, descendants, name_nodes

SOURCE = """
def f(x, n):
    _t1 = x * 2.0
    for i in range(n):
        _t2 = ops.mul(_t1, x[i])
        if _t2 > 0:
            while _t2 > 1.0:
                _t2 = _t2 / (2.0 + _t1)
            tape.push(_t2)
        else:
            _t3 = -_t2
            x[i] = _t3 + ops.add(x[i], f(_t1, g(_t2)))
        for j in range(i):
            _t4 = x[j] + _t2
    return x
"""


def _body():
    body = gast.parse(SOURCE).body[0].body
    shared = body[1].body[0].value  # one node in two places, as a stage may leave it
    body[1].body[2].body[0].value = gast.BinOp(
        left=shared, op=gast.Add(), right=gast.Constant(1, None)
    )
    body[0].targets[0].annotation = gast.Name("_t9", gast.Load(), None, None)
    return body


def _memo_walked(body):
    walked = {}
    memo = inline._Memo({}, walked)
    index = inline.defuse.Index([], only={"_t1", "_t2", "_t3", "_t4"})
    inline._index(body, index, memo)
    return walked


def test_levels_merge_to_name_nodes_order():
    body = _body()
    for walked in (_memo_walked(body), {}):  # from the statements' walks, or none
        for stmt in body:
            merged = [n for level in inline._levels_of(stmt, walked) for n in level]
            assert merged == name_nodes(stmt)


def test_copy_for_entry_is_clone():
    body = _body()
    walked = {}
    copied = inline._copy_block(body, walked)
    assert [gast.dump(s) for s in copied] == [gast.dump(s) for s in clone(body)]
    original = {id(n) for s in body for n in descendants(s) if n._fields}
    assert not original & {id(n) for s in copied for n in descendants(s) if n._fields}
    for stmt in body:  # the copy's walk is the original's
        merged = [n for level in inline._levels_of(stmt, walked) for n in level]
        assert merged == name_nodes(stmt)
