"""Functions that cannot be differentiated, for ``tests/test_errors.py``.

The line each error must point at ends with a ``# ERR`` comment; the test
finds it by searching the function's source, so lines may move freely.
Nothing here is called at import time.
"""

import math

import numpy as np

# --------------------------------------------------------------------------
# Unsupported statements and expressions


def uses_try(x):
    try:
        for _ in range(2):  # ERR
            x = x * 2.0
    except ValueError:
        pass
    return np.sum(x)


def uses_with(x):
    with open(__file__):
        if np.sum(x) > 0.0:
            return np.sum(x)  # ERR
        y = x * 2.0
    return np.sum(y)


def uses_yield(x):
    y = x * 2.0
    yield np.sum(y)  # ERR


async def uses_async(x):  # ERR
    return np.sum(x * 2.0)


SCALE = 2.0


def uses_global(x):
    global SCALE  # ERR
    return np.sum(x * SCALE)


def make_uses_nonlocal():
    scale = 2.0

    def uses_nonlocal(x):
        nonlocal scale  # ERR
        return np.sum(x * scale)

    return uses_nonlocal


def uses_del(x):
    y = x * 2.0
    z = np.sin(y)
    del y  # ERR
    return np.sum(z)


def uses_nested_class(x):
    class Box:  # ERR
        pass

    return np.sum(x * 2.0)


def recursive_local_def(x):
    def power(z, n):
        if n == 0:
            return z
        return power(z * x, n - 1)  # ERR

    return np.sum(power(x, 2))


def local_function_as_value(x):
    def double(z):  # ERR
        return z * 2.0

    fs = [double]
    return np.sum(fs[0](x))


def local_function_rebound(x):
    square = lambda z: z * z  # ERR
    y = square(x)
    square = lambda z: z * z * z
    return np.sum(y + square(x))


# --------------------------------------------------------------------------
# Active calls that have no rule and no source


def uses_i0(x):
    d = np.i0(x)  # ERR
    return np.sum(d) * 2.0


def i0_of_constant(x, A):
    return np.sum(x) * np.sum(np.i0(A))


def uses_erf(x):
    e = math.erf(x)  # ERR
    return e * 2.0


_made = {}
exec("def made_by_exec(z):\n    return z * 2.0\n", _made)
made_by_exec = _made["made_by_exec"]


def calls_exec_made(x):
    y = made_by_exec(x)  # ERR
    return np.sum(y)


# --------------------------------------------------------------------------
# Recursion: differentiated (once refused); without a base case, Python's
# RecursionError when the gradient runs, as when the function runs


def recursive(x, n):
    if n == 0:
        return np.sum(x)
    return recursive(x * 2.0, n - 1)


def ping(x, n):
    if n == 0:
        return np.sum(x)
    return pong(x * 2.0, n - 1)


def pong(x, n):
    if n == 0:
        return np.sum(x)
    return ping(x * 3.0, n - 1)


def endless(x):
    return np.sum(x) + endless(x * 0.5)


# --------------------------------------------------------------------------
# Writes into arguments


def writes_argument(x):
    x[0] = 1.0  # ERR
    return np.sum(x * x)


def writes_argument_view(x):
    v = x[1:]
    v[0] = 1.0  # ERR
    return np.sum(v * x[0])


# --------------------------------------------------------------------------
# Problems inside a callee


def helper_with_try(z):
    try:
        y = z * 2.0
    finally:
        return y  # noqa: B012  # ERR


def calls_helper_with_try(x):
    return np.sum(helper_with_try(x) * x)


def helper_with_i0(z):
    return np.sum(np.i0(z)) * 3.0  # ERR


def calls_helper_with_i0(x):
    y = helper_with_i0(x * 2.0)
    return y * y


# --------------------------------------------------------------------------
# More syntax that must be rejected with a location


def uses_walrus(x):
    if (total := np.sum(x)) > 0:  # ERR
        return total
    return -total


def uses_loop_else(x):
    for i in range(2):  # ERR
        x = x * 2.0
    else:  # noqa: PLW0120 (the loop else is what this case is about)
        x = x + 1.0
    return np.sum(x)


def uses_starred(x):
    parts = [x, x * 2.0]
    return np.sum(np.add(*parts))  # ERR


def uses_set_display(x):
    seen = {1, 2}  # ERR
    return np.sum(x) * len(seen)


def helper_with_kwargs(z, **options):  # ERR
    scale = options["scale"]
    return z * scale


def calls_helper_with_kwargs(x):
    return np.sum(helper_with_kwargs(x, scale=2.0))


def uses_method_without_rule(x):
    y = x.partition(1)  # ERR
    return np.sum(y * 2.0)


def random_with_active_mean(mu):
    z = np.random.normal(mu, 1.0)  # ERR
    return z * 2.0


def reparameterized(mu, sigma):
    z = mu + sigma * np.random.normal(size=3)
    return np.sum(z**2)


def or_of_values(x, y):
    z = x or y  # ERR
    return z * 2.0


def and_of_conditions(x):
    if np.sum(x) > 0 and np.max(x) < 10:
        return np.sum(x**2)
    return np.sum(x)


def view_read_after_write(x):
    out = np.zeros((2, 3))
    row = out[0]
    out[0] = x
    return np.sum(row * x)  # ERR


def view_read_in_later_iteration(x):
    out = np.zeros((3, 3))
    row = out[1]
    s = 0.0
    for i in range(3):
        s = s + np.sum(row * x)  # ERR
        out[i] = x * i
    return s


def recurrence_through_rows(x):
    out = np.zeros((3, 3))
    out[0] = x
    for i in range(1, 3):
        out[i] = out[i - 1] * 1.5
    return np.sum(out)


# --------------------------------------------------------------------------
# Augmented assignment that numpy would apply in place to a shared array


def augmented_assignment_through_alias(x):
    y = x * 2.0
    z = y
    z -= 1.0  # ERR
    return np.sum(y * z)


def helper_updating_its_argument(a):
    a *= 2.0  # ERR
    return a


def calls_helper_updating_its_argument(x):
    y = x * 1.0
    z = helper_updating_its_argument(y)
    return np.sum(y * z)


def applies_passed_function(x, act=np.i0):
    return np.sum(act(x))  # ERR
