"""Programs written the way scipy users write them, differentiated through scipy.linalg
(``tests/test_scipy_linalg_programs.py``)."""

import numpy as np
from scipy import linalg


def gp_negative_log_marginal(log_params, x, y):
    """A Gaussian process's negative log marginal likelihood, by Cholesky factor."""
    amplitude, length, noise = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    sq = (x[:, None] - x[None, :]) ** 2
    k = amplitude * np.exp(-0.5 * sq / length**2) + noise * np.eye(x.shape[0])
    factor = linalg.cho_factor(k, lower=True)
    alpha = linalg.cho_solve(factor, y)
    log_det = 2.0 * np.sum(np.log(np.diag(factor[0])))
    return 0.5 * y @ alpha + 0.5 * log_det


def kalman_log_likelihood(q, r, ys):
    """The log likelihood of a 2-state constant-velocity Kalman filter with process
    noise ``q`` and observation noise ``r``, by the innovations."""
    a = np.array([[1.0, 1.0], [0.0, 1.0]])
    h = np.array([[1.0, 0.0]])
    m = np.zeros(2)
    p = np.eye(2)
    total = 0.0
    for y in ys:
        m = a @ m
        p = a @ p @ a.T + q * np.eye(2)
        s = h @ p @ h.T + r
        chol = linalg.cholesky(s, lower=True)
        innovation = y - h @ m
        z = linalg.solve_triangular(chol, innovation, lower=True)
        gain = linalg.solve(s, h @ p, assume_a="pos").T
        m = m + gain @ innovation
        p = p - gain @ s @ gain.T
        total = total - 0.5 * (z @ z) - np.sum(np.log(np.diag(chol)))
    return total


def lu_least_squares(w, x, y):
    """Normal equations solved by LU, then a squared residual."""
    lu_piv = linalg.lu_factor(x.T @ x + w * np.eye(x.shape[1]))
    beta = linalg.lu_solve(lu_piv, x.T @ y)
    return np.sum((x @ beta - y) ** 2)


def matrix_exponential_flow(a, v):
    """A state carried by the flow ``expm(t a)`` to t = 0.5, then measured."""
    return np.sum(linalg.expm(0.5 * a) @ v) ** 2


def kalman_two_solves(q, ys):
    """A Kalman filter whose one Cholesky factor per step serves two solves (the
    likelihood's and the gain's), under try/except as such code guards it."""
    f = np.array([[1.0, 1.0], [0.0, 1.0]])
    h = np.array([[1.0, 0.0]])
    x, p, nll = np.zeros(2), np.eye(2), 0.0
    for y in ys:
        x = f @ x
        p = f @ p @ f.T + q * np.eye(2)
        s = h @ p @ h.T + 0.1
        try:
            c, low = linalg.cho_factor(s)
        except np.linalg.LinAlgError:
            return np.inf
        r = y - h @ x
        nll = nll + 0.5 * (r @ linalg.cho_solve((c, low), r)) + np.sum(np.log(np.diag(c)))
        k = linalg.cho_solve((c, low), h @ p).T
        x = x + k @ r
        p = (np.eye(2) - k @ h) @ p
    return nll


def lu_two_solves(w, a, b):
    """One LU factor, two solves."""
    lu_piv = linalg.lu_factor(a + w * np.eye(a.shape[0]))
    first = linalg.lu_solve(lu_piv, b)
    return np.sum(first**2) + np.sum(linalg.lu_solve(lu_piv, first * w) ** 2)


def overwrites(a, b):
    return np.sum(linalg.solve(a, b, overwrite_a=True))
