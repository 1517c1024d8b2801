"""What differs between array libraries, in one place: numpy's own fast paths, and
the portable forms the runtime uses for any other NEP-13/18 array type (cupy,
dask, a strict test double).

The runtime calls ``np.*`` functions, which dispatch to the array's library through
``__array_function__`` and ``__array_ufunc__``; creation functions pass ``like=`` an
argument (NEP-35) so that a new array belongs to the argument's library. What not
every library supports goes through here: ``ufunc.at`` (a scatter), ``fill``, and
views that a write goes through. Nothing here converts an array to numpy (no
``np.asarray`` of a possibly device array).
"""

import itertools
import math

import numpy as np


def as_array(value, *likes):
    """``value`` (a number, or a list or tuple of numbers or arrays) as an array of the library of the
    first array among ``likes`` and the items of ``value`` that is not numpy's (NEP-35
    ``like=``), else a numpy array; an array as it is."""
    if hasattr(value, "ndim"):
        return value
    items = value if isinstance(value, (list, tuple)) else ()
    for like in (*likes, *items):
        if type(like) is not np.ndarray and hasattr(like, "__array_function__"):
            return np.asarray(value, like=like)
    return np.asarray(value)


def scatter_add(buf, index, g):
    """``buf[index] += g`` in place with repeated indices summed (``np.add.at``).

    numpy uses ``np.add.at``; other libraries need not have ``ufunc.at`` (dask has
    not), so for them the positions ``index`` reaches are numbered and the entries of
    ``g`` summed per position by ``np.bincount``, which they do have."""
    if type(buf) is np.ndarray:
        np.add.at(buf, index, g)
        return
    shape = np.shape(buf)
    n = size(buf)
    positions = _chunked_as(np.reshape(np.arange(n, like=buf), shape), buf)[index]
    if not _same_shape(np.shape(g), np.shape(positions)):
        g = np.broadcast_to(g, np.shape(positions))
    values = _chunked_as(g, positions)
    total = np.bincount(np.reshape(positions, (-1,)), np.reshape(values, (-1,)), n)
    buf[...] = buf + np.reshape(total, shape).astype(buf.dtype, copy=False)


def _same_shape(a, b):
    """Shapes equal, a length unknown (dask's ``nan`` after a boolean mask) matching any:
    two selections by the same mask have the same unknown lengths."""
    return len(a) == len(b) and all(
        x == y or unknown_length(x) or unknown_length(y) for x, y in zip(a, b)
    )


def unknown_length(n):
    """A length dask does not know yet (``nan``: the result of a boolean mask)."""
    return isinstance(n, float) and math.isnan(n)


def _chunked_as(x, like):
    """``x`` cut into the blocks of ``like`` where both are chunked (dask, whose
    ``bincount`` wants its weights in the blocks of its positions, and whose mask
    indexing keeps blocks aligned only between arrays chunked alike); else ``x``.
    Blocks of unknown lengths (after a boolean mask) cannot be cut again: such ``x``
    comes from the same mask, in the same blocks, and is left as it is."""
    chunks = getattr(like, "chunks", None)
    if chunks is None or getattr(x, "chunks", chunks) == chunks or not hasattr(x, "rechunk"):
        return x
    if any(unknown_length(c) for dim in chunks for c in dim):
        return x
    return x.rechunk(chunks)


def add_to_slice(buf, index, g):
    """``buf[index] += g`` for a basic index (ints, slices, ``None``, ``...``). numpy
    writes through the view; a library whose writes take no ``None`` (dask) gets the
    index without it, and ``g`` reshaped to what that index selects."""
    parts = index if isinstance(index, tuple) else (index,)
    if all(p is not None for p in parts):
        buf[index] += g
        return
    kept = tuple(p for p in parts if p is not None)
    target = np.shape(buf[kept])
    buf[kept] += np.reshape(np.broadcast_to(g, np.shape(buf[index])), target)


def through_view(flat, out):
    """``out``, written through its view ``flat``; where the library made ``flat`` a
    copy instead of a view (it has no ``base``), ``flat`` shaped as ``out``."""
    if flat is out or getattr(flat, "base", None) is not None:
        return out
    return np.reshape(flat, np.shape(out))


def fill(out, value):
    """``out`` with every entry set to the number ``value``, in place (numpy's
    ``fill``; a broadcast write for libraries without it)."""
    if type(out) is np.ndarray:
        out.fill(value)
    else:
        out[...] = value
    return out


def size(x):
    """The number of entries of ``x`` (``np.size``, which not every library has)."""
    return math.prod(np.shape(x))


def split(g, bounds, axis=0):
    """``np.split(g, bounds, axis)`` by slicing, which every library has: the parts of
    ``g`` between the increasing positions ``bounds`` along ``axis``."""
    lead = (slice(None),) * (axis % np.ndim(g))
    cuts = [0, *bounds, None]
    return [g[(*lead, slice(a, b))] for a, b in itertools.pairwise(cuts)]


def inverse_permutation(axes):
    """The axes that undo ``transpose(axes)``, as a tuple of ints (every library's
    ``transpose`` takes one; not every one takes a numpy array)."""
    return tuple(sorted(range(len(axes)), key=list(axes).__getitem__))
