"""``transpile/core/fixpoint.py`` on its own: the binding fixed points the analyses
share, on small graphs whose answers are worked out by hand."""

import gast

from transpile.core import fixpoint


def _bindings(source):
    """name -> the values assigned to it, from ``name = expr`` lines."""
    found = {}
    for s in gast.parse(source).body:
        found.setdefault(s.targets[0].id, []).append(s.value)
    return found


def _reads(value):
    return {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}


def test_least_grows_through_chains_bound_in_any_order():
    # c is bound before what it reads: the fixed point still finds it
    b = _bindings("c = b + a\nb = a\na = seed\nd = c + other\n")
    found = fixpoint.least(b, lambda n, f: all(_reads(v) <= f | {"seed"} for v in b[n]))
    assert found == {"a", "b", "c"}  # d reads other, never found


def test_least_keeps_the_start_and_needs_every_binding():
    b = _bindings("a = p\na = q\nb = p\n")
    found = fixpoint.least(b, lambda n, f: all(_reads(v) <= f for v in b[n]), start={"p"})
    assert found == {"p", "b"}  # a is bound to q too


def test_greatest_drops_what_depends_on_a_dropped_name():
    b = _bindings("a = 1.0\nb = a * 2.0\nc = b + x\nd = c\ne = a\n")
    kept = fixpoint.greatest(b, lambda n, k: all(_reads(v) <= k for v in b[n]))
    assert kept == {"a", "b", "e"}  # x is not bound: c, and d through it, drop


def test_greatest_keeps_a_cycle_that_nothing_breaks():
    b = _bindings("a = b\nb = a\nc = a + y\n")
    assert fixpoint.greatest(b, lambda n, k: all(_reads(v) <= k for v in b[n])) == {"a", "b"}


def test_reachable_is_the_closure_including_the_start():
    edges = {"a": {"b"}, "b": {"c", "a"}, "c": set(), "d": {"a"}}
    assert fixpoint.reachable(edges, ["a"]) == {"a", "b", "c"}
    assert fixpoint.reachable(edges, ["d"]) == {"a", "b", "c", "d"}
    assert fixpoint.reachable(edges, []) == set()
