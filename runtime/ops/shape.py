"""Adjoints of functions that move entries without combining them: transposes,
stacks, joins and their cuts, ``np.atleast_*d``, differences, ``np.append``,
``np.tile``, ``np.repeat``, ``np.pad`` and ``np.roll``; and the adjoints of those
adjoints (``rejoin``, ``rediff``, ...), for second derivatives.
"""

import itertools

import numpy as np

from .. import backend
from .broadcast import unbroadcast
from .declare import helper
from .structures import cast_like, unarray, zeros_like


@helper(passes=True)
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff`` with ``None`` for a ``prepend`` or ``append`` not given (the forward
    rule of ``np.diff`` passes the tangents of both)."""
    given = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(a, n, axis, **given)


@helper(passes=True)
def untranspose(g, axes=None):
    if axes is None or axes == ():
        return np.transpose(g)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return np.transpose(g, backend.inverse_permutation(axes))


@helper(passes=True)
def retranspose(g, axes=None):
    """``g`` transposed by ``axes`` as the user's call gave them (``x.transpose(1, 0)``,
    ``x.transpose((1, 0))``, ``np.transpose(x, axes)``): what ``untranspose`` undoes,
    for the adjoint of a gradient's ``untranspose``."""
    if axes is None or axes == ():
        return np.transpose(g)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return np.transpose(g, axes)


@helper(passes=True)
def unvstack(g, arrays):
    """Adjoint of ``np.vstack``: 1-D inputs were stacked as rows."""
    out, start = [], 0
    for a in arrays:
        rows = 1 if np.ndim(a) < 2 else np.shape(a)[0]
        out.append(np.reshape(g[start : start + rows], np.shape(a)))
        start += rows
    return out


@helper(passes=True)
def unstack(g, arrays, axis=0):
    """Adjoint of ``np.stack(arrays, axis)``: one entry per stacked item; for an array
    (stacked along its first axis) the array of them."""
    if not isinstance(arrays, (list, tuple)):
        return np.moveaxis(g, axis, 0)
    return [np.take(g, i, axis=axis) for i in range(len(arrays))]


@helper(passes=True)
def unconcatenate(g, arrays, axis=0):
    """Adjoint of ``np.concatenate(arrays, axis)``, in the structure of ``arrays``."""
    if not isinstance(arrays, (list, tuple)):  # the rows of an array, joined
        if axis is None:
            return np.reshape(g, np.shape(arrays))
        n = np.shape(arrays)[0]
        step = np.shape(g)[axis] // n
        return np.stack(backend.split(g, range(step, step * n, step), axis))
    if axis is None:  # the inputs were flattened first
        sizes = [backend.size(a) for a in arrays]
        parts = backend.split(np.ravel(g), itertools.accumulate(sizes[:-1]))
        return [np.reshape(p, np.shape(a)) for p, a in zip(parts, arrays)]
    sizes = [np.shape(a)[axis] if np.ndim(a) else 1 for a in arrays]
    parts = backend.split(g, itertools.accumulate(sizes[:-1]), axis)
    return [np.reshape(p, np.shape(a)) for p, a in zip(parts, arrays)]


@helper(passes=True)
def mT(a):
    """The matrix transpose of the last two axes."""
    return np.swapaxes(a, -1, -2)


@helper(fresh=True)
def unroll(g, shift, axis=None):
    negative = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return np.roll(g, negative, axis)


@helper(fresh=True)
def unrepeat_array(g, a, repeats, axis=None):
    """Adjoint of ``np.repeat(a, repeats, axis)``: each entry gets the sum of its copies."""
    shape = np.shape(a)
    if axis is None:
        return np.reshape(unrepeat_array(g, np.ravel(a), repeats, 0), shape)
    axis %= len(shape)
    n = shape[axis]
    if backend.size(repeats) == 1:  # each entry r times
        r = int(np.reshape(repeats, -1)[0])
        split = np.reshape(g, shape[:axis] + (n, r) + shape[axis + 1 :])
        return np.sum(split, axis=axis + 1)
    out = zeros_like(a)
    source = np.repeat(np.arange(n), repeats)  # the entry each copy came from
    backend.scatter_add(out, (slice(None),) * axis + (source,), g)
    return out


@helper(fresh=True)
def untile(g, a, reps):
    """Adjoint of ``np.tile(a, reps)``: the sum of the tiles."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    nd = max(np.ndim(a), len(reps))
    shape = (1,) * (nd - np.ndim(a)) + np.shape(a)
    reps = (1,) * (nd - len(reps)) + reps
    tiles = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(np.sum(tiles, axis=tuple(range(0, 2 * nd, 2))), np.shape(a))


def _pad_slices(a, pad_width):
    nd = np.ndim(a)
    pairs = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (nd, 2))
    return tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(pairs, np.shape(a)))


def _constant_mode(mode):
    if mode != "constant":
        raise NotImplementedError(
            f"the gradient of np.pad(mode={mode!r}) is not supported, only mode='constant'"
        )


@helper(fresh=True)
def unpad(g, a, pad_width, mode="constant"):
    """Adjoint of ``a`` in ``np.pad(a, pad_width, mode='constant')``: the middle of ``g``."""
    _constant_mode(mode)
    return g[_pad_slices(a, pad_width)].copy()


@helper(fresh=True)
def unpad_fill(g, a, pad_width, mode="constant", constant_values=0):
    """Adjoint of one number ``constant_values`` in ``np.pad``: the sum of the border."""
    _constant_mode(mode)
    if np.ndim(constant_values) != 0:
        raise NotImplementedError(
            "the gradient of np.pad by constant_values is supported for one number only"
        )
    return cast_like(np.sum(g) - np.sum(g[_pad_slices(a, pad_width)]), constant_values)


@helper(passes=True)
def unjoin(g, arrays, how):
    """Adjoint of ``np.hstack`` (``how='h'``), ``np.dstack`` (``'d'``) and
    ``np.column_stack`` (``'column'``): ``g`` cut into the inputs, each as the join saw
    it (made at least 1-D, 3-D, or a column); for an array, its rows were joined."""
    items = list(arrays)
    shapes = [_joined_shape(np.shape(x), how) for x in items]
    axis = {"h": 0 if len(shapes[0]) == 1 else 1, "d": 2, "column": 1}[how]
    bounds = itertools.accumulate([s[axis] for s in shapes[:-1]])
    parts = [np.reshape(p, np.shape(x)) for p, x in zip(backend.split(g, bounds, axis), items)]
    return parts if isinstance(arrays, (list, tuple)) else np.stack(parts)


def _joined_shape(shape, how):
    if how == "h":
        return shape or (1,)
    if how == "column":  # a number or a vector is made a column
        return {0: (1, 1), 1: (*shape, 1)}.get(len(shape), shape)
    return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}.get(len(shape), shape)


@helper(passes=True)
def unatleast(g, arrays, index):
    """Adjoint of input ``index`` of ``np.atleast_1d/2d/3d(*arrays)`` (one result for one
    input, a tuple of them for several)."""
    mine = g if len(arrays) == 1 else g[index]
    return np.reshape(mine, np.shape(arrays[index]))


def _undiff_last(g, n):
    """Adjoint of ``np.diff(., n, axis=-1)``: minus the differences of ``g`` padded with 0."""
    for _ in range(n):
        zero = np.zeros_like(g, shape=np.shape(g)[:-1] + (1,))
        g = np.concatenate([zero, g, zero], axis=-1)
        g = g[..., :-1] - g[..., 1:]
    return g


def _length_along(e, axis):
    """How many entries ``np.diff``'s ``prepend``/``append`` ``e`` adds along ``axis``."""
    return 0 if e is None else np.shape(e)[axis] if np.ndim(e) else 1


@helper(fresh=True)
def undiff(g, a, n=1, axis=-1, prepend=None, append=None, which=0):
    """Adjoint of ``np.diff(a, n, axis, prepend, append)`` for ``a`` (``which`` 0),
    ``prepend`` (1) or ``append`` (2)."""
    axis %= np.ndim(a)
    full = np.moveaxis(_undiff_last(np.moveaxis(g, axis, -1), n), -1, axis)
    before = _length_along(prepend, axis)
    bounds = [0, before, before + np.shape(a)[axis]]
    bounds.append(bounds[-1] + _length_along(append, axis))
    part = np.take(full, np.arange(bounds[(1, 0, 2)[which]], bounds[(2, 1, 3)[which]]), axis)
    mine = (a, prepend, append)[which]
    return cast_like(unbroadcast(part, mine) if which else part, mine)


@helper(passes=True)
def unappend(g, arr, values, axis=None, which=0):
    """Adjoint of ``arr`` (``which`` 0) or ``values`` (1) in ``np.append(arr, values, axis)``."""
    if axis is None:
        g, cut = np.ravel(g), backend.size(arr)
        part = g[:cut] if which == 0 else g[cut:]
    else:
        cut = np.shape(arr)[axis]
        part = backend.split(g, [cut], axis)[which]
    mine = (arr, values)[which]
    return unarray(np.reshape(part, np.shape(mine)), mine)


@helper(fresh=True)
def rejoin(h, how):
    """The adjoint of ``g`` in ``unjoin(g, arrays, how)`` for the cotangent ``h``: the join."""
    join = {"h": np.hstack, "d": np.dstack, "column": np.column_stack}[how]
    return join(h)


@helper(fresh=True)
def reatleast(h, g, index):
    """The adjoint of ``g`` in ``unatleast(g, arrays, index)`` for the cotangent ``h``."""
    if not isinstance(g, (list, tuple)):
        return np.reshape(h, np.shape(g))
    return [np.reshape(h, np.shape(v)) if k == index else zeros_like(v) for k, v in enumerate(g)]


@helper(fresh=True)
def rediff(h, a, n=1, axis=-1, prepend=None, append=None, which=0):
    """The adjoint of ``g`` in ``undiff(g, a, n, axis, prepend, append, which)`` for the
    cotangent ``h``: the differences with ``h`` in place of operand ``which`` and zeros for
    the others."""
    parts = [None if v is None else zeros_like(v) for v in (a, prepend, append)]
    parts[which] = h
    return diff(parts[0], n, axis, parts[1], parts[2])


@helper(fresh=True)
def reappend(h, arr, values, axis=None, which=0):
    """The adjoint of ``g`` in ``unappend(g, arr, values, axis, which)`` for the cotangent
    ``h``: ``np.append`` with ``h`` in place of operand ``which`` and zeros for the other."""
    parts = [zeros_like(arr), zeros_like(values)]
    parts[which] = h
    return np.append(parts[0], parts[1], axis)
