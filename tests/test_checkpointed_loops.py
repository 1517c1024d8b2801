"""Loops marked ``for t in checkpointed(range(T), snapshots=k)`` (and ``while
checkpointed(cond, snapshots=k)``, and every loop with ``grad(f, checkpoint=k)``): the
gradient keeps at most ``k`` states and runs the steps between them again. Gradients
equal the unmarked loop's to 1e-12 and central differences (first and later call);
forward mode and hvp see the marker as the identity; the strict array double runs
through the replay; what a step cannot do is refused by name; a long loop's peak memory
stays within a few states of the forward's own (tracemalloc, peaks compared)."""

import tracemalloc

import checkpointed_funcs as cf
import fd
import numpy as np
import pytest
from strict_array import StrictArray, strict, to_numpy

from transpile import TranspileError, grad, hvp, jvp, source, value_and_grad, vjp

RNG = np.random.default_rng(24)
W, H = RNG.standard_normal(5) * 0.8, RNG.standard_normal(5)

CASES = [
    (cf.marked_branches, cf.plain_branches, (W, H, 11)),
    (cf.marked_nested, cf.plain_nested, (W, H, 9)),
    (cf.marked_while, cf.plain_while, (np.full(5, 0.9), H + 1.0, 1e-2)),
    (cf.marked_heat, cf.plain_heat, (H, 0.2, 30)),
]
IDS = ["helper_and_branches", "nested_loop_and_stop_gradient", "while", "heat"]


def _close(got, want, rtol=1e-12):
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-13)


@pytest.mark.parametrize("marked,plain,args", CASES, ids=IDS)
def test_gradient_equals_the_unmarked_loops_and_differences(marked, plain, args):
    g, reference = grad(marked, wrt=(0, 1)), grad(plain, wrt=(0, 1))
    # differences see stop_gradient as the identity: that case is checked against the
    # unmarked loop's gradient alone (itself checked against differences elsewhere)
    stops = marked is cf.marked_nested
    expected = None if stops else fd.numeric_grad(plain, list(args), (0, 1))
    for _ in range(2):  # first call, then the shape variant
        got = g(*args)
        _close(got, reference(*args))
        if expected is not None:
            fd.assert_close(tuple(got), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "func,args,option",
    [
        (cf.in_a_helper, (W, H, 5), None),
        (cf.nested_marked, (W, H, 4), None),
        (cf.inside_a_plain_loop, (W, H, 4), None),
        (cf.while_unmarked, (np.full(5, 0.9), H + 1.0, 1e-2), 3),
    ],
    ids=["in_a_helper", "nested_marked", "inside_a_plain_loop", "while_with_the_option"],
)
def test_where_the_loop_sits(func, args, option):
    g = grad(func, wrt=(0, 1), checkpoint=option)
    assert "revolve.backward(" in source(g)
    expected = fd.numeric_grad(func, list(args), (0, 1))
    reference = grad(func, wrt=(0, 1), checkpoint=False)
    for _ in range(2):
        got = g(*args)
        _close(got, reference(*args))
        fd.assert_close(tuple(got), expected, rtol=1e-6, atol=1e-8)


def test_the_generated_source_reads_as_the_loop_and_one_line_of_replay():
    text = source(grad(cf.marked_branches, wrt=(0, 1)))
    entry = text.split("def dmarked_branches")[1]
    assert "# for t in checkpointed(range(n), snapshots=3): 3 snapshots, binomial schedule" in entry
    assert "revolve.run_for(marked_branches_step, " in entry and "3, (h, s), (w,))" in entry
    assert "revolve.backward(marked_branches_step_fwd, marked_branches_step_bwd" in entry
    assert not [ln for ln in entry.splitlines() if ln.lstrip().startswith("for ")]
    step = text.split("def marked_branches_step_fwd")[1].split("def ")[0]
    # the helper cell, small, is inlined (front/helpers.py): its line is the step's own
    assert "np.tanh(h * w)" in step and "cell_fwd" not in step and "if _t1:" in step
    assert "online schedule" in source(grad(cf.marked_while))


def test_checkpoint_option_marks_every_loop_of_the_body():
    g, reference = grad(cf.unmarked_two_loops, checkpoint=2), grad(cf.unmarked_two_loops)
    text = source(g)
    assert text.count("revolve.run_for(") == 2 and "# for _ in range(n): 2 snapshots" in text
    expected = fd.numeric_grad(cf.unmarked_two_loops, [W, H, 7], (0,))[0]
    for _ in range(2):
        np.testing.assert_allclose(g(W, H, 7), reference(W, H, 7), rtol=1e-12)
        fd.assert_close(g(W, H, 7), expected, rtol=1e-6, atol=1e-8)
    assert "revolve" not in source(grad(cf.marked_nested, checkpoint=False))
    with pytest.raises(TypeError, match="checkpoint= takes"):
        grad(cf.unmarked_two_loops, checkpoint=0)


@pytest.mark.parametrize("make", [value_and_grad, vjp], ids=["value_and_grad", "vjp"])
def test_other_entry_points(make):
    extra = (1.5,) if make is vjp else ()
    a = make(cf.marked_branches, wrt=(0, 1))(W, H, 8, *extra)
    b = make(cf.plain_branches, wrt=(0, 1))(W, H, 8, *extra)
    if make is value_and_grad:
        np.testing.assert_allclose(a[0], b[0], rtol=1e-13)
        a, b = a[1], b[1]
    _close(a, b)


def test_a_loop_over_indices_and_a_loop_over_rows_not_differentiated():
    xs = RNG.standard_normal((6, 5))
    got = grad(cf.over_indices, wrt=(0, 1))(W, xs)
    _close(got, grad(cf.over_indices_plain, wrt=(0, 1))(W, xs))
    want = fd.numeric_grad(cf.over_indices_plain, [W, xs], (0,))[0]
    fd.assert_close(grad(cf.over_rows)(W, xs), want, rtol=1e-6, atol=1e-8)


def test_forward_mode_sees_the_identity_and_hvp_keeps_every_step():
    v = RNG.standard_normal(5)
    a, b = jvp(cf.marked_branches)(W, H, 7, v), jvp(cf.plain_branches)(W, H, 7, v)
    _close(a, b)
    assert "revolve" not in source(jvp(cf.marked_branches))
    got = hvp(cf.marked_branches)(W, H, 7, v)
    np.testing.assert_allclose(got, hvp(cf.plain_branches)(W, H, 7, v), rtol=1e-12)
    # against differences of the gradient along v
    g = grad(cf.plain_branches)
    step = 1e-6
    numeric = (g(W + step * v, H, 7) - g(W - step * v, H, 7)) / (2 * step)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-7)


def test_the_strict_array_double_runs_through_the_replay():
    args = (strict(W), strict(H), 9)
    g = grad(cf.marked_nested, wrt=(0, 1))
    for _ in range(2):
        got = g(*args)
        assert all(isinstance(x, StrictArray) for x in got)
        _close(to_numpy(got), grad(cf.plain_nested, wrt=(0, 1))(W, H, 9))


def test_float32_stays_float32():
    u = H.astype(np.float32)
    got = grad(cf.marked_heat)(u, np.float32(0.2), 12)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, grad(cf.plain_heat)(u, np.float32(0.2), 12), rtol=1e-5)


@pytest.mark.parametrize(
    "func,args,wrt,message",
    [
        (cf.breaks, (W, H, 4), 0, "break in a checkpointed loop"),
        (cf.appends, (W, H, 4), 0, "changes 'hs', made before it, in place"),
        (cf.reads_the_index_after, (W, H, 4), 0, "loop variable 't' is read after"),
        (cf.over_rows, (W, np.ones((3, 5))), 1, "over values that depend on the differentiated"),
        (
            cf.unsupported_in_body,
            (W, H, 4),
            0,
            "in the body of this checkpointed loop: no derivative rule",
        ),
    ],
    ids=["break", "append", "index_after", "varied_items", "unsupported_in_body"],
)
def test_what_a_step_cannot_do_is_refused_by_name(func, args, wrt, message):
    with pytest.raises(TranspileError, match=message) as info:
        grad(func, wrt=wrt)(*args)
    assert "checkpointed_funcs.py" in str(info.value)


def _peak(g, *args):
    g(*args)  # compiled and specialized before measuring
    tracemalloc.start()
    try:
        g(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_loop_keeps_a_few_states():
    n, steps = 4_000, 600
    u = np.sin(np.linspace(0.0, 6.0, n))
    state = u.nbytes
    forward = _peak(lambda u, k, s: cf.plain_heat(u, k, s), u, 0.2, steps)
    marked = _peak(grad(cf.heat_20), u, 0.2, steps)
    fewer = _peak(grad(cf.marked_heat), u, 0.2, steps)  # 4 snapshots
    plain = _peak(grad(cf.plain_heat), u, 0.2, steps)
    # 19 snapshots (the first is the argument), one step's saved values (the step's
    # forward returns only the shapes of the values its adjoint reads for their shapes),
    # the adjoint's own arrays and the final state the gradient holds
    assert marked - forward <= 27 * state, (marked - forward) / state
    assert marked - fewer <= 16.5 * state, (marked - fewer) / state  # one per snapshot
    assert plain - forward > 300 * state  # the plain tape holds every step
    np.testing.assert_allclose(
        grad(cf.heat_20)(u, 0.2, steps), grad(cf.plain_heat)(u, 0.2, steps), rtol=1e-12
    )


def test_dask_arrays_run_through_the_replay():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    g = grad(cf.marked_heat)
    u = da.from_array(H, chunks=3)
    want = grad(cf.plain_heat)(H, 0.2, 12)
    with dask.config.set(scheduler="threads"):
        for _ in range(2):
            got = g(u, 0.2, 12)
            assert isinstance(got, da.Array)
            np.testing.assert_allclose(got.compute(), want, rtol=1e-12)


GRADIENT = grad(cf.marked_branches)


def _gradient_norm(w, h):
    return np.sum(GRADIENT(w, h, 5) ** 2)


def test_the_gradient_differentiated_again_goes_through_forward_mode():
    # the replay is a tape: a call of the gradient gets the gradient of its jvp's
    # tangent (``through_tape``), where the marker is the identity
    expected = fd.numeric_grad(_gradient_norm, [W, H], (0,))[0]
    g = grad(_gradient_norm)
    for _ in range(2):
        fd.assert_close(g(W, H), expected, rtol=1e-6, atol=1e-8)
