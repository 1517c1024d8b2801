"""Small helpers inlined at their calls (``transpile/front/helpers.py``): each
gradient against central finite differences, on its first call and a later one, and
what the generated source shows where a helper is, or is not, inlined."""

import threading

import fd
import inline_funcs as F
import inline_other
import numpy as np
import pytest

from transpile import grad, jvp, source

RNG = np.random.default_rng(24)
X = RNG.standard_normal(5)


def check(f, args, wrt=(0,), rtol=1e-6, atol=1e-9):
    """The gradient, twice (the generic code, then a shape variant), against central
    differences; the generated source of the second call."""
    g = grad(f, wrt=wrt if len(wrt) > 1 else wrt[0])
    expected = fd.numeric_grad(f, args, wrt)
    for _ in range(3):
        got = g(*args)
        fd.assert_close(got if len(wrt) > 1 else (got,), expected, rtol=rtol, atol=atol)
    return source(g, *args)


def rnn_args():
    Wx = RNG.standard_normal((3, 4)) / 2.0
    Wh = RNG.standard_normal((4, 4)) / 4.0
    b = RNG.standard_normal(4) * 0.1
    xs, ys = RNG.standard_normal((6, 2, 3)), RNG.standard_normal((6, 2, 4))
    return Wx, Wh, b, xs, ys, np.zeros((2, 4))


def test_a_step_helper_in_a_loop_is_inlined_into_the_loop():
    text = check(F.rnn, rnn_args(), wrt=(0, 1, 2))
    assert "_step_fwd" not in text and "_step_bwd" not in text
    assert "np.tanh(x @ Wx + h @ Wh + b)" in text
    assert "# grad of: h = _step(h, xs[t], Wx, Wh, b)" in text  # located at the call


def test_a_default_argument_is_written_in_and_a_keyword_overrides_it():
    text = check(F.with_default, (X,))
    assert "_damped_fwd" not in text
    for rate in ("0.25", "2.0", "0.5"):
        assert rate in text


def test_a_helper_called_twice_in_one_expression():
    text = check(F.twice_in_one_expression, (X,))
    assert "_square_sin_fwd" not in text


@pytest.mark.parametrize("n", [0, 1, 4])
def test_helpers_in_a_branch_inside_a_loop(n):
    for x in (X, -np.abs(X), np.abs(X)):
        text = check(F.in_a_branch_and_a_loop, (x, n))
        assert "_fwd" not in text


def test_a_helper_calling_a_helper_is_inlined_in_turn():
    text = check(F.nested, (X, 0.7), wrt=(0, 1))
    assert "_fwd" not in text


def test_a_stop_gradient_argument_stays_a_constant():
    w, x = X, RNG.standard_normal(5)
    for _ in range(2):
        got = grad(F.stopped_argument)(w, x)
        np.testing.assert_allclose(got, np.sin(w * x) ** 2, rtol=1e-13)  # closed form


def test_a_helper_with_a_users_rule_keeps_the_rule():
    x = np.array([-0.9, -0.1, 0.2, 0.5, 0.95])
    for _ in range(2):
        got = grad(F.with_rule)(x)
        # the rule passes the cotangent straight through the clip: 3 x + clip(3 x)
        np.testing.assert_allclose(got, 3.0 * x + np.clip(3.0 * x, -1.0, 1.0), rtol=1e-13)
    assert "_through(" in source(grad(F.with_rule))


def test_a_checkpointed_helper_is_not_inlined():
    text = check(F.with_marked, (X,))
    assert "_marked_fwd" in text


@pytest.mark.parametrize("n", [0, 3])
def test_a_recursive_helper_stays_a_recursive_pair(n):
    text = check(F.recursive, (X, n))
    assert "_halving_fwd" in text


def test_a_helper_writing_into_an_array_is_not_inlined():
    text = check(F.writes_into_an_array, (X,))
    assert "_zeroes_first_fwd" in text


def test_a_helper_reading_a_number_of_its_own_module_is_not_inlined():
    # inline_other.SCALE is 3.0, this module's is 0.5: the gradient is 2 * 3 x + 0.5
    for _ in range(2):
        np.testing.assert_allclose(grad(F.other_module_data)(X), 6.0 * X + 0.5, rtol=1e-13)
    check(F.other_module_data, (X,))
    assert "scaled_fwd" in source(grad(F.other_module_data))


def test_a_helper_of_another_module_reading_the_same_functions_is_inlined():
    text = check(F.other_module_code, (X,))
    assert "layer_fwd" not in text and "softplus_fwd" not in text


def test_rebinding_a_function_a_foreign_helper_reads_transpiles_again():
    g = grad(F.other_module_code)
    before = g(X)
    original = inline_other.act
    try:
        inline_other.act = np.tanh  # layer now calls tanh; the caller's act is still sin
        expected = fd.numeric_grad(F.other_module_code, (X,), (0,))
        fd.assert_close((g(X),), expected, rtol=1e-6, atol=1e-9)
    finally:
        inline_other.act = original
    np.testing.assert_allclose(g(X), before, rtol=1e-13)


def test_rebinding_the_helper_transpiles_again():
    g = grad(F.twice_in_one_expression)
    before = g(X)
    original = F._square_sin
    try:
        F._square_sin = lambda x: np.sin(x) * 3.0
        expected = fd.numeric_grad(F.twice_in_one_expression, (X,), (0,))
        fd.assert_close((g(X),), expected, rtol=1e-6, atol=1e-9)
    finally:
        F._square_sin = original
    np.testing.assert_allclose(g(X), before, rtol=1e-13)


def test_a_closure_helper_is_not_inlined():
    f = F.make_closure_helper(1.5)
    text = check(f, (X,))
    assert "helper_fwd" in text


def test_a_list_popped_around_a_helper_call_pops_in_order():
    check(F.pops_in_order, (X,))


def test_forward_mode_through_inlined_helpers():
    t = RNG.standard_normal(5)
    for f in (F.twice_in_one_expression, F.nested):
        args = (X, 0.7)[: 2 if f is F.nested else 1]
        h = jvp(f)
        want = fd.numeric_jvp(f, args, (0,), (t,))
        for _ in range(2):
            out, tangent = h(*args, t)
            np.testing.assert_allclose(out, f(*args), rtol=1e-13)
            np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-9)


def test_helpers_called_in_a_try_block_stay_callee_pairs():
    text = check(F.in_a_try, (X,))  # a try block becomes a marked region: not inlined
    assert "_square_sin_fwd" in text and "_damped_fwd" in text


def test_a_helper_given_a_function_stays_a_callee_pair():
    text = check(F.functions_passed, (X,))
    assert "_apply_fwd" in text


def test_first_calls_racing_in_threads_get_the_inlined_gradient():
    args = rnn_args()
    expected = fd.numeric_grad(F.rnn, args, (0, 1, 2))
    g = grad(F.rnn, wrt=(0, 1, 2))
    barrier = threading.Barrier(4)
    results = [None] * 4

    def run(k):
        barrier.wait()
        results[k] = [g(*args) for _ in range(3)]  # the first, then the variant

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for calls in results:
        for got in calls:
            fd.assert_close(got, expected, rtol=1e-6, atol=1e-9)
