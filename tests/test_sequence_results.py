"""A call that returns a list or tuple of arrays (declared ``sequence_result``:
``np.split``, ``np.gradient``, ``np.atleast_1d`` of several, ``np.linalg`` and
``scipy.linalg`` factorizations), whose result is read whole by two differentiated
calls: its adjoint is a list or tuple too, and the two contributions add entry by
entry. (They were joined with ``+``, which concatenates: a wrong gradient, or a
broadcasting error.) Each against central differences, on a first and a later call,
and to second order."""

import fd
import numpy as np
import pytest

from transpile import grad, hvp

X = np.arange(1.0, 7.0) * 0.3
V = np.linspace(-1.0, 1.0, 6)


def split_read_twice(x):
    parts = np.split(x, 2)
    return np.sum(np.concatenate(parts) ** 2) + np.sum(np.stack(parts) * np.sin(x[0]))


def gradient_read_twice(x):
    gs = np.gradient(x.reshape(2, 3) ** 2)
    return np.sum(np.stack(gs) ** 2) + np.sum(np.concatenate(gs) * 2.0)


def atleast_read_twice(x):
    both = np.atleast_1d(x[0], x[1:])
    return np.sum(np.concatenate(both) ** 3) + np.sum(np.concatenate(both) * x[2])


def eigh_read_twice(x):
    a = np.outer(x[:3], x[:3]) + np.diag(x[3:]) + np.eye(3) * 3.0
    pair = np.linalg.eigh(a)
    return np.sum(np.concatenate([pair[0], pair[0] ** 2])) + np.sum(np.stack(pair[1:])[0] ** 4)


def slogdet_read_twice(x):
    a = np.outer(x[:3], x[3:]) + np.eye(3) * 2.0
    signed = np.linalg.slogdet(a)
    return np.sum(np.stack(signed) * 2.0) + np.sum(np.hstack(signed) ** 2)


# eigh's adjoint has no rule of its own (second order through it is refused by name)
CASES = [split_read_twice, gradient_read_twice, atleast_read_twice]


@pytest.mark.parametrize(
    "f", [*CASES, eigh_read_twice, slogdet_read_twice], ids=lambda f: f.__name__
)
def test_gradient(f):
    g = grad(f)
    want = fd.numeric_grad(f, [X], (0,))[0]
    for _ in range(2):
        fd.assert_close(g(X), want, rtol=1e-6, atol=1e-8, path=f.__name__)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    g = grad(f)
    want = fd.numeric_jvp(g, [X], (0,), [V], step=1e-4)
    product = hvp(f)
    for _ in range(2):
        fd.assert_close(product(X, V), want, rtol=1e-5, atol=1e-7, path=f.__name__)
