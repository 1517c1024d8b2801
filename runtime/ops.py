"""Helpers that generated adjoint code calls: short, fast, array-module agnostic.

They only create arrays from existing arrays (``zeros_like``, ``broadcast_to``),
so cupy and other NEP-18 arrays flow through unchanged, and they keep dtypes.
Each declares, with ``@helper``, what the compiler may assume of it.
"""

import math
import numbers
from collections import namedtuple

import numpy as np

Helper = namedtuple("Helper", "fresh passes shares linear shape_args specialized checks")


def helper(
    fresh=False,
    passes=False,
    shares=False,
    linear=False,
    shape_args=(),
    specialized=False,
    checks=False,
):
    """Declare what the compiler may assume of the helper below; exactly one of:
    ``fresh``, its result shares memory with no argument and nothing else holds it;
    ``passes``, it may return its first argument itself or a writable view of it;
    ``shares``, it may return a read-only array or one an argument also reaches.
    ``linear``: linear in its first argument, with an array or number result (a sign
    may move through it); ``shape_args``: positions of arguments read only for their
    shape, dtype and array module (a recorded shape may stand for them);
    ``specialized``: the shape specializer rewrites its calls; ``checks``: it raises
    for values the gradient cannot be taken of, so a call must stay where it is even
    when its result is not used."""
    if fresh + passes + shares != 1:
        raise ValueError("a helper is exactly one of fresh, passes and shares")
    declared = Helper(fresh, passes, shares, linear, tuple(shape_args), specialized, checks)

    def declare(fn):
        fn.declared = declared
        return fn

    return declare


@helper(fresh=True, checks=True)
def seed(out):
    """The cotangent 1.0 of a real scalar output; a clear error for anything else."""
    if isinstance(out, (list, tuple, dict)) or getattr(out, "ndim", 0) != 0:
        raise ValueError(
            f"grad needs a function that returns a scalar, but it returned a value of shape "
            f"{_shape(out)}; use transpile.vjp(f)(*args, dout) for non-scalar outputs"
        )
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        if isinstance(out, bool) or not isinstance(out, numbers.Real):
            raise TypeError(
                f"grad needs a function that returns a real scalar, but it returned "
                f"{_describe(out)}"
            )
        return 1.0
    if dtype.kind not in "fiu":
        raise TypeError(
            f"grad needs a function that returns a real scalar, but it returned {_describe(out)}"
        )
    if isinstance(out, np.generic):
        return out.dtype.type(1)
    return np.ones_like(out)  # a 0-d array, possibly of another array module


@helper(passes=True, checks=True)
def cotangent(dout, out):
    """``dout``, checked to be shaped like the output ``out`` of the function a vjp is
    taken of (a wrong shape would broadcast into a wrong gradient)."""
    if isinstance(out, (list, tuple, dict)):
        if type(dout) is not type(out) or len(dout) != len(out):
            raise ValueError(
                f"dout must have the structure of the function's output, a {type(out).__name__} "
                f"of {len(out)}, but it is {_describe(dout)}"
            )
        pairs = out.items() if isinstance(out, dict) else enumerate(out)
        for k, o in pairs:
            cotangent(dout[k], o)
        return dout
    if isinstance(dout, complex) or getattr(getattr(dout, "dtype", None), "kind", "") == "c":
        raise TypeError("dout is complex; complex cotangents are not supported yet")
    if _shape(dout) != _shape(out):
        raise ValueError(
            f"dout has shape {_shape(dout)}, but the function's output has shape "
            f"{_shape(out)}; pass a dout shaped like the output"
        )
    return dout


@helper(passes=True)
def owned(value, *args):
    """``value`` (a gradient, or a tuple, list or dict of them) with every array that
    is read-only, a view, an argument, or already returned once replaced by a copy:
    what the caller gets shares memory with nothing."""
    taken = set()
    for a in args:
        for leaf in _array_leaves(a):
            taken.add(id(leaf))
    return _owned(value, taken)


def _array_leaves(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _array_leaves(v)]
    return [value] if hasattr(value, "shape") and not isinstance(value, np.generic) else []


def _owned(value, taken):
    if isinstance(value, tuple):
        return tuple(_owned(v, taken) for v in value)
    if isinstance(value, list):
        return [_owned(v, taken) for v in value]
    if isinstance(value, dict):
        return {k: _owned(v, taken) for k, v in value.items()}
    if not hasattr(value, "shape") or isinstance(value, np.generic):
        return value  # numbers are immutable
    writeable = getattr(getattr(value, "flags", None), "writeable", True)
    if id(value) in taken or getattr(value, "base", None) is not None or not writeable:
        value = value.copy()
    taken.add(id(value))
    return value


def _describe(value):
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return f"a {type(value).__name__} of dtype {dtype} and shape {_shape(value)}"
    return f"{type(value).__name__} {value!r:.40}"


def _shape(x):
    if type(x) is tuple and all(type(n) is int for n in x):  # a shape recorded by a loop
        return x
    if isinstance(x, (list, tuple)):
        return np.shape(x)
    return getattr(x, "shape", ())


class _Unset:
    """The value of a loop temporary before the loop's first iteration writes it."""

    shape = ()

    def __repr__(self):
        return "ops.UNSET"


UNSET = _Unset()


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
                raise TypeError(
                    "an operation on lists or tuples was differentiated as arithmetic: "
                    "a `+` or `*` of lists that the transpiler could not see as such "
                    "(for example entries of a parameter structure); wrap each operand in "
                    "list(...) so that it is seen as a list"
                ) from None
            xs, gs = _shape(x), getattr(g, "shape", ())
    if gs == xs:
        return g
    if not xs:
        return np.add.reduce(g, axis=None)
    extra = len(gs) - len(xs)
    if extra == 1 and gs[1:] == xs:  # a bias broadcast over the batch axis
        return np.add.reduce(g, axis=0)
    ones = tuple(extra + i for i, n in enumerate(xs) if n == 1 and gs[extra + i] != 1)
    if not ones:  # only leading axes were added: sum them away
        return np.add.reduce(g, axis=tuple(range(extra)))
    g = np.add.reduce(g, axis=tuple(range(extra)) + ones, keepdims=True)
    return g.reshape(xs) if extra else g


def _on_arrays(adjoint, g, x, y, mine):
    """``adjoint(g, x, y)`` with list operands made arrays (numpy's products read them
    so); a list ``mine``, the operand differentiated, gets its adjoint back as a list."""
    x = x if hasattr(x, "ndim") else np.asarray(x)
    y = y if hasattr(y, "ndim") else np.asarray(y)
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


def _axes(ndim, axis):
    if axis is None or ndim == 0:  # numpy accepts axis 0 or -1 on a 0-d value
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim for a in axis)


@helper(shares=True, linear=True, shape_args=(1,), specialized=True)
def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the adjoint of a reduction back to the shape of its input."""
    if isinstance(x, list) or type(x) is tuple and not all(type(n) is int for n in x):
        return unarray(unreduce(g, np.asarray(x), axis, keepdims), x)  # np.sum([a, b])
    shape = _shape(x)
    if not shape:
        dtype = getattr(x, "dtype", None)  # a 0-d x: its dtype, even for a Python-float g
        return dtype.type(g) if dtype is not None and isinstance(g, float) else g
    if not keepdims and axis is not None:
        kept = list(shape)
        for a in _axes(len(shape), axis):
            kept[a] = 1
        g = g.reshape(kept) if hasattr(g, "reshape") else np.reshape(g, kept)
    like = x.first if isinstance(x, _BroadcastLike) else x
    dtype = getattr(x, "dtype", None)
    if like is not None and dtype is not None:
        if dtype.kind not in "fc":  # the gradient of integers is a float
            dtype = np.float64
        scalar = getattr(g, "ndim", 0) == 0
        if math.prod(shape) <= _SMALL:
            # a fresh array of x's array module (cupy stays cupy): small arrays are
            # cheaper to fill than to use as a broadcast view
            out = np.empty_like(like, dtype=dtype, shape=shape)
            if scalar:
                out.fill(g)
            else:
                out[...] = g
            return out
        if scalar:  # a large one is a read-only view of one number: no memory
            g = np.full_like(like, g, dtype=dtype, shape=())
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
        self.first = arrays[0] if arrays else None
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
            if n != 1:
                if out[i] not in (1, n):
                    raise ValueError(f"shapes {sorted(shapes)} cannot be broadcast together")
                out[i] = n
    return tuple(out)


@helper(shares=True)
def broadcast_like(*arrays):
    """The shape, dtype and array module that ``arrays`` broadcast together would have."""
    return _BroadcastLike(arrays)


@helper(fresh=True, shape_args=(0,))
def reduced_size(x, axis=None):
    """How many elements each output of a reduction over ``axis`` combines."""
    shape = _shape(x)
    n = 1
    for a in _axes(len(shape), axis):
        n *= shape[a]
    return n


@helper(fresh=True)
def unreduce_extreme(g, y, x, axis=None, keepdims=False):
    """Adjoint of max/min: split evenly between the elements that attain it."""
    hit = x == unreduce(y, x, axis, keepdims)
    count = hit.sum(axis=_axes(np.ndim(x), axis), keepdims=True)
    share = hit / count
    if hasattr(x, "dtype") and x.dtype.kind in "fc":
        share = share.astype(x.dtype, copy=False)
    return unreduce(g, x, axis, keepdims) * share


@helper(fresh=True)
def unreduce_prod(g, x, axis=None, keepdims=False):
    """Adjoint of prod: the product of the other elements, exact when some are zero."""
    ndim = np.ndim(x)
    axes = _axes(ndim, axis)
    rest = tuple(a for a in range(ndim) if a not in axes)
    moved = np.transpose(x, rest + axes)
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (left * right).reshape(moved.shape)
    others = np.transpose(others, np.argsort(rest + axes))
    return unreduce(g, x, axis, keepdims) * others


@helper(passes=True)
def untranspose(g, axes=None):
    if axes is None or axes == ():
        return np.transpose(g)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return np.transpose(g, np.argsort(axes))


@helper(passes=True)
def cast_like(g, x):
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return float(g) if np.ndim(g) == 0 else g
    return g.astype(dtype, copy=False) if hasattr(g, "astype") else np.asarray(g, dtype)


@helper(fresh=True)
def winner(a, b):
    """1 where ``a`` beats ``b``, 0.5 on ties, else 0 (the adjoint weight of max)."""
    dtype = np.result_type(a, b)
    if dtype.kind not in "fc":
        dtype = np.float64
    weight = (a > b) + (a == b) * 0.5
    return weight.astype(dtype, copy=False) if hasattr(weight, "astype") else weight


@helper(fresh=True)
def pow_slope(x, y):
    """``y * x ** (y - 1)``: the derivative of ``x ** y`` by ``x``.

    0 where ``y`` is 0 (``x ** 0`` is constant, also at ``x == 0`` where the formula is
    ``0 * inf``), as JAX gives; for a Python number ``x == 0`` and ``y < 1`` it is
    numpy's ``inf`` rather than Python's ZeroDivisionError."""
    if isinstance(x, (list, tuple)):  # np.power([...], y)
        x = np.asarray(x)
    if getattr(y, "ndim", 0) == 0:  # a number exponent (Python, numpy, or 0-d)
        if y == 0:
            return np.zeros_like(x) if hasattr(x, "dtype") else 0.0
        if isinstance(x, (int, float)) and not isinstance(x, np.generic) and x == 0 and y < 1:
            return y * math.inf
        return y * x ** (y - 1)
    zero = y == 0
    return np.where(zero, 0, y * x ** np.where(zero, 1, y - 1))


@helper(fresh=True)
def pow_log(z, x):
    """``z * log(x)`` for ``z = x ** y``: the derivative of the power by its exponent.

    Where ``x`` is 0 the log is read as 0 (JAX's convention), so ``0 ** y`` contributes 0
    for ``y > 0`` instead of ``0 * -inf = nan``. A Python number ``x`` stays a Python
    number (so float32 stays float32); a negative one gives nan, as ``np.log`` does."""
    if isinstance(x, (int, float)) and not isinstance(x, np.generic):
        if x > 0:
            return z * math.log(x)
        return z * (0.0 if x == 0 else math.nan)
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    return z * np.log(np.where(x == 0, 1, x))


@helper(fresh=True)
def hypot_slope(x, z):
    """``x / z``: the derivative of ``z = hypot(x, y)`` by ``x``; 0 at the origin (where
    ``z`` is 0, hence ``x`` too), as JAX gives, instead of ``0 / 0``."""
    if getattr(z, "ndim", 0) == 0:  # numbers keep their types
        return x / z if z != 0 else x * 0.0
    return x / np.where(z == 0, 1, z)


@helper(passes=True)
def unvstack(g, arrays):
    """Adjoint of ``np.vstack``: 1-D inputs were stacked as rows."""
    out, start = [], 0
    for a in arrays:
        rows = 1 if np.ndim(a) < 2 else np.shape(a)[0]
        out.append(np.reshape(g[start : start + rows], np.shape(a)))
        start += rows
    return out


def _dot_is_matmul(x, y):
    return np.ndim(x) <= 2 and np.ndim(y) <= 2 or np.ndim(y) == 1


@helper(fresh=True)
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


@helper(fresh=True)
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
def select(condition, a, b):
    return np.where(condition, a, b)


@helper(fresh=True)
def inside(x, lo, hi):
    """1.0 where ``x`` lies within [lo, hi] (either bound may be None)."""
    mask = np.ones_like(x, dtype=bool)
    if lo is not None:
        mask = mask & (x >= lo)
    if hi is not None:
        mask = mask & (x <= hi)
    return mask


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice, np.integer)) for p in parts)


@helper(shares=True)
def add_at(buf, index, g):
    """``buf[index] += g`` in place, summing repeated integer indices correctly."""
    if isinstance(buf, (list, dict)):
        buf[index] = add(buf[index], g)
    elif _is_basic(index):
        buf[index] += g
    else:
        np.add.at(buf, index, g)


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
    return np.copy(d[key]) if key in d else MISSING


@helper(shares=True)
def restore_item(d, key, old):
    """``d[key] = old``, or remove ``key`` when it was ``MISSING``."""
    if old is MISSING:
        del d[key]
    else:
        d[key] = old


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
        return np.stack(np.split(g, np.shape(arrays)[0], axis=axis))
    if axis is None:  # the inputs were flattened first
        sizes = [int(np.size(a)) for a in arrays]
        parts = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
        return [np.reshape(p, np.shape(a)) for p, a in zip(parts, arrays)]
    sizes = [np.shape(a)[axis] if np.ndim(a) else 1 for a in arrays]
    bounds = np.cumsum(sizes)[:-1]
    parts = np.split(g, bounds, axis=axis)
    return [np.reshape(p, np.shape(a)) for p, a in zip(parts, arrays)]


@helper(shares=True)
def spread(g, items):
    """Adjoint of the builtin ``sum(items)``: every item receives ``g``."""
    return [unbroadcast(g, x) for x in items]


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


@helper(passes=True)
def mT(a):
    """The matrix transpose of the last two axes."""
    return np.swapaxes(a, -1, -2)


@helper(fresh=True)
def unvar(g, a, axis=None, ddof=0, keepdims=False):
    """Adjoint of ``np.var``.

    With no degrees of freedom left (``ddof`` >= the count, where numpy divides by 0)
    the variance is nan or inf and its gradient is nan, as JAX gives."""
    centered = a - np.mean(a, axis=axis, keepdims=True)
    n = reduced_size(a, axis) - ddof
    return unreduce(g, a, axis, keepdims) * centered * (2.0 / n if n > 0 else math.nan)


@helper(fresh=True)
def uncumsum(g, a, axis=None):
    """Adjoint of ``np.cumsum``: a reversed cumulative sum."""
    if axis is None:
        flat = np.ravel(g)
        return np.reshape(np.cumsum(flat[::-1])[::-1], np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


@helper(fresh=True)
def unnorm(g, y, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm`` for the 2-norm of vectors and Frobenius norm."""
    vector = axis is None and np.ndim(x) == 1 or isinstance(axis, int)
    if not (ord is None or ord == "fro" or (ord == 2 and vector)):
        raise NotImplementedError(
            f"the gradient of np.linalg.norm with ord={ord!r} is not "
            "supported; write the norm with supported operations"
        )
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        y = np.expand_dims(y, axis)
    return g * x / y


def _per_matrix(v):
    """``v``, one value per matrix of a stack, shaped to broadcast over the stack's
    matrices; a Python number or 0-d value as it is."""
    return v[..., None, None] if getattr(v, "ndim", 0) else v


@helper(fresh=True)
def undet(g, y, a):
    """Adjoint of ``np.linalg.det``: ``g`` times the cofactor matrix (the transposed
    adjugate) of each matrix of ``a``.

    A well-conditioned stack takes the fast route ``det(a) * inv(a).T``. A singular one
    (numpy's ``inv`` raises; other array modules return inf or nan) or an ill-conditioned
    one (a tiny ``det`` times a huge ``inv``, which loses the cofactors' digits at rank
    ``n - 2`` and below) takes the SVD route of ``svd_cofactors``, exact at any rank."""
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        inv = None
    if inv is not None and _well_conditioned(a, inv):
        return _per_matrix(g * y) * mT(inv)
    return _per_matrix(g) * svd_cofactors(a)


def _well_conditioned(a, inv):
    """Whether every matrix of ``a`` has a condition number below ``1/sqrt(eps)``
    (estimated from the largest entries of ``a`` and of its inverse ``inv``)."""
    n = _shape(inv)[-1]
    if n == 0:  # 0x0 matrices: det is 1, the adjoint is empty
        return True
    cond = np.max(np.abs(a), axis=(-2, -1)) * np.max(np.abs(inv), axis=(-2, -1)) * n
    limit = 1.0 / math.sqrt(np.finfo(inv.dtype).eps)
    return bool(np.all(cond < limit))  # False for a nan or inf estimate


@helper(fresh=True)
def svd_cofactors(a):
    """The cofactor matrix of each matrix of ``a`` without inverting it, so exact for
    singular matrices: with ``a = u @ diag(s) @ vh``,
    ``adj(a).T = det(u) det(vh) u @ diag(prod_{j != i} s_j) @ vh``."""
    u, s, vh = np.linalg.svd(a)
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    sign = np.sign(np.linalg.det(u) * np.linalg.det(vh))  # each det is +1 or -1
    return _per_matrix(sign) * ((u * (before * after)[..., None, :]) @ vh)


@helper(fresh=True)
def solve_rhs_adjoint(g, a, b):
    return np.linalg.solve(mT(a), g)


@helper(fresh=True)
def solve_matrix_adjoint(g, a, b, x):
    gb = np.linalg.solve(mT(a), g)
    if np.ndim(b) == 1:
        return -np.outer(gb, x)
    return -(gb @ mT(x))


@helper(fresh=True)
def untrace(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.trace``: ``g`` on the chosen diagonal of each matrix."""
    shape = _shape(a)
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    dtype = getattr(g, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        dtype = getattr(a, "dtype", None)
        if dtype is None or dtype.kind not in "fc":
            dtype = np.float64
    # the identity in a's array module (np.eye would make a numpy array for a cupy a)
    ones = np.ones_like(a, dtype=dtype, shape=(shape[a1], shape[a2]))
    eye = np.triu(np.tril(ones, offset), offset)
    out = _per_matrix(g) * eye
    return np.moveaxis(out, (-2, -1), (a1, a2))


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


@helper(fresh=True)
def unroll(g, shift, axis=None):
    negative = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return np.roll(g, negative, axis)


@helper(shares=True)
def uneinsum(g, subscripts, operands, index):
    """Adjoint of operand ``index`` of ``np.einsum(subscripts, *operands)``: an einsum of
    the output's adjoint with the other operands, broadcast over indices that only this
    operand had (they were summed away)."""
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        raise NotImplementedError("the gradient of np.einsum with '...' is not supported")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = inputs.split(",")
    mine = terms[index]
    if len(set(mine)) != len(mine):
        raise NotImplementedError(
            f"the gradient of np.einsum({subscripts!r}) with a repeated index in one operand "
            "is not supported"
        )
    others = [t for k, t in enumerate(terms) if k != index]
    other_operands = [o for k, o in enumerate(operands) if k != index]
    reachable = set(output).union(*others)
    kept = "".join(c for c in mine if c in reachable)
    grad = np.einsum(",".join([output, *others]) + "->" + kept, g, *other_operands)
    if kept != mine:
        shape = np.shape(operands[index])
        grad = np.broadcast_to(
            np.reshape(grad, [shape[i] if c in kept else 1 for i, c in enumerate(mine)]), shape
        )
    return grad


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
    np.add.at(flat, where, g)
    return out


@helper(fresh=True)
def filled(like_array, g, shape, dtype):
    """A new array of ``shape`` and ``dtype`` holding ``g`` broadcast, in the array
    module of ``like_array`` (a lazy adjoint of a shape-specialized gradient made whole)."""
    out = np.empty_like(like_array, dtype=dtype, shape=shape)
    out[...] = g
    return out


@helper(passes=True)
def head(g, x):
    """Adjoint of the left operand ``x`` of a concatenation ``x + y`` of lists or tuples:
    the entries of its items, which come first."""
    _require_sequence(x, "+")
    return list(g[: len(x)])


@helper(passes=True)
def tail(g, y):
    """Adjoint of the right operand ``y`` of a concatenation ``x + y``: the last entries."""
    _require_sequence(y, "+")
    return list(g[len(g) - len(y) :])


@helper(passes=True)
def unrepeat(g, x):
    """Adjoint of ``x * n`` for a list or tuple ``x``: each item gets the sum of the
    entries of its ``n`` copies."""
    _require_sequence(x, "*")
    n = len(x)
    out = []
    for i in range(n):
        total = None
        for k in range(i, len(g), n):
            total = add(total, g[k])
        out.append(total)
    return out


def _require_sequence(x, op):
    if not isinstance(x, (list, tuple)):
        raise TypeError(
            f"an operand of `{op}` was taken for a list or tuple when the function was "
            f"transpiled, but at run time it is {type(x).__name__}; pass a list or a tuple"
        )
