"""Functions that ``tests/test_explain.py`` explains line by line.

The first three are the notebooks' uses of ``stop_gradient`` (02: EM's E-step, 03:
contrastive divergence's sampler, 04: the FGSM attack), reduced to what the
explanation reads. Lines are found by their text (``line_of``), so editing this file
moves no expectation.
"""

import inspect

import numpy as np

from transpile import grad, stop_gradient

# -- 02: EM, the E-step held fixed -------------------------------------------------


def log_joint(params, X):
    logits = params["logits"]
    top = np.max(logits)
    log_pi = logits - top - np.log(np.sum(np.exp(logits - top)))
    d0 = X[:, 0:1] - params["mu"][:, 0]
    s1 = params["log_diag"][:, 0]
    u1 = np.exp(s1) * d0
    return log_pi + s1 - 0.5 * u1**2


def log_normalizer(a):
    top = np.max(a, axis=1, keepdims=True)
    return top + np.log(np.sum(np.exp(a - top), axis=1, keepdims=True))


def responsibilities(params, X):
    a = log_joint(params, X)
    return np.exp(a - log_normalizer(a))


def expected_complete_loglik(params, X):
    r = stop_gradient(responsibilities(params, X))
    return np.sum(r * log_joint(params, X)) / X.shape[0]


def em_written_out(params, X):
    a = log_joint(params, X)
    r = np.exp(a - log_normalizer(a))
    r = stop_gradient(r)
    q = r * log_joint(params, X)
    return np.sum(q) / X.shape[0]


# -- 03: contrastive divergence, the sampler held fixed ----------------------------


def sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def softplus(z):
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


def free_energy(params, v):
    return -(v @ params["b"]) - np.sum(softplus(v @ params["W"] + params["c"]), axis=1)


def gibbs_chain(params, v, noise):
    for u_h, u_v in zip(noise[0], noise[1]):
        h = np.where(u_h < sigmoid(v @ params["W"] + params["c"]), 1.0, 0.0)
        v = np.where(u_v < sigmoid(h @ params["W"].T + params["b"]), 1.0, 0.0)
    return v


def cd_loss(params, v_data, noise):
    v_model = stop_gradient(gibbs_chain(params, v_data, noise))
    return np.mean(free_energy(params, v_data)) - np.mean(free_energy(params, v_model))


# -- 04: adversarial training, the attack held fixed -------------------------------


def predict(params, x):
    hidden = np.tanh(x @ params["W1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, x, y):
    return np.mean(softplus(-y * predict(params, x)))


input_grad = grad(loss, wrt="x")


def fgsm(params, x, y, eps):
    return x + eps * np.sign(input_grad(params, x, y))


def adversarial_loss(params, x, y, eps):
    x_adv = stop_gradient(fgsm(params, x, y, eps))
    return 0.5 * loss(params, x, y) + 0.5 * loss(params, x_adv, y)


# -- cuts ---------------------------------------------------------------------------


def unused_argument(w, b, x):
    scale = np.sum(b * b)
    return np.sum(np.tanh(x @ w))


def int_cut(w, x):
    n = int(np.sum(w))
    scaled = x * n
    return np.sum(scaled**2)


def comparison_cut(w, x):
    mask = w > 0.0
    return np.sum(x * mask)


def dead_value(w, x):
    wasted = np.exp(w)
    y = np.sin(x * w)
    return np.sum(y)


def never_read(w, x):
    return np.sum(x * 2.0)


def line_of(func, text):
    """The line in this file of ``func``'s first line that starts with ``text``."""
    lines, first = inspect.getsourcelines(func)
    for i, line in enumerate(lines):
        if line.strip().startswith(text):
            return first + i
    raise ValueError(f"{text!r} is not a line of {func.__name__}")


def sums_a_list(xs):
    """A list argument: no shape variant is made for it."""
    return np.sum(xs[0] * xs[1])


def two_layer(W, x, y):
    h = np.tanh(x @ W)
    p = np.sum(h, axis=1)
    r = p - y
    return np.sum(r * r)


# -- shape variants: the line that refuses them (test_explain_variants.py) ----------


def while_loop(w, x):
    y = np.sin(w * x)
    k = 0
    while k < 3:
        y = y * w
        k = k + 1
    return np.sum(y)


def unique_values(w, x):
    u = np.unique(x)
    z = np.sum(u) * w
    return np.sum(z**2)


def masked(w, x):
    y = np.tanh(w) * 2.0
    m = y[x > 0]
    return np.sum(m**2)


def data_branch(w, x):
    y = np.sin(w)
    if np.sum(x) > 0:
        y = y * 2.0
    return np.sum(y * x)


def static_loop(w, x):
    y = np.sin(w) * x
    for _ in range(3):
        y = np.tanh(y * w)
    return np.sum(y**2)


def stopped_user_call(w, x):
    s = stop_gradient(sigmoid(w * x))
    return np.sum(s * w)
