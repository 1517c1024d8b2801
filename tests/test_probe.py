"""The probe: what the first call of a gradient records for its shape variant.

``probe.probe_body`` reports each assignment's value (``x = seen(k, value)``, ``keys[k]``
its position), each loop's carried names at the start of its body, and each helper
call; the variant made from what it saw must give the generic code's gradient on
every later call. The references: the positions counted here from the generic body
itself, and central finite differences.
"""

import threading

import fd
import gast
import numpy as np
import pytest

from transpile import grad, source
from transpile.backend import probe
from transpile.core.nodes import all_stmts, loads_and_stores


def looped(x, w):
    h = x
    for i in range(3):
        h = np.tanh(h * w[i] + 0.1 * i)
        h = h * 0.9 + 0.5 * x
    return np.sum(h * h)


def grows(x):
    """A loop whose carried value is a Python float on the first trip, then an array."""
    s = 0.0
    for t in range(3):
        s = s + np.sin(x * (t + 1))
    return np.sum(s * s)


def changes_midway(x):
    """A loop line that sees a Python float on the first trip, then arrays (``a``), next
    to one that sees arrays of one shape on every trip (``b``), and a name bound twice in
    the body, to an array and then to a number (``c``)."""
    s = 0.0
    for t in range(3):
        a = s * 2.0
        b = np.sin(x * (t + 1))
        c = x[:2] * b[:2]
        c = np.sum(c)
        s = a + b * c
    return np.sum(s * s)


def _single_targets(body, path=()):
    """``(position, target)`` of every assignment to a name in ``body``, positions as the
    probe numbers them: an int at the top, a tuple of indices inside loops."""
    found = []
    for i, stmt in enumerate(body):
        key = (*path, i) if path else i
        if isinstance(stmt, gast.For):
            found += _single_targets(stmt.body, (*path, i) if path else (i,))
        target = probe.single_target(stmt)
        if target is not None:
            found.append((key, target))
    return found


def _seen_calls(body, seen_name):
    return [
        n
        for s in body
        for n in gast.walk(s)
        if isinstance(n, gast.Call) and getattr(n.func, "id", None) == seen_name
    ]


def test_each_assignment_is_reported_once_at_its_position():
    g = grad(looped, wrt=0)
    entry = g.__transpile_dispatch__.current()
    body, keys, known = probe.probe_body(
        entry.body, entry.spec.names["ops"], "_p", "_s", entry.params
    )
    reported = list(known)  # known before the run: not reported
    for call in _seen_calls(body, "_s"):
        key = keys[call.args[0].value]
        reported += key if isinstance(key, list) else [key]  # a loop's carried names
    assert len(set(reported)) == len(reported), "a statement reported twice"
    wanted = {key for key, _ in _single_targets(entry.body)}
    carried = {k for k in reported if isinstance(k, tuple) and isinstance(k[-1], str)}
    assert set(reported) - carried == wanted
    assert carried, "a loop's carried names are reported at the start of its body"


def test_a_run_of_loop_lines_reported_in_one_call_keeps_what_each_line_saw():
    g = grad(changes_midway, wrt=0)
    dispatcher = g.__transpile_dispatch__
    entry = dispatcher.current()
    x = np.linspace(0.1, 0.5, 5)
    g(x)  # the first call runs the probe
    ((_, _, seen),) = dispatcher.pending.values()
    body, keys, _ = probe.probe_body(entry.body, entry.spec.names["ops"], "_p", "_s", entry.params)
    runs = [keys[c.args[0].value] for c in _seen_calls(body, "_s")]
    lines = [k for k in runs if isinstance(k, list) and not isinstance(k[0][-1], str)]
    assert any(len(k) > 1 for k in lines), "a loop's straight lines are reported together"
    forward = next(i for i, stmt in enumerate(entry.body) if isinstance(stmt, gast.For))
    inside = [(key, t) for key, t in _single_targets(entry.body) if isinstance(key, tuple)]
    saw = {}
    for key, t in sorted(inside):
        if key[0] == forward:
            saw.setdefault(t, []).append(seen[key])
    float64 = np.dtype(np.float64)
    assert saw["a"] == [None]  # a float, then arrays: nothing is known of it
    assert saw["b"] == [("array", (5,), float64, np.ndarray)]
    assert saw["c"] == [("array", (2,), float64, np.ndarray), ("array", (), float64, np.float64)]
    fd.assert_close(g(x), fd.numeric_grad(changes_midway, (x,), (0,))[0], rtol=1e-6)


def test_the_generic_body_is_not_changed_by_its_probe():
    g = grad(looped, wrt=0)
    entry = g.__transpile_dispatch__.current()
    before = gast.dump(gast.Module(body=list(entry.body), type_ignores=[]))
    probe.probe_body(entry.body, entry.spec.names["ops"], "_p", "_s", entry.params)
    assert gast.dump(gast.Module(body=list(entry.body), type_ignores=[])) == before


@pytest.mark.parametrize(
    "func, make",
    [
        (looped, lambda rng: (rng.normal(size=4), rng.normal(size=3))),
        (grows, lambda rng: (rng.normal(size=5),)),
    ],
    ids=["looped", "float_then_array"],
)
def test_variant_made_from_the_probe_matches_finite_differences(func, make):
    rng = np.random.default_rng(7)
    g = grad(func, wrt=0)
    for args in (make(rng), make(rng)):
        want = fd.numeric_grad(func, args, (0,))[0]
        for _ in range(3):  # the probe, then the variant
            fd.assert_close(g(*args), want, rtol=1e-6, atol=1e-9)
    assert source(g, *args) != source(g)  # a variant was made and runs


def test_the_statements_known_to_hold_no_site_are_reported_as_when_all_are_walked():
    """... and each loop's names, as number_sites gathered them, are those of a walk of
    the loop (the forward and the reverse loop of ``looped``)."""
    g = grad(looped, wrt=0)
    entry = g.__transpile_dispatch__.current()
    ops_name, params = entry.spec.names["ops"], entry.params
    walked = probe.probe_body(entry.body, ops_name, "_p", "_s", params)[0]
    skipped = probe.probe_body(entry.body, ops_name, "_p", "_s", params, entry.sites)[0]
    dump = [gast.dump(gast.Module(body=b, type_ignores=[])) for b in (walked, skipped)]
    assert dump[0] == dump[1]
    assert "_p" in dump[0]  # the probe reports helper calls here
    loops = [s for s in all_stmts(entry.body) if isinstance(s, gast.For)]
    assert loops and all(entry.sites.loop_names[id(s)] == loads_and_stores(s) for s in loops)


def test_threads_racing_the_first_call_each_get_the_gradient_and_keep_known_intact():
    """Each first call starts its observations from a copy of what the probe knows
    (``grows`` has a constant at the top and a loop's carried names): two threads
    probing at once, then later calls of the variant, all match finite differences."""
    rng = np.random.default_rng(11)
    g = grad(grows, wrt=0)
    args = [(rng.normal(size=5),) for _ in range(2)]
    wants = [fd.numeric_grad(grows, a, (0,))[0] for a in args]
    start, results = threading.Barrier(2), [None, None]

    def first(k):
        start.wait()
        results[k] = g(*args[k])

    threads = [threading.Thread(target=first, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, wants):
        fd.assert_close(got, want, rtol=1e-6, atol=1e-9)
    _, _, known = g.__transpile_dispatch__.current().probe_function()
    assert known == {1: probe.meta(0.0)}  # `s = 0.0`, as probe_body read it
    for a, want in zip(args, wants):
        for _ in range(2):  # the variant now
            fd.assert_close(g(*a), want, rtol=1e-6, atol=1e-9)
    assert source(g, *args[0]) != source(g)
