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
# # A tour of `transpile`
#
# `transpile` reads the source of a numpy function and writes a new Python function that computes its
# gradient by reverse-mode differentiation. The result is ordinary numpy code you can print, read and
# step through in a debugger; nothing is traced or interpreted at run time.
#
# This notebook shows how to ask for gradients, how to read the generated code (straight-line code, a
# loop, and `stop_gradient`), and how to check gradients against finite differences, and why a
# finite-difference gradient is only ever an approximation.

# %%
import re

import matplotlib.pyplot as plt
import numpy as np

from transpile import (
    assert_grad_close,
    check_grad,
    explain,
    grad,
    numeric_grad,
    source,
    stop_gradient,
    value_and_grad,
)

rng = np.random.default_rng(0)

# %% [markdown]
# ## Asking for a gradient
#
# `grad(f)` returns a function with the same arguments as `f` that returns the gradient with respect to the
# first argument. It works as a decorator too; then the name refers to the gradient.


# %%
def logistic_loss(w, x, y):
    """Mean logistic loss of a linear model; labels y in {0, 1}."""
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


d_logistic = grad(logistic_loss)

x = rng.normal(size=(50, 3))
y = (x @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=50) > 0).astype(float)
w = np.zeros(3)
d_logistic(w, x, y)

# %% [markdown]
# The closed form is $\frac1N x^\top (p - y)$:

# %%
p = 1.0 / (1.0 + np.exp(-(x @ w)))
x.T @ (p - y) / len(y)

# %% [markdown]
# As a decorator, and with respect to an argument chosen by name (a tuple asks for several gradients and
# gives a tuple back):


# %%
@grad(wrt=("a", "b"))
def d_energy(a, b, c):
    return np.sum(np.sin(a) * b**2) + np.sum(c * a)


a, b, c = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
da, db = d_energy(a, b, c)
print(np.allclose(da, np.cos(a) * b**2 + c), np.allclose(db, 2 * np.sin(a) * b))

# %% [markdown]
# `value_and_grad` returns both, which is what an optimiser wants:

# %%
value, g = value_and_grad(logistic_loss)(w, x, y)
print("value:", value)
print("gradient:", g)

# %% [markdown]
# ## Reading the generated code
#
# `source(g)` returns the generated code as a string (in Jupyter it is shown with syntax highlighting).
# The function first runs the original computation (the *primal sweep*), keeping the intermediate values
# it needs, then walks the statements backwards, computing the adjoint `dv` of every value `v`
# (the derivative of the output with respect to `v`). Each adjoint block carries a `# grad of:` comment
# naming the line it differentiates.

# %%
source(d_logistic)

# %% [markdown]
# The adjoint sweep starts from $\partial\,\text{out}/\partial\,\text{out} = 1$. Here the output is a
# `mean`, a scalar by construction, so that 1 is folded into the first adjoint line (`ops.unmean(-1.0, ...)`,
# the minus from the loss's sign) and the loss value itself is never computed; when the output is not
# provably a scalar, `ops.seed(out)` checks it at run time. Then each line of the original function gets its
# adjoint block, in reverse order. The helpers from `runtime.ops` are small and named for what they do:
# `ops.unmean` spreads the adjoint of a `mean` back over the averaged elements, `ops.unbroadcast` sums an
# adjoint back to the shape of an operand that was broadcast, and `ops.matmul_right(g, x, w)` is the adjoint
# of `w` in `x @ w` (here `x.T @ g`). Values the adjoint needs (`p`, and `_t1` for `x @ w`) are simply the variables of
# the primal sweep; nothing is recomputed. Values the adjoint needs only for their *shape* are not computed
# at all: the two `np.log` calls are gone, their shapes read from `_t1` and `y` (`ops.broadcast_like`).
# One composition is differentiated at once: the logarithm of a sigmoid written out as
# `1 / (1 + np.exp(-z))` has the exact adjoint `d * (1 - p)` (and `np.log(1 - p)` has `-d * p`), so the
# line `d_t1 = ...` replaces a division by `p`, one by `1 - p`, and three more lines back through the sigmoid.
#
# That source is generic: it runs for any shapes. A function without loops or branches also gets, per
# signature (the shapes and dtypes of its arrays), a variant rewritten for those shapes, which is what the
# second and later calls with that signature run. `source(g, *args)` shows it: the shape helpers are gone,
# and the mean's $-1/N$ is multiplied into the small result instead of filling an array.

# %%
source(d_logistic, w, x, y)

# %% [markdown]
# ### A loop
#
# A recurrent cell applied over a sequence: the loop is reversed, and the values that the adjoint needs but
# the loop overwrites (here the hidden state `h`, among others) are pushed on a stack (`tape`) in the forward
# loop and popped in the backward loop.


# %%
def rnn_loss(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h**2)


d_rnn = grad(rnn_loss)
source(d_rnn)

# %%
W = 0.5 * rng.normal(size=(4, 4))
xs = rng.normal(size=(6, 4))
h0 = rng.normal(size=4)
check_grad(rnn_loss, W, xs, h0)

# %% [markdown]
# ### `stop_gradient`
#
# `stop_gradient(e)` is the identity when the code runs, but differentiation treats its result as a
# constant. Here a prediction is pulled towards a target that is itself computed from the parameters,
# a smoothed version of the prediction (as in bootstrapped targets). No adjoint is generated for `target`,
# nor for anything that only reaches the output through it.


# %%
def self_distill(w, x):
    p = np.tanh(x @ w)
    target = stop_gradient(0.9 * p + 0.1 * np.mean(p))
    return np.mean((p - target) ** 2) + 0.01 * np.sum(w**2)


d_distill = grad(self_distill)
source(d_distill)

# %% [markdown]
# `explain` says the same line by line: which lines have an adjoint (and which generated lines it
# is), and why the others have none. Here the `target` line is stopped, the other two active.

# %%
report = explain(d_distill)
assert [line.status for line in report] == ["active", "stopped", "active"]
report

# %% [markdown]
# A finite-difference gradient only sees the function as it runs, where `stop_gradient` is the identity, so it
# differentiates through `target` as well and gets a different number. To check the generated gradient,
# pass the stopped value in as a constant argument and compare with `grad_fn`, which `check_grad` accepts
# for any function that computes a gradient:


# %%
def self_distill_fixed(w, x, target):
    p = np.tanh(x @ w)
    return np.mean((p - target) ** 2) + 0.01 * np.sum(w**2)


w1 = rng.normal(size=3)
p1 = np.tanh(x @ w1)
target1 = 0.9 * p1 + 0.1 * np.mean(p1)
print("through stop_gradient (numeric):", numeric_grad(self_distill, w1, x))
print("with the target held fixed     :", numeric_grad(self_distill_fixed, w1, x, target1))
print("generated                      :", d_distill(w1, x))
check_grad(self_distill_fixed, w1, x, target1, grad_fn=lambda w, x, target: d_distill(w, x))

# %% [markdown]
# ## Checking gradients
#
# `check_grad(f, *args, wrt=...)` runs the generated gradient and a central-difference one and reports
# the largest absolute and relative error per argument. Arguments may be nested dicts and lists of arrays:


# %%
def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


params = {
    "W1": rng.normal(size=(3, 8)),
    "b1": np.zeros(8),
    "W2": rng.normal(size=(8, 2)),
    "b2": np.zeros(2),
}
targets = rng.normal(size=(50, 2))
check_grad(mlp_loss, params, x, targets)

# %% [markdown]
# A wrong gradient is reported as such. Here is a hand-written gradient of the logistic loss that forgot
# to divide by $N$:


# %%
def wrong_logistic_grad(w, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return x.T @ (p - y)


check_grad(logistic_loss, w, x, y, grad_fn=wrong_logistic_grad)

# %% [markdown]
# ## Finite differences are approximations
#
# A difference quotient with step $h$ has two errors pulling in opposite directions: the *truncation* error of
# the Taylor expansion (order $h$ for a forward difference $\frac{f(x+h)-f(x)}{h}$, order $h^2$ for a central
# one $\frac{f(x+h)-f(x-h)}{2h}$), and the *round-off* error of subtracting two nearly equal floating-point
# numbers, about $\varepsilon |f| / h$ with $\varepsilon \approx 2.2\times10^{-16}$. No step makes both small:
# the best a central difference can do is about $\varepsilon^{2/3} \approx 10^{-11}$ relative error, at
# $h \approx \varepsilon^{1/3} \approx 6\times10^{-6}$ (which is `numeric_grad`'s default step, scaled to
# each entry). The generated gradient has no step at all; its error is round-off in evaluating the
# derivative formula, near $\varepsilon$.


# %%
def f_exp(x):
    return np.exp(x)


def f_tanh_log(x):
    return np.tanh(x) * np.log1p(x**2)


def f_sin_ratio(x):
    return np.sin(3.0 * x) / (1.0 + x**2)


cases = [
    (f_exp, 1.0, lambda x: np.exp(x)),
    (
        f_tanh_log,
        0.7,
        lambda x: (1 - np.tanh(x) ** 2) * np.log1p(x**2) + np.tanh(x) * 2 * x / (1 + x**2),
    ),
    (
        f_sin_ratio,
        0.4,
        lambda x: 3 * np.cos(3 * x) / (1 + x**2) - np.sin(3 * x) * 2 * x / (1 + x**2) ** 2,
    ),
]
steps = np.logspace(-15, -1, 57)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
generated_errors = {}
for ax, (f, x0, exact) in zip(axes, cases):
    d = float(exact(np.longdouble(x0)))  # reference in extended precision, then rounded
    forward = [abs((f(x0 + h) - f(x0)) / h - d) / abs(d) for h in steps]
    central = [abs((f(x0 + h) - f(x0 - h)) / (2 * h) - d) / abs(d) for h in steps]
    generated_errors[f.__name__] = abs(grad(f)(x0) - d) / abs(d)
    floor = 1e-17  # an error of exactly 0 cannot be drawn on a log scale; draw it at 1e-17
    ax.loglog(steps, np.maximum(forward, floor), ".-", label="forward difference")
    ax.loglog(steps, np.maximum(central, floor), ".-", label="central difference")
    ax.axhline(
        max(generated_errors[f.__name__], floor), color="k", lw=2, label="generated gradient"
    )
    ax.axvline(np.finfo(float).eps ** (1 / 3), color="gray", ls=":", lw=1)
    ax.set_title(f"{f.__name__} at x = {x0}")
    ax.set_xlabel("step h")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("relative error of the derivative")
axes[0].legend(loc="upper center", fontsize=8)
fig.tight_layout()
for name, error in generated_errors.items():
    print(f"{name}: relative error of the generated gradient {error:.1e}")

# %% [markdown]
# The V shapes are the two errors meeting: on the left, round-off grows like $1/h$ as the step shrinks; on the
# right, truncation grows like $h$ (forward) or $h^2$ (central). The dotted line is `numeric_grad`'s default step. The reference
# derivative is the closed form evaluated in extended precision; the generated gradient (black) agrees with it
# to round-off, about $10^{-16}$ (an error of exactly zero is drawn at $10^{-17}$), several orders of magnitude
# below the best any step achieves.
# That is why `check_grad` uses tolerances (`rtol=1e-5, atol=1e-7` by default), and why a check that
# passes means "agrees to within finite-difference accuracy", not "exact".

# %% [markdown]
# ## Assertions
#
# The notebook fails here if a generated gradient disagrees with the numeric one.

# %%
assert_grad_close(logistic_loss, w, x, y)
assert_grad_close(logistic_loss, rng.normal(size=3), x, y)
assert_grad_close(
    lambda a, b, c: np.sum(np.sin(a) * b**2) + np.sum(c * a), a, b, c, wrt=(0, 1), grad_fn=d_energy
)
assert_grad_close(rnn_loss, W, xs, h0)
assert_grad_close(rnn_loss, W, xs, h0, wrt=(0, 1, 2))
assert_grad_close(self_distill_fixed, w1, x, target1, grad_fn=lambda w, x, target: d_distill(w, x))
assert_grad_close(mlp_loss, params, x, targets)
assert not re.search(r"\bdtarget\b", source(d_distill))
assert not check_grad(logistic_loss, w, x, y, grad_fn=wrong_logistic_grad).passed
for f, x0, exact in cases:
    assert_grad_close(f, x0)
    assert generated_errors[f.__name__] < 1e-13
print("all gradient checks passed")
