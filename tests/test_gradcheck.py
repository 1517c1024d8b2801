"""Tests for runtime.gradcheck: numeric gradients against closed forms, and reports.

Every expected value here is a closed-form gradient written by hand, so the
numeric gradient is checked against an independent reference; the reports are
checked to pass for correct hand-written gradients and to fail for wrong ones.
"""

import numpy as np
import pytest

from transpile_runtime import GradReport, assert_grad_close, check_grad, numeric_grad

RNG = np.random.default_rng(0)


# --- functions with known gradients (module level, so signatures resolve) ---


def cubic(x):
    return x**3 + 2.0 * x


def sin_sum(x):
    return np.sum(np.sin(x))


def quad_form(x, A):
    return x @ A @ x


def two_args(a, b):
    return np.sum(a * b) + np.sum(a**2) * b.mean()


def mlp_loss(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2)


def mlp_grad(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"]
    dout = 2.0 * out
    dW2 = h.T @ dout
    dh = dout @ params["W2"].T
    dz = dh * (1.0 - h**2)
    return {"W1": x.T @ dz, "b1": dz.sum(axis=0), "W2": dW2}


def list_loss(ws, s):
    return s * np.sum(ws[0] ** 2) + np.sum(ws[1][0] * ws[1][1])


def product_exp(x):
    return float(np.exp(x[0] * x[1]))


def zero_d(x):
    return np.exp(x) * 3.0


def matrix_loss(M):
    return np.sum(M @ np.array([1.0, 2.0, 3.0]))


def matrix_grad(M):
    return np.tile(np.array([1.0, 2.0, 3.0]), (M.shape[0], 1))


# ------------------------------------------------------------- numeric_grad


def test_float_argument_gives_float():
    g = numeric_grad(cubic, 1.5)
    assert isinstance(g, float)
    assert g == pytest.approx(3 * 1.5**2 + 2.0, rel=1e-8)


def test_large_value_uses_scaled_step():
    g = numeric_grad(cubic, 1.0e4)
    assert g == pytest.approx(3e8 + 2.0, rel=1e-7)


def test_array_any_shape():
    for shape in [(5,), (3, 4), (2, 3, 2)]:
        x = RNG.normal(size=shape)
        g = numeric_grad(sin_sum, x)
        assert isinstance(g, np.ndarray) and g.shape == shape
        np.testing.assert_allclose(g, np.cos(x), rtol=1e-8, atol=1e-10)


def test_zero_d_array_gives_zero_d_array():
    x = np.array(0.3)
    g = numeric_grad(zero_d, x)
    assert isinstance(g, np.ndarray) and g.shape == ()
    np.testing.assert_allclose(g, 3.0 * np.exp(0.3), rtol=1e-8)


def test_float32_argument_computed_in_float64():
    x = RNG.normal(size=4).astype(np.float32)
    g = numeric_grad(sin_sum, x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.cos(x.astype(np.float64)), rtol=1e-8)


def test_second_argument_and_by_name():
    x = RNG.normal(size=3)
    A = RNG.normal(size=(3, 3))
    np.testing.assert_allclose(numeric_grad(quad_form, x, A, wrt=0), (A + A.T) @ x, rtol=1e-7)
    np.testing.assert_allclose(
        numeric_grad(quad_form, x, A, wrt="A"), np.outer(x, x), rtol=1e-7, atol=1e-9
    )


def test_tuple_wrt_gives_tuple():
    a, b = RNG.normal(size=4), RNG.normal(size=4)
    ga, gb = numeric_grad(two_args, a, b, wrt=(0, "b"))
    s2 = np.sum(a**2)
    np.testing.assert_allclose(ga, b + 2 * a * b.mean(), rtol=1e-7)
    np.testing.assert_allclose(gb, a + s2 / b.size, rtol=1e-7)
    single = numeric_grad(two_args, a, b, wrt=("a",))
    assert isinstance(single, tuple) and len(single) == 1


def test_dict_structure():
    params = {
        "W1": RNG.normal(size=(3, 4)),
        "b1": RNG.normal(size=4),
        "W2": RNG.normal(size=(4, 2)),
    }
    x = RNG.normal(size=(5, 3))
    g = numeric_grad(mlp_loss, params, x)
    want = mlp_grad(params, x)
    assert list(g) == list(params)
    for key in params:
        np.testing.assert_allclose(g[key], want[key], rtol=1e-6, atol=1e-8)


def test_list_and_tuple_structure_with_float_leaf():
    ws = [RNG.normal(size=3), (RNG.normal(size=2), 0.7)]
    s = 1.3
    g = numeric_grad(list_loss, ws, s)
    assert isinstance(g, list) and isinstance(g[1], tuple) and isinstance(g[1][1], float)
    np.testing.assert_allclose(g[0], 2 * s * ws[0], rtol=1e-8)
    np.testing.assert_allclose(g[1][0], ws[1][1] * np.ones(2), rtol=1e-8)
    assert g[1][1] == pytest.approx(np.sum(ws[1][0]), rel=1e-7)
    gs = numeric_grad(list_loss, ws, s, wrt="s")
    assert gs == pytest.approx(np.sum(ws[0] ** 2), rel=1e-8)


def test_custom_eps_is_relative_step():
    x = np.array([0.5, -1.0])
    exact = np.array([x[1], x[0]]) * np.exp(x[0] * x[1])
    coarse = numeric_grad(product_exp, x, eps=1e-2)
    fine = numeric_grad(product_exp, x)
    assert np.max(np.abs(coarse - exact)) > 1e-6  # a big step shows truncation error
    np.testing.assert_allclose(fine, exact, rtol=1e-8)
    with pytest.raises(ValueError):
        numeric_grad(product_exp, x, eps=0.0)


def test_does_not_mutate_inputs():
    params = {
        "W1": RNG.normal(size=(3, 4)),
        "b1": RNG.normal(size=4),
        "W2": RNG.normal(size=(4, 2)),
    }
    x = RNG.normal(size=(5, 3))
    before = {k: v.copy() for k, v in params.items()}
    x_before = x.copy()
    numeric_grad(mlp_loss, params, x, wrt=(0, 1))
    for k in params:
        np.testing.assert_array_equal(params[k], before[k])
    np.testing.assert_array_equal(x, x_before)
    f32 = np.arange(4, dtype=np.float32)
    numeric_grad(sin_sum, f32)
    assert f32.dtype == np.float32
    np.testing.assert_array_equal(f32, np.arange(4, dtype=np.float32))


def test_non_scalar_output_is_an_error():
    with pytest.raises(ValueError, match="scalar"):
        numeric_grad(np.sin, np.ones(3))


def test_non_numeric_leaf_is_an_error():
    with pytest.raises(TypeError):
        numeric_grad(lambda p: 0.0, {"name": "w"})


# --------------------------------------------------------------- check_grad


def test_check_grad_passes_for_correct_grad_fn():
    params = {
        "W1": RNG.normal(size=(3, 4)),
        "b1": RNG.normal(size=4),
        "W2": RNG.normal(size=(4, 2)),
    }
    x = RNG.normal(size=(5, 3))
    report = check_grad(mlp_loss, params, x, grad_fn=mlp_grad)
    assert isinstance(report, GradReport)
    assert report.passed and bool(report)
    assert [r.path for r in report.rows] == ["params['W1']", "params['b1']", "params['W2']"]
    assert [r.shape for r in report.rows] == [(3, 4), (4,), (4, 2)]
    assert report.max_abs_err < 1e-6 and report.max_rel_err < 1e-5
    assert assert_grad_close(mlp_loss, params, x, grad_fn=mlp_grad).passed


def test_check_grad_fails_for_factor_two():
    x = RNG.normal(size=6)
    report = check_grad(sin_sum, x, grad_fn=lambda x: 2.0 * np.cos(x))
    assert not report.passed and not bool(report)
    assert report.max_rel_err == pytest.approx(0.5, rel=1e-4)
    assert "FAIL" in str(report)
    with pytest.raises(AssertionError, match="FAILED"):
        assert_grad_close(sin_sum, x, grad_fn=lambda x: 2.0 * np.cos(x))


def test_check_grad_fails_for_one_wrong_leaf():
    params = {
        "W1": RNG.normal(size=(3, 4)),
        "b1": RNG.normal(size=4),
        "W2": RNG.normal(size=(4, 2)),
    }
    x = RNG.normal(size=(5, 3))

    def wrong(params, x):
        g = mlp_grad(params, x)
        g["b1"] = g["b1"] * 1.001
        return g

    report = check_grad(mlp_loss, params, x, grad_fn=wrong)
    assert [r.passed for r in report.rows] == [True, False, True]
    assert not report.passed


def test_check_grad_fails_for_transposed_gradient():
    M = RNG.normal(size=(4, 3))
    assert check_grad(matrix_loss, M, grad_fn=matrix_grad).passed
    report = check_grad(matrix_loss, M, grad_fn=lambda M: matrix_grad(M).T)
    assert not report.passed
    assert "shape mismatch" in str(report)
    assert report.max_abs_err == np.inf


def test_check_grad_fails_for_structure_mismatch():
    params = {
        "W1": RNG.normal(size=(3, 4)),
        "b1": RNG.normal(size=4),
        "W2": RNG.normal(size=(4, 2)),
    }
    x = RNG.normal(size=(5, 3))

    def missing(params, x):
        g = mlp_grad(params, x)
        del g["b1"]
        return g

    report = check_grad(mlp_loss, params, x, grad_fn=missing)
    assert not report.passed and "missing" in str(report)
    a, b = RNG.normal(size=4), RNG.normal(size=4)
    report = check_grad(two_args, a, b, wrt=(0, 1), grad_fn=lambda a, b: b)
    assert not report.passed and "expected a tuple of 2" in str(report)


def test_check_grad_tuple_wrt():
    a, b = RNG.normal(size=4), RNG.normal(size=4)

    def exact(a, b):
        return b + 2 * a * b.mean(), a + np.sum(a**2) / b.size

    report = check_grad(two_args, a, b, wrt=("a", "b"), grad_fn=exact)
    assert report.passed
    assert [r.path for r in report.rows] == ["a", "b"]


def test_check_grad_nan_fails():
    report = check_grad(sin_sum, np.ones(3), grad_fn=lambda x: np.full(3, np.nan))
    assert not report.passed and "non-finite" in str(report)


def test_check_grad_needs_grad_fn():
    with pytest.raises(TypeError, match="transpile.check_grad"):
        check_grad(sin_sum, np.ones(3))


def test_tolerances_follow_allclose_rule():
    x = np.array([1.0, 2.0])
    # analytic is off by 1e-4 relative: fails at rtol=1e-5, passes at rtol=1e-3
    off = lambda x: np.cos(x) * (1 + 1e-4)
    assert not check_grad(sin_sum, x, grad_fn=off).passed
    assert check_grad(sin_sum, x, grad_fn=off, rtol=1e-3).passed
    assert check_grad(sin_sum, x, grad_fn=lambda x: np.cos(x) + 1e-4, atol=1e-3).passed


def test_each_passing_row_names_the_tolerance_that_passed_it():
    x = np.array([1.0, 2.0])
    (by_rtol,) = check_grad(sin_sum, x, grad_fn=np.cos).rows
    assert by_rtol.passed and by_rtol.note == "by rtol=1e-05"
    # cos(pi/2) is 6e-17: an error of 1e-8 there is a huge relative error, within atol
    at_zero = np.array([np.pi / 2, np.pi / 2])
    (by_atol,) = check_grad(sin_sum, at_zero, grad_fn=lambda x: np.cos(x) + 1e-8).rows
    assert by_atol.passed and by_atol.max_rel_err > 1e-5
    assert by_atol.note == "by atol=1e-07: rel err above rtol=1e-05"
    # one entry needs atol, the other rtol: only their sum passes both
    mixed = np.array([np.pi / 2, 1.0])
    off = lambda x: np.cos(x) + np.array([3e-8, 6e-8])
    (by_both,) = check_grad(sin_sum, mixed, grad_fn=off, atol=4e-8, rtol=1e-7).rows
    assert by_both.passed and by_both.note.startswith("by atol + rtol")
    assert "by rtol=1e-05" in str(check_grad(sin_sum, x, grad_fn=np.cos))


def test_report_text_and_html():
    x = RNG.normal(size=(2, 3))
    good = check_grad(sin_sum, x, grad_fn=lambda x: np.cos(x))
    text = str(good)
    lines = text.splitlines()
    assert "PASSED" in lines[0]
    assert lines[1].split()[:2] == ["argument", "shape"]
    assert any(line.startswith("x ") and "(2, 3)" in line and "ok" in line for line in lines)
    assert lines[-1].startswith("overall") and "PASSED" in lines[-1]
    page = good._repr_html_()
    assert page.startswith("<table>") and "</table>" in page and "<td>x</td>" in page
    bad = check_grad(
        mlp_loss,
        {"W1": np.ones((3, 4)), "b1": np.ones(4), "W2": np.ones((4, 2))},
        np.ones((5, 3)),
        grad_fn=lambda p, x: {k: 0 * v for k, v in p.items()},
    )
    assert "&#x27;W1&#x27;" in bad._repr_html_() and "FAILED" in bad._repr_html_()


def test_report_repr_is_the_table_and_keeps_both_gradients():
    x = RNG.normal(size=3)
    report = check_grad(sin_sum, x, grad_fn=lambda x: np.cos(x))
    assert repr(report) == str(report)
    np.testing.assert_allclose(report.analytic, np.cos(x))
    np.testing.assert_allclose(report.numeric, np.cos(x), rtol=1e-8)
