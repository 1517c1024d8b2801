"""Functions for ``test_fuse.py``: elementwise chains that ``grad(f, fuse=True)``
evaluates with numexpr, and chains cut by what numexpr cannot do."""

import numpy as np


def chain(x):
    """One chain from the argument to the loss: sin, multiply, add, cos, multiply."""
    a = np.sin(x)
    b = np.cos(a * x + 1.0)
    return np.sum(b * x)


def shown(x):
    """``chain`` again, for the test that reads its variant's code: a variant built
    later for another signature of the same gradient numbers its new names on."""
    a = np.sin(x)
    b = np.cos(a * x + 1.0)
    return np.sum(b * x)


def scaled(x, k):
    """A Python float argument read inside the chain."""
    y = np.sqrt(x * x + k) * np.cos(k * x)
    return np.sum(y - np.abs(x) * 0.5)


def named_like_numexpr(x):
    """Local names numexpr takes for its own functions (``sin``, ``where``) and the
    name the fused code would call numexpr by."""
    sin = np.cos(x) * 2.0 + x
    where = sin * sin - x
    numexpr = np.sin(where) + 1.0
    return np.sum(numexpr * sin)


def through_matmul(x, W):
    """A chain, a matrix product, another chain: the product stays numpy."""
    h = np.sin(x * 2.0) * x + 1.0
    z = h @ W
    return np.sum(np.cos(z) * z - z * z)


def through_sum(x):
    """A full reduction in the middle: ``s`` is a number the second chain reads."""
    a = np.cos(x) * x + x
    s = np.sum(a * a)
    b = np.sin(a * s) * a
    return np.sum(b + a)


def nothing_to_fuse(x, W):
    """A matrix product and ``exp``, which numpy computes faster than numexpr: its
    adjoint is one product, nothing to fuse."""
    return np.sum(np.exp(x @ W))


def cut_by_tanh(x):
    """``tanh`` between two chains: numpy computes it, each side fuses."""
    a = np.sin(x) * x + 1.0
    b = np.tanh(a)
    return np.sum(np.cos(b) * b * x)


def two_outputs(x, y):
    """Gradients for two arguments, each a chain."""
    u = np.sin(x) * y + np.cos(y)
    return np.sum(u * u * x)


def repeated(x):
    """Names written twice: the second ``a`` reads the first."""
    a = np.sin(x) + x
    a = a * a - np.cos(a)
    a = np.sqrt(a * a + 1.0) * x
    return np.sum(a)


def with_counts(x, n):
    """An integer array argument: numexpr computes ``n * 2.0`` as a float, as numpy
    does, only while the 2.0 is written as a float (``n * 2`` would be an int), and
    ``n ** 2.0`` as ``n * n``, an int: that line is left to numpy."""
    m = (n * 2.0 + 1.0) * 3.0 - n
    k = n**2.0 + m * 0.5 + 1.0
    return np.sum(np.sin(x) * m + np.cos(x) * k)


# --------------------------------------------------------------------------
# Blocks (regions of elementwise lines evaluated a block of entries at a time)


def rebinds(x, k):
    """A number computed between two lines of a region (evaluated once, before)."""
    x = np.sin(x) * k + x
    h = k * 0.5 + 1.0
    y = np.cos(x) * x - h
    return np.sum(y * y)


def through_axis_sum(x):
    """A reduction over one axis between two regions: its row broadcasts against the
    second region's values, which is no elementwise line of one shape."""
    a = np.sin(x) * x + 1.0
    s = np.sum(a, axis=0)
    b = np.cos(a) * s
    return np.sum(np.sqrt(b * b + 1.0) * a)


def read_after(x, W):
    """Values of a region read after it: ``u`` by the loss's gradient, and its adjoint
    ``du``, a sum begun by one region and ended by the next (the rebinding reads the
    first one's array as it was)."""
    u = np.cos(x) * x
    h = np.tanh(u * 2.0) + u
    return np.sum(h @ W) + np.sum(u * u)


def logs(x):
    """``np.log(x)``: its gradient divides by ``x``, which ``np.errstate`` may refuse."""
    return np.sum(np.log(x) * x + np.sqrt(x))
