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
# # Out of core: logistic regression on a dask cluster
#
# The generated gradient is plain Python calling `np.*` functions. Given
# [dask arrays](https://docs.dask.org/en/stable/array.html), those calls dispatch to dask (NEP-18), so the
# gradient of a loss over a data set chunked across a cluster is itself a *lazy* dask array: a task graph
# that the workers run block by block when it is computed. Nothing in the generated code computes on its
# own; only the user's own data-dependent `if` would.
#
# Here the cluster is a `LocalCluster` of two worker processes on this machine. On a real cluster the only
# change is the line that makes the client:
#
# ```python
# client = Client("scheduler-address:8786")
# ```
#
# The model is $p = \sigma(Xw + b)$ with labels $y \in \{0, 1\}$, trained by gradient descent on the mean
# negative log-likelihood plus a small ridge penalty, written in the numerically stable form
# $\log(1 + e^{z}) - y z$:
#
# $$L(w, b) = \frac1n \sum_i \bigl(\log(1 + e^{z_i}) - y_i z_i\bigr) + \lambda \lVert w \rVert^2, \qquad z = Xw + b.$$

# %%
import time

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from transpile import assert_grad_close, grad, source, value_and_grad

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
client = Client(cluster)  # on a real cluster: Client("scheduler-address:8786")
print(f"{len(client.scheduler_info()['workers'])} workers")

# %% [markdown]
# ## A data set made on the workers
#
# 200,000 rows of 10 features in 8 chunks of 25,000 rows. The rows are drawn *on the workers*
# (`dask.array.random`) and kept there (`persist`): the client never holds the data set. The labels come
# from a known weight vector through the logistic model.

# %%
n, d, rows_per_chunk = 200_000, 10, 25_000
rng = da.random.default_rng(0)
X = rng.standard_normal((n, d), chunks=(rows_per_chunk, d))
w_true = np.linspace(-2.0, 2.0, d)
b_true = 0.5
p_true = 1.0 / (1.0 + np.exp(-(X @ w_true + b_true)))
y = (rng.random(n, chunks=rows_per_chunk) < p_true).astype(np.float64)
X, y = client.persist([X, y])
print(X)
print(f"{X.numblocks[0]} chunks of {X.chunksize} rows x features")

# %% [markdown]
# ## The loss and its generated gradient
#
# The loss is ordinary numpy code. `grad` writes its gradient with respect to `w` and `b`; the same
# generated function serves numpy and dask arrays (each array type gets its own specialized variant).

# %%
LAMBDA = 1e-3


def loss(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z) + LAMBDA * np.sum(w * w)


dloss = grad(loss, wrt=("w", "b"))
loss_and_grad = value_and_grad(loss, wrt=("w", "b"))
print(source(dloss))

# %% [markdown]
# Called with dask arrays, the gradient returns at once: `dw` and `db` are dask arrays, graphs of tasks
# over the 8 chunks, not numbers yet.

# %%
w0, b0 = np.zeros(d), 0.0
start = time.perf_counter()
dw, db = dloss(w0, b0, X, y)
build_ms = (time.perf_counter() - start) * 1e3
graph_size = len(dw.__dask_graph__())
print(f"{type(dw).__module__}.{type(dw).__name__}, built in {build_ms:.1f} ms, {graph_size} tasks")
print(dw)

# %% [markdown]
# ## Gradient descent on the cluster
#
# Each step builds the graph of the loss and the gradient at the current parameters (numpy arrays on the
# client) and computes it on the workers with one `dask.compute`; only the 11 numbers of the gradient and
# the loss come back.

# %%
w, b = w0.copy(), b0
step_size = 4.0
losses, tasks = [], []
start = time.perf_counter()
for _ in range(40):
    value, (dw, db) = loss_and_grad(w, b, X, y)
    tasks.append(len(dw.__dask_graph__()))
    value, dw, db = dask.compute(value, dw, db)
    losses.append(float(value))
    w, b = w - step_size * dw, b - step_size * float(db)
elapsed = time.perf_counter() - start
print(f"40 steps in {elapsed:.1f} s; loss {losses[0]:.4f} -> {losses[-1]:.4f}")
print("w     ", np.round(w, 2))
print("w_true", w_true)

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
ax1.plot(losses, "o-", ms=3)
ax1.set_xlabel("gradient step")
ax1.set_ylabel("loss (mean NLL + ridge)")
ax1.set_title(f"logistic regression, n = {n:,} in {X.numblocks[0]} chunks")
ax1.grid(alpha=0.3)
ax2.bar(np.arange(d), w_true, width=0.4, label="true w", align="edge")
ax2.bar(np.arange(d) - 0.4, w, width=0.4, label="fitted w", align="edge")
ax2.set_xlabel("feature")
ax2.legend()
ax2.grid(alpha=0.3)
fig.tight_layout()

# %% [markdown]
# The graph of a step has a few tasks per chunk, and as many at every step after the first (the first
# call runs the generic gradient, later ones the variant specialized for these argument types and
# shapes): the cost of a step does not grow with the iteration.

# %%
print(f"tasks per gradient graph: {sorted(set(tasks))} ({tasks[0] / X.numblocks[0]:.1f} per chunk)")

# %% [markdown]
# ## Assertions
#
# On a subsample of 5,000 rows brought to the client: the generated gradient on dask arrays equals the
# generated gradient on numpy arrays, the hand-written gradient $X^\top(\sigma(z) - y)/n + 2\lambda w$, and
# central finite differences. The loss must have gone down and the fit must be near the true weights.

# %%
X_np, y_np = dask.compute(X[:5000], y[:5000])
X_sub = da.from_array(X_np, chunks=(1000, d))
y_sub = da.from_array(y_np, chunks=1000)

dw_dask, db_dask = dloss(w, b, X_sub, y_sub)
assert isinstance(dw_dask, da.Array) and isinstance(db_dask, da.Array)
dw_dask, db_dask = dask.compute(dw_dask, db_dask)
dw_np, db_np = dloss(w, b, X_np, y_np)
np.testing.assert_allclose(dw_dask, dw_np, rtol=1e-10, atol=1e-12)
np.testing.assert_allclose(db_dask, db_np, rtol=1e-10, atol=1e-12)

z = X_np @ w + b
residual = 1.0 / (1.0 + np.exp(-z)) - y_np
np.testing.assert_allclose(dw_np, X_np.T @ residual / len(y_np) + 2 * LAMBDA * w, rtol=1e-10)
np.testing.assert_allclose(db_np, np.mean(residual), rtol=1e-10, atol=1e-12)
assert_grad_close(loss, w, b, X_np, y_np, wrt=("w", "b"))

assert losses[-1] < 0.75 * losses[0]
assert np.max(np.abs(w - w_true)) < 0.5
client.close()
cluster.close()
print("all gradient checks passed")
