"""Recursive user functions: a recursive call becomes a call of the pair being made
(``f_fwd`` inside ``f_fwd``, ``f_bwd`` inside ``f_bwd``), directly or through other
functions. Each gradient against central finite differences, on a first and a later
call; the cache, rebound helpers and the generated source."""

import re
import sys
import threading

import fd
import numpy as np
import pytest
import recursion_funcs as R
from variants import assert_grad_matches_fd

from transpile import grad, pipeline, source, value_and_grad
from transpile.core import recursion
from transpile.pipeline import transpile


def vec(n=4, seed=0):
    return np.random.default_rng(seed).uniform(-0.8, 0.8, n)


CASES = [
    (R.log_partition, lambda: (0.3, 3), 0),
    (R.log_partition, lambda: (0.7, 5), 0),
    (R.log_partition, lambda: (-0.4, 0), 0),  # the base case alone
    (R.log_partition_loss, lambda: (vec(),), 0),
    (R.total_loss, lambda: ([vec(3, s) for s in range(4)],), 0),
    (R.total, lambda: ([vec(3, s) for s in range(3)], 0), 0),
    (R.power_sum, lambda: (vec(seed=1), vec(seed=2), 3), (0, 1)),
    (R.power_sum, lambda: (vec(seed=1), vec(seed=2), 4), 0),
    (R.power_sum, lambda: (vec(seed=1), vec(seed=2), 4), 1),
    (R.scaled_chain, lambda: (vec(3, 1).reshape(3) * np.ones((2, 3)), vec(3, 2), 3), (0, 1)),
    (R.helper_in_loop, lambda: (vec(), 3), 0),
    (R.with_early_return, lambda: (vec(), 5), 0),
    (R.product_loss, lambda: (vec(),), 0),
    (R.apply_loss, lambda: (vec(),), 0),
    (R.make_closure(1.3), lambda: (vec(), 3), 0),
    (R.even, lambda: (vec(), 5), 0),
    (R.odd, lambda: (vec(), 6), 0),
    (R.three_a, lambda: (vec(), 4), 0),
    (R.three_b, lambda: (vec(), 5), 0),
    (R.depth_200, lambda: (vec(3),), 0),
]


@pytest.mark.parametrize(
    "func, make, wrt", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]
)
def test_gradient_matches_finite_differences(func, make, wrt):
    assert_grad_matches_fd(func, make(), wrt)


def test_log_partition_closed_form():
    """d/dx log(sum_k exp(x / 2**k)) = sum_k 2**-k softmax_k."""
    x, n = 0.3, 6
    terms = x / 2.0 ** np.arange(n + 1)
    weights = np.exp(terms - np.logaddexp.reduce(terms))
    expected = np.sum(weights / 2.0 ** np.arange(n + 1))
    g = grad(R.log_partition)
    for _ in range(2):
        np.testing.assert_allclose(g(x, n), expected, rtol=1e-12)


def test_value_and_grad_of_a_recursive_function():
    x = vec()
    value, g = value_and_grad(R.log_partition_loss)(x)
    np.testing.assert_allclose(value, R.log_partition_loss(x), rtol=1e-12)
    np.testing.assert_allclose(g, grad(R.log_partition_loss)(x), rtol=1e-12)


def test_depth_is_limited_only_by_pythons_recursion_limit():
    x = vec(3)
    g = grad(R.depth_sum)
    deep = sys.getrecursionlimit() // 4
    expected = fd.numeric_grad(R.depth_sum, (x, deep), (0,))[0]
    fd.assert_close(g(x, deep), expected, rtol=1e-6, atol=1e-9)


def test_no_base_case_is_pythons_recursion_error_at_run_time():
    g = grad(R.no_base_case)  # transpiles: the recursion is a call like any other
    with pytest.raises(RecursionError):
        g(vec(), 0)


# --------------------------------------------------------------------------
# The generated source: the pair calls itself, and is shown once


def _body(text, fname):
    """The source of the function ``fname`` in ``text``."""
    return text.split(f"def {fname}(")[1].split("\ndef ")[0]


def test_forward_calls_forward_and_adjoint_calls_adjoint():
    text = source(grad(R.log_partition_loss))
    fwd, bwd = _body(text, "log_partition_fwd"), _body(text, "log_partition_bwd")
    assert "= log_partition_fwd(" in fwd and "log_partition_bwd(" not in fwd
    assert "= log_partition_bwd(" in bwd and "log_partition_fwd(" not in bwd


@pytest.mark.parametrize(
    "func, names",
    [
        (R.log_partition, ["log_partition_fwd", "log_partition_bwd", "dlog_partition"]),
        (R.log_partition_loss, ["log_partition_fwd", "log_partition_bwd", "dlog_partition_loss"]),
        (R.even, ["even_fwd", "even_bwd", "odd_fwd", "odd_bwd", "deven"]),
    ],
)
def test_source_shows_each_function_once(func, names):
    text = source(grad(func))
    defined = re.findall(r"^def (\w+)\(", text, re.MULTILINE)
    assert sorted(defined) == sorted(names), text


def test_mutual_recursion_calls_the_other_pair():
    text = source(grad(R.even))
    assert re.search(r"= odd_fwd\(", _body(text, "even_fwd"))
    assert re.search(r"= even_fwd\(", _body(text, "odd_fwd"))
    assert re.search(r"= odd_bwd\(", _body(text, "even_bwd"))
    assert re.search(r"= even_bwd\(", _body(text, "odd_bwd"))


def test_arguments_swapping_places_make_two_pairs():
    """power_sum(b, a * a) differentiates the other parameter than its caller: the
    pair for ``wrt=a`` calls the pair for ``wrt=b``, and that one calls back."""
    text = source(grad(R.power_sum, wrt=0))
    defined = re.findall(r"^def (\w+)\(", text, re.MULTILINE)
    assert sorted(defined) == sorted(
        ["power_sum_fwd", "power_sum_bwd", "power_sum_fwd_1", "power_sum_bwd_1", "dpower_sum"]
    ), text
    for name, other in [("power_sum_fwd", "power_sum_fwd_1"), ("power_sum_bwd", "power_sum_bwd_1")]:
        assert re.search(rf"= {other}\(", _body(text, name))  # each calls the other
        assert re.search(rf"= {name}\(", _body(text, other))


# --------------------------------------------------------------------------
# The cache


def test_a_second_grad_is_a_lookup_and_the_pair_is_cached():
    g1, g2 = grad(R.even), grad(R.even)
    assert g1 is g2
    split_even = transpile(R.even, (0,), "split")
    split_odd = transpile(R.odd, (0,), "split")
    assert transpile(R.even, (0,), "split") is split_even
    assert [id(c) for c in split_even.callees] == [id(split_odd)]
    assert [id(c) for c in split_odd.callees] == [id(split_even)]
    # each one relies on what the other reads
    chains = {r.chain for r in split_odd.code_reads}
    assert {"odd", "even", "np"} <= chains


def test_rebinding_a_helper_of_the_other_function_transpiles_both_again():
    x, n = vec(), 3
    g = grad(R.uses_scale)
    before = g(x, n)
    original = R.scale
    try:
        R.scale = lambda z: z * 3.0
        after = g(x, n)
        np.testing.assert_allclose(after, before * 1.5, rtol=1e-12)
        expected = fd.numeric_grad(R.uses_scale, (x, n), (0,))[0]
        fd.assert_close(after, expected, rtol=1e-6, atol=1e-9)
    finally:
        R.scale = original
    np.testing.assert_allclose(g(x, n), before, rtol=1e-12)


def test_a_failed_transpilation_caches_nothing_half_built(monkeypatch):
    """A cycle whose outer transpilation fails leaves no pair of its inner function
    in the cache: the inner one refers to the outer one's placeholders."""
    closed = []
    real_close = recursion.close

    def failing_close(stack, frame, generated):
        if frame.func is R.even and frame.key[1] == "split":
            raise RuntimeError("the outer transpilation fails")
        built = real_close(stack, frame, generated)
        closed.extend(built)
        return built

    pipeline._CACHE.pop(R.even, None)
    pipeline._CACHE.pop(R.odd, None)
    monkeypatch.setattr(recursion, "close", failing_close)
    with pytest.raises(RuntimeError, match="outer"):
        transpile(R.even, (0,), "split")
    assert not closed, "odd waited for even, and even failed"
    assert not pipeline._CACHE.get(R.odd)
    monkeypatch.setattr(recursion, "close", real_close)
    x = vec()
    fd.assert_close(
        grad(R.even)(x, 5), fd.numeric_grad(R.even, (x, 5), (0,))[0], rtol=1e-6, atol=1e-9
    )


def test_concurrent_first_gradients_of_a_cycle():
    """Each thread's transpilations have a stack of their own; what one caches is whole."""
    for f in (R.three_a, R.three_b, R.three_c):
        pipeline._CACHE.pop(f, None)
    x = vec()
    expected = fd.numeric_grad(R.three_a, (x, 4), (0,))[0]
    results, errors = [], []

    def work():
        try:
            results.append(grad(R.three_a)(x, 4))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r in results:
        fd.assert_close(r, expected, rtol=1e-6, atol=1e-9)
