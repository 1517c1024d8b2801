"""Broadcasting and its adjoint, summing: ``unbroadcast`` sums an adjoint over the axes
an operand was broadcast along, ``unreduce`` broadcasts the adjoint of a reduction back
to its input (a read-only view where that is cheaper than a fill), and the stand-ins
for a value that an adjoint reads only for its shape, dtype and array library
(``shape_of``, ``broadcast_like``). These are the hottest helpers: every ``+`` of
arrays of different shapes and every ``np.sum`` calls one, so their common cases come
first and do the least.
"""

import math
import numbers

import numpy as np

from .. import backend
from .arrays import _axes, _like, _shape
from .declare import helper
from .structures import unarray


def _unbroadcast_entries(g, x):
    """``unbroadcast`` of a list or tuple ``g``: entry by entry where it is a contribution
    to the list or tuple ``x`` (a list argument of a defvjp rule, as a loop's tape rule
    to second order); any other list is arithmetic on lists the compiler did not see."""
    if isinstance(x, (list, tuple)) and len(g) == len(x):
        return type(g)(unbroadcast(a, b) for a, b in zip(g, x))
    raise TypeError(
        "an operation on lists or tuples was differentiated as arithmetic: "
        "a `+` or `*` of lists that the transpiler could not see as such "
        "(for example entries of a parameter structure); wrap each operand in "
        "list(...) so that it is seen as a list"
    ) from None  # (raised while unbroadcast handles an AttributeError)


@helper(passes=True, linear=True, shape_args=(1,), specialized=True)
def unbroadcast(g, x):
    """Sum ``g`` over the axes along which ``x`` was broadcast, to ``x``'s shape."""
    if isinstance(x, float):  # a Python or numpy float operand
        if isinstance(g, float):
            return g
        xs, gs = (), getattr(g, "shape", ())
    else:
        try:  # arrays or numpy scalars: the common case
            xs, gs = x.shape, g.shape
        except AttributeError:  # a Python number, a recorded shape, a list
            if isinstance(g, (list, tuple)):
                return _unbroadcast_entries(g, x)
            xs, gs = _shape(x), getattr(g, "shape", ())
    if gs == xs:
        return g
    if not xs:
        return _sum(g, None)
    extra = len(gs) - len(xs)
    if extra == 1 and gs[1:] == xs:  # a bias broadcast over the batch axis
        return _sum(g, 0)
    ones = tuple(extra + i for i, n in enumerate(xs) if n == 1 and gs[extra + i] != 1)
    if not ones:  # only leading axes were added: sum them away
        return _sum(g, tuple(range(extra)))
    g = _sum(g, tuple(range(extra)) + ones, keepdims=True)
    return g.reshape(xs) if extra else g


def _sum(g, axis, keepdims=False):
    """``np.sum``; for numpy arrays ``np.add.reduce``, which skips ``np.sum``'s Python
    layer (other array libraries need not have ``ufunc.reduce``)."""
    if type(g) is np.ndarray:
        return np.add.reduce(g, axis=axis, keepdims=keepdims)
    return np.sum(g, axis=axis, keepdims=keepdims)


@helper(shares=True, linear=True, shape_args=(1,), specialized=True)
def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the adjoint of a reduction back to the shape of its input."""
    if isinstance(x, list) or type(x) is tuple and not all(type(n) is int for n in x):
        return unarray(unreduce(g, backend.as_array(x, g), axis, keepdims), x)  # np.sum([a, b])
    shape = _shape(x)
    if not shape:
        return _unreduce_to_number(g, x)
    if not keepdims and axis is not None and not isinstance(g, numbers.Number):
        # (a number is the adjoint of a reduction over every axis: it broadcasts as it is)
        kept = list(shape)
        for a in _axes(len(shape), axis):
            kept[a] = 1
        g = g.reshape(kept) if hasattr(g, "reshape") else np.reshape(g, kept)
    like = x.first if isinstance(x, _BroadcastLike) else x
    dtype = getattr(x, "dtype", None)
    if like is not None and dtype is not None:
        return _spread_like(g, like, dtype, shape)
    return np.broadcast_to(g, shape)


def _unreduce_to_number(g, x):
    """``unreduce`` for a 0-d ``x``: ``g`` itself, in ``x``'s dtype where ``g`` is a
    Python float (a 0-d array of ``x``'s library where ``x`` is not numpy's)."""
    dtype = getattr(x, "dtype", None)  # a 0-d x: its dtype, even for a Python-float g
    if dtype is None or not isinstance(g, float):
        return g
    like = x.first if isinstance(x, _BroadcastLike) else x
    if type(like) is np.ndarray or like is None or isinstance(like, np.generic):
        return dtype.type(g)
    return backend.as_array(g, like).astype(dtype, copy=False)  # a 0-d array of x's library


def _spread_like(g, like, dtype, shape):
    """``g`` broadcast to ``shape`` as an array of ``like``'s library and of ``dtype``
    (a float one): a fresh array where that is small, else a read-only broadcast view."""
    if dtype.kind not in "fc":  # the gradient of integers is a float
        dtype = np.float64
    scalar = getattr(g, "ndim", 0) == 0
    if any(map(backend.unknown_length, shape)):  # dask after a mask: known later
        return np.zeros_like(like, dtype=dtype) + g
    if math.prod(shape) <= _SMALL:
        # a fresh array of x's array module (cupy stays cupy): small arrays are
        # cheaper to fill than to use as a broadcast view
        out = np.empty_like(like, dtype=dtype, shape=shape)
        if scalar:
            return backend.fill(out, g)
        out[...] = g
        return out
    if scalar and isinstance(g, (numbers.Number, np.generic)):
        # a large one is a read-only view of one number: no memory
        g = np.full_like(like, g, dtype=dtype, shape=())
    elif scalar:  # a 0-d array of x's library (dask: a lazy one, never a fill value)
        g = g.astype(dtype, copy=False)
    return np.broadcast_to(g, shape)


_SMALL = 1 << 16


@helper(shares=True, linear=True, shape_args=(1,), specialized=True)
def unmean(g, x, axis=None, keepdims=False):
    """Adjoint of a mean: the adjoint of the sum, divided by the count.

    A count of 0 means ``x`` is empty: its adjoint is an empty array (as JAX gives),
    so ``g`` is spread undivided over no elements."""
    count = math.prod(_shape(x)) if axis is None else reduced_size(x, axis)
    return unreduce(g / count if count else g, x, axis, keepdims)


class _BroadcastLike:
    """Stands for the broadcast of several arrays where only its shape, dtype and
    array module are needed (the adjoint of a reduction of an elementwise result)."""

    __slots__ = ("dtype", "first", "shape")

    def __init__(self, arrays):
        arrays = [a for a in arrays if hasattr(a, "shape")]  # Python numbers add nothing
        # what an array made like the broadcast belongs to: another library's array
        # before a numpy one (a numpy scalar read from a numpy buffer, times a cupy array)
        like = _like(*arrays)
        self.first = like if like is not None else arrays[0] if arrays else None
        shapes = {a.shape for a in arrays}
        self.shape = shapes.pop() if len(shapes) == 1 else _broadcast_shapes(shapes)
        dtypes = {a.dtype for a in arrays}
        self.dtype = (
            dtypes.pop() if len(dtypes) == 1 else np.result_type(*arrays) if arrays else None
        )


def _broadcast_shapes(shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if backend.unknown_length(n) and (out[i] == 1 or backend.unknown_length(out[i])):
                out[i] = n  # unknown lengths (dask after a mask): from the same mask
            elif n != 1:
                if out[i] not in (1, n):
                    raise ValueError(f"shapes {sorted(shapes)} cannot be broadcast together")
                out[i] = n
    return tuple(out)


@helper(fresh=True)
def shape_of(x):
    """What a loop records of a value its adjoint reads only for its shape: the shape
    of a numpy array or a number; for an array of another library, a stand-in with
    its shape, dtype and library (an empty array of it), so that an adjoint made from
    a number (a seed) is made in that library, not in numpy. A number (Python's or a
    numpy scalar) is its own record: it is as small as its shape, and the helpers
    read it fastest."""
    cls = x.__class__
    if cls is np.ndarray:
        return x.shape
    if cls is float or cls is int or isinstance(x, np.generic):
        return x
    if cls is list or cls is dict or cls is tuple and not all(type(n) is int for n in x):
        return x  # a structure's adjoint is made entry by entry: it is kept whole
    if getattr(x, "dtype", None) is None or isinstance(x, np.generic):
        shape = getattr(x, "shape", None)  # (ops.UNSET has one)
        return shape if isinstance(shape, tuple) else np.shape(x)
    stand_in = _BroadcastLike(())
    stand_in.first = np.empty_like(x, shape=(0,))
    stand_in.shape, stand_in.dtype = x.shape, x.dtype
    return stand_in


@helper(shares=True)
def broadcast_like(*arrays):
    """The shape, dtype and array module that ``arrays`` broadcast together would have."""
    return _BroadcastLike(arrays)


@helper(shares=True, linear=True, shape_args=(1,))
def tangent_like(t, y):
    """The tangent ``t`` with the shape of its value ``y``, which it broadcasts to
    (forward mode of ``x + c`` with only ``x`` differentiated and ``c`` larger): ``t``
    itself where the shapes agree, else a read-only broadcast view."""
    shape = _shape(y)
    if _shape(t) == shape:
        return t
    t_array = backend.as_array(t, y)  # a number: in y's library
    if type(t) in (int, float) and getattr(y, "dtype", np.dtype(int)).kind == "f":
        t_array = t_array.astype(y.dtype)  # weak, as in ``x + s * 0.3``: y's precision
    return np.broadcast_to(t_array, shape)


@helper(fresh=True, shape_args=(0,))
def reduced_size(x, axis=None):
    """How many elements each output of a reduction over ``axis`` combines."""
    shape = _shape(x)
    n = 1
    for a in _axes(len(shape), axis):
        n *= shape[a]
    return n


@helper(fresh=True)
def filled(like_array, g, shape, dtype):
    """A new array of ``shape`` and ``dtype`` holding ``g`` broadcast, in the array
    module of ``like_array`` (a lazy adjoint of a shape-specialized gradient made whole)."""
    out = np.empty_like(like_array, dtype=dtype, shape=shape)
    out[...] = g
    return out
