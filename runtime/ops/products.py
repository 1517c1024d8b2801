"""Adjoints of the products: ``@``, ``np.dot``, ``np.kron``, ``np.tensordot``,
``np.inner``, ``np.cross``, ``np.vecdot`` and ``np.linalg.multi_dot``. Each is linear in
the adjoint and in the other operand; list operands are read as arrays.
"""

import numpy as np

from .. import backend, refusals
from .arrays import _lift
from .broadcast import unbroadcast
from .declare import helper
from .shape import mT
from .structures import cast_like, unarray


def _on_arrays(adjoint, g, x, y, mine):
    """``adjoint(g, x, y)`` with list operands made arrays (numpy's products read them
    so); a list ``mine``, the operand differentiated, gets its adjoint back as a list."""
    x, y = backend.as_array(x, g, y), backend.as_array(y, g, x)
    out = adjoint(g, x, y)
    return unarray(out, mine) if isinstance(mine, (list, tuple)) else out


@helper(fresh=True, linear=True, specialized=True)
def matmul_left(g, x, y):
    """Adjoint of ``x`` in ``x @ y``."""
    try:
        xn, yn = x.ndim, y.ndim
    except AttributeError:  # a list operand
        return _on_arrays(matmul_left, g, x, y, x)
    if xn == 2 and yn == 2:
        return g @ y.T
    if yn == 1:
        if xn == 1:
            return g * y
        return g[..., None] * y
    if xn == 1:
        if g.ndim > 1:  # y is a stack of matrices: sum over the stack
            return unbroadcast((y @ g[..., None])[..., 0], x)
        return y @ g
    return unbroadcast(g @ np.swapaxes(y, -1, -2), x)


@helper(fresh=True, linear=True, specialized=True)
def matmul_right(g, x, y):
    """Adjoint of ``y`` in ``x @ y``."""
    try:
        xn, yn = x.ndim, y.ndim
    except AttributeError:  # a list operand
        return _on_arrays(matmul_right, g, x, y, y)
    if xn == 2 and yn <= 2:
        return x.T @ g
    if xn == 1:
        if yn == 1:
            return g * x
        return unbroadcast(x[:, None] * g[..., None, :], y)
    if yn == 1:
        return unbroadcast(np.swapaxes(x, -1, -2) @ g[..., None], y[:, None])[..., 0]
    return unbroadcast(np.swapaxes(x, -1, -2) @ g, y)


def _dot_is_matmul(x, y):
    return np.ndim(x) <= 2 and np.ndim(y) <= 2 or np.ndim(y) == 1


@helper(fresh=True, linear=True, specialized=True)
def dot_left(g, x, y):
    """Adjoint of ``x`` in ``np.dot(x, y)``."""
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        return _on_arrays(dot_left, g, x, y, x)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * y, x)
    if _dot_is_matmul(x, y):
        return matmul_left(g, x, y)
    a, b = np.ndim(x), np.ndim(y)
    # out[i.., j.., k] = sum_m x[i.., m] y[j.., m, k]
    return np.tensordot(g, y, axes=(list(range(a - 1, a + b - 2)), list(range(b - 2)) + [b - 1]))


@helper(fresh=True, linear=True, specialized=True)
def dot_right(g, x, y):
    """Adjoint of ``y`` in ``np.dot(x, y)``."""
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        return _on_arrays(dot_right, g, x, y, y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * x, y)
    if _dot_is_matmul(x, y):
        return matmul_right(g, x, y)
    a = np.ndim(x)
    out = np.tensordot(x, g, axes=(list(range(a - 1)), list(range(a - 1))))
    return np.moveaxis(out, 0, -2)


@helper(fresh=True)
def unkron(g, a, b, which):
    """Adjoint of operand ``which`` (0 or 1) of ``np.kron(a, b)``: ``g`` seen with the
    axes of ``a`` and ``b`` interleaved, times the other operand, summed over its axes."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    blocks = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    if which == 0:
        other = np.reshape(b, [n for m in sb for n in (1, m)])
        out = np.sum(blocks * other, axis=tuple(range(1, 2 * nd, 2)))
        return np.reshape(out, np.shape(a))
    other = np.reshape(a, [n for m in sa for n in (m, 1)])
    out = np.sum(blocks * other, axis=tuple(range(0, 2 * nd, 2)))
    return np.reshape(out, np.shape(b))


def _tensordot_axes(a, b, axes):
    """The contracted axes of ``np.tensordot(a, b, axes)``, as two lists."""
    if isinstance(axes, (int, np.integer)):
        return list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    ax_a, ax_b = axes
    ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    return [i % np.ndim(a) for i in ax_a], [i % np.ndim(b) for i in ax_b]


@helper(fresh=True)
def untensordot(g, a, b, axes, which):
    """Adjoint of operand ``which`` (0 or 1) of ``np.tensordot(a, b, axes)``."""
    ax_a, ax_b = _tensordot_axes(a, b, axes)
    free_a = [i for i in range(np.ndim(a)) if i not in ax_a]
    free_b = [i for i in range(np.ndim(b)) if i not in ax_b]
    na = len(free_a)
    if which == 0:  # g's b-axes against b's free axes; left: a's free, then contracted
        out = np.tensordot(g, b, axes=(list(range(na, np.ndim(g))), free_b))
        order = free_a + [ax_a[ax_b.index(j)] for j in sorted(ax_b)]
    else:
        out = np.tensordot(a, g, axes=(free_a, list(range(na))))
        order = [ax_b[ax_a.index(i)] for i in sorted(ax_a)] + free_b
    return np.transpose(out, backend.inverse_permutation(order))


def _as_array(v):
    return backend.as_array(v)


@helper(fresh=True)
def uninner(g, a, b, which):
    """Adjoint of operand ``which`` (0 or 1) of ``np.inner(a, b)``: ``g`` contracted with
    the other operand over the other's leading axes."""
    mine, other = (a, b) if which == 0 else (b, a)
    if np.ndim(a) == 0 or np.ndim(b) == 0:  # a product
        return cast_like(unbroadcast(g * other, mine), mine)
    other = _as_array(other)
    n_a, n_b = np.ndim(a) - 1, np.ndim(b) - 1
    if which == 0:  # g's axes: a's leading ones, then b's
        out = np.tensordot(g, other, (list(range(n_a, n_a + n_b)), list(range(n_b))))
    else:
        out = np.tensordot(g, other, (list(range(n_a)), list(range(n_a))))
    return cast_like(out, mine)


@helper(fresh=True)
def uncross(g, a, b, which, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Adjoint of operand ``which`` (0 or 1) of ``np.cross(a, b, ...)``: ``b x g`` for
    ``a`` and ``g x a`` for ``b``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a3, b3 = np.moveaxis(_as_array(a), axisa, -1), np.moveaxis(_as_array(b), axisb, -1)
    refusals.unless_three_vectors(a3.shape[-1], b3.shape[-1])
    g3 = np.moveaxis(_lift(g, a, b), axisc, -1)
    out = np.cross(b3, g3) if which == 0 else np.cross(g3, a3)
    mine = (a, b)[which]
    out = np.moveaxis(out, -1, (axisa, axisb)[which])
    return cast_like(unbroadcast(out, mine), mine)


@helper(fresh=True)
def unmulti_dot(g, arrays):
    """Adjoint of ``np.linalg.multi_dot(arrays)``: for each matrix, the product of those
    before it (transposed), ``g``, and those after it (transposed). The first and last
    may be vectors (a row and a column)."""
    mats = [_as_array(m) for m in arrays]
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0][None, :]
    if last_vec:
        mats[-1] = mats[-1][:, None]
    g = np.reshape(_lift(g, *mats), (mats[0].shape[0], mats[-1].shape[1]))
    before = [None]
    for m in mats[:-1]:
        before.append(m if before[-1] is None else before[-1] @ m)
    out, after = [None] * len(mats), None
    for k in range(len(mats) - 1, -1, -1):
        right = g if after is None else g @ mT(after)
        out[k] = right if before[k] is None else mT(before[k]) @ right
        after = mats[k] if after is None else mats[k] @ after
    return [cast_like(np.reshape(o, np.shape(m)), m) for o, m in zip(out, arrays)]


@helper(fresh=True)
def unvecdot(g, other, mine, axis=-1):
    """Adjoint of ``mine`` in ``np.vecdot`` of ``mine`` and ``other`` (either order) over
    ``axis``: ``g`` times the other operand, summed where ``mine`` was broadcast."""
    return cast_like(unbroadcast(np.expand_dims(_lift(g, other, mine), axis) * other, mine), mine)


@helper(fresh=True)
def untensordot_a(g, a, b, axes):
    """Adjoint of ``a`` in ``np.tensordot(a, b, axes)`` (``a`` read for its shape)."""
    return untensordot(g, a, b, axes, 0)


@helper(fresh=True)
def untensordot_b(g, a, b, axes):
    """Adjoint of ``b`` in ``np.tensordot(a, b, axes)`` (``b`` read for its shape)."""
    return untensordot(g, a, b, axes, 1)


@helper(fresh=True)
def unkron_a(g, a, b):
    """Adjoint of ``a`` in ``np.kron(a, b)`` (``a`` read for its shape)."""
    return unkron(g, a, b, 0)


@helper(fresh=True)
def unkron_b(g, a, b):
    """Adjoint of ``b`` in ``np.kron(a, b)`` (``b`` read for its shape)."""
    return unkron(g, a, b, 1)


@helper(fresh=True)
def uninner_a(g, a, b):
    """Adjoint of ``a`` in ``np.inner(a, b)`` (``a`` read for its shape)."""
    return uninner(g, a, b, 0)


@helper(fresh=True)
def uninner_b(g, a, b):
    """Adjoint of ``b`` in ``np.inner(a, b)`` (``b`` read for its shape)."""
    return uninner(g, a, b, 1)
