"""Realistic programs (issue 8's corpus): each gradient against central finite
differences in float64, on a first and a later call."""

import numpy as np
import pytest

pytest.importorskip("scipy")

import program_funcs as P
from variants import assert_grad_matches_fd


def _rng(seed):
    return np.random.default_rng(seed)


def gp_args():
    rng = _rng(1)
    x = np.sort(rng.uniform(-2, 2, 7))
    return np.array([0.1, -0.3, -2.0]), x, np.sin(x) + 0.1 * rng.normal(size=7)


def hmm_args():
    rng = _rng(2)
    return (
        rng.normal(size=(3, 3)),
        rng.normal(size=3),
        np.array([-1.0, 0.0, 1.5]),
        rng.normal(size=6),
    )


def vae_args():
    rng = _rng(3)
    d, h, z = 5, 4, 2
    shapes = {
        "enc_w": (d, h), "enc_b": (h,), "mu_w": (h, z), "mu_b": (z,), "lv_w": (h, z),
        "lv_b": (z,), "dec_w": (z, h), "dec_b": (h,), "out_w": (h, d), "out_b": (d,),
    }  # fmt: skip
    params = {k: 0.3 * rng.normal(size=s) for k, s in shapes.items()}
    x = (rng.uniform(size=(6, d)) > 0.5).astype(float)
    return params, x, rng.normal(size=(6, z))


def ode_args():
    ts = np.linspace(0.0, 1.0, 9)
    target = np.stack([np.cos(2 * ts), -2 * np.sin(2 * ts)], axis=1)
    return np.array([3.5, 0.2]), np.array([1.0, 0.0]), ts, target


def mixture_args():
    rng = _rng(4)
    return np.array([-1.0, 0.5]), np.array([0.1, -0.2]), np.array([0.3, -0.1]), rng.normal(size=8)


def bnn_args():
    rng = _rng(5)
    weights = [
        rng.normal(size=(2, 3)),
        rng.normal(size=3),
        rng.normal(size=(3, 1)),
        rng.normal(size=1),
    ]
    x = rng.normal(size=(5, 2))
    return weights, x, rng.normal(size=(5, 1))


PROGRAMS = [
    (P.gp_neg_log_marginal_likelihood, gp_args, 0),
    (P.hmm_log_likelihood, hmm_args, (0, 1, 2)),
    (P.vae_elbo, vae_args, 0),
    (P.euler_ode_loss, ode_args, (0, 1)),
    (P.mixture_log_likelihood, mixture_args, (0, 1, 2)),
    (P.bayesian_nn_log_posterior, bnn_args, 0),
]


@pytest.mark.parametrize("func, make, wrt", PROGRAMS, ids=[f.__name__ for f, _, _ in PROGRAMS])
def test_program_gradient(func, make, wrt):
    assert_grad_matches_fd(func, make(), wrt, atol=1e-8)
