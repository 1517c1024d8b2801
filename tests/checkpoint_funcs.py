"""Helpers marked with ``checkpoint`` and the same helpers unmarked, for
``tests/test_checkpoint.py``."""

import numpy as np

from transpile import checkpoint, stop_gradient


def _step(h, w):
    a = h * w
    b = np.tanh(a)
    c = np.sin(b) + b * a
    return c + 0.1 * stop_gradient(np.mean(c))


step = checkpoint(lambda h, w: _step(h, w))  # a lambda marked: its source is read too


@checkpoint
def marked_step(h, w):
    a = h * w
    b = np.tanh(a)
    c = np.sin(b) + b * a
    return c + 0.1 * stop_gradient(np.mean(c))


def plain_step(h, w):
    a = h * w
    b = np.tanh(a)
    c = np.sin(b) + b * a
    return c + 0.1 * stop_gradient(np.mean(c))


def marked_loop(w, h, n):
    for _ in range(n):
        h = marked_step(h, w)
    return np.sum(h**2)


def plain_loop(w, h, n):
    for _ in range(n):
        h = plain_step(h, w)
    return np.sum(h**2)


def marked_straight(w, h):
    g = marked_step(h, w)
    return np.sum(marked_step(g, w) * g)


def plain_straight(w, h):
    g = plain_step(h, w)
    return np.sum(plain_step(g, w) * g)


def marked_vector(w, h):
    return marked_step(h, w) * 2.0


def plain_vector(w, h):
    return plain_step(h, w) * 2.0
