"""The tape of a loop grows linearly with the trip count, by what the adjoint needs."""

import tracemalloc

import fd
import numpy as np
from memory_funcs import rnn_loss

from transpile import grad

BATCH, HIDDEN, FEATURES = 16, 32, 8


def _inputs(steps, rng):
    W = rng.normal(scale=0.3, size=(HIDDEN, HIDDEN))
    U = rng.normal(scale=0.3, size=(FEATURES, HIDDEN))
    b = rng.normal(scale=0.1, size=HIDDEN)
    xs = rng.normal(size=(steps, BATCH, FEATURES))
    h0 = rng.normal(size=(BATCH, HIDDEN))
    return W, U, b, xs, h0


def _peak_bytes(g, args):
    g(*args)  # warm up: first-call allocations are not the tape
    tracemalloc.start()
    try:
        g(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_rnn_tape_grows_linearly_by_one_state_per_step():
    rng = np.random.default_rng(0)
    g = grad(rnn_loss, wrt=(0, 1, 2))
    peaks = {t: _peak_bytes(g, _inputs(t, rng)) for t in (25, 50, 100)}
    step_a = (peaks[50] - peaks[25]) / 25
    step_b = (peaks[100] - peaks[50]) / 50
    state = BATCH * HIDDEN * 8
    # linear: the same cost per step over both ranges
    assert abs(step_a - step_b) < 0.25 * state, peaks
    # economical: about one hidden state per step (h), not every temporary
    assert 0.5 * state < step_b < 2.0 * state, (step_b, state)


def test_rnn_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    args = _inputs(6, rng)
    got = grad(rnn_loss, wrt=(0, 1, 2))(*args)
    expected = fd.numeric_grad(rnn_loss, args, (0, 1, 2))
    fd.assert_close(got, expected, rtol=1e-6, atol=1e-8)
