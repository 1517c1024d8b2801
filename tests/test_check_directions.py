"""Gradient checks along random directions (``check_grad(..., mode="directions")``,
``transpile_runtime.check_directions``) and on sampled entries (``entries=K``),
against closed-form gradients, tangents and
Hessian-vector products: what passes, what fails, and that the cost in calls of ``f``
does not grow with the size of the argument."""

import numpy as np
import pytest

import transpile
from transpile_runtime import check_directions, check_entries

RNG = np.random.default_rng(7)


def quad_form(x, A):
    return x @ A @ x


def quad_grad(x, A):
    return (A + A.T) @ x


def quad_jvp(x, A, v):
    return quad_form(x, A), quad_grad(x, A) @ v


def quad_hvp(x, A, v):
    return (A + A.T) @ v


def two_args(a, b):
    return np.sum(a * b) + np.sum(a**2) * np.mean(b)


def two_args_grad(a, b):
    return b + 2 * a * np.mean(b), a + np.sum(a**2) / b.size


def mlp_loss(params, x):
    h = np.tanh(x @ params["W1"])
    return np.sum((h @ params["W2"]) ** 2)


def mlp_grad(params, x):
    h = np.tanh(x @ params["W1"])
    dout = 2.0 * (h @ params["W2"])
    dz = (dout @ params["W2"].T) * (1.0 - h**2)
    return {"W1": x.T @ dz, "W2": h.T @ dout}


def test_correct_gradient_tangent_and_hvp_pass_every_row():
    x, A = RNG.normal(size=5), RNG.normal(size=(5, 5))
    report = check_directions(
        quad_form, x, A, grad_fn=quad_grad, jvp_fn=quad_jvp, hvp_fn=quad_hvp, n=4
    )
    assert report.passed, report
    assert [r.path for r in report.rows[:3]] == [
        "v0: reverse",
        "v0: forward",
        "v0: second order, x",
    ]
    assert len(report.rows) == 12
    assert "4 random directions" in str(report)


@pytest.mark.parametrize(
    "wrong,failing",
    [
        # second order compares hvp with the difference of grad_fn: it fails too
        ({"grad_fn": lambda x, A: 2 * quad_grad(x, A)}, ("reverse", "second order")),
        ({"jvp_fn": lambda x, A, v: (0.0, 1.01 * quad_grad(x, A) @ v)}, ("forward",)),
        ({"hvp_fn": lambda x, A, v: A @ v}, ("second order",)),  # A is not symmetric
    ],
)
def test_a_wrong_derivative_fails_its_rows_only(wrong, failing):
    x, A = RNG.normal(size=4), RNG.normal(size=(4, 4))
    given = {"grad_fn": quad_grad, "jvp_fn": quad_jvp, "hvp_fn": quad_hvp, **wrong}
    report = check_directions(quad_form, x, A, n=3, **given)
    assert not report.passed
    assert all(r.passed != r.path.split(": ", 1)[1].startswith(failing) for r in report.rows)


def test_tuple_wrt_and_dict_parameters():
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    assert check_directions(two_args, a, b, grad_fn=two_args_grad, wrt=(0, 1), n=3).passed
    wrong = lambda a, b: (two_args_grad(a, b)[0], 0 * b)
    assert not check_directions(two_args, a, b, grad_fn=wrong, wrt=("a", "b"), n=3).passed
    params = {"W1": RNG.normal(size=(3, 4)), "W2": RNG.normal(size=(4, 2))}
    x = RNG.normal(size=(5, 3))
    assert check_directions(mlp_loss, params, x, grad_fn=mlp_grad, n=3).passed


@pytest.mark.parametrize("size", [3, 300])
def test_calls_of_f_do_not_grow_with_the_argument(size):
    calls = []

    def counted(x):
        calls.append(1)
        return np.sum(np.sin(x))

    x = RNG.normal(size=size)
    report = check_directions(counted, x, grad_fn=np.cos, n=5)
    assert report.passed
    assert len(calls) == 5 * 4  # h and h/2, up and down, per direction


def test_arguments_are_not_written_to():
    x, A = RNG.normal(size=5), RNG.normal(size=(5, 5))
    before = x.copy(), A.copy()
    check_directions(quad_form, x, A, grad_fn=quad_grad, hvp_fn=quad_hvp, n=2)
    assert np.array_equal(x, before[0]) and np.array_equal(A, before[1])


def test_n_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        check_directions(quad_form, np.ones(2), np.eye(2), grad_fn=quad_grad, n=0)


def loss(W, x):
    return np.sum(np.tanh(x @ W) ** 2)


def test_transpile_check_grad_in_directions_mode_checks_the_generated_code():
    W, x = RNG.normal(size=(100, 100)), RNG.normal(size=(8, 100))
    report = transpile.check_grad(loss, W, x, mode="directions", n=3, order=2)
    assert report.passed, report
    assert {r.path.split(": ")[1] for r in report.rows} == {"reverse", "forward", "second order, W"}
    wrong = transpile.grad(lambda W, x: 1.01 * loss(W, x))
    bad = transpile.check_grad(loss, W, x, mode="directions", n=2, grad_fn=wrong)
    assert [r.passed for r in bad.rows] == [False, True, False, True]  # reverse, forward


def test_modes_and_orders_are_checked():
    with pytest.raises(ValueError, match="'full' or 'directions'"):
        transpile.check_grad(loss, np.ones((2, 2)), np.ones((1, 2)), mode="random")
    with pytest.raises(ValueError, match="order is 1 or 2"):
        transpile.check_grad(loss, np.ones((2, 2)), np.ones((1, 2)), mode="directions", order=3)


# --------------------------------------------------------------------------
# check_grad(..., entries=K): a sample of the full table


def test_sampled_entries_pass_a_correct_gradient_and_cost_two_calls_each():
    calls = []

    def counted(x, A):
        calls.append(1)
        return quad_form(x, A)

    x, A = RNG.normal(size=50), RNG.normal(size=(50, 50))
    report = check_entries(counted, x, A, grad_fn=quad_grad, entries=7)
    assert report.passed, report
    assert len(calls) == 2 * 7
    assert [r.path for r in report.rows] == ["x (7 of 50)"]


def test_a_wrong_entry_drawn_is_named_by_its_own_index():
    x, A = RNG.normal(size=6), RNG.normal(size=(6, 6))

    def wrong(x, A):
        g = quad_grad(x, A)
        g[4] += 1.0
        return g

    report = check_entries(quad_form, x, A, grad_fn=wrong, entries=6)  # all of them
    (row,) = report.rows
    assert not row.passed and row.note.startswith("worst at index (4,):")


def test_entries_are_drawn_across_every_leaf():
    params = {"W1": RNG.normal(size=(3, 4)), "W2": RNG.normal(size=(4, 2))}
    x = RNG.normal(size=(5, 3))
    report = check_entries(mlp_loss, params, x, grad_fn=mlp_grad, entries=20, seed=3)
    assert report.passed, report
    counts = {r.path.split(" ")[0]: int(r.path.split("(")[1].split(" ")[0]) for r in report.rows}
    assert sum(counts.values()) == 20 and set(counts) == {"params['W1']", "params['W2']"}
    assert transpile.check_grad(mlp_loss, params, x, entries=20, seed=3).passed
