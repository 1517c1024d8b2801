"""Shape variants of programs written as users write them (issue 24, deliverable 4).

``np.dot`` as well as ``@``, a running scalar loss and a list of per-step losses, a
state made inside the function, a multiplication by ``1.0``, a division by a Python
float and a constant ``m = 1.0``, a chain of ufuncs written naturally. Each gradient
is checked against finite differences and against the generic gradient (the first
call runs the generic code, later ones the variant), and each variant's source for
what specialization removes from it (not for its speed: ``benchmarks/`` times them).
"""

import re

import fd
import gast
import numpy as np
import pytest

from transpile import grad, source
from transpile.backend import algebra, probe


def chain(x):
    a = np.sin(x) * np.cos(x)
    b = np.exp(-(x * x) / 2.0)
    c = np.tanh(a + b)
    d = np.sqrt(1.0 + c * c)
    e = np.log1p(d) - x
    g = np.arctan(e) * 1.0
    return np.sum(g * d)


def quotient_chain(x):  # benchmarks/problems.py's ufunc_chain: the sum of a quotient
    a = np.sin(x)
    b = np.exp(a)
    c = np.tanh(b)
    d = np.log1p(x * x)
    e = np.sqrt(d + 1.0)
    f = np.cos(e) * c
    g = np.arctan(f - x)
    return np.sum(g / (1.0 + a * a))


def clipped_chain(x):  # d is given to ops.winner (np.maximum's weight), which writes nothing
    c = np.cos(np.sin(x))
    e = np.tanh(x * c)
    d = np.log1p(e * e) / 2.0
    g = np.maximum(d, 0.1) * np.exp(-(x * x))
    return np.sum(g * d)


def rnn_dot(Wx, Wh, b, xs, ys):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], Wx) + np.dot(h, Wh) + b)
        d = h - ys[t]
        loss = loss + np.sum(d * d)
    return loss


def rnn_list(Wx, Wh, b, xs, ys, h0):
    h = h0
    losses = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        losses.append(np.mean((h - ys[t]) ** 2))
    return sum(losses) / len(losses)


def rnn_step(h, x, Wx, Wh, b):
    return np.tanh(x @ Wx + h @ Wh + b)


def rnn_helper(Wx, Wh, b, xs, ys, h0):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = rnn_step(h, xs[t], Wx, Wh, b)
        loss = loss + np.mean((h - ys[t]) ** 2)
    return loss / xs.shape[0]


def oscillator(x, v, k, c):
    m = 1.0
    dt = 0.05
    a = -(k * x + c * v) / m
    v1 = v + dt * a
    x1 = x + dt * v1
    a1 = -(k * x1 + c * v1) / m
    v2 = v1 + dt * a1
    x2 = x1 + dt * v2
    return 0.5 * m * v2 * v2 + 0.5 * k * x2 * x2


def mlp_dot(W1, b1, W2, b2, x, y):
    h = np.tanh(np.dot(x, W1) + b1)
    out = np.dot(h, W2) + b2
    return np.mean((out - y) ** 2)


def rnn_args(rng, steps=4, batch=3, d=2, hidden=5, h0=False):
    args = (
        rng.normal(scale=0.7, size=(d, hidden)),
        rng.normal(scale=0.3, size=(hidden, hidden)),
        rng.normal(scale=0.1, size=hidden),
        rng.normal(size=(steps, batch, d)),
        rng.normal(scale=0.5, size=(steps, batch, hidden)),
    )
    return args + ((rng.normal(scale=0.2, size=(batch, hidden)),) if h0 else ())


def mlp_args(rng):
    return (
        rng.normal(size=(3, 4)),
        rng.normal(size=4),
        rng.normal(size=(4, 2)),
        rng.normal(size=2),
        rng.normal(size=(5, 3)),
        rng.normal(size=(5, 2)),
    )


PROGRAMS = [
    (chain, (0,), lambda rng: (rng.uniform(-1.0, 1.0, 7),)),
    (quotient_chain, (0,), lambda rng: (rng.uniform(-1.0, 1.0, 7),)),
    (clipped_chain, (0,), lambda rng: (rng.uniform(-1.0, 1.0, 7),)),
    (rnn_dot, (0, 1, 2), rnn_args),
    (rnn_list, (0, 1, 2), lambda rng: rnn_args(rng, h0=True)),
    (rnn_helper, (0, 1, 2), lambda rng: rnn_args(rng, h0=True)),
    (oscillator, (0, 1, 2, 3), lambda rng: tuple(float(v) for v in rng.uniform(0.2, 1.5, 4))),
    (mlp_dot, (0, 1, 2, 3), mlp_args),
]


@pytest.mark.parametrize("func, wrt, make", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_variant_equals_the_generic_gradient_and_finite_differences(func, wrt, make):
    g = grad(func, wrt=wrt)
    rng = np.random.default_rng(24)
    for args in (make(rng), make(rng)):  # a second input of the same signature
        want = fd.numeric_grad(func, args, wrt)
        first = g(*args)  # a new signature: the generic code (the probe)
        fd.assert_close(first, want, rtol=1e-6, atol=1e-9)
        for _ in range(2):  # then the variant
            later = g(*args)
            fd.assert_close(later, want, rtol=1e-6, atol=1e-9)
            fd.assert_close(later, first, rtol=1e-13, atol=1e-15)


def code_of(g, args):
    """The variant's lines, without comments."""
    special = source(g, *args)
    assert special != source(g), "no variant was made"
    return [line.strip() for line in special.splitlines() if not line.strip().startswith("#")]


def test_chain_variant_makes_no_array_to_multiply_by_one_nor_recomputes_sin_and_cos():
    args = (np.random.default_rng(0).uniform(-1.0, 1.0, 50),)
    code = code_of(grad(chain), args)
    text = "\n".join(code)
    assert "1.0 *" not in text and "* 1.0" not in text, text  # the seed of g * d
    assert text.count("np.sin(x)") == 1 and text.count("np.cos(x)") == 1, text


def test_the_seed_of_a_sum_read_for_its_shape_still_folds_a_product_by_one():
    """The generic gradient passes the summed array to ``ops.unreduce(1.0, _t5)`` for its
    shape only: that is no write into it, so ``1.0 * _t5`` (the seed times the value it
    was read with) is ``_t5`` itself in the variant, not a new array of its size."""
    g = grad(quotient_chain)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 50)
    assert "ops.unreduce(1.0, _t5)" in source(g)
    text = "\n".join(code_of(g, (x,)))
    assert "1.0 *" not in text and "* 1.0" not in text and "ops.unreduce" not in text, text
    want = fd.numeric_grad(quotient_chain, (x,), (0,))
    for _ in range(2):  # the variant, twice
        fd.assert_close((g(x),), want, rtol=1e-6, atol=1e-9)


def test_an_array_given_to_a_fresh_helper_still_folds_a_product_by_one():
    """``d`` is read by ``ops.winner(d, 0.1)``, which makes a new array and writes into
    none: ``dg = 1.0 * d`` (a new array of d's size) is ``d`` itself in the variant."""
    g = grad(clipped_chain)
    x = np.random.default_rng(2).uniform(-1.0, 1.0, 50)
    assert "ops.winner(d, 0.1)" in source(g)
    text = "\n".join(code_of(g, (x,)))
    assert "1.0 *" not in text and "* 1.0" not in text, text
    want = fd.numeric_grad(clipped_chain, (x,), (0,))
    for _ in range(2):  # the variant, twice
        fd.assert_close((g(x),), want, rtol=1e-6, atol=1e-9)


def test_rnn_with_np_dot_and_a_running_loss_is_specialized_in_its_loop():
    args = rnn_args(np.random.default_rng(0))
    g = grad(rnn_dot, wrt=(0, 1, 2))
    generic = source(g)
    assert "ops.dot_left" in generic and "ops.unreduce" in generic and "shape_of" in generic
    text = "\n".join(code_of(g, args))
    for helper in ("ops.dot_left", "ops.dot_right", "ops.unreduce", "shape_of", "ops.filled"):
        assert helper not in text, text
    assert "g2 @ Wh.T" in text or "@ Wh.T" in text, text
    pushes = [line for line in text.splitlines() if "tape.push(" in line]
    # xs[t] and h: what the adjoint reads (d = h - ys[t] it computes again)
    assert len(pushes) == 2, text
    assert "d = h - ys[t]" in text.split("reversed(")[1], text


def test_rnn_with_a_list_of_losses_is_specialized():
    args = rnn_args(np.random.default_rng(0), h0=True)
    g = grad(rnn_list, wrt=(0, 1, 2))
    text = "\n".join(code_of(g, args))
    for helper in ("ops.unmean", "ops.unbroadcast", "ops.matmul_left", "shape_of", "np.mean"):
        assert helper not in text, text
    assert "losses.append(np.add.reduce(" in text, text


def test_a_mean_s_factor_multiplies_the_step_s_scalar_adjoint_not_the_array():
    """Each step's loss adjoint ``g`` (a number popped from the list's adjoint) times the
    residual, times the mean's ``2/n``: ``g * (2/n)`` is a number, so the factor goes on
    it rather than on the product, which would be a second pass over the array."""
    args = rnn_args(np.random.default_rng(1), h0=True)
    g = grad(rnn_list, wrt=(0, 1, 2))
    want = fd.numeric_grad(rnn_list, args, (0, 1, 2))
    for _ in range(3):  # the generic code, then the variant
        fd.assert_close(g(*args), tuple(want), rtol=1e-6)
    text = "\n".join(code_of(g, args))
    factor = repr(2.0 / 15)  # batch 3 by hidden 5
    line = rf"dh = dh \+ \w+ \* {re.escape(factor)} \* _t\d+$"
    assert re.search(line, text, re.MULTILINE), text


def test_python_float_code_computes_no_loss_and_no_division_by_one():
    args = (0.7, -0.3, 2.0, 0.4)
    text = "\n".join(code_of(grad(oscillator, wrt=(0, 1, 2, 3)), args))
    assert "ops.seed" not in text and "/ 1.0" not in text and "1.0 *" not in text, text


def test_multiplying_an_integer_array_by_one_still_makes_floats():
    def weighted(x, n):
        return np.sum(x * n)

    g = grad(weighted)
    x, n = np.linspace(0.0, 1.0, 6), np.arange(6)
    for _ in range(3):
        dx = g(x, n)
        assert dx.dtype == np.float64
        np.testing.assert_array_equal(dx, n.astype(np.float64))
        assert not np.shares_memory(dx, n)


def test_a_folded_product_by_one_is_not_the_argument_returned():
    def linear(x, w):
        return np.sum(x * w)

    g = grad(linear, wrt=(0, 1))
    x, w = np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 5)
    for _ in range(3):
        dx, dw = g(x, w)
        np.testing.assert_array_equal(dx, w)
        np.testing.assert_array_equal(dw, x)
        assert not np.shares_memory(dx, w) and not np.shares_memory(dw, x)
        dx[...] = 0.0  # a result the caller may write into, sharing nothing
    np.testing.assert_array_equal(w, np.linspace(1.0, 2.0, 5))


def test_a_loop_state_that_changes_shape_keeps_its_lines_generic():
    # h starts as a vector and is a matrix after the first step: what the loop carries
    # differs between iterations, so nothing is assumed of it there
    def grows(W, xs):
        h = np.zeros(W.shape[0])
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] + h @ W)
        return np.sum(h * h)

    g = grad(grows, wrt=(0,))
    rng = np.random.default_rng(5)
    args = (rng.normal(scale=0.5, size=(3, 3)), rng.normal(size=(4, 2, 3)))
    want = fd.numeric_grad(grows, args, (0,))
    for _ in range(3):
        fd.assert_close(g(*args), want, rtol=1e-6, atol=1e-9)


def test_observations_in_a_loop_merge_per_iteration():
    seen = {}
    probe.observe(seen, 3, np.zeros(2))
    probe.observe(seen, 3, np.zeros(5))  # the first statement at the top is kept
    probe.observe(seen, (4, 0), np.zeros(2))
    probe.observe(seen, (4, 0), np.ones(2))  # same shape, dtype, type: agrees
    probe.observe(seen, (4, 1), np.zeros(2))
    probe.observe(seen, (4, 1), np.zeros(3))  # differs: nothing known
    probe.observe(seen, (4, 1), np.zeros(2))
    assert seen[3][1] == (2,) and seen[(4, 0)][1] == (2,) and seen[(4, 1)] is None


def _body(text):
    return gast.parse(text).body


def _printed(body):
    return [gast.unparse(s).strip() for s in body]


def test_held_calls_read_a_held_value_only_where_it_is_unchanged():
    body = algebra.held_calls(
        _body(
            "s = np.sin(x)\n"
            "c = np.cos(x)\n"
            "c += 1.0\n"  # written into: not a held value of np.cos(x)
            "u = np.tanh(y)\n"
            "y = y * 2.0\n"  # y bound again: np.tanh(y) may not be u's value
            "z = np.exp(x)\n"
            "np.multiply(z, 2.0, out=z)\n"  # written through out=
            "r = np.sin(x) * np.cos(x) + np.tanh(y) + np.exp(x)\n"
        ),
        "np",
        "ops",
    )
    assert _printed(body)[-1] == "r = s * np.cos(x) + np.tanh(y) + np.exp(x)"


def test_held_calls_make_no_alias_that_is_then_written_into():
    """``b = np.exp(x)`` after ``a = np.exp(x)`` would read ``b = a``; a write into ``b``
    (directly, or through a copy of it) would then change ``a``."""
    body = algebra.held_calls(
        _body(
            "a = np.exp(x)\n"
            "b = np.exp(x)\n"
            "b[0] = 0.0\n"  # written into: stays a computation of its own
            "c = np.exp(x)\n"
            "w = c\n"
            "w[1] = 0.0\n"  # written into through a copy
            "e = np.exp(x)\n"  # read only: the held value
            "f = np.exp(x) * 2.0\n"  # a call inside another: a read of the held value
        ),
        "np",
        "ops",
    )
    assert _printed(body)[1] == "b = np.exp(x)"
    assert _printed(body)[3] == "c = np.exp(x)"
    assert _printed(body)[6:] == ["e = a", "f = a * 2.0"]


def same_ufunc_then_written_into(x, y):
    a = np.exp(x)
    b = np.exp(x)
    b[0] = 0.0
    c = np.sin(a) * y
    return np.sum(c + b * b)


def test_a_variant_with_a_recomputed_value_written_into_matches_finite_differences():
    """The case above in a program: the variant (third call) read ``b = a``, so
    ``b[0] = 0.0`` zeroed ``a[0]`` before ``np.sin(a)``'s adjoint read it: dx[0] came
    out 1.105 (finite differences: 0.496) and dy[0] 0 (0.894)."""
    x, y = np.linspace(0.1, 0.5, 4), np.linspace(1.0, 2.0, 4)
    g = grad(same_ufunc_then_written_into, wrt=(0, 1))
    want = fd.numeric_grad(same_ufunc_then_written_into, (x, y), (0, 1))
    for _ in range(3):  # generic, probe, variant
        got = g(x, y)
        for a, b in zip(got, want):
            fd.assert_close(a, b, rtol=1e-6, atol=1e-9)
    assert source(g, x, y) != source(g)  # a variant was made and ran
