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
# # Adversarial training with FGSM
#
# The *fast gradient sign method* (Goodfellow et al., 2015) perturbs each input by
# $\epsilon\,\mathrm{sign}(\nabla_x L)$, the step of size $\epsilon$ (in the max-norm) that increases the loss
# fastest to first order. *Adversarial training* minimises the loss on clean and perturbed inputs together:
#
# $$L_\text{adv}(\theta) = \tfrac12 L(\theta; x, y) + \tfrac12 L\bigl(\theta;\ \mathrm{stop\_gradient}(x + \epsilon\,\mathrm{sign}\,\nabla_x L(\theta; x, y)),\ y\bigr).$$
#
# The attack depends on $\theta$, but it is treated as data when we train: that is what `stop_gradient` says,
# and the generated gradient contains no adjoint of the attack. The input gradient inside the loss is itself
# a generated gradient, `grad(loss, wrt="x")`.
#
# The model is a one-hidden-layer MLP on the two-moons data set, generated below.

# %%
import re

import matplotlib.pyplot as plt
import numpy as np

from transpile import assert_grad_close, check_grad, grad, source, stop_gradient


def two_moons(n, noise, rng):
    """n points on two interleaved half circles, labels -1 and +1."""
    t = rng.uniform(0.0, np.pi, n)
    upper = rng.random(n) < 0.5
    x = np.where(
        upper[:, None],
        np.stack([np.cos(t), np.sin(t)], axis=1),
        np.stack([1.0 - np.cos(t), 0.5 - np.sin(t)], axis=1),
    )
    return x + noise * rng.normal(size=(n, 2)), np.where(upper, -1.0, 1.0)


rng = np.random.default_rng(0)
X_train, y_train = two_moons(400, 0.15, rng)
X_test, y_test = two_moons(1000, 0.15, rng)

# %% [markdown]
# ## Model, loss and the adversarial loss


# %%
def softplus(z):
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


def predict(params, x):
    """The logit of class +1 for each row of x."""
    hidden = np.tanh(x @ params["W1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, x, y):
    """Mean logistic loss, labels in {-1, +1}."""
    return np.mean(softplus(-y * predict(params, x)))


input_grad = grad(loss, wrt="x")


def fgsm(params, x, y, eps):
    """The FGSM attack of size eps (max-norm) against the model params."""
    return x + eps * np.sign(input_grad(params, x, y))


def adversarial_loss(params, x, y, eps):
    """The mean of the losses on clean and FGSM examples; the attack is a constant."""
    x_adv = stop_gradient(fgsm(params, x, y, eps))
    return 0.5 * loss(params, x, y) + 0.5 * loss(params, x_adv, y)


d_loss = grad(loss)
d_adv = grad(adversarial_loss)

# %%
source(d_adv)

# %% [markdown]
# The generated adjoint of `adversarial_loss` runs `fgsm` in the forward sweep only: there is no adjoint for
# `x_adv` or for `fgsm`, and the attack is data. `loss`, `predict` and `softplus` are small helpers, so
# they are inlined where they are called: the adjoint lines are those of `loss` with respect to `params`,
# once for each of the two terms, each term's contribution added into one parameter dict key by key
# (`ops.add_at`).

# %% [markdown]
# ## Numeric gradients
#
# At run time `stop_gradient` is the identity, so finite differences of `adversarial_loss` see the attack
# move with the parameters. Its direction is a sign, piecewise constant, so for a tiny step it does not move
# and the numeric gradient of the full function agrees with the generated one. Passing the attack in as a
# constant gives the same answer.

# %%
H = 32
init_rng = np.random.default_rng(1)
params0 = {
    "W1": init_rng.normal(size=(2, H)),
    "b1": np.zeros(H),
    "w2": init_rng.normal(size=H) / np.sqrt(H),
    "b2": np.zeros(1),
}
eps_train = 0.2

check_grad(adversarial_loss, params0, X_train, y_train, eps_train)


# %%
def loss_on_fixed_attack(params, x, y, x_adv):
    return 0.5 * loss(params, x, y) + 0.5 * loss(params, x_adv, y)


x_adv0 = fgsm(params0, X_train, y_train, eps_train)
check_grad(
    loss_on_fixed_attack,
    params0,
    X_train,
    y_train,
    x_adv0,
    grad_fn=lambda params, x, y, x_adv: d_adv(params, x, y, eps_train),
)

# %% [markdown]
# The input gradient used by the attack is checked the same way:

# %%
check_grad(loss, params0, X_train[:20], y_train[:20], wrt="x")

# %% [markdown]
# ## Training with and without adversarial examples
#
# Both models start from the same initialisation and take 3000 full-batch Adam steps.


# %%
def adam(gradient, params, steps=3000, lr=0.01, b1=0.9, b2=0.999):
    m = {key: np.zeros_like(value) for key, value in params.items()}
    v = {key: np.zeros_like(value) for key, value in params.items()}
    for t in range(1, steps + 1):
        g = gradient(params)
        m = {key: b1 * m[key] + (1 - b1) * g[key] for key in params}
        v = {key: b2 * v[key] + (1 - b2) * g[key] ** 2 for key in params}
        params = {
            key: params[key] - lr * (m[key] / (1 - b1**t)) / (np.sqrt(v[key] / (1 - b2**t)) + 1e-8)
            for key in params
        }
    return params


standard = adam(lambda p: d_loss(p, X_train, y_train), params0)
robust = adam(lambda p: d_adv(p, X_train, y_train, eps_train), params0)


def accuracy(params, x, y):
    return np.mean(np.sign(predict(params, x)) == y)


attack_sizes = np.linspace(0.0, 0.4, 9)
acc_standard = [accuracy(standard, fgsm(standard, X_test, y_test, e), y_test) for e in attack_sizes]
acc_robust = [accuracy(robust, fgsm(robust, X_test, y_test, e), y_test) for e in attack_sizes]
for e, a, b in zip(attack_sizes, acc_standard, acc_robust):
    print(f"eps = {e:.2f}: accuracy standard {a:.3f}, adversarially trained {b:.3f}")

# %%
grid = np.linspace(-1.6, 2.6, 200), np.linspace(-1.4, 1.7, 150)
gx, gy = np.meshgrid(*grid)
points = np.stack([gx.ravel(), gy.ravel()], axis=1)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, params, title in [
    (axes[0], standard, "standard training"),
    (axes[1], robust, f"adversarial training (eps = {eps_train})"),
]:
    z = predict(params, points).reshape(gx.shape)
    ax.contourf(gx, gy, z, levels=[-50, 0, 50], colors=["#cde", "#fdc"], alpha=0.8)
    ax.contour(gx, gy, z, levels=[0], colors="k", linewidths=1.5)
    ax.scatter(*X_test[y_test < 0].T, s=4, color="tab:blue")
    ax.scatter(*X_test[y_test > 0].T, s=4, color="tab:red")
    attacked = fgsm(params, X_test, y_test, eps_train)
    wrong = np.sign(predict(params, attacked)) != y_test
    ax.scatter(
        *X_test[wrong].T,
        s=14,
        marker="x",
        color="k",
        lw=0.8,
        label=f"misclassified after an FGSM attack of size {eps_train}: {wrong.sum()}",
    )
    ax.set_title(f"{title}\nclean test accuracy {accuracy(params, X_test, y_test):.3f}")
    ax.legend(loc="lower left", fontsize=8)
    ax.set_aspect("equal")
fig.tight_layout()

# %% [markdown]
# Both models separate the clean test data about equally well. The crosses mark the test points (shown at their
# clean position) that an FGSM attack of size 0.2 pushes across the boundary; there are fewer for the
# adversarially trained model. The next figure repeats this for a range of attack sizes.

# %%
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(attack_sizes, acc_standard, "o-", label="standard training")
ax.plot(attack_sizes, acc_robust, "s-", label=f"adversarial training (eps = {eps_train})")
ax.axvline(eps_train, color="gray", ls=":", lw=1)
ax.set_xlabel("FGSM attack size eps (max-norm)")
ax.set_ylabel("test accuracy under attack")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()

# %% [markdown]
# ## Assertions
#
# The notebook fails here if generated and numeric gradients disagree (at the initial and the trained
# parameters), or if adversarial training did not make the model more robust at the attack size it was
# trained for.

# %%
for point in (params0, standard, robust):
    assert_grad_close(loss, point, X_train, y_train)
    assert_grad_close(loss, point, X_train[:20], y_train[:20], wrt="x")
    x_adv = fgsm(point, X_train, y_train, eps_train)
    assert_grad_close(
        loss_on_fixed_attack,
        point,
        X_train,
        y_train,
        x_adv,
        grad_fn=lambda params, x, y, x_adv: d_adv(params, x, y, eps_train),
    )
assert_grad_close(adversarial_loss, params0, X_train, y_train, eps_train)
adjoint_source = source(d_adv)
assert "fgsm_bwd" not in adjoint_source and not re.search(r"\bdx_adv\b", adjoint_source)
i = int(np.argmin(np.abs(attack_sizes - eps_train)))
assert acc_robust[i] > acc_standard[i]
print("all gradient checks passed")
