"""Loops marked with ``checkpointed`` and the same loops unmarked, for
``tests/test_checkpointed_loops.py``: each ``marked_*`` has a ``plain_*`` twin that
differs only in the marker."""

import numpy as np

from transpile import checkpointed, stop_gradient

SNAPSHOTS = 3


def cell(h, w):
    return np.tanh(h * w)


def marked_branches(w, h, n):
    s = 0.0
    for t in checkpointed(range(n), snapshots=3):
        a = cell(h, w)
        if t % 3 == 0:
            h = a + 0.1 * h
        else:
            h = np.sin(a) * w
        s = s + np.sum(h) * 0.5
    return s + np.sum(h**2)


def plain_branches(w, h, n):
    s = 0.0
    for t in range(n):
        a = cell(h, w)
        if t % 3 == 0:
            h = a + 0.1 * h
        else:
            h = np.sin(a) * w
        s = s + np.sum(h) * 0.5
    return s + np.sum(h**2)


def marked_nested(w, h, n):
    for _ in checkpointed(range(n), snapshots=SNAPSHOTS):
        h = np.tanh(h * w)
        for _j in range(2):
            h = h + stop_gradient(np.mean(h)) * np.sin(h)
    return np.sum(h**2)


def plain_nested(w, h, n):
    for _ in range(n):
        h = np.tanh(h * w)
        for _j in range(2):
            h = h + stop_gradient(np.mean(h)) * np.sin(h)
    return np.sum(h**2)


def marked_while(w, h, tol):
    k = 0
    while checkpointed(np.max(np.abs(h)) > tol, snapshots=4):
        h = 0.7 * np.sin(h * w)
        k = k + 1
    return np.sum(h**2) * k


def plain_while(w, h, tol):
    k = 0
    while np.max(np.abs(h)) > tol:
        h = 0.7 * np.sin(h * w)
        k = k + 1
    return np.sum(h**2) * k


def marked_heat(u, kappa, steps):
    for _ in checkpointed(range(steps), snapshots=4):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + kappa * lap + 0.05 * np.sin(u)
    return np.sum(u**4)


def plain_heat(u, kappa, steps):
    for _ in range(steps):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + kappa * lap + 0.05 * np.sin(u)
    return np.sum(u**4)


def heat_20(u, kappa, steps):
    for _ in checkpointed(range(steps), snapshots=20):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + kappa * lap + 0.05 * np.sin(u)
    return np.sum(u**4)


def unmarked_two_loops(w, h, n):
    for _ in range(n):
        h = np.tanh(h * w)
    for _ in range(n):
        h = h * np.cos(h)
    return np.sum(h)


def breaks(w, h, n):
    for _ in checkpointed(range(n)):
        h = np.tanh(h * w)
        if np.sum(h) > 1.0:
            break
    return np.sum(h)


def appends(w, h, n):
    hs = []
    for _ in checkpointed(range(n)):
        h = np.tanh(h * w)
        hs.append(h)
    return np.sum(hs[-1])


def reads_the_index_after(w, h, n):
    t = 0
    for t in checkpointed(range(n)):
        h = np.tanh(h * w) * t
    return np.sum(h) * t


def over_rows(w, xs):
    s = 0.0
    for x in checkpointed(xs):
        s = s + np.sum(np.tanh(x * w))
    return s


def over_indices(w, xs):
    s = 0.0
    for i in checkpointed(range(xs.shape[0]), snapshots=2):
        s = s + np.sum(np.tanh(xs[i] * w))
    return s


def over_indices_plain(w, xs):
    s = 0.0
    for i in range(xs.shape[0]):
        s = s + np.sum(np.tanh(xs[i] * w))
    return s


def _relax(h, w, n):
    for _ in checkpointed(range(n), snapshots=2):
        h = np.tanh(h * w)
    return h


def in_a_helper(w, h, n):
    for _ in range(3):
        h = _relax(h, w, n) + 0.1
    return np.sum(h**2)


def nested_marked(w, h, n):
    for _ in checkpointed(range(n), snapshots=2):
        for _j in checkpointed(range(3), snapshots=2):
            h = np.sin(h * w)
    return np.sum(h**2)


def inside_a_plain_loop(w, h, n):
    for _ in range(3):
        for _j in checkpointed(range(n), snapshots=2):
            h = np.sin(h * w) + 0.1
    return np.sum(h**2)


def while_unmarked(w, h, tol):
    while np.max(np.abs(h)) > tol:
        h = 0.7 * np.sin(h * w)
    return np.sum(h**2)


def unsupported_in_body(w, h, n):
    for _ in checkpointed(range(n)):
        h = np.tanh(h * w)
        h = np.frexp(h)[0]
    return np.sum(h)
