"""Second derivatives of functions with loops (issue 9): a gradient that records a tape
is differentiated again by reverse over forward (``through_tape``): ``grad(grad(f))``,
``grad`` of a function calling such a gradient, ``hvp``, ``hessian``, ``jvp`` and
``jacobian`` of a gradient, against closed forms and central finite differences of the
first gradient (float64), on a first and a later call."""

import numpy as np
import pytest

import tests.higher_order_funcs as hf
from tests.fd import numeric_grad, numeric_jvp
from transpile import TranspileError, grad, hessian, hvp, jacobian, jvp, source, value_and_grad

RTOL, ATOL = 1e-6, 1e-8


def _rng(seed):
    return np.random.default_rng(seed)


def _fd_hvp(f, args, wrt, v):
    """The directional derivative of the first gradient along ``v``."""
    first = grad(f, wrt=wrt)
    return numeric_jvp(lambda *a: first(*a), args, (wrt,), (v,))


def test_grad_of_grad_of_a_loop():
    second = grad(grad(hf.looped))
    for x in (0.3, 0.31, -0.8):  # a first and later calls
        expected = numeric_grad(grad(hf.looped), (x,), (0,))[0]
        assert np.isclose(second(x), expected, rtol=RTOL, atol=ATOL), x
    with pytest.raises(TranspileError, match="third derivative through a loop"):
        grad(grad(grad(hf.looped)))


def test_grad_of_a_function_calling_a_loop_gradient():
    g = grad(hf.calls_looped_gradient)
    for x in (0.4, 0.45):
        expected = numeric_grad(hf.calls_looped_gradient, (x,), (0,))[0]
        assert np.isclose(g(x), expected, rtol=RTOL, atol=ATOL)
    rng = _rng(3)
    x, a = rng.normal(size=4) * 0.3, 0.7
    both = grad(hf.calls_while_break_gradient, wrt=(0, 1))
    for call in range(2):
        expected = numeric_grad(hf.calls_while_break_gradient, (x, a), (0, 1))
        got = both(x, a)
        assert np.allclose(got[0], expected[0], rtol=RTOL, atol=ATOL), call
        assert np.isclose(got[1], expected[1], rtol=RTOL, atol=ATOL), call


def test_hessian_of_a_loop_matches_the_closed_form():
    h = hessian(hf.power_loop)
    for x in (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])):
        assert np.allclose(h(x), np.diag(12.0 * x**2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_hvp_of_a_while_loop_with_break(seed):
    rng = _rng(seed)
    product = hvp(hf.while_break)
    for call in range(2):
        x, v = rng.normal(size=5) * 0.4, rng.normal(size=5)
        got = product(x, 0.9, v)
        assert np.allclose(got, _fd_hvp(hf.while_break, (x, 0.9), 0, v), rtol=RTOL, atol=ATOL)


def test_hvp_with_a_tuple_wrt_through_a_loop():
    rng = _rng(5)
    x, W = rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5
    vx, vW = rng.normal(size=3), rng.normal(size=(3, 3))
    product = hvp(hf.rnn_loss, wrt=(0, 1))
    first = grad(hf.rnn_loss, wrt=(0, 1))
    expected = numeric_jvp(
        lambda *a: np.concatenate([g.ravel() for g in first(*a)]), (x, W), (0, 1), (vx, vW)
    )
    for call in range(2):
        hx, hW = product(x, W, (vx, vW))
        assert np.allclose(np.concatenate([hx, hW.ravel()]), expected, rtol=RTOL, atol=ATOL)


def test_hessian_of_a_loop_is_symmetric_and_matches_the_jacobian_of_the_gradient():
    x = _rng(7).normal(size=4)
    h = hessian(hf.early_in_loop)(x)
    assert np.allclose(h, h.T, rtol=1e-10, atol=1e-12)
    for mode in ("forward", "reverse"):
        assert np.allclose(jacobian(grad(hf.early_in_loop), mode=mode)(x), h, rtol=1e-10)
    expected = np.stack([_fd_hvp(hf.early_in_loop, (x,), 0, e) for e in np.eye(4)], axis=1)
    assert np.allclose(h, expected, rtol=RTOL, atol=ATOL)


def test_jvp_of_a_loop_gradient_is_the_hvp():
    rng = _rng(8)
    x, v = rng.normal(size=5) * 0.4, rng.normal(size=5)
    value, tangent = jvp(grad(hf.while_break))(x, 0.9, v)
    assert np.allclose(value, grad(hf.while_break)(x, 0.9))
    assert np.allclose(tangent, hvp(hf.while_break)(x, 0.9, v), rtol=1e-10)


def test_mixed_second_derivative_through_a_loop():
    # d/da of d/dx sum(y*y): the other argument of the gradient
    rng = _rng(9)
    x = rng.normal(size=4) * 0.4
    mixed = grad(lambda x, a: np.sum(hf.dwhile_break(x, a)), wrt=1)
    first = grad(hf.while_break)
    for a in (0.9, 0.8):
        expected = numeric_grad(lambda a_: np.sum(first(x, a_)), (a,), (0,))[0]
        assert np.isclose(mixed(x, a), expected, rtol=RTOL, atol=ATOL)


def test_source_of_a_second_derivative_through_a_tape_reads_as_code():
    text = source(grad(grad(hf.looped)))
    assert "dlooped_vjp_x(" in text and "# grad of:" in text
    compile(text, "<test>", "exec")


def test_value_and_grad_with_a_tape_is_still_refused_clearly():
    with pytest.raises(TranspileError, match="loop.*tape.*not supported yet"):
        grad(value_and_grad(hf.looped))


def test_concurrent_first_calls_of_hvp_through_a_loop():
    # the rule for a tape gradient and its second-order gradients are made lazily,
    # under a lock: threads racing on the first call all get the right product
    import threading

    product = hvp(hf.power_loop, mode="reverse")
    xs = [np.array([0.5, -1.0, 2.0]) * (k + 1) for k in range(6)]
    v = np.array([1.0, 0.5, -2.0])
    got = [None] * len(xs)

    def run(k):
        got[k] = product(xs[k], v)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, g in zip(xs, got):
        np.testing.assert_allclose(g, 12.0 * x**2 * v, rtol=1e-12)
