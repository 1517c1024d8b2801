"""Lists and tuples as Python has them: ``+`` concatenates, ``*`` repeats.

Each function once gave a wrong gradient, a wrong structure or an IndexError
(issue 13); each is checked against central finite differences in float64 on a
first and a later call, and the gradient keeps the argument's structure.
"""

import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import grad


def stack_repeated_twice(a):
    return np.sum(np.stack([a] * 2) ** 2)


def stack_repeated_n(a, n):
    return np.sum(np.stack([a] * n) * a)


def stack_repeated_on_the_left(a, n):
    return np.sum(np.stack(n * [a, 2.0 * a]) ** 2)


def concatenated_lists(a, b):
    return np.sum(np.stack([a] + [b]) ** 2 * np.array([[1.0], [3.0]]))


def concatenated_tuples(a, b):
    return np.sum(np.stack((a,) + (b,)) ** 3)


def list_argument_twice(xs):
    return np.sum(np.stack(xs + xs)[0] ** 2 + np.stack(xs + xs)[-1] ** 3)


def tuple_argument_twice(xs):
    pairs = xs * 2
    return np.sum(np.tanh(np.stack(pairs)))


def stacked_squares(args):
    return np.sum(np.stack(args) ** 2 * np.arange(1.0, 1.0 + len(args))[:, None])


def passes_a_longer_tuple_on(args, x):
    return stacked_squares(args + (x,))


def grows_a_list(a, b):
    hs = [a]
    for _ in range(2):
        hs = hs + [hs[-1] * b]
    return np.sum(np.stack(hs) ** 2)


def slice_of_concatenation(a, b):
    both = [a, b] + [a * b]
    return np.sum(np.stack(both[1:]) * 0.5)


def layers(params, x):
    for W, b in params[1:-1]:
        x = np.tanh(x @ W + b)
    return x


def through_an_empty_loop(params, x):
    return np.sum(layers(params, x) ** 2)


def list_under_two_names(ws):
    a = ws
    b = ws
    return np.sum(a[0] * 2.0) + np.sum(b[1] ** 2)


def list_copied_two_ways(ws):
    a = list(ws)
    b = tuple(ws)
    return np.sum(a[0] * 2.0) + np.sum(b[1] ** 2)


def sorted_twice(ws):
    first = sorted(ws, key=lambda w: float(np.sum(w)))
    last = sorted(ws, key=lambda w: float(np.max(w)), reverse=True)
    return np.sum(first[0] * 3.0) + np.sum(last[0] ** 2)


def rng(seed):
    return np.random.default_rng(seed)


CASES = [
    (stack_repeated_twice, lambda r: (r.normal(size=3),), (0,)),
    (stack_repeated_n, lambda r: (r.normal(size=3), 3), (0,)),
    (stack_repeated_on_the_left, lambda r: (r.normal(size=2), 2), (0,)),
    (concatenated_lists, lambda r: (r.normal(size=2), r.normal(size=2)), (0, 1)),
    (concatenated_tuples, lambda r: (r.normal(size=2), r.normal(size=2)), (0, 1)),
    (list_argument_twice, lambda r: ([r.normal(size=2), r.normal(size=2)],), (0,)),
    (tuple_argument_twice, lambda r: ((r.normal(size=3), r.normal(size=3)),), (0,)),
    (passes_a_longer_tuple_on, lambda r: ((r.normal(size=2),), r.normal(size=2)), (0, 1)),
    (grows_a_list, lambda r: (r.normal(size=3), r.normal(size=3)), (0, 1)),
    (slice_of_concatenation, lambda r: (r.normal(size=3), r.normal(size=3)), (0, 1)),
    # two list adjoints of one list added, not concatenated (a list twice as long)
    (list_under_two_names, lambda r: ([r.normal(size=2), r.normal(size=2)],), (0,)),
    (list_copied_two_ways, lambda r: ([r.normal(size=2), r.normal(size=2)],), (0,)),
    (sorted_twice, lambda r: ([r.normal(size=2) for _ in range(3)],), (0,)),
]


@pytest.mark.parametrize("f, make, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_sequence_arithmetic_follows_python(f, make, wrt):
    args = make(rng(0))
    g = grad(f, wrt=wrt)
    got = call_twice(g, *args)  # wrt is a tuple: a tuple of gradients
    fd.assert_close(got, fd.numeric_grad(f, args, wrt), rtol=1e-6, atol=1e-8)
    for i, d in zip(wrt, got):
        assert type(d) is type(args[i]) or not isinstance(args[i], (list, tuple))


def test_list_argument_then_arrays_use_their_own_gradients():
    """The same gradient called with a list (concatenation) and an array (arithmetic)."""
    g = grad(list_argument_twice)
    xs = [np.array([1.0, 2.0]), np.array([3.0, -1.0])]
    fd.assert_close((g(xs),), fd.numeric_grad(list_argument_twice, (xs,), (0,)), rtol=1e-6)
    arr = np.array([[1.0, 2.0], [3.0, -1.0]])
    # an array: xs + xs is 2 * xs, stacked as is
    for _ in range(2):
        want = fd.numeric_grad(list_argument_twice, (arr,), (0,))[0]
        fd.assert_close(g(arr), want, rtol=1e-6)
    fd.assert_close((g(xs),), fd.numeric_grad(list_argument_twice, (xs,), (0,)), rtol=1e-6)


def test_helper_with_a_loop_that_runs_zero_times():
    r = rng(1)
    params = [(r.normal(size=(2, 2)), r.normal(size=2)) for _ in range(2)]
    x = r.normal(size=2)
    g = grad(through_an_empty_loop, wrt=(0, 1))
    dparams, dx = g(params, x)
    np.testing.assert_allclose(dx, 2 * x)
    for W, b in dparams:
        np.testing.assert_array_equal(W, 0.0)
        np.testing.assert_array_equal(b, 0.0)
    params3 = params + [(r.normal(size=(2, 2)), r.normal(size=2))]
    dparams, dx = g(params3, x)
    want = fd.numeric_grad(through_an_empty_loop, (params3, x), (0, 1))
    fd.assert_close((dparams, dx), want, rtol=1e-6, atol=1e-8)


def concatenates_entries(params):
    both = params[0] + params[1]
    return np.sum(np.stack(both) ** 2)


def concatenates_listed_entries(params):
    both = list(params[0]) + list(params[1])
    return np.sum(np.stack(both) ** 2)


def test_lists_reaching_plus_through_a_container_are_refused_or_listed():
    params = [[np.ones(2), np.ones(2)], [np.full(2, 2.0), np.ones(2)]]
    with pytest.raises(TypeError, match="list"):
        grad(concatenates_entries)(params)
    got = grad(concatenates_listed_entries)(params)
    fd.assert_close((got,), fd.numeric_grad(concatenates_listed_entries, (params,), (0,)))
