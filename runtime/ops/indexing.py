"""Adjoints of reading entries by index: ``g`` added into zeros at the places read
(repeated indices summed: ``add_at``, ``untake``, ``untake_along_axis``), and of the
diagonals ``np.diag`` and ``np.diagonal`` read.
"""

import numpy as np

from .. import backend
from .declare import helper
from .structures import add, zeros_like


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice, np.integer)) for p in parts)


@helper(shares=True)
def add_at(buf, index, g):
    """``buf[index] += g`` in place, summing repeated integer indices correctly."""
    if isinstance(buf, (list, dict)):
        buf[index] = add(buf[index], g)
    elif not _is_basic(index):
        backend.scatter_add(buf, index, g)
    elif type(buf) is np.ndarray:
        buf[index] += g
    else:
        backend.add_to_slice(buf, index, g)


@helper(fresh=True)
def scatter_added(buf, index, g):
    """A new array: ``buf`` with ``g`` added at ``index``, repeated indices summed
    (``add_at`` without writing into ``buf``): how a gradient that adds into an array
    at a computed index reads when it is differentiated again."""
    out = buf.copy()
    add_at(out, index, g)
    return out


@helper(shares=True)
def gather(a, index):
    """``a[index]``: the adjoint of ``scatter_added`` in what it adds."""
    return a[index]


@helper(shares=True)
def undiag(g, v, k=0):
    if np.ndim(v) == 1:
        return np.diag(g, k)
    out = np.zeros_like(v)
    n = len(np.diag(v, k))
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out[rows, cols] = g
    return out


@helper(fresh=True, linear=True)
def untake(g, a, indices, axis=None, mode="raise"):
    """Adjoint of ``np.take(a, indices, axis, mode=mode)``: ``g`` added into zeros shaped
    like ``a`` at the places taken (an index taken twice receives both)."""
    out = zeros_like(a)
    flat = out.reshape(-1) if axis is None else out  # a view: out is new and contiguous
    n = flat.shape[0 if axis is None else axis]
    if mode == "wrap":
        indices = np.mod(indices, n)
    elif mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    where = indices if axis is None else (slice(None),) * (axis % out.ndim) + (indices,)
    backend.scatter_add(flat, where, g)
    return backend.through_view(flat, out)


@helper(fresh=True)
def untake_along_axis(g, arr, indices, axis=-1):
    """Adjoint of ``np.take_along_axis(arr, indices, axis)``: ``g`` added into zeros shaped
    like ``arr`` at the places taken (twice where an index is taken twice)."""
    out = zeros_like(arr)
    if axis is None:
        flat = out.reshape(-1)  # a view: out is new and contiguous
        backend.scatter_add(flat, indices, g)
        return backend.through_view(flat, out)
    nd = np.ndim(arr)
    axis %= nd
    where = [
        indices if i == axis else np.reshape(np.arange(n), [-1 if j == i else 1 for j in range(nd)])
        for i, n in enumerate(np.shape(arr))
    ]
    backend.scatter_add(out, tuple(where), g)
    return out


@helper(fresh=True)
def undiagonal(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.diagonal(a, offset, axis1, axis2)``: ``g`` on that diagonal."""
    out = zeros_like(a)
    nd = np.ndim(a)
    moved = np.moveaxis(out, (axis1 % nd, axis2 % nd), (-2, -1))  # a view of out
    n = np.shape(g)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    moved[..., rows, cols] = g
    return out
