"""``checkpoint(fn)``: a helper's call keeps none of its intermediate values; the backward
sweep runs its forward function again. Gradients equal the unmarked helper's and central
differences (first and later call, every entry point); the primal sweep calls the helper
as written; a loop's tape holds the helper's input alone, so the peak memory of a long
loop's gradient falls (measured with tracemalloc, not time)."""

import tracemalloc

import checkpoint_funcs as cf
import fd
import numpy as np
import pytest

from transpile import grad, hvp, jvp, source, value_and_grad, vjp

RNG = np.random.default_rng(5)
W, H = RNG.standard_normal(6) * 0.8, RNG.standard_normal(6)


@pytest.mark.parametrize(
    "marked,plain,args",
    [
        (cf.marked_loop, cf.plain_loop, (W, H, 4)),
        (cf.marked_straight, cf.plain_straight, (W, H)),
    ],
    ids=["loop", "straight"],
)
def test_gradient_equals_the_unmarked_helpers(marked, plain, args):
    g, reference = grad(marked, wrt=(0, 1)), grad(plain, wrt=(0, 1))
    for _ in range(2):
        got, want = g(*args), reference(*args)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_gradient_against_differences():
    # finite differences see stop_gradient as the identity: the stopped term's value is
    # held at what the call computed, as the gradient holds it
    def held(w, h, mean_c):
        a = h * w
        b = np.tanh(a)
        c = np.sin(b) + b * a
        return np.sum((c + 0.1 * mean_c) * np.arange(6.0))

    mean_c = np.mean(np.sin(np.tanh(H * W)) + np.tanh(H * W) * H * W)
    expected = fd.numeric_grad(held, [W, H, mean_c], (0, 1))
    for _ in range(2):
        got = vjp(cf.marked_vector, wrt=(0, 1))(W, H, np.arange(6.0) / 2.0)
        fd.assert_close(tuple(got), expected, rtol=1e-6, atol=1e-8)


def test_the_primal_sweep_calls_the_helper_as_written():
    text = source(grad(cf.marked_loop))
    loop = text.split("def dmarked_loop")[1]
    forward_part, backward_part = loop.split("for _ in reversed")
    assert "marked_step(h, w)" in forward_part and "marked_step_fwd" not in forward_part
    assert "marked_step_fwd(h, w)[1]" in backward_part
    # the unmarked helper, small, is inlined: its lines are the loop's, saved on its tape
    plain = source(grad(cf.plain_loop))
    assert "plain_step_fwd" not in plain and "tape.push(a)" in plain.split("for _ in reversed")[0]


@pytest.mark.parametrize("make", [value_and_grad, vjp], ids=["value_and_grad", "vjp"])
def test_other_entry_points(make):
    args = (W, H, 3) if make is value_and_grad else (W, H)
    marked = cf.marked_loop if make is value_and_grad else cf.marked_vector
    plain = cf.plain_loop if make is value_and_grad else cf.plain_vector
    extra = () if make is value_and_grad else (np.arange(6.0),)
    for _ in range(2):
        a, b = make(marked)(*args, *extra), make(plain)(*args, *extra)
        for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_allclose(p, q, rtol=1e-13)


def test_forward_mode_and_hvp_are_the_unmarked_helpers():
    v = RNG.standard_normal(6)
    a, b = jvp(cf.marked_loop)(W, H, 3, v), jvp(cf.plain_loop)(W, H, 3, v)
    np.testing.assert_allclose(a, b, rtol=1e-13)
    np.testing.assert_allclose(
        hvp(cf.marked_straight)(W, H, v), hvp(cf.plain_straight)(W, H, v), rtol=1e-12
    )


def test_a_marked_lambda():
    g = grad(lambda w, h: np.sum(cf.step(h, w)))
    np.testing.assert_allclose(g(W, H), grad(lambda w, h: np.sum(cf.plain_step(h, w)))(W, H))


def _peak(g, *args):
    g(*args)  # compiled and specialized before measuring
    tracemalloc.start()
    try:
        g(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_loop_keeps_only_the_helpers_inputs():
    w, h = RNG.standard_normal(20_000) * 0.5, RNG.standard_normal(20_000)
    marked = _peak(grad(cf.marked_loop), w, h, 40)
    plain = _peak(grad(cf.plain_loop), w, h, 40)
    # per step, the plain tape holds a, b and c's inputs (4 arrays); the marked one h
    assert marked < 0.5 * plain, (marked, plain)
