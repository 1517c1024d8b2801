"""Realistic numerical programs, written as published autodiff examples write them,
for ``tests/test_programs.py``. Nothing here runs at import time."""

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm


def gp_neg_log_marginal_likelihood(log_params, x, y):
    """A Gaussian process with a squared-exponential kernel: the negative log marginal
    likelihood of ``y``, through a Cholesky factor, a solve and a log-determinant."""
    amplitude, length, noise = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    sq = (x[:, None] - x[None, :]) ** 2
    k = amplitude * np.exp(-0.5 * sq / length**2) + (noise + 1e-6) * np.eye(len(x))
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    _, logdet = np.linalg.slogdet(k)
    fit = 0.5 * np.dot(y, alpha)
    return fit + 0.5 * logdet + 0.5 * len(x) * np.log(2 * np.pi) + 0.0 * np.sum(chol)


def hmm_log_likelihood(log_trans, log_init, means, obs):
    """The forward algorithm of a hidden Markov model with Gaussian emissions, in log
    space with logsumexp."""
    log_a = log_trans - logsumexp(log_trans, axis=1, keepdims=True)
    log_alpha = log_init - logsumexp(log_init) + norm.logpdf(obs[0], means, 1.0)
    for t in range(1, len(obs)):
        emit = norm.logpdf(obs[t], means, 1.0)
        log_alpha = logsumexp(log_alpha[:, None] + log_a, axis=0) + emit
    return logsumexp(log_alpha)


def vae_elbo(params, x, eps):
    """A variational autoencoder's ELBO on a batch, with the reparameterization trick:
    an encoder and a decoder as nested functions, a Bernoulli likelihood."""

    def dense(h, w, b, act=None):
        out = h @ w + b
        return out if act is None else act(out)

    def encode(x):
        h = dense(x, params["enc_w"], params["enc_b"], np.tanh)
        return dense(h, params["mu_w"], params["mu_b"]), dense(h, params["lv_w"], params["lv_b"])

    def decode(z):
        h = dense(z, params["dec_w"], params["dec_b"], np.tanh)
        return dense(h, params["out_w"], params["out_b"])

    mu, log_var = encode(x)
    z = mu + np.exp(0.5 * log_var) * eps
    logits = decode(z)
    log_lik = np.sum(x * logits - np.logaddexp(0.0, logits), axis=1)
    kl = -0.5 * np.sum(1.0 + log_var - mu**2 - np.exp(log_var), axis=1)
    return np.mean(log_lik - kl)


def euler_ode_loss(theta, y0, ts, target):
    """A damped oscillator integrated with explicit Euler steps inside the function,
    fitted to a target trajectory."""
    k, c = theta[0], theta[1]

    def rhs(y):
        return np.array([y[1], -k * y[0] - c * y[1]])

    y = y0
    loss = 0.0
    for i in range(1, len(ts)):
        y = y + (ts[i] - ts[i - 1]) * rhs(y)
        loss = loss + np.sum((y - target[i]) ** 2)
    return loss


def mixture_log_likelihood(means, log_scales, logits, x):
    """A one-dimensional Gaussian mixture, per-component terms built by a comprehension."""
    log_w = logits - logsumexp(logits)
    terms = np.stack(
        [norm.logpdf(x, m, np.exp(s)) + lw for m, s, lw in zip(means, log_scales, log_w)]
    )
    return np.sum(logsumexp(terms, axis=0))


def bayesian_nn_log_posterior(weights, x, y):
    """A one-hidden-layer Bayesian neural net: a Gaussian prior on every weight, a
    Gaussian likelihood."""
    w1, b1, w2, b2 = weights
    h = np.tanh(x @ w1 + b1)
    pred = h @ w2 + b2
    log_prior = sum(np.sum(norm.logpdf(w, 0.0, 1.0)) for w in weights)
    return log_prior + np.sum(norm.logpdf(y, pred, 0.1))
