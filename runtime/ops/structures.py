"""Adjoints of any structure: numbers, arrays, and dicts, lists and tuples of them.
Zeros shaped like a value, copies, sums of two adjoints, a gradient in the containers
of its argument or in its dtype (``cast_like``, ``unarray``), inner products and
scaling, a tuple with one entry replaced (``replaced``); the dict helpers of a tape
(``saved_item``, ``restore_item``, ``MISSING``), the iteration helpers of ``for``
loops, and ``UNSET``, a loop temporary before its first write.
"""

from collections.abc import Iterator

import numpy as np

from .. import backend
from .declare import helper


class _Unset:
    """The value of a loop temporary before the loop's first iteration writes it."""

    shape = ()

    def __repr__(self):
        return "ops.UNSET"


UNSET = _Unset()


@helper(shares=True)
def replaced(items, index, value):
    """The tuple ``items`` with entry ``index`` replaced by ``value`` (the forward rule
    of ``np.einsum``: one term per operand, with that operand's tangent)."""
    return (*items[:index], value, *items[index + 1 :])


@helper(passes=True)
def cast_like(g, x):
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return float(g) if np.ndim(g) == 0 else g
    if hasattr(g, "astype"):
        return g.astype(dtype, copy=False)
    return backend.as_array(g, x).astype(dtype, copy=False)  # a number: in x's library


@helper(fresh=True)
def inner(a, b):
    """``<a, b>``: the sum of ``a * b`` over the arrays and numbers of two structures of
    the same shape (dicts with the same keys, lists and tuples of the same length)."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()):
            raise TypeError(f"an inner product of {_kind(a)} and {_kind(b)}")
        return sum(inner(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            raise TypeError(f"an inner product of {_kind(a)} and {_kind(b)}")
        return sum(inner(x, y) for x, y in zip(a, b))
    return np.sum(a * b)


def _kind(value):
    if isinstance(value, dict):
        return f"a dict with keys {sorted(value)}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


@helper(fresh=True)
def scaled(tree, s):
    """``tree`` (an array, a number, or a dict, list or tuple of them) times the number
    ``s``, entry by entry, in the same structure."""
    if isinstance(tree, dict):
        return {k: scaled(v, s) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(scaled(v, s) for v in tree)
    return tree * s


@helper(shares=True)
def add(a, b):
    """Sum of two adjoints that may be containers (lists, tuples, dicts) of arrays."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        return {k: add(a[k], b[k]) for k in a}
    if isinstance(a, (list, tuple)):
        items = [add(x, y) for x, y in zip(a, b)]
        # a list appended to after an operation read it: that adjoint covers a prefix
        longer = a if len(a) > len(b) else b
        items += list(longer[len(items) :])
        return tuple(items) if isinstance(a, tuple) and isinstance(b, tuple) else items
    return a + b


class _Missing:
    """The old value of a dict key that did not exist yet."""

    def __repr__(self):
        return "ops.MISSING"


MISSING = _Missing()


@helper(fresh=True)
def saved_item(d, key):
    """A copy of ``d[key]`` to restore later, or ``MISSING`` when ``d`` has no ``key``."""
    return copy(d[key]) if key in d else MISSING


@helper(shares=True)
def restore_item(d, key, old):
    """``d[key] = old``, or remove ``key`` when it was ``MISSING``."""
    if old is MISSING:
        del d[key]
    else:
        d[key] = old


@helper(fresh=True)
def keys(d):
    """The keys of dict ``d`` as a list, in its order: what ``for k in d`` goes over."""
    if not hasattr(d, "keys"):
        raise TypeError(f"`.keys()`, `.values()` or `.items()` of a {type(d).__name__}: not a dict")
    return list(d.keys())


@helper(passes=True)
def iterated(seq):
    """What ``for item in seq`` goes over, indexable: a dict's keys, the items of an
    iterator (a generator, a ``zip`` or ``map`` object), else ``seq``."""
    return list(seq) if isinstance(seq, (dict, Iterator)) else seq


@helper(passes=True)
def uniterated(g, seq):
    """Adjoint of ``iterated(seq)``: ``g``, or none for a dict (keys carry none)."""
    return zeros_like(seq) if isinstance(seq, dict) else g


@helper(passes=True)
def iterated_tangent(t, seq):
    """Tangent of ``iterated(seq)``: ``t``, or a zero per key of a dict."""
    return [0.0] * len(seq) if isinstance(seq, dict) else t


@helper(fresh=True)
def zeros_like(x):
    """A zero adjoint shaped like ``x``: arrays, Python numbers, and containers."""
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [zeros_like(v) for v in x]
    if x is None:
        return None
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype.kind not in "fc":  # an integer input: a float gradient
        return np.zeros_like(x, dtype=np.float64)
    return np.zeros_like(x)


@helper(fresh=True)
def copy(x):
    if isinstance(x, (list, tuple)):
        return [copy(v) for v in x]
    if isinstance(x, dict):
        return {k: copy(v) for k, v in x.items()}
    return x.copy() if hasattr(x, "copy") else x


@helper(passes=True)
def unarray(g, a):
    if isinstance(a, (list, tuple)):
        return [unarray(g[i], x) for i, x in enumerate(a)]
    return cast_like(g, a) if np.ndim(a) else (float(g) if isinstance(a, float) else g)


@helper(passes=True)
def like(g, x):
    """``g`` in the container types of ``x``: tuples where ``x`` has tuples."""
    if isinstance(x, dict):
        return {k: like(g[k], v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [like(a, b) for a, b in zip(g, x)]
        return tuple(items) if isinstance(x, tuple) else items
    return g


@helper(fresh=True)
def except_clause(exception, *types):
    """The number (from 1) of the first except clause whose types ``exception`` is an
    instance of: the handler Python runs, for a try statement with several."""
    for i, kinds in enumerate(types, 1):
        if isinstance(exception, kinds):
            return i
    raise exception  # not reached: the clause that called this caught only ``types``
