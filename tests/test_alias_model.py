"""The one model of what shares memory: ``rules.declare.memory`` of a call's declaration.

Every pass that asks whether a value may be another's memory (the view-after-write
refusal, ``out=``, the in-place check of ``+=``, ownership of returned gradients)
reads the same answer. Here the answer is checked against numpy itself
(``np.shares_memory`` on sample arguments), and each pass against finite differences
or its refusal.
"""

import gast
import numpy as np
import pytest

from transpile import TranspileError, grad
from transpile.rules import registry
from transpile.rules.declare import Memory, memory

A = np.arange(6.0).reshape(2, 3)


def _keywords(source):
    return gast.parse(f"f({source})").body[0].value.keywords


# (function, arguments, keywords as source): numpy's own answer decides
FUNCTIONS = [
    (np.reshape, (A, (3, 2)), ""),
    (np.transpose, (A,), ""),
    (np.ravel, (A,), ""),
    (np.squeeze, (A,), ""),
    (np.expand_dims, (A, 0), ""),
    (np.swapaxes, (A, 0, 1), ""),
    (np.moveaxis, (A, 0, 1), ""),
    (np.flip, (A,), ""),
    (np.fliplr, (A,), ""),
    (np.flipud, (A,), ""),
    (np.rot90, (A,), ""),
    (np.asarray, (A,), ""),
    (np.asanyarray, (A,), ""),
    (np.ascontiguousarray, (A,), ""),
    (np.asfortranarray, (A.T,), ""),
    (np.require, (A,), ""),
    (np.rollaxis, (A, 1), ""),
    (np.atleast_2d, (A,), ""),
    (np.real, (A,), ""),
    (np.diagonal, (A,), ""),
    (np.broadcast_to, (A, (4, 2, 3)), ""),
    (np.lib.stride_tricks.sliding_window_view, (A, 2, 1), ""),
    (np.diff, (A, 0), ""),
    (np.array, (A,), "copy=False"),
    (np.array, (A,), ""),
    (np.copy, (A,), ""),
    (np.zeros_like, (A,), ""),
    (np.sqrt, (A,), ""),
    (np.conjugate, (A,), ""),
    (np.concatenate, ([A, A],), ""),
    (np.sum, (A, 0), ""),
    (np.cumsum, (A,), ""),
    (np.nan_to_num, (A,), ""),
]

METHODS = [
    ("reshape", ((3, 2),), ""),
    ("ravel", (), ""),
    ("transpose", (), ""),
    ("swapaxes", (0, 1), ""),
    ("squeeze", (), ""),
    ("view", (), ""),
    ("conj", (), ""),
    ("conjugate", (), ""),
    ("diagonal", (), ""),
    ("astype", (np.float64,), ""),
    ("astype", (np.float64,), "copy=False"),
    ("copy", (), ""),
    ("flatten", (), ""),
    ("sum", (0,), ""),
    ("cumsum", (), ""),
    ("dot", (A.T,), ""),
    ("clip", (0.0, 2.0), ""),
]


def _shares(out, arrays):
    outs = out if isinstance(out, (list, tuple)) else [out]
    return any(np.shares_memory(o, a) for o in outs for a in arrays)


def _keyword_values(source):
    return {k.arg: k.value.value for k in _keywords(source)}


@pytest.mark.parametrize("f, args, kw", FUNCTIONS, ids=lambda v: getattr(v, "__name__", None))
def test_declared_memory_of_functions_is_numpys(f, args, kw):
    out = f(*args, **_keyword_values(kw))
    kind = memory(registry().declaration(f), _keywords(kw))
    if _shares(out, [A]):
        assert kind in (Memory.FIRST, Memory.DATA, Memory.ANY), (f, kind)
    if kind is Memory.FRESH:
        assert not _shares(out, [A]) and out.flags.writeable, f


@pytest.mark.parametrize("attr, args, kw", METHODS)
def test_declared_memory_of_methods_is_numpys(attr, args, kw):
    out = getattr(A, attr)(*args, **_keyword_values(kw))
    kind = memory(registry().method_declaration(attr), _keywords(kw))
    if _shares(out, [A]):
        assert kind in (Memory.FIRST, Memory.DATA, Memory.ANY), (attr, kind)
    if kind is Memory.FRESH:
        assert not _shares(out, [A]) and out.flags.writeable, attr


def test_the_method_conj_of_a_real_array_is_the_array_itself():
    # why ``x.conj()`` is declared apart from the ufunc ``np.conjugate``
    assert A.conj() is A and np.conjugate(A) is not A
    assert memory(registry().method_declaration("conj")) is Memory.FIRST
    assert memory(registry().declaration(np.conjugate)) is Memory.NEW


def _fd(f, x, h=1e-6):
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


X = np.array([0.5, -1.25, 2.0])


# a view read after a write into its array: refused, whichever declaration made it


def conj_read_after_write(x):
    out = np.ones(3)
    r = out.conj()
    out[0] = x[0]
    return np.sum(r * x)


def astype_no_copy_read_after_write(x):
    out = np.ones(3)
    r = out.astype(np.float64, copy=False)
    out[0] = x[0]
    return np.sum(r * x)


def array_no_copy_read_after_write(x):
    out = np.ones(3)
    r = np.array(out, copy=False)
    out[0] = x[0]
    return np.sum(r * x)


def contiguous_read_after_write(x):
    out = np.ones(3)
    r = np.ascontiguousarray(out)
    out[0] = x[0]
    return np.sum(r * x)


@pytest.mark.parametrize(
    "f",
    [
        conj_read_after_write,
        astype_no_copy_read_after_write,
        array_no_copy_read_after_write,
        contiguous_read_after_write,
    ],
)
def test_a_view_read_after_a_write_into_its_array_is_refused(f):
    with pytest.raises(TranspileError, match="is a view of 'out', read after a write"):
        grad(f)(X)


# a copy read after a write into the original: differentiated


def astype_copy_read_after_write(x):
    out = x * 2.0
    r = out.astype(np.float64)
    out[0] = x[1] * x[2]
    return np.sum(r * out)


def array_copy_read_after_write(x):
    out = x * 2.0
    r = np.array(out)
    out[1] = np.sin(x[0])
    return np.sum(r * out)


@pytest.mark.parametrize("f", [astype_copy_read_after_write, array_copy_read_after_write])
def test_a_copy_read_after_a_write_is_differentiated(f):
    g = grad(f)
    for _ in range(2):  # the first call and a later one
        np.testing.assert_allclose(g(X), _fd(f, X), rtol=1e-6, atol=1e-9)


# ``+=`` on a name that may be the caller's array: refused where another name sees it


def conj_updated(x):
    y = x.conj()
    y += 1.0
    return np.sum(y * x)


def astype_no_copy_updated(x):
    y = x.astype(np.float64, copy=False)
    y += 1.0
    return np.sum(y * x)


def contiguous_updated(x):
    y = np.ascontiguousarray(x)
    y += 1.0
    return np.sum(y * x)


@pytest.mark.parametrize("f", [conj_updated, astype_no_copy_updated, contiguous_updated])
def test_an_update_seen_through_another_name_is_refused(f):
    with pytest.raises(TranspileError):
        grad(f)(X)
    x = X.copy()
    f(x)  # what numpy does: the caller's array changed
    assert not np.array_equal(x, X)


def astype_updated(x):
    y = x.astype(np.float64)
    y += 1.0
    return np.sum(y * x)


def test_an_update_of_a_copy_is_differentiated():
    g = grad(astype_updated)
    for _ in range(2):
        x = X.copy()
        np.testing.assert_allclose(g(x), 2.0 * X + 1.0, rtol=1e-12)
        np.testing.assert_array_equal(x, X)


def masked_write_into_a_fresh_result(v):
    r = np.sqrt(v * v + 1.0)
    r[r > 1.5] = 1.0 / r[r > 1.5]
    return np.sum(r * v)


def test_a_masked_write_into_a_fresh_result_is_differentiated():
    g = grad(masked_write_into_a_fresh_result)
    for _ in range(2):
        np.testing.assert_allclose(
            g(X), _fd(masked_write_into_a_fresh_result, X), rtol=1e-6, atol=1e-9
        )


def transpose_read_after_write(x):
    out = np.zeros((2, 2))
    r = out.T
    out[0, 1] = x
    return np.sum(r * x)


def test_the_transpose_of_an_array_written_afterwards_reads_the_write():
    # numpy gives r[1, 0] == x, so the function is x * x and its derivative 2x; a model
    # without .T as a view gave x. (``retake`` takes the view again where it is read.)
    g = grad(transpose_read_after_write)
    for _ in range(2):
        assert g(1.5) == pytest.approx(3.0, rel=1e-12)
