"""Programs written for this project in the styles of issue 21's items 4 and 6-10:
try/except around a factorization, ``with`` blocks, generators consumed by a loop,
``zip(*rows)`` as a value, a helper updating its caller's arrays in place, tuple
outputs, nested functions with docstrings."""

import threading
import time

import numpy as np

F = np.array([[1.0, 1.0], [0.0, 1.0]])
C = np.array([[1.0, 0.9], [0.9, 1.0]])


def kalman_loglik(q, ys, shift):
    """Log-likelihood of a local-trend model observed in noise. The innovation
    covariance is factorized by Cholesky; where that fails (``shift`` makes it
    indefinite at even steps), a jittered one is factorized instead."""
    x = np.zeros(2)
    P = np.eye(2)
    ll = 0.0
    for t in range(ys.shape[0]):
        x = F @ x
        P = F @ P @ F.T + q[0] * np.eye(2)
        S = P + q[1] * C - shift * ((t + 1) % 2) * np.eye(2)
        try:
            L = np.linalg.cholesky(S)
        except np.linalg.LinAlgError:
            L = np.linalg.cholesky(S + (shift + 1.0) * np.eye(2))
        r = ys[t] - x
        a = np.linalg.solve(L, r)
        ll = ll - 0.5 * a @ a - np.sum(np.log(np.diag(L)))
        K = P @ np.linalg.inv(L @ L.T)
        x = x + K @ r
        P = P - K @ P
    return ll


def first_innovation(q, shift):
    """The innovation covariance ``kalman_loglik`` factorizes first."""
    P = F @ F.T + q[0] * np.eye(2)
    return P + q[1] * C - shift * np.eye(2)


def gp_evidence(theta, X, y):
    """Negative log evidence of a GP whose kernel may be singular: try, except with
    the error named, else, finally."""
    d = X[:, None] - X[None, :]
    K = theta[0] * np.exp(-0.5 * d * d / theta[1]) - theta[2] * np.eye(X.shape[0])
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError as err:
        note = str(err)
        L = np.linalg.cholesky(K + (theta[2] + 0.5) * np.eye(X.shape[0]))
    else:
        note = ""
    finally:
        n = X.shape[0]
    alpha = np.linalg.solve(L, y)
    return (
        0.5 * alpha @ alpha
        + np.sum(np.log(np.diag(L)))
        + 0.5 * n * np.log(2 * np.pi)
        + 0.0 * len(note)
    )


def signed_roots(x):
    """sum of x_i * sign(x_i) sqrt|x_i|, the negative ones found by catching numpy's
    FloatingPointError under errstate(invalid="raise"), with two except clauses."""
    total = 0.0
    for i in range(x.shape[0]):
        with np.errstate(invalid="raise"):
            try:
                r = np.sqrt(x[i])
            except ZeroDivisionError:
                r = 0.0 * x[i]
            except FloatingPointError:
                r = -np.sqrt(-x[i])
        total = total + r * x[i]
    return total


_LOCK = threading.Lock()


class Stopwatch:
    """A timer: a context manager that touches no differentiated value."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start
        return False


def poisson_glm_loss(w, X, y):
    """Poisson regression's mean negative log-likelihood, under np.errstate (an
    overflowing rate is inf, not a warning), a lock and a timer."""
    with np.errstate(over="ignore", divide="ignore"):
        eta = X @ w
        rate = np.exp(eta)
    with _LOCK, Stopwatch() as watch:
        nll = np.sum(rate - y * eta)
    if watch.elapsed < 0.0:
        nll = nll * 0.0
    return nll / y.shape[0] + 0.5 * np.sum(w * w)


def layers(params, sizes):
    """The layers of a flat parameter vector: (W, b) of each, yielded in turn."""
    start = 0
    for k in range(len(sizes) - 1):
        m, n = sizes[k + 1], sizes[k]
        W = params[start : start + m * n].reshape(m, n)
        start = start + m * n
        b = params[start : start + m]
        start = start + m
        yield W, b


def residual_flow(params, h0, dt):
    """An explicit Euler integration through residual layers that a generator
    yields; the loss is the final state's squared norm."""
    h = h0
    for W, b in layers(params, (3, 3, 3)):
        h = h + dt * np.tanh(W @ h + b)
    return np.sum(h * h)


def residual_flow_listed(params, h0, dt):
    steps = list(layers(params, (3, 3, 3)))
    h = h0
    for W, b in steps:
        h = h + dt * np.tanh(W @ h + b)
    return np.sum(h * h) + np.sum(steps[0][1])


def polygon_area(points):
    """Shoelace area of a polygon given as a list of (x, y) vertex arrays... as rows
    [xs, ys]; zip(*rows) bound to one name, then iterated and indexed."""
    corners = zip(*points)
    area = 0.0
    previous = None
    for x, y in corners:
        if previous is not None:
            area = area + previous[0] * y - x * previous[1]
        previous = (x, y)
    cols = list(zip(*points))
    first, last = cols[0], cols[-1]
    area = area + last[0] * first[1] - first[0] * last[1]
    return 0.5 * area


def project(vx, vy):
    """One relaxation step of a toy pressure projection, in place on the fields."""
    vx -= 0.5 * (vx - vy[::-1])
    vy -= 0.25 * (vy - vx)
    return vx, vy


def advect(u, steps):
    vx = u * 1.0
    vy = np.sin(u)
    for _ in range(steps):
        vx, vy = project(vx, vy)
        vx = vx * 0.95
    return np.sum(vx * vy) + np.sum(vx**2)


def advect_reads_stale(u):
    vx = u * 1.0
    vy = np.sin(u)
    project(vx, vy)
    return np.sum(vx * vy)  # numpy reads the updated arrays here


def advect_users_array(u, v):
    vx, vy = project(u, v * 1.0)
    return np.sum(vx * vy)


def energies(q, p, m):
    """Kinetic and potential energy of point masses: a tuple output."""
    KE = 0.5 * np.sum(p**2 / m[:, None])
    PE = 0.0
    for i in range(q.shape[0]):
        for j in range(i + 1, q.shape[0]):
            PE = PE - m[i] * m[j] / np.linalg.norm(q[i] - q[j])
    return KE, PE


def hamiltonian_parts(q, p, m):
    KE, PE = energies(q, p, m)
    return KE, PE, KE + PE


def smoothed(x, width):
    def kernel(v):
        """A Gaussian bump.

        Written with a multi-line docstring, as library code is.
        """
        return np.exp(-0.5 * v * v / width)

    return np.sum(kernel(x) * x)


def make_penalty(scale):
    def penalty(w):
        """L2 penalty.

        Args:
            w: the weights.
        """
        return scale * np.sum(w * w)

    return penalty
