# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # EM for a Gaussian mixture, with the M-step driven by a generated gradient
#
# Expectation-maximisation alternates two steps:
#
# * **E-step**: compute the responsibilities $r_{nk} = p(z_n = k \mid x_n, \theta)$ from the current parameters;
# * **M-step**: increase the expected complete-data log-likelihood
#   $Q(\theta) = \frac1N \sum_{n,k} r_{nk} \log p(x_n, z_n = k \mid \theta)$ with the responsibilities held fixed.
#
# "Held fixed" is exactly what `stop_gradient` says. We write $Q$ as one function that computes the
# responsibilities from the parameters it is given and wraps them in `stop_gradient`; `grad` then
# differentiates only the log-joint, and the generated code contains no adjoint for the E-step.
# The M-step here is one gradient-ascent step with a line search (a *generalized* EM), so the
# gradient is the only thing we need.
#
# The data are generated here: 2-D points from three Gaussians.

# %%
import re

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse

from transpile import assert_grad_close, check_grad, grad, source, stop_gradient

rng = np.random.default_rng(1)
true_mu = np.array([[-2.5, 0.0], [2.0, 2.0], [1.5, -2.0]])
true_cov = np.array(
    [[[0.8, 0.3], [0.3, 0.5]], [[0.4, -0.2], [-0.2, 0.9]], [[0.6, 0.0], [0.0, 0.3]]]
)
counts = [150, 100, 100]
X = np.concatenate(
    [rng.multivariate_normal(m, c, size=n) for m, c, n in zip(true_mu, true_cov, counts)]
)
labels = np.repeat(np.arange(3), counts)
print(f"{X.shape[0]} points in {X.shape[1]} dimensions")

# %% [markdown]
# ## The model
#
# Parameters are unconstrained, so plain gradient ascent is allowed to move them anywhere:
#
# * `logits` (3,): mixing weights $\pi = \mathrm{softmax}(\text{logits})$;
# * `mu` (3, 2): the means;
# * `log_diag` (3, 2) and `off` (3,): each component's precision matrix $P_k = L_k L_k^\top$ through its
#   Cholesky factor $L_k = \begin{pmatrix} e^{s_1} & 0 \\ \ell & e^{s_2} \end{pmatrix}$, so that
#   $\log \mathcal N(x \mid \mu_k, P_k^{-1}) = -\log 2\pi + s_1 + s_2 - \tfrac12 \lVert L_k^\top (x - \mu_k) \rVert^2$.
#
# Everything is written with elementwise numpy operations.


# %%
def log_joint(params, X):
    """log p(x_n, z_n = k | params), shape (N, 3)."""
    logits = params["logits"]
    top = np.max(logits)
    log_pi = logits - top - np.log(np.sum(np.exp(logits - top)))
    d0 = X[:, 0:1] - params["mu"][:, 0]  # (N, K): x - mu, first coordinate
    d1 = X[:, 1:2] - params["mu"][:, 1]  # (N, K): second coordinate
    s1 = params["log_diag"][:, 0]
    s2 = params["log_diag"][:, 1]
    u1 = np.exp(s1) * d0 + params["off"] * d1  # L^T (x - mu)
    u2 = np.exp(s2) * d1
    return log_pi + s1 + s2 - np.log(2 * np.pi) - 0.5 * (u1**2 + u2**2)


def log_normalizer(a):
    """log sum_k exp(a[:, k]), kept as a column."""
    top = np.max(a, axis=1, keepdims=True)
    return top + np.log(np.sum(np.exp(a - top), axis=1, keepdims=True))


def responsibilities(params, X):
    """E-step: r[n, k] = p(z_n = k | x_n, params)."""
    a = log_joint(params, X)
    return np.exp(a - log_normalizer(a))


def expected_complete_loglik(params, X):
    """Q: the E-step is computed here and held fixed with stop_gradient."""
    r = stop_gradient(responsibilities(params, X))
    return np.sum(r * log_joint(params, X)) / X.shape[0]


def loglik(params, X):
    """The average marginal log-likelihood (1/N) sum_n log p(x_n | params)."""
    return np.sum(log_normalizer(log_joint(params, X))) / X.shape[0]


dQ = grad(expected_complete_loglik)

# %% [markdown]
# ## The generated gradient
#
# The adjoint code below differentiates `log_joint` only. The responsibilities `r` are computed in
# the forward sweep (they are needed as weights), but there is no adjoint statement for them, and no
# call into the derivative of `responsibilities`.

# %%
source(dQ)

# %%
main = source(dQ).split("def dexpected_complete_loglik")[1]
adjoints = sorted(set(re.findall(r"^\s+(d\w+) = ", main, flags=re.MULTILINE)))
print("adjoints computed in dexpected_complete_loglik:", ", ".join(adjoints))
print("lines mentioning responsibilities or r:")
print("\n".join(line for line in main.splitlines() if re.search(r"responsibilities|\br\b", line)))

# %% [markdown]
# ## It equals the closed-form gradient
#
# With $r$ fixed and $u = L_k^\top (x_n - \mu_k)$, the derivatives of $Q$ are textbook:
#
# $$\frac{\partial Q}{\partial\,\text{logits}_k} = \frac1N\sum_n (r_{nk} - \pi_k),\qquad
#   \frac{\partial Q}{\partial \mu_k} = \frac1N\sum_n r_{nk}\, P_k (x_n - \mu_k),$$
# $$\frac{\partial Q}{\partial s_1} = \frac1N\sum_n r_{nk} (1 - u_1 e^{s_1} d_0),\quad
#   \frac{\partial Q}{\partial s_2} = \frac1N\sum_n r_{nk} (1 - u_2 e^{s_2} d_1),\quad
#   \frac{\partial Q}{\partial \ell} = -\frac1N\sum_n r_{nk}\, u_1 d_1 .$$


# %%
def closed_form_dQ(params, X):
    r = responsibilities(params, X)
    n = X.shape[0]
    pi = np.exp(params["logits"] - params["logits"].max())
    pi /= pi.sum()
    d0 = X[:, 0:1] - params["mu"][:, 0]
    d1 = X[:, 1:2] - params["mu"][:, 1]
    e1, e2, off = np.exp(params["log_diag"][:, 0]), np.exp(params["log_diag"][:, 1]), params["off"]
    u1, u2 = e1 * d0 + off * d1, e2 * d1
    return {
        "logits": (r - pi).sum(0) / n,
        "mu": np.stack([(r * u1 * e1).sum(0), (r * (u1 * off + u2 * e2)).sum(0)], axis=1) / n,
        "log_diag": np.stack(
            [(r * (1 - u1 * d0 * e1)).sum(0), (r * (1 - u2 * d1 * e2)).sum(0)], axis=1
        )
        / n,
        "off": -(r * u1 * d1).sum(0) / n,
    }


params0 = {
    "logits": np.zeros(3),
    "mu": rng.normal(size=(3, 2)),
    "log_diag": np.zeros((3, 2)),
    "off": np.zeros(3),
}
generated, closed = dQ(params0, X), closed_form_dQ(params0, X)
for key in params0:
    print(
        f"{key:9s} max |generated - closed form| = {np.max(np.abs(generated[key] - closed[key])):.1e}"
    )

# %% [markdown]
# ## Numeric gradients
#
# A finite-difference gradient sees the function as it runs, and at run time `stop_gradient` is the
# identity, so it would also differentiate through the E-step. To compare like with like, the
# numeric gradient is taken of $Q$ with the responsibilities passed in as a constant argument
# (`grad_fn` lets `check_grad` compare any function with any gradient).
#
# A classical fact gives a second, independent check: at the point where the responsibilities were
# computed, $\nabla_\theta Q = \nabla_\theta \log p(X \mid \theta)$ (Fisher's identity), so the generated
# gradient of $Q$ must also match the numeric gradient of the marginal log-likelihood.


# %%
def q_fixed(params, X, r):
    """Q with the responsibilities given, as a constant."""
    return np.sum(r * log_joint(params, X)) / X.shape[0]


r0 = responsibilities(params0, X)
check_grad(q_fixed, params0, X, r0, grad_fn=lambda params, X, r: dQ(params, X))

# %%
check_grad(loglik, params0, X, grad_fn=dQ)

# %% [markdown]
# ## Fitting
#
# Each iteration runs an E-step (inside `dQ`) and an M-step: one step along the generated gradient
# with a backtracking line search on $Q$ with the responsibilities of the current parameters held
# fixed. Because every M-step increases $Q$, the generalized-EM argument guarantees that the
# log-likelihood never decreases. We stop when it improves by less than $10^{-10}$ per iteration.


# %%
def fit(params, X, iters=500, tol=1e-10):
    history = [loglik(params, X)]
    step = 1.0
    for _ in range(iters):
        g = dQ(params, X)  # E-step and gradient of Q
        r = responsibilities(params, X)  # the same E-step, to evaluate Q(new; old)
        q_old = q_fixed(params, X, r)
        step = min(2 * step, 10.0)
        while True:  # M-step: backtracking until Q increases
            new = {k: params[k] + step * g[k] for k in params}
            if q_fixed(new, X, r) >= q_old:
                break
            step /= 2
        params = new
        history.append(loglik(params, X))
        if history[-1] - history[-2] < tol:  # converged
            break
    return params, np.array(history)


fitted, history = fit(params0, X)
print(f"log-likelihood per point: {history[0]:.4f} -> {history[-1]:.4f}")
print(
    f"{len(history) - 1} iterations; smallest change between iterations: {np.diff(history).min():.1e}"
)

# %%
fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 3.5))
ax.plot(history, marker=".", markersize=3)
ax.set_xlabel("EM iteration")
ax.set_ylabel("average log-likelihood")
ax.set_title("the log-likelihood never decreases")
ax.grid(alpha=0.3)
ax2.semilogy(np.arange(1, len(history)), np.diff(history), marker=".", markersize=3)
ax2.set_xlabel("EM iteration")
ax2.set_ylabel("increase over the previous iteration")
ax2.set_title("every increase is positive (log scale)")
ax2.grid(alpha=0.3)
fig.tight_layout()

# %% [markdown]
# ## The fitted components
#
# The ellipses are the 2-standard-deviation contours of the fitted Gaussians
# ($\Sigma_k = (L_k L_k^\top)^{-1}$); crosses are the true means.
# Points are coloured by their most responsible component.


# %%
def covariances(params):
    L = np.zeros((3, 2, 2))
    L[:, 0, 0] = np.exp(params["log_diag"][:, 0])
    L[:, 1, 1] = np.exp(params["log_diag"][:, 1])
    L[:, 1, 0] = params["off"]
    return np.linalg.inv(L @ np.transpose(L, (0, 2, 1)))


def draw_ellipse(ax, mean, cov, color):
    vals, vecs = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    ax.add_patch(
        Ellipse(
            mean,
            4 * np.sqrt(vals[1]),
            4 * np.sqrt(vals[0]),
            angle=angle,
            fill=False,
            color=color,
            lw=2,
        )
    )


cov_fit = covariances(fitted)
assign = responsibilities(fitted, X).argmax(axis=1)
colors = ["tab:blue", "tab:orange", "tab:green"]
fig, ax = plt.subplots(figsize=(6, 5))
for k in range(3):
    ax.scatter(*X[assign == k].T, s=8, color=colors[k], alpha=0.6)
    draw_ellipse(ax, fitted["mu"][k], cov_fit[k], colors[k])
ax.scatter(*true_mu.T, marker="x", s=120, color="black", label="true means")
ax.set_aspect("equal")
ax.legend(loc="upper left")
ax.set_title("fitted mixture (2-sigma ellipses)")
fig.tight_layout()

# %%
pi_fit = np.exp(fitted["logits"] - fitted["logits"].max())
pi_fit /= pi_fit.sum()
order = [int(np.argmin(np.sum((fitted["mu"] - m) ** 2, axis=1))) for m in true_mu]
for k, j in enumerate(order):
    print(
        f"true mean {true_mu[k]} weight {counts[k] / len(X):.2f}  |  "
        f"fitted mean {np.round(fitted['mu'][j], 2)} weight {pi_fit[j]:.2f}"
    )

# %% [markdown]
# ## Assertions
#
# The notebook fails here if the generated gradient disagrees with the closed form or the numeric
# gradients, if the source has an adjoint for the responsibilities, or if the log-likelihood ever
# decreased.

# %%
for point in (params0, fitted):
    g, c = dQ(point, X), closed_form_dQ(point, X)
    for key in point:
        np.testing.assert_allclose(g[key], c[key], rtol=1e-9, atol=1e-12)
    r = responsibilities(point, X)
    assert_grad_close(q_fixed, point, X, r, grad_fn=lambda params, X, r: dQ(params, X))
    assert_grad_close(loglik, point, X, grad_fn=dQ, atol=1e-6)
assert "dr" not in adjoints and "responsibilities_bwd" not in source(dQ)
assert np.all(np.diff(history) >= 0), "the log-likelihood decreased"
assert sorted(order) == [0, 1, 2]
print("all gradient checks passed")
