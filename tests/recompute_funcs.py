"""Loops whose adjoint needs a value that one operation makes from values at hand:
``tests/test_recompute.py`` checks which of them the reverse step computes again
instead of taping, and that each gradient matches central finite differences."""

import numpy as np

# --------------------------------------------------------------------------
# computed again


def residual(W, ys):
    """An RNN-like state and a residual against a target at every step."""
    h = np.zeros((ys.shape[1], W.shape[0]))
    loss = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h @ W + 0.5)
        d = h - ys[t]
        loss = loss + np.sum(d * d)
    return loss


def residual_list(W, ys, h0):
    """The residual squared inside the mean, the losses in a list."""
    h = h0
    losses = []
    for t in range(ys.shape[0]):
        h = np.tanh(h @ W)
        losses.append(np.mean((h - ys[t]) ** 2))
    return sum(losses) / len(losses)


def _step(h, W):
    return np.tanh(h @ W)


def residual_helper(W, ys, h0):
    """The step a helper function of the user's."""
    h = h0
    loss = 0.0
    for t in range(ys.shape[0]):
        h = _step(h, W)
        loss = loss + np.mean((h - ys[t]) ** 2)
    return loss


def scaled(w, c):
    """A product with a value the loop does not write, read through ``np.sin``."""
    h = w
    s = 0.0
    for _ in range(4):
        h = np.sin(h) + 0.3
        e = h * c
        s = s + np.sum(np.sin(e))
    return s


def negated(w):
    """A unary minus of the state."""
    h = w
    s = 0.0
    for _ in range(3):
        h = np.cos(h) * 1.5
        e = -h
        s = s + np.sum(e * e * e)
    return s


def branch_after(w, ys):
    """A branch after the residual reads it."""
    h = w
    s = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h * 1.3)
        d = h - ys[t]
        if t % 2 == 0:
            s = s + np.sum(d * d)
        else:
            s = s + np.sum(d * d * d)
    return s


def nested(w, ys):
    """The inner loop's residual against a target the outer loop picks."""
    h = w
    s = 0.0
    for i in range(ys.shape[0]):
        y = ys[i] * 0.5
        for _ in range(3):
            h = np.tanh(h * 0.9 + 0.1)
            d = h - y
            s = s + np.sum(d * d)
    return s


def while_loop(w, y):
    """A while loop with a residual, its counter counted before."""
    h = w
    s = 0.0
    n = 0
    while n < 4:
        n = n + 1
        h = np.sin(h) * 1.2
        d = h - y
        s = s + np.sum(d * d)
    return s


def counted_after(w, ys):
    """A while loop whose counter, read by the residual, is counted after it."""
    h = w
    s = 0.0
    t = 0
    while t < ys.shape[0]:
        h = np.sin(h) * 1.2
        d = h - ys[t]
        s = s + np.sum(d * d)
        t = t + 1
    return s


def with_break(w, ys):
    """A loop left early."""
    h = w
    s = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h * 1.1)
        d = h - ys[t]
        s = s + np.sum(d * d)
        if t == 2:
            break
    return s


# --------------------------------------------------------------------------
# taped as before: the value computed again might not be the primal's


def sorted_after(w, ys):
    """The target sorted in place after the residual (nothing undoes it)."""
    buf = ys.copy()
    h = w
    s = 0.0
    for t in range(buf.shape[0]):
        h = np.tanh(h * 1.2)
        d = h - buf[t]
        s = s + np.sum(d * d)
        buf.sort(axis=0)
    return s


def written_after(w, ys):
    """The target written into after the residual."""
    buf = ys[0].copy()
    h = w
    s = 0.0
    for t in range(3):
        h = np.tanh(h * 1.2)
        d = h - buf
        s = s + np.sum(d * d)
        buf[0] = 0.1 * t
    return s


def out_after(w, ys):
    """The target scaled through ``out=`` after the residual."""
    buf = ys.copy()
    h = w
    s = 0.0
    for t in range(buf.shape[0]):
        h = np.tanh(h * 1.2)
        d = h - buf[t]
        s = s + np.sum(d * d)
        np.multiply(buf, 0.5, out=buf)
    return s


def rebound_after(w, y):
    """The target rebound after the residual."""
    h = w
    s = 0.0
    for _ in range(3):
        h = np.tanh(h * 1.2)
        d = h - y
        s = s + np.sum(d * d)
        y = y * 0.5
    return s


def read_before(w, ys):
    """The residual read before it is written, in the next step."""
    h = w
    d = w * 0.0
    s = 0.0
    for t in range(ys.shape[0]):
        s = s + np.sum(d * h)
        h = np.tanh(h * 1.2)
        d = h - ys[t]
        s = s + np.sum(d * d)
    return s


def read_after_loop(w, ys):
    """The name of the residual read by an adjoint before the loop."""
    d = w * 2.0
    s = np.sum(np.sin(d))
    h = w
    for t in range(ys.shape[0]):
        h = np.tanh(h * 1.2)
        d = h - ys[t]
        s = s + np.sum(d * d)
    return s


def unkept_operand(w, ys):
    """An operand that the tape would not keep: taping it instead saves nothing."""
    h = w
    s = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h * 1.2)
        a = np.sin(h)
        d = a - ys[t]
        s = s + np.sum(d * d)
    return s


def in_branch(w, ys):
    """The residual made in a branch of the body."""
    h = w
    s = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h * 1.2)
        if t % 2 == 0:
            d = h - ys[t]
        else:
            d = h + ys[t]
        s = s + np.sum(d * d)
    return s


def scalar_residual(x):
    """Python floats: the residual against a constant."""
    h = x
    s = 0.0
    for _ in range(4):
        h = np.sin(h) * 1.3
        d = h - 0.5
        s = s + d * d
    return s


def sorted_after_loop(w, ys):
    """The rows the loop runs over sorted in place after it (nothing undoes it)."""
    rows = [ys[0].copy(), ys[1].copy(), ys[2].copy()]
    h = w
    s = 0.0
    for y in rows:
        h = np.tanh(h * 1.2)
        d = h - y
        s = s + np.sum(d * d)
    for r in rows:
        r.sort()
    return s


def _loss_of_loop(w, ys):
    h = w
    s = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h * 1.2)
        d = h - ys[t]
        s = s + np.sum(d * d)
    return s


def calls_loop(w, ys):
    """The loop in a helper: its forward and adjoint functions (split mode)."""
    return _loss_of_loop(w * 0.7, ys) * 2.0
