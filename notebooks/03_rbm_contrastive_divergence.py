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
# # A restricted Boltzmann machine trained by contrastive divergence
#
# A binary RBM with visible units $v$ and hidden units $h$ has the free energy
#
# $$F(v) = -v^\top b - \sum_j \log\bigl(1 + e^{(v^\top W + c)_j}\bigr),\qquad p(v) \propto e^{-F(v)} .$$
#
# The gradient of the negative log-likelihood is $\langle \nabla F \rangle_\text{data} - \langle \nabla F \rangle_\text{model}$;
# the model expectation is intractable, and **CD-k** replaces it by samples $v_\text{model}$ from a $k$-step
# Gibbs chain started at the data. The chain is a sampler, not part of the objective: we wrap its samples in
# `stop_gradient` and let `grad` differentiate
#
# $$L(\theta) = \operatorname{mean} F(v_\text{data}) - \operatorname{mean} F(\mathrm{stop\_gradient}(v_\text{model})).$$
#
# The data set is *bars and stripes*: all 4x4 binary images whose rows are all equal (vertical stripes) or
# whose columns are all equal (horizontal bars), 30 patterns in all, generated below.

# %%
import itertools
import re

import matplotlib.pyplot as plt
import numpy as np

from transpile import assert_grad_close, check_grad, grad, source, stop_gradient

S = 4
patterns = []
for bits in itertools.product([0.0, 1.0], repeat=S):
    row = np.array(bits)
    patterns.append(np.tile(row[:, None], (1, S)).ravel())  # rows on or off: horizontal bars
    patterns.append(np.tile(row[None, :], (S, 1)).ravel())  # columns on or off: vertical stripes
data = np.unique(np.array(patterns), axis=0)
n_visible, n_hidden = S * S, 16


def show_patterns(patterns, rows, cols, title, valid=None):
    """Draw 4x4 patterns in a grid, black = 1; invalid ones (if marked) in red."""
    fig, axes = plt.subplots(rows, cols, figsize=(0.75 * cols, 0.8 * rows + 0.4))
    for i, (ax, v) in enumerate(zip(axes.ravel(), patterns)):
        bad = valid is not None and not valid[i]
        ax.imshow(v.reshape(S, S), cmap="Reds" if bad else "gray_r", vmin=0, vmax=1)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(title)
    fig.tight_layout()
    plt.show()


show_patterns(data, 2, 15, f"the {len(data)} bars-and-stripes patterns")

# %% [markdown]
# ## Free energy, Gibbs sampling and the CD loss
#
# `softplus` is written in its overflow-safe form. The Gibbs chain draws Bernoulli samples by comparing
# probabilities with uniform noise that is passed in, so the loss is a deterministic function of its
# arguments (which keeps numeric differentiation reproducible). `free_energy` takes the parameter dict, and
# the loss calls it twice with the same `params`; it is a small helper, so the generated code has its lines
# inlined at each call, and both calls' contributions are added into one parameter dict key by key.


# %%
def sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # = 1 / (1 + exp(-z)), without overflow


def softplus(z):
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


def free_energy(params, v):
    """F(v) for each row of v."""
    return -(v @ params["b"]) - np.sum(softplus(v @ params["W"] + params["c"]), axis=1)


def gibbs_chain(params, v, noise):
    """k steps of block Gibbs sampling v -> h -> v; noise holds the uniforms for each step."""
    for u_h, u_v in zip(noise[0], noise[1]):
        h = np.where(u_h < sigmoid(v @ params["W"] + params["c"]), 1.0, 0.0)
        v = np.where(u_v < sigmoid(h @ params["W"].T + params["b"]), 1.0, 0.0)
    return v


def cd_loss(params, v_data, noise):
    """The CD-k objective: the chain's samples are constants to differentiation."""
    v_model = stop_gradient(gibbs_chain(params, v_data, noise))
    return np.mean(free_energy(params, v_data)) - np.mean(free_energy(params, v_model))


d_cd = grad(cd_loss)

# %%
source(d_cd)

# %% [markdown]
# ## The generated gradient is the textbook CD update
#
# The classical CD-k update (Hinton, 2002) with hidden probabilities in place of hidden samples is
#
# $$\Delta W = \tfrac1N\bigl(v_\text{data}^\top \sigma(v_\text{data}W + c) - v_\text{model}^\top \sigma(v_\text{model}W + c)\bigr),\quad
#   \Delta b = \operatorname{mean}(v_\text{data} - v_\text{model}),\quad
#   \Delta c = \operatorname{mean}\bigl(\sigma(v_\text{data}W + c) - \sigma(v_\text{model}W + c)\bigr),$$
#
# and it *ascends* the likelihood, so it must equal minus the gradient of the CD loss.


# %%
def textbook_cd_update(params, v_data, v_model):
    p_data = sigmoid(v_data @ params["W"] + params["c"])
    p_model = sigmoid(v_model @ params["W"] + params["c"])
    n = v_data.shape[0]
    return {
        "W": (v_data.T @ p_data - v_model.T @ p_model) / n,
        "b": np.mean(v_data - v_model, axis=0),
        "c": np.mean(p_data - p_model, axis=0),
    }


rng = np.random.default_rng(0)
k = 5
params0 = {
    "W": 0.5 * rng.normal(size=(n_visible, n_hidden)),
    "b": 0.1 * rng.normal(size=n_visible),
    "c": 0.1 * rng.normal(size=n_hidden),
}
noise0 = (rng.random((k, len(data), n_hidden)), rng.random((k, len(data), n_visible)))
v_model0 = gibbs_chain(params0, data, noise0)

generated = d_cd(params0, data, noise0)
textbook = textbook_cd_update(params0, data, v_model0)
for key in params0:
    err = np.max(np.abs(generated[key] + textbook[key]))
    print(f"{key}: max |generated gradient + textbook update| = {err:.1e}")

# %% [markdown]
# ## Numeric gradients
#
# At run time `stop_gradient` is the identity, so a finite-difference gradient of `cd_loss` differentiates
# the chain too. Here that changes nothing: the samples are thresholded, a piecewise-constant function of the
# parameters, so a tiny step does not change them (unless a probability lies within about $10^{-5}$ of its
# uniform draw; the check would then fail loudly, not pass silently). The numeric gradient of the full `cd_loss` and that of the loss
# with $v_\text{model}$ passed in as a constant both agree with the generated gradient.


# %%
def cd_loss_fixed(params, v_data, v_model):
    return np.mean(free_energy(params, v_data)) - np.mean(free_energy(params, v_model))


check_grad(cd_loss, params0, data, noise0)

# %%
check_grad(
    cd_loss_fixed,
    params0,
    data,
    v_model0,
    grad_fn=lambda params, v_data, v_model: d_cd(params, v_data, noise0),
)

# %% [markdown]
# ## Training
#
# Full-batch CD-5 with momentum. Training reduces the *reconstruction error*, the mean squared difference
# between a pattern and its mean-field reconstruction $\sigma(\sigma(vW + c)W^\top + b)$ (a common proxy:
# the likelihood itself needs the partition function).


# %%
def reconstruction_error(params, v):
    p_h = sigmoid(v @ params["W"] + params["c"])
    return np.mean((v - sigmoid(p_h @ params["W"].T + params["b"])) ** 2)


def train(params, steps=3000, lr=0.05, momentum=0.9, seed=1):
    rng = np.random.default_rng(seed)
    velocity = {key: np.zeros_like(value) for key, value in params.items()}
    errors = [reconstruction_error(params, data)]
    for _ in range(steps):
        noise = (rng.random((k, len(data), n_hidden)), rng.random((k, len(data), n_visible)))
        g = d_cd(params, data, noise)
        velocity = {key: momentum * velocity[key] - lr * g[key] for key in params}
        params = {key: params[key] + velocity[key] for key in params}
        errors.append(reconstruction_error(params, data))
    return params, np.array(errors)


init = {
    "W": 0.01 * np.random.default_rng(2).normal(size=(n_visible, n_hidden)),
    "b": np.zeros(n_visible),
    "c": np.zeros(n_hidden),
}
trained, errors = train(init)
print(
    f"reconstruction error: {errors[0]:.3f} at the start, {errors[-1]:.2e} after {len(errors) - 1} steps"
)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(errors)
ax.set_xlabel("CD-5 step")
ax.set_ylabel("reconstruction error (MSE)")
ax.set_title("reconstruction error during training")
ax.grid(alpha=0.3)
fig.tight_layout()

# %% [markdown]
# ## Samples from the trained model
#
# Each sample is the state of a Gibbs chain after 1000 steps started from uniformly random pixels, so it
# reflects what the model learned, not the data it started from.

# %%
sample_rng = np.random.default_rng(3)
n_samples, n_steps = 100, 1000
start = np.where(sample_rng.random((n_samples, n_visible)) < 0.5, 1.0, 0.0)
noise = (
    sample_rng.random((n_steps, n_samples, n_hidden)),
    sample_rng.random((n_steps, n_samples, n_visible)),
)
samples = gibbs_chain(trained, start, noise)
valid = {tuple(p) for p in data}
is_valid = np.array([tuple(s) in valid for s in samples])
print(
    f"{is_valid.mean():.0%} of {n_samples} samples are bars-and-stripes patterns; "
    f"{len({tuple(s) for s in samples[is_valid]})} of the {len(data)} patterns appear"
)

title = f"all {n_samples} samples from the trained RBM (red: not a valid pattern)"
show_patterns(samples, 5, 20, title, is_valid)

# %% [markdown]
# ## Assertions
#
# The notebook fails here if the generated gradient differs from the textbook CD update or from numeric
# gradients, at the initial and the trained parameters.

# %%
check_rng = np.random.default_rng(4)
for point in (params0, trained):
    noise = (
        check_rng.random((k, len(data), n_hidden)),
        check_rng.random((k, len(data), n_visible)),
    )
    v_model = gibbs_chain(point, data, noise)
    g, update = d_cd(point, data, noise), textbook_cd_update(point, data, v_model)
    for key in point:
        np.testing.assert_allclose(g[key], -update[key], rtol=1e-9, atol=1e-12)
    assert_grad_close(
        cd_loss_fixed,
        point,
        data,
        v_model,
        grad_fn=lambda params, v_data, v_model, noise=noise: d_cd(params, v_data, noise),
    )
assert_grad_close(cd_loss, params0, data, noise0)
adjoint_source = source(d_cd)
assert "gibbs_chain_bwd" not in adjoint_source and not re.search(r"\bdv_model\b", adjoint_source)
assert errors[-1] < 0.1 * errors[0]
print("all gradient checks passed")
