"""A loop's one-operation value of values at hand is computed again by the reverse step
rather than taped (``transpile/reverse/recompute.py``); where that might not give the
primal's value it is taped as before. Every gradient is checked against central finite
differences, on the first call (the generic code) and on later calls (the shape
variant)."""

import tracemalloc

import fd
import numpy as np
import pytest
import recompute_funcs as R

from transpile import grad, hvp, source

AGAIN = "computed again rather than kept on the tape"


def _args(name, rng):
    W = rng.normal(scale=0.4, size=(3, 3))
    ys = rng.normal(size=(4, 2, 3))
    if name == "residual":
        return W, ys
    if name in ("residual_list", "residual_helper"):
        return W, ys, rng.normal(size=(2, 3))
    if name in ("scaled", "rebound_after", "while_loop"):
        return rng.normal(size=3), rng.normal(size=3)
    if name == "negated":
        return (rng.normal(size=3),)
    return rng.normal(size=3), rng.normal(size=(4, 3))


def _check(f, args, wrt=(0,)):
    g = grad(f, wrt=wrt)
    kept = [a.copy() for a in args]
    want = fd.numeric_grad(f, args, wrt)
    for _ in range(3):  # the first call, then the shape variant
        got = g(*args)
        fd.assert_close(got if isinstance(got, tuple) else (got,), tuple(want), rtol=1e-6)
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are not written
    return source(g)


COMPUTED_AGAIN = [
    ("residual", "d = h - ys[t]"),
    ("residual_list", "= h - ys[t]"),
    ("residual_helper", "= h - ys[t]"),
    ("scaled", "e = h * c"),
    ("negated", "e = -h"),
    ("branch_after", "d = h - ys[t]"),
    ("nested", "d = h - y"),
    ("while_loop", "d = h - y"),
    ("with_break", "d = h - ys[t]"),
    ("calls_loop", "d = h - ys[t]"),  # in the helper's adjoint function
]


@pytest.mark.parametrize("name,line", COMPUTED_AGAIN)
def test_a_value_of_values_at_hand_is_computed_again_not_taped(name, line):
    f = getattr(R, name)
    text = _check(f, _args(name, np.random.default_rng(0)))
    assert AGAIN in text
    made = [ln.strip() for ln in text.splitlines() if ln.strip().endswith(line)]
    made = [ln for ln in made if not ln.startswith("#")]
    assert len(made) == 2, text  # in the loop, and again in its reverse step
    target = made[0].split(" = ")[0]
    assert f"tape.push({target})" not in text and f"{target} = tape.pop()" not in text


TAPED = [
    "sorted_after",  # sorted in place after it: nothing undoes that
    "written_after",  # a slot written after it: its restore comes first
    "out_after",  # out= after it
    "rebound_after",  # an operand rebound after it
    "read_before",  # read in the next step before it is written
    "read_after_loop",  # read by the adjoint of a line before the loop
    "unkept_operand",  # its operand is not on the tape: taping it saves nothing
    "in_branch",  # made in a branch of the body
    "counted_after",  # its index counted after it
    "sorted_after_loop",  # the rows the loop reads sorted in place after it
]


@pytest.mark.parametrize("name", TAPED)
def test_a_value_that_might_differ_when_computed_again_is_taped(name):
    f = getattr(R, name)
    text = _check(f, _args(name, np.random.default_rng(1)))
    assert AGAIN not in text, text


def test_the_residual_is_not_taped_in_the_variant_either():
    args = _args("residual", np.random.default_rng(2))
    g = grad(R.residual, wrt=(0,))
    g(*args)
    g(*args)  # builds the shape variant
    variant = source(g, *args)
    assert variant.count("tape.push(") == 1, variant  # h alone
    assert "d = h - ys[t]" in variant or "h - ys[t]" in variant


def test_gradients_with_respect_to_every_differentiable_argument():
    args = _args("residual_list", np.random.default_rng(3))
    _check(R.residual_list, args, wrt=(0, 1, 2))


def test_float32_in_gives_float32_out():
    rng = np.random.default_rng(4)
    W, ys = (a.astype(np.float32) for a in _args("residual", rng))
    dW = grad(R.residual)(W, ys)
    assert dW.dtype == np.float32
    want = fd.numeric_grad(R.residual, (W, ys), (0,))[0]
    np.testing.assert_allclose(dW, want, rtol=2e-3, atol=2e-4)


def test_hessian_vector_product_through_the_recomputed_residual():
    rng = np.random.default_rng(5)
    W, ys = _args("residual", rng)
    v = rng.normal(size=W.shape)
    got = hvp(R.residual)(W, ys, v)
    g = grad(R.residual)
    eps = 1e-5
    want = (g(W + eps * v, ys) - g(W - eps * v, ys)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def _peak_bytes(g, args):
    g(*args)
    g(*args)  # the variant, built
    tracemalloc.start()
    try:
        g(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_tape_grows_by_one_state_per_step_not_two():
    rng = np.random.default_rng(6)
    g = grad(R.residual)
    batch, hidden = 64, 32
    W = rng.normal(scale=0.3, size=(hidden, hidden))
    peaks = {}
    for steps in (40, 80):
        ys = rng.normal(size=(steps, batch, hidden))
        peaks[steps] = _peak_bytes(g, (W, ys))
    per_step = (peaks[80] - peaks[40]) / 40
    state = batch * hidden * 8
    assert 0.5 * state < per_step < 1.5 * state, (per_step, state)


def test_grad_of_grad_through_the_recomputed_residual():
    first = grad(R.scalar_residual)
    assert AGAIN in source(first)
    second = grad(grad(R.scalar_residual))
    for x in (0.3, 0.31, -0.8):  # a first and later calls
        want = fd.numeric_grad(first, (x,), (0,))[0]
        assert np.isclose(second(x), want, rtol=1e-6, atol=1e-8), x
        assert np.isclose(first(x), fd.numeric_grad(R.scalar_residual, (x,), (0,))[0])
