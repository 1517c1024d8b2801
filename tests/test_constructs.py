"""Lambdas, local functions, comprehensions, generators, ``map`` and growing dicts:
each gradient against central finite differences, on a first and a later call."""

import threading

import construct_funcs as C
import fd
import numpy as np
import pytest
from variants import assert_grad_matches_fd, call_twice

from transpile import grad, source


def _rng(seed):
    return np.random.default_rng(seed)


def vec(n=4, seed=0):
    return _rng(seed).uniform(-0.8, 0.8, n)


CASES = [
    (C.lambda_bound, lambda: (vec(),), 0),
    (C.lambda_called_in_loop, lambda: (vec(),), 0),
    (C.lambda_inline, lambda: (vec(),), 0),
    (C.lambda_late_binding, lambda: (vec(),), 0),
    (C.lambda_default, lambda: (vec(),), 0),
    (C.lambda_arguments_swapped, lambda: (vec(seed=1), vec(seed=2)), (0, 1)),
    (C.lambda_of_expression_arguments, lambda: (vec(),), 0),
    (C.nested_closure, lambda: (vec(seed=1), vec(seed=2)), (0, 1)),
    (C.nested_with_early_return, lambda: (vec(),), 0),
    (C.nested_with_early_return, lambda: (vec() + 2.0,), 0),
    (C.nested_in_loop, lambda: (vec(),), 0),
    (C.nested_calls_nested, lambda: (vec(),), 0),
    (C.nested_rebinds_parameter, lambda: (vec(),), 0),
    (C.nested_keywords_and_defaults, lambda: (vec(),), 0),
    (C.nested_names_do_not_clobber, lambda: (vec(),), 0),
    (C.listcomp_stack, lambda: (vec(),), 0),
    (C.listcomp_filtered_nested, lambda: ([vec(3, s) for s in range(3)],), 0),
    (C.listcomp_array, lambda: (vec(3),), 0),
    (C.generator_in_sum, lambda: ([vec(3, s) for s in range(3)],), 0),
    (C.generator_with_index, lambda: (vec(5),), 0),
    (C.comprehension_variable_is_its_own, lambda: (vec(),), 0),
    (C.dictcomp, lambda: ([vec(3, s) for s in range(2)],), 0),
    (C.setcomp_of_integers, lambda: (vec(),), 0),
    (C.map_with_lambda, lambda: ([vec(3, s) for s in range(2)],), 0),
    (C.map_with_numpy, lambda: ([vec(3, s) for s in range(3)],), 0),
    (
        C.map_two_sequences,
        lambda: ([vec(3, s) for s in range(2)], [vec(3, s + 5) for s in range(2)]),
        (0, 1),
    ),
    (C.starred_unpacking, lambda: (vec(),), 0),
    (C.starred_unpacking_of_a_value, lambda: ([vec(3, s) for s in range(4)],), 0),
    (C.starred_shape_argument, lambda: (vec(6),), 0),
    (C.partial_of_numpy, lambda: (vec(),), 0),
    (C.global_partial_of_user_function, lambda: (vec(),), 0),
    (C.local_partial, lambda: (vec(), vec(seed=4)), (0, 1)),
    (C.partial_then_rebound, lambda: (vec(), vec(seed=4)), (0, 1)),
    (C.reversed_loop, lambda: ([vec(3, s) for s in range(3)],), 0),
    (C.sorted_by_key, lambda: ([vec(3, s) for s in range(3)],), 0),
    (C.sorted_arrays_by_key, lambda: ([vec(3, s) for s in range(4)],), 0),
    (C.sorted_numbers, lambda: (vec(3),), 0),
    (
        C.unzip_pairs,
        lambda: ([(vec(3, s), vec(3, s + 7)) for s in range(3)],),
        0,
    ),
    (C.forwards_a_tuple, lambda: (vec(3, 1), vec(3, 2)), (0, 1)),
    (C.calls_with_keywords, lambda: (vec(3, 1), 1.5), (0, 1)),
    (C.dict_new_key, lambda: (vec(),), 0),
    (C.dict_new_keys_in_loop, lambda: (vec(),), 0),
    (C.dict_overwritten_and_new, lambda: (vec(),), 0),
]


def _lstm_args():
    rng = _rng(7)
    n_in, n_h = 3, 4
    params = {}
    for g in "ifog":
        params["W" + g] = rng.normal(0, 0.4, (n_in, n_h))
        params["U" + g] = rng.normal(0, 0.4, (n_h, n_h))
        params["b" + g] = rng.normal(0, 0.1, n_h)
    xs = [rng.normal(0, 1, n_in) for _ in range(3)]
    return params, xs, rng.normal(0, 1, n_h)


def _mlp_args():
    rng = _rng(8)
    sizes = [3, 5, 4, 2]
    weights = [
        (rng.normal(0, 0.5, (m, n)), rng.normal(0, 0.1, n)) for m, n in zip(sizes, sizes[1:])
    ]
    return weights, rng.normal(0, 1, (6, 3)), rng.normal(0, 1, (6, 2))


CASES += [(C.lstm_loss, _lstm_args, 0), (C.mlp_loss, _mlp_args, 0)]


@pytest.mark.parametrize(
    "func, make, wrt", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]
)
def test_gradient_matches_finite_differences(func, make, wrt):
    assert_grad_matches_fd(func, make(), wrt)


def test_inlined_lambda_reads_like_the_users_code():
    text = source(grad(C.lambda_bound))
    assert "np.tanh(w)" in text and "lambda" not in text.split("\n", 1)[1].split("#")[0]
    assert "2.0" in text


def test_nested_function_locals_are_renamed_apart():
    text = source(grad(C.nested_names_do_not_clobber))
    # f's own h gets a name of its own; the outer h is still read as 2 * w
    assert "h_1" in text or "h_2" in text, text


# --------------------------------------------------------------------------
# a lambda as the function differentiated


def test_grad_of_a_lambda_bound_to_a_name():
    data = np.array([0.1, 0.5, -0.3])
    objective = lambda params: -np.sum(-0.5 * (data - params) ** 2)
    w = vec(3)
    g = grad(objective)
    for _ in range(2):
        np.testing.assert_allclose(g(w), w - data, rtol=1e-12)
    assert "def dobjective(params)" in source(g)


def test_grad_of_lambdas_sharing_a_line():
    pair = [lambda x: np.sum(x * 2.0), lambda x: np.sum(x**3)]
    w = vec(3)
    np.testing.assert_allclose(grad(pair[0])(w), np.full(3, 2.0))
    np.testing.assert_allclose(grad(pair[1])(w), 3 * w**2, rtol=1e-12)


def test_grad_of_a_closure_lambda_and_of_an_inline_one():
    def make(scale):
        return lambda x: np.sum(np.sin(x) * scale)

    w = vec(3)
    np.testing.assert_allclose(grad(make(3.0))(w), 3.0 * np.cos(w), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda x, y: np.sum(x * y), wrt=1)(w, w + 1), w)


# --------------------------------------------------------------------------
# functions passed as arguments or defaults


@pytest.mark.parametrize(
    "func",
    [
        C.loss_with_default_nonlinearity,
        C.loss_with_numpy_nonlinearity,
        C.loss_with_user_nonlinearity,
    ],
)
def test_callee_with_a_function_argument(func):
    rng = _rng(3)
    args = (rng.normal(size=3), rng.normal(size=(4, 3)))
    actual = call_twice(grad(func), *args)
    fd.assert_close((actual,), fd.numeric_grad(func, args, (0,)), rtol=1e-6, atol=1e-9)


def _weighted(act, slope):
    w = vec(3)
    return w, act(w) + w * slope(w)


def test_function_parameter_is_re_resolved_when_another_function_is_passed():
    g = grad(C.weighted_activation)
    w, expected = _weighted(np.tanh, lambda v: 1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(g(w), expected, rtol=1e-12)
    w, expected = _weighted(np.sin, np.cos)
    np.testing.assert_allclose(g(w, np.sin), expected, rtol=1e-12)
    np.testing.assert_allclose(g(w, act=np.sin), expected, rtol=1e-12)
    w, expected = _weighted(C.softplus, lambda v: 1 / (1 + np.exp(-v)))
    np.testing.assert_allclose(g(w, C.softplus), expected, rtol=1e-12)
    w, expected = _weighted(np.tanh, lambda v: 1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(g(w), expected, rtol=1e-12)  # back to the default


def test_function_parameter_without_default_waits_for_the_call():
    g = grad(C.activation_without_default)
    w, expected = _weighted(np.sin, np.cos)
    np.testing.assert_allclose(g(w, np.sin), expected, rtol=1e-12)
    w, expected = _weighted(C.softplus, lambda v: 1 / (1 + np.exp(-v)))
    np.testing.assert_allclose(g(w, C.softplus), expected, rtol=1e-12)
    assert "np.sin" in source(g, w, np.cos)  # the adjoint of cos, as generated
    with pytest.raises(TypeError, match="act"):
        source(g)


def test_function_parameter_in_threads():
    g = grad(C.weighted_activation)
    cases = [(np.tanh, lambda v: 1 - np.tanh(v) ** 2), (np.sin, np.cos), (np.exp, np.exp)]
    errors = []

    def work(k):
        act, slope = cases[k % 3]
        w, expected = _weighted(act, slope)
        try:
            np.testing.assert_allclose(g(w, act), expected, rtol=1e-12)
        except AssertionError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# --------------------------------------------------------------------------
# *args: the gradient is made per number of arguments


@pytest.mark.parametrize("count", [1, 2, 3])
def test_grad_of_a_varargs_function(count):
    args = tuple(vec(3, s) for s in range(count))
    wrt = tuple(range(count))
    actual = call_twice(grad(C.sum_of_squares, wrt=wrt), *args)
    fd.assert_close(actual, fd.numeric_grad(C.sum_of_squares, args, wrt), rtol=1e-6, atol=1e-9)


def test_varargs_after_a_fixed_parameter():
    args = (2.0, vec(3, 1), vec(3, 2))
    actual = call_twice(grad(C.scaled_pairs, wrt=(0, 1, 2)), *args)
    expected = fd.numeric_grad(C.scaled_pairs, args, (0, 1, 2))
    fd.assert_close(actual, expected, rtol=1e-6, atol=1e-9)
    assert "def dscaled_pairs(scale, ws0, ws1)" in source(grad(C.scaled_pairs), *args)


def test_varargs_passed_on_with_a_star():
    args = (1.5, vec(3, 1), vec(3, 2))
    actual = call_twice(grad(C.forwards_its_arguments, wrt=(0, 1, 2)), *args)
    expected = fd.numeric_grad(C.forwards_its_arguments, args, (0, 1, 2))
    fd.assert_close(actual, expected, rtol=1e-6, atol=1e-9)


def test_callee_with_varargs():
    args = (vec(3, 1), vec(3, 2))
    actual = call_twice(grad(C.calls_with_varargs, wrt=(0, 1)), *args)
    expected = fd.numeric_grad(C.calls_with_varargs, args, (0, 1))
    fd.assert_close(actual, expected, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# insert_grad_of


def test_insert_grad_of_reads_and_scales_the_adjoint():
    x = vec(3)
    C.SEEN.clear()
    g = grad(C.doubled_gradient)
    for _ in range(2):
        np.testing.assert_allclose(g(x), 2.0 * 2.0 * np.sin(x) * np.cos(x), rtol=1e-12)
    # the block saw the adjoint of y where the sweep reached it: d sum(y^2) / dy
    assert len(C.SEEN) == 2
    np.testing.assert_allclose(C.SEEN[0], 2.0 * np.sin(x), rtol=1e-12)


def test_insert_grad_of_clips_the_adjoint():
    x = np.array([0.01, -0.5, 0.9])
    expected = 3.0 * np.clip(2.0 * 3.0 * x, -1.0, 1.0)
    np.testing.assert_allclose(call_twice(grad(C.clipped_gradient), x), expected, rtol=1e-12)


def test_insert_grad_of_in_a_loop_runs_at_each_step():
    x = vec(3)
    hs = [x]
    for _ in range(3):
        hs.append(np.tanh(hs[-1] * 1.5))
    expected = np.ones_like(x)
    for k in reversed(range(3)):
        expected = expected * 0.5 * (1.0 - hs[k + 1] ** 2) * 1.5
    np.testing.assert_allclose(call_twice(grad(C.damped_in_loop), x), expected, rtol=1e-12)


def test_insert_grad_of_is_inert_in_a_plain_call():
    x = vec(3)
    C.SEEN.clear()
    assert C.doubled_gradient(x) == np.sum(np.sin(x) ** 2)
    assert C.SEEN == [0.0]


def rebinds_a_parameter_then_branches(y, s):
    if np.sum(y) > -100.0:
        s = y
        if np.sum(y) > 0.0:
            t = np.tanh(2.0)
        else:
            t = s + 1.0
        return np.sum(t)
    return s


def rebinds_a_parameter_unused_after(y, s):
    if np.sum(y) > 0:
        s = y
    return np.sum(y * y) + 0.0 * np.sum(s)


def rebinds_a_parameter_to_a_number(y, s):
    if np.sum(y) > 0:
        s = 3.0
    return np.sum(y) * np.sum(s)


def rebinds_a_parameter_in_a_loop(y, s):
    t = 0.0
    for i in range(2):
        t = t + np.sum(s * y)
        s = y * i
    return t


def rebinds_a_parameter_in_a_while_loop(y, s):
    k = 0
    while k < 2:
        s = y + k
        k = k + 1
    return np.sum(s * s)


@pytest.mark.parametrize(
    "f",
    [
        rebinds_a_parameter_then_branches,
        rebinds_a_parameter_unused_after,
        rebinds_a_parameter_to_a_number,
        rebinds_a_parameter_in_a_loop,
        rebinds_a_parameter_in_a_while_loop,
    ],
)
def test_a_parameter_rebound_in_a_branch_or_loop_gets_a_gradient_of_its_shape(f):
    """The adjoint sweep starts with a zero shaped like the value the parameter holds
    at the end (an array here, where the branch rebinding it is taken), and returns one
    shaped like the argument; checked on the first call and on the shape variant."""
    y_up, y_down = np.array([1.0, 2.0, -0.5]), np.array([-1.0, -2.0, 0.5])
    for y, s in [(y_up, 0.3), (y_down, 0.3), (y_up, np.array([0.3, 0.1, 0.2]))]:
        g = grad(f, wrt=(0, 1))
        want = fd.numeric_grad(f, (y, s), (0, 1))
        for _ in range(3):  # the first call, the one that makes the variant, a later one
            dy, ds = g(y, s)
            assert np.shape(dy) == np.shape(y) and np.shape(ds) == np.shape(s)
            fd.assert_close((dy, ds), want)


def scales_a_parameter_in_a_loop(x):
    s = 0.0
    for i in range(4):
        s = s + np.sum(np.tanh(x * i))
        x = x * 1.3
    return s


def test_a_parameter_rebound_in_a_loop_is_recorded_as_its_shape_where_that_is_enough():
    """The sweep's first zero of ``dx`` reads ``x`` as the loop left it, before anything
    is restored: the loop still records only the shape of ``x`` (the adjoint reads it
    for nothing else), and the gradient is right."""
    text = source(grad(scales_a_parameter_in_a_loop))
    assert "dx = ops.zeros_like(x)" in text
    assert "tape.push(ops.shape_of(x))" in text and "tape.push(x)" not in text
    x = np.array([0.3, -0.2, 0.5])
    g = grad(scales_a_parameter_in_a_loop)
    want = fd.numeric_grad(scales_a_parameter_in_a_loop, (x,), (0,))[0]
    for _ in range(3):
        fd.assert_close(g(x), want)
