"""Recursive functions differentiated by tests/test_recursion.py (the transpiler
reads their source, so they live in a file)."""

import numpy as np

# --------------------------------------------------------------------------
# Direct recursion


def log_partition(x, n):
    """log(e^x + e^(x/2) + ... ) over n halvings: a logaddexp chain."""
    return x if n == 0 else np.logaddexp(x, log_partition(x * 0.5, n - 1))


def log_partition_loss(x):
    return np.sum(log_partition(x, 4))


def smooth(x):
    return np.sum(np.tanh(x) * x)


def total(xs, i):
    return 0.0 if i == len(xs) else smooth(xs[i]) + total(xs, i + 1)


def total_loss(xs):
    return np.sum(total(xs, 0))


def power_sum(a, b, n):
    """Recursion whose call differentiates another argument than the caller:
    ``a`` and ``b`` swap places at each level."""
    if n == 0:
        return np.sum(a * b)
    return np.sum(np.sin(a)) + power_sum(b, a * a, n - 1)


def scaled_chain(w, x, n):
    """The gradient with respect to several arguments of every level."""
    if n == 0:
        return np.sum(w * x)
    return np.sum(np.tanh(w @ x)) + scaled_chain(w * 0.9, np.cos(x), n - 1)


def depth_sum(x, n):
    if n == 0:
        return np.sum(x * x)
    return 0.01 * np.sum(np.sin(x)) + depth_sum(x * 0.999, n - 1)


def depth_200(x):
    return depth_sum(x, 200)


def helper_in_loop(x, depth):
    out = 0.0
    for k in range(3):
        out = out + log_partition(x * (k + 1.0), depth)
    return np.sum(out)


def with_early_return(x, n):
    if n <= 0:
        return np.sum(np.exp(x))
    y = np.sin(x)
    if n % 2 == 0:
        return with_early_return(y * 1.1, n - 1) + np.sum(y)
    return with_early_return(x * y, n - 2)


def product_of_items(xs, i):
    if i == 0:
        return xs[0]
    return xs[i] * product_of_items(xs, i - 1)


def product_loss(x):
    return np.sum(product_of_items(x, 3))


def apply_n(f, x, n):
    """A function passed down the recursion."""
    return x if n == 0 else apply_n(f, f(x), n - 1)


def apply_loss(x):
    return np.sum(apply_n(np.sin, x, 3))


def make_closure(c):
    """A closure that calls itself through its own cell and reads the factory's ``c``."""

    def rec(x, n):
        return np.sum(x) if n == 0 else rec(x * c, n - 1) + np.sum(np.cos(x))

    return rec


# --------------------------------------------------------------------------
# Mutual recursion


def even(x, n):
    if n == 0:
        return np.sum(x)
    return odd(np.sin(x), n - 1)


def odd(x, n):
    if n == 0:
        return np.sum(x * x)
    return even(x * 1.5, n - 1)


def three_a(x, n):
    if n == 0:
        return np.sum(np.cos(x))
    return three_b(x * 0.8, n - 1) + three_c(x, n - 1)


def three_b(x, n):
    if n == 0:
        return np.sum(x)
    return three_c(np.tanh(x), n - 1)


def three_c(x, n):
    if n == 0:
        return np.sum(x * x)
    return three_a(x + 0.1, n - 1) * 0.5 + three_b(x, n - 1)


# --------------------------------------------------------------------------
# A helper that a test rebinds: the recursion's gradient follows


def scale(x):
    return x * 2.0


def uses_scale(x, n):
    if n == 0:
        return np.sum(scale(x))
    return calls_back(x, n - 1)


def calls_back(x, n):
    return uses_scale(np.sin(x), n)


# --------------------------------------------------------------------------
# No base case reachable: Python's RecursionError at run time


def no_base_case(x, n):
    return np.sum(x) + no_base_case(x * 0.5, n + 1)
