"""scipy.linalg in programs: a Gaussian process's marginal likelihood (cho_factor and
cho_solve), a Kalman filter's likelihood (cholesky, solve_triangular, solve with
``assume_a="pos"``), least squares by LU, a matrix-exponential flow; each gradient
against central differences on a first and a later call, in reverse and forward mode."""

import copy

import fd
import numpy as np
import pytest

pytest.importorskip("scipy")

import scipy_linalg_programs as programs

from transpile import grad, jvp


def _inputs():
    rng = np.random.default_rng(7)
    x = np.linspace(0.0, 3.0, 8)
    return {
        "gp": (programs.gp_negative_log_marginal, (np.array([0.1, -0.3, -1.5]), x, np.sin(x))),
        "kalman": (programs.kalman_log_likelihood, (0.3, 0.7, rng.standard_normal((6, 1)))),
        "lu": (
            programs.lu_least_squares,
            (0.5, rng.standard_normal((10, 3)), rng.standard_normal(10)),
        ),
        "expm": (
            programs.matrix_exponential_flow,
            (rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)),
        ),
        # one factor, two solves: the flag's (the pivots') adjoints add up (a TypeError,
        # None + None, before)
        "kalman_two_solves": (programs.kalman_two_solves, (0.3, rng.standard_normal(6))),
        "lu_two_solves": (
            programs.lu_two_solves,
            (0.7, rng.standard_normal((3, 3)) + 3.0 * np.eye(3), rng.standard_normal(3)),
        ),
    }


CASES = {
    "gp": (0,),
    "kalman": (0, 1),
    "lu": (0,),
    "expm": (0, 1),
    "kalman_two_solves": (0,),
    "lu_two_solves": (0, 1, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_program_gradient(name):
    func, args = _inputs()[name]
    wrt = CASES[name]
    pristine = copy.deepcopy(args)
    expected = fd.numeric_grad(func, list(args), wrt)
    g = grad(func, wrt=wrt)
    for call in ("first call", "later call"):
        fd.assert_close(tuple(g(*args)), expected, rtol=1e-6, atol=1e-8, path=f"{name}, {call}")
        fd.assert_same(list(args), list(pristine), path="argument")


@pytest.mark.parametrize("name", sorted(CASES))
def test_program_tangent(name):
    func, args = _inputs()[name]
    wrt = CASES[name]
    rng = np.random.default_rng(3)
    tangents = tuple(
        float(rng.standard_normal())
        if np.ndim(args[i]) == 0
        else rng.standard_normal(np.shape(args[i]))
        for i in wrt
    )
    expected = fd.numeric_jvp(func, args, wrt, list(tangents))
    h = jvp(func, wrt=wrt)
    for call in ("first call", "later call"):
        value, tangent = h(*args, tangents)
        assert np.isclose(value, func(*args))
        assert np.isclose(tangent, expected, rtol=1e-6, atol=1e-8), f"{name}, {call}"


def test_overwriting_solver_is_refused_when_the_gradient_runs():
    a, b = np.eye(3) * 2.0, np.ones(3)
    with pytest.raises(ValueError, match="overwrite"):
        grad(programs.overwrites)(a, b)
