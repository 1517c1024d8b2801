"""Helpers that generated adjoint code calls: short, fast, array-module agnostic.

They only create arrays from existing arrays (``zeros_like``, ``broadcast_to``),
so cupy and other NEP-18 arrays flow through unchanged, and they keep dtypes.
Each declares, with ``@helper``, what the compiler may assume of it.
"""

import itertools
import math
import numbers
from collections import namedtuple
from collections.abc import Iterator

import numpy as np

from . import backend, refusals

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
            "grad needs a function that returns a scalar, but it returned "
            + (
                f"a {type(out).__name__} of {len(out)}; for a function that returns "
                "(value, auxiliary data), use grad(f, has_aux=True)"
                if isinstance(out, (list, tuple))
                else f"a value of shape {_shape(out)}; use transpile.vjp(f)(*args, dout) "
                "for non-scalar outputs"
            )
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
def aux_pair(out):
    """``out``, checked to be the ``(value, aux)`` pair a ``has_aux=True`` function returns."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"has_aux=True needs a function that returns a pair (value, aux), but it "
            f"returned {_describe(out)}"
        )
    return out


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


@helper(passes=True, checks=True)
def contribution(value, arg, rule, param):
    """``value``, what the adjoint a user's ``defvjp`` rule gave for the argument
    ``arg`` (the parameter ``param`` of ``rule``) returned, checked to be real and shaped
    like ``arg``: one of another shape would broadcast into a wrong gradient (JAX's
    custom_vjp checks the same). A dict, list or tuple argument is not checked here."""
    if isinstance(arg, (list, tuple, dict)):
        return value
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    real = kind in ("f", "i", "u") if kind is not None else _is_real_number(value)
    if real and getattr(value, "shape", ()) == getattr(arg, "shape", ()):
        return value
    what = (
        f"has shape {getattr(value, 'shape', ())}"
        if real
        else f"is {_describe(value) if value is not None else 'None'}"
    )
    raise ValueError(
        f"the adjoint that defvjp was given for argument {param!r} of {rule}() returned a "
        f"contribution that {what}, but the argument has shape {getattr(arg, 'shape', ())}: "
        f"an adjoint returns one real value shaped like its argument (sum a broadcast "
        f"contribution over the broadcast axes)"
    )


def _is_real_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


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


def _like(*xs):
    """The first of ``xs`` that is an array of a library other than numpy (for NEP-35
    ``like=``), else None (numpy's own creation, at numpy's speed)."""
    for x in xs:
        if type(x) is not np.ndarray and hasattr(x, "__array_function__"):
            return x
    return None


def _lift(g, *likes):
    """``g`` as an array: a number (a Python or numpy scalar) as a 0-d array of the
    library of ``likes`` (numpy's where they are numpy), so that reshaping or expanding
    it keeps it in that library; an array as it is."""
    if hasattr(g, "ndim") and not isinstance(g, np.generic):
        return g
    return np.asarray(g, like=_like(*likes))


def _eye(n, *likes):
    """The boolean identity of size ``n`` in the library of ``likes``."""
    return np.eye(n, dtype=bool, like=_like(*likes))


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
        return unarray(unreduce(g, backend.as_array(x, g), axis, keepdims), x)  # np.sum([a, b])
    shape = _shape(x)
    if not shape:
        dtype = getattr(x, "dtype", None)  # a 0-d x: its dtype, even for a Python-float g
        if dtype is None or not isinstance(g, float):
            return g
        like = x.first if isinstance(x, _BroadcastLike) else x
        if type(like) is np.ndarray or like is None or isinstance(like, np.generic):
            return dtype.type(g)
        return backend.as_array(g, like).astype(dtype, copy=False)  # a 0-d array of x's library
    if not keepdims and axis is not None and not isinstance(g, numbers.Number):
        # (a number is the adjoint of a reduction over every axis: it broadcasts as it is)
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
def except_clause(exception, *types):
    """The number (from 1) of the first except clause whose types ``exception`` is an
    instance of: the handler Python runs, for a try statement with several."""
    for i, kinds in enumerate(types, 1):
        if isinstance(exception, kinds):
            return i
    raise exception  # not reached: the clause that called this caught only ``types``


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
    return np.broadcast_to(backend.as_array(t, y), shape)  # a number: in y's library


@helper(shares=True)
def replaced(items, index, value):
    """The tuple ``items`` with entry ``index`` replaced by ``value`` (the forward rule
    of ``np.einsum``: one term per operand, with that operand's tangent)."""
    return (*items[:index], value, *items[index + 1 :])


@helper(passes=True)
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff`` with ``None`` for a ``prepend`` or ``append`` not given (the forward
    rule of ``np.diff`` passes the tangents of both)."""
    given = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(a, n, axis, **given)


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
    others = np.transpose(others, backend.inverse_permutation(rest + axes))
    return unreduce(g, x, axis, keepdims) * others


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
def cast_like(g, x):
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return float(g) if np.ndim(g) == 0 else g
    if hasattr(g, "astype"):
        return g.astype(dtype, copy=False)
    return backend.as_array(g, x).astype(dtype, copy=False)  # a number: in x's library


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
        x = backend.as_array(x, y)
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
        x = backend.as_array(x, z)
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
    elif not _is_basic(index):
        backend.scatter_add(buf, index, g)
    elif type(buf) is np.ndarray:
        buf[index] += g
    else:
        backend.add_to_slice(buf, index, g)


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
    backend.scatter_add(flat, where, g)
    return backend.through_view(flat, out)


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


# -- adjoints of more numpy functions -------------------------------------------


@helper(fresh=True)
def fwinner(a, b):
    """``winner(a, b)``, and 1 where only ``b`` is nan: the weight of ``a`` in
    ``np.fmax(a, b)`` (``np.fmin`` with the arguments swapped), which ignores a nan."""
    return winner(a, b) + (np.isnan(b) & ~np.isnan(a))


@helper(fresh=True)
def sinc_slope(x, y):
    """The derivative of ``y = np.sinc(x)``: ``(cos(pi x) - y) / x``, 0 at ``x == 0``."""
    if getattr(x, "ndim", 0) == 0 and not isinstance(x, np.ndarray):  # numbers
        return (math.cos(math.pi * x) - y) / x if x != 0 else x * 0.0
    zero = x == 0
    return np.where(zero, 0, (np.cos(np.pi * x) - y) / np.where(zero, 1, x))


@helper(fresh=True)
def uncumprod(g, y, a, axis=None):
    """Adjoint of ``y = np.cumprod(a, axis)``: ``a[k]`` gets ``sum_{j >= k} g[j] y[j] / a[k]``;
    where an ``a`` along the axis is 0, the products of the others, made without dividing."""
    if axis is None:
        return np.reshape(uncumprod(np.ravel(g), np.ravel(y), np.ravel(a), 0), np.shape(a))
    if not np.any(a == 0):
        return np.flip(np.cumsum(np.flip(g * y, axis), axis), axis) / a
    # out[k] = sum_{j >= k} g[j] prod_{i <= j, i != k} a[i]: a[k] set to 1 in row k
    moved = np.moveaxis(a, axis, -1)
    n = moved.shape[-1]
    eye = _eye(n, a)
    rows = np.where(eye, 1, moved[..., None, :])  # (..., k, i)
    products = np.cumprod(rows, axis=-1) * np.triu(np.ones_like(eye))  # j >= k only
    out = np.sum(products * np.moveaxis(g, axis, -1)[..., None, :], axis=-1)
    return np.moveaxis(out, -1, axis)


@helper(fresh=True)
def unaverage(g, a, axis=None, weights=None, keepdims=False, returned=False):
    """Adjoint of ``a`` in ``np.average(a, axis, weights, returned, keepdims=...)``."""
    if returned:
        g = g[0]
    if weights is None:
        return unmean(g, a, axis, keepdims)
    w = _average_weights(a, axis, weights)
    return unreduce(g, a, axis, keepdims) * (w / np.sum(w, axis=axis, keepdims=True))


@helper(fresh=True)
def unaverage_weights(g, y, a, axis=None, weights=None, keepdims=False, returned=False):
    """Adjoint of ``weights`` in ``np.average``: ``g (a - y) / sum(w)``, summed back to the
    weights' shape; with ``returned``, also the adjoint of the sum of the weights."""
    gsum = None
    if returned:
        g, gsum, y = g[0], g[1], y[0]
    w = _average_weights(a, axis, weights)
    total = np.sum(w, axis=axis, keepdims=True)
    if not keepdims and axis is not None:
        g, y = np.expand_dims(g, axis), np.expand_dims(y, axis)
    out = g * (a - y) / total
    if gsum is not None:
        out = out + (np.expand_dims(gsum, axis) if not keepdims and axis is not None else gsum)
    out = np.broadcast_to(out, np.shape(np.multiply(a, w)))
    if np.ndim(weights) == 1 and np.ndim(a) > 1:  # 1-D weights along ``axis``
        others = tuple(i for i in range(np.ndim(a)) if i != _axes(np.ndim(a), axis)[0])
        return np.sum(out, axis=others)
    return unbroadcast(out, weights)


def _average_weights(a, axis, weights):
    """``weights`` shaped to broadcast against ``a`` (1-D weights lie along ``axis``)."""
    if np.ndim(weights) == 1 and np.ndim(a) > 1:
        shape = [1] * np.ndim(a)
        shape[_axes(np.ndim(a), axis)[0]] = -1
        return np.reshape(weights, shape)
    return weights


@helper(fresh=True)
def unnanmean(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.nanmean``: the mean's over the entries that are not nan."""
    present = ~np.isnan(a)
    dtype = getattr(a, "dtype", None)
    dtype = dtype if dtype is not None and dtype.kind == "f" else None  # float32 stays
    count = np.sum(present, axis=axis, keepdims=True, dtype=dtype)
    return np.where(present, unreduce(g, a, axis, keepdims) / count, 0)


@helper(fresh=True)
def unsort(g, a, axis=-1):
    """Adjoint of ``np.sort(a, axis)``: ``g`` put back where each sorted value came from."""
    if axis is None:
        return np.reshape(unsort(np.ravel(g), np.ravel(a), 0), np.shape(a))
    out = zeros_like(a)
    np.put_along_axis(out, np.argsort(a, axis=axis, kind="stable"), g, axis)
    return out


@helper(fresh=True)
def unnorm_ord(g, y, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm(x, ord, axis, keepdims)``, every ``ord`` numpy has:
    of vectors (None, 2, inf, -inf, 0, 1, -1, any p) and of matrices (None, 'fro',
    'nuc', 2, -2, 1, -1, inf, -inf)."""
    nd = np.ndim(x)
    if axis is None:
        axis = tuple(range(nd)) if ord is None or nd == 1 else (0, 1)
    axes = _axes(nd, axis)
    if not keepdims:
        g, y = np.expand_dims(_lift(g, x), axes), np.expand_dims(_lift(y, x), axes)
    if ord is None or ord == "fro" or (ord == 2 and len(axes) == 1):
        return g * x / y
    if len(axes) == 1:
        return g * _vector_norm_slope(x, y, ord, axes)
    moved = np.moveaxis(x, axes, (-2, -1))
    slope = _matrix_norm_slope(moved, np.moveaxis(y, axes, (-2, -1)), ord)
    return g * np.moveaxis(slope, (-2, -1), axes)


def _vector_norm_slope(x, y, ord, axes):
    if ord == 0:  # counts the nonzero entries: constant almost everywhere
        return np.zeros_like(x)
    if ord in (math.inf, -math.inf):  # the largest (smallest) |x|, shared between ties
        hit = np.abs(x) == y
        return np.sign(x) * hit / np.sum(hit, axis=axes, keepdims=True)
    if ord == 1:
        return np.sign(x)
    return np.sign(x) * (np.abs(x) / y) ** (ord - 1)


def _matrix_norm_slope(x, y, ord):
    """The slope of a norm of each matrix of the stack ``x`` (its last two axes)."""
    if ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        k = slice(0, 1) if ord == 2 else slice(-1, None)  # the largest (smallest) one's
        return u[..., :, k] @ vh[..., k, :]
    if ord in (1, -1, math.inf, -math.inf):  # the largest column (row) sum of |x|
        along = -2 if ord in (1, -1) else -1
        sums = np.sum(np.abs(x), axis=along, keepdims=True)
        hit = sums == y
        return np.sign(x) * hit / np.sum(hit, axis=(-2, -1), keepdims=True)
    raise ValueError(f"invalid norm order {ord!r} for matrices")


@helper(fresh=True)
def unslogdet(g, a):
    """Adjoint of ``np.linalg.slogdet``: its logdet (``g[1]``) only; the sign is constant."""
    return _per_matrix(g[1]) * mT(np.linalg.inv(a))


def _symmetric(a):
    """The symmetric matrices whose lower triangles are those of ``a``."""
    return np.tril(a) + mT(np.tril(a, -1))


def _lower_half(x):
    """``tril(x)`` with its diagonal halved (Murray's Phi)."""
    return np.tril(x) - 0.5 * (x * _eye(x.shape[-1], x))


@helper(fresh=True)
def uncholesky(g, y, upper=False):
    """Adjoint of ``y = np.linalg.cholesky(a, upper=upper)``, which reads only the lower
    (upper) triangle of ``a``: the adjoint lies on that triangle."""
    low, gl = (mT(y), mT(g)) if upper else (y, g)
    p = _lower_half(mT(low) @ gl)
    # G = L^-T P L^-1, then each entry of the triangle read stands for both of its places
    left = np.linalg.solve(mT(low), p)
    full = mT(np.linalg.solve(mT(low), mT(left)))
    out = _lower_half(full + mT(full))
    return mT(out) if upper else out


@helper(fresh=True)
def uneigh(g, y, UPLO="L"):
    """Adjoint of ``y = w, v = np.linalg.eigh(a, UPLO)`` (distinct eigenvalues), on the
    triangle of ``a`` that ``eigh`` reads."""
    (w, v), (gw, gv) = y, g
    gap = w[..., None, :] - w[..., :, None]  # w_j - w_i
    off = ~_eye(w.shape[-1], w)
    f = np.where(off, 1 / np.where(off, gap, 1), 0)
    inner = f * (mT(v) @ gv) + _diag_matrix(gw)
    full = v @ inner @ mT(v)
    if UPLO.upper() == "U":
        return mT(_lower_half(mT(full + mT(full))))
    return _lower_half(full + mT(full))


def _diag_matrix(v):
    """The stack of diagonal matrices with diagonals ``v`` (its last axis)."""
    return v[..., :, None] * _eye(v.shape[-1], v)


@helper(fresh=True)
def unsvd(g, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Adjoint of ``np.linalg.svd(a, full_matrices, compute_uv, hermitian)`` for distinct
    nonzero singular values (Townsend 2016): ``u`` and ``vh`` as far as they are unique.
    ``hermitian`` reads the lower triangle of ``a`` only: the adjoint lies there."""
    if hermitian:
        full = unsvd(g, y, _symmetric(a), full_matrices, compute_uv)
        return _lower_half(full + mT(full))
    m, n = np.shape(a)[-2:]
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u @ (g[..., :, None] * vh)
    u, s, vh = y
    gu, gs, gvh = g
    k = min(m, n)
    if full_matrices and m != n:
        u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
        if np.any(g[0][..., k:]) or np.any(g[2][..., k:, :]):
            raise NotImplementedError(
                "the gradient of np.linalg.svd(full_matrices=True) of a non-square matrix "
                "through its extra singular vectors, which are not unique; use "
                "full_matrices=False"
            )
    v, gv = mT(vh), mT(gvh)
    s2 = s[..., None, :] ** 2 - s[..., :, None] ** 2  # s_j^2 - s_i^2
    off = ~_eye(k, s)
    f = np.where(off, 1 / np.where(off, s2, 1), 0)
    ut_gu, vt_gv = mT(u) @ gu, mT(v) @ gv
    smat = s[..., None, :]  # scales columns: x * smat == x @ diag(s)
    inner = (f * (ut_gu - mT(ut_gu))) * smat + _diag_matrix(gs)
    inner = inner + s[..., :, None] * (f * (vt_gv - mT(vt_gv)))
    out = u @ inner @ vh
    if m > k:  # (I - u u^T) gu s^-1 v^T
        out = out + ((gu - u @ ut_gu) / smat) @ vh
    if n > k:  # u s^-1 gv^T (I - v v^T)
        out = out + u @ mT((gv - v @ vt_gv) / smat)
    return out


@helper(fresh=True)
def unqr(g, y, a, mode="reduced"):
    """Adjoint of ``np.linalg.qr(a, mode)`` (full column rank; ``'r'`` and ``'reduced'``,
    or ``'complete'`` of a matrix with no more rows than columns)."""
    m, n = np.shape(a)[-2:]
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = np.zeros_like(q), g
    elif mode in ("reduced", "complete") and (mode == "reduced" or m <= n):
        (q, r), (gq, gr) = y, g
    else:
        raise NotImplementedError(f"the gradient of np.linalg.qr(mode={mode!r}) is not supported")
    if m >= n:
        return _qr_square_adjoint(q, r, gq, gr)
    # a = [x | z]: x = q u is square, z = q w (Liao et al. 2019)
    z, gw = a[..., :, m:], gr[..., :, m:]
    gx = _qr_square_adjoint(q, r[..., :, :m], gq + z @ mT(gw), gr[..., :, :m])
    return np.concatenate([gx, q @ gw], axis=-1)


def _qr_square_adjoint(q, r, gq, gr):
    """(gq + q copyltu(M)) r^-T with M = r gr^T - gq^T q, for m >= n."""
    m = r @ mT(gr) - mT(gq) @ q
    sym = np.tril(m) + mT(np.tril(m, -1))
    return mT(np.linalg.solve(r, mT(gq + q @ sym)))


@helper(fresh=True)
def unpinv(g, y, a, hermitian=False):
    """Adjoint of ``y = np.linalg.pinv(a)`` where the rank of ``a`` does not change nearby
    (Golub and Pereyra): ``-y^T g y^T + (I - a y) g^T y y^T + y^T y g^T (I - y a)``.
    ``hermitian`` reads the lower triangle of ``a`` only: the adjoint lies there."""
    if hermitian:
        full = unpinv(g, y, _symmetric(a))
        return _lower_half(full + mT(full))
    yt, gt = mT(y), mT(g)
    out = -(yt @ g @ yt)
    right = gt @ y @ yt
    out = out + right - a @ (y @ right)
    left = yt @ y @ gt
    return out + left - (left @ y) @ a


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


def _einsum_spec(subscripts, operands):
    """The input terms and output of an einsum, with each ``...`` written out as letters
    (right-aligned, as numpy broadcasts them) and an implicit output made explicit."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    dots = [np.ndim(o) - len(t.replace("...", "")) for t, o in zip(terms, operands)]
    width = max([n for t, n in zip(terms, dots) if "..." in t], default=0)
    ellipsis = "".join(spare[:width])
    terms = [t.replace("...", ellipsis[width - n :]) for t, n in zip(terms, dots)]
    if not arrow:
        letters = "".join(terms)
        single = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis)
        output = ellipsis + "".join(single)
    return terms, output.replace("...", ellipsis)


@helper(shares=True)
def uneinsum_any(g, subscripts, operands, index):
    """Adjoint of operand ``index`` of ``np.einsum(subscripts, *operands)``, for any
    subscripts: ``...``, an index repeated in one operand (a trace or a diagonal: the
    adjoint lies on that diagonal), an index only this operand has (summed away:
    broadcast back), and axes of length 1 broadcast against the others."""
    terms, output = _einsum_spec(subscripts, operands)
    sizes = {}
    for t, o in zip(terms, operands):
        for c, n in zip(t, np.shape(o)):
            sizes[c] = max(sizes.get(c, 1), n)
    mine = terms[index]
    unique = "".join(dict.fromkeys(mine))
    others = [t for k, t in enumerate(terms) if k != index]
    rest = [o for k, o in enumerate(operands) if k != index]
    reachable = set(output).union(*others)
    kept = "".join(c for c in unique if c in reachable)
    grad = np.einsum(",".join([output, *others]) + "->" + kept, g, *rest)
    if kept != unique:  # summed away: the same adjoint for every index
        grad = np.reshape(grad, [sizes[c] if c in kept else 1 for c in unique])
        grad = np.broadcast_to(grad, [sizes[c] for c in unique])
    shape = np.shape(operands[index])
    own = dict(zip(mine, shape))
    ones = tuple(i for i, c in enumerate(unique) if own[c] == 1 and sizes[c] != 1)
    if ones:  # broadcast against the other operands
        grad = np.sum(grad, axis=ones, keepdims=True)
    if unique == mine:
        return grad
    out = np.zeros_like(grad, shape=shape)  # the diagonal, as indices of the unique letters
    axis = {c: i for i, c in enumerate(unique)}
    ranges = {
        c: np.reshape(np.arange(own[c]), [-1 if j == axis[c] else 1 for j in range(len(unique))])
        for c in unique
    }
    out[tuple(ranges[c] for c in mine)] = grad
    return out


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


# Helpers of the rules for diagonal, diff, trapezoid, inner, cross, matrix_power,
# multi_dot, eigvalsh, append, the nan reductions, ptp, median, real and lstsq.


@helper(passes=True)
def uncast(g, y, x):
    """Adjoint of a cast ``y = x.astype(t)``: ``g`` in ``x``'s type; zero where ``y`` is
    of integers or bools (a step function of ``x``)."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and dtype.kind not in "fc":
        return zeros_like(x)
    return cast_like(g, x)


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


@helper(fresh=True)
def untrapezoid(g, y, x=None, dx=1.0, axis=-1, which=0):
    """Adjoint of ``np.trapezoid(y, x, dx, axis)`` for ``y`` (``which`` 0), ``x`` (1) or
    ``dx`` (2)."""
    nd = np.ndim(y)
    axis %= nd
    h = np.moveaxis(np.expand_dims(_lift(g, y, x, dx), axis), axis, -1)
    ym = np.moveaxis(y, axis, -1)
    if x is None:
        width = dx if np.ndim(dx) == 0 else np.moveaxis(dx, axis, -1)
    elif np.ndim(x) == 1:
        width = x[1:] - x[:-1]
    else:
        width = np.diff(np.moveaxis(x, axis, -1), axis=-1)
    if which == 0:
        w = width * h * 0.5
        steps = np.shape(ym)[:-1] + (np.shape(ym)[-1] - 1,)
        w = np.broadcast_to(w, np.broadcast_shapes(np.shape(w), steps))
        zero = np.zeros_like(w, shape=np.shape(w)[:-1] + (1,))
        out = np.concatenate([w, zero], -1) + np.concatenate([zero, w], -1)
        return cast_like(unbroadcast(np.moveaxis(out, -1, axis), y), y)
    slope = h * (ym[..., 1:] + ym[..., :-1]) * 0.5  # d out / d width
    if which == 2:
        return cast_like(
            unbroadcast(slope if np.ndim(dx) == 0 else np.moveaxis(slope, -1, axis), dx), dx
        )
    if np.ndim(x) == 1:
        slope = np.reshape(np.sum(slope, axis=tuple(range(np.ndim(slope) - 1))), (-1,))
        return cast_like(_undiff_last(slope, 1), x)
    out = np.moveaxis(_undiff_last(slope, 1), -1, axis)
    return cast_like(unbroadcast(out, x), x)


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
def unmatrix_power(g, a, n):
    """Adjoint of ``np.linalg.matrix_power(a, n)``: the sum over ``k`` of
    ``(a^T)^k g (a^T)^(n-1-k)``; for ``n < 0``, through the inverse."""
    if n < 0:
        inv = np.linalg.inv(a)
        return -(mT(inv) @ unmatrix_power(g, inv, -n) @ mT(inv))
    powers = [None, a]  # powers[k] = a^k; a^0 is left out of the products
    for _ in range(2, n):
        powers.append(powers[-1] @ a)
    out = zeros_like(a)
    for k in range(n):
        left = g if k == 0 else mT(powers[k]) @ g
        out = out + (left if k == n - 1 else left @ mT(powers[n - 1 - k]))
    return out


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
def uneigvalsh(g, a, UPLO="L"):
    """Adjoint of ``np.linalg.eigvalsh(a, UPLO)``: ``v diag(g) v^T``, on the triangle of
    ``a`` that is read."""
    _, v = np.linalg.eigh(a, UPLO)
    full = (v * g[..., None, :]) @ mT(v)
    if UPLO.upper() == "U":
        return mT(_lower_half(mT(full + mT(full))))
    return _lower_half(full + mT(full))


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
def unnan_extreme(g, y, x, axis=None, keepdims=False):
    """Adjoint of ``np.nanmax``/``np.nanmin``: split evenly between the entries that attain
    it; nan entries (and slices of nans only) get 0."""
    hit = x == unreduce(y, x, axis, keepdims)
    count = hit.sum(axis=_axes(np.ndim(x), axis), keepdims=True)
    share = (hit / np.maximum(count, 1)).astype(x.dtype, copy=False)
    return unreduce(g, x, axis, keepdims) * share


@helper(fresh=True)
def unnanprod(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.nanprod``: the product's, with nans taken as 1 and given 0."""
    nan = np.isnan(a)
    return np.where(nan, 0, unreduce_prod(g, np.where(nan, 1, a), axis, keepdims))


@helper(fresh=True)
def unnanvar(g, a, axis=None, ddof=0, keepdims=False):
    """Adjoint of ``np.nanvar``: the variance's over the entries that are not nan."""
    present = ~np.isnan(a)
    count = np.sum(present, axis=axis, keepdims=True, dtype=a.dtype)
    mean = np.sum(np.where(present, a, 0), axis=axis, keepdims=True) / count
    slope = (a - mean) * (2.0 / np.maximum(count - ddof, 1))
    return np.where(present, unreduce(g, a, axis, keepdims) * slope, 0)


@helper(fresh=True)
def unptp(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.ptp``: the max's adjoint minus the min's."""
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return unreduce_extreme(g, hi, a, axis, keepdims) - unreduce_extreme(g, lo, a, axis, keepdims)


@helper(fresh=True)
def unmedian(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.median``: ``g`` on the middle entry of each slice, or half of it on
    each of the two middle ones (a subgradient where entries tie, as for ``np.sort``)."""
    nd = np.ndim(a)
    axes = _axes(nd, axis)
    rest = tuple(i for i in range(nd) if i not in axes)
    moved = np.transpose(a, rest + axes)
    flat = np.reshape(moved, moved.shape[: len(rest)] + (-1,))
    order = np.argsort(flat, axis=-1, kind="stable")
    n = flat.shape[-1]
    weight = zeros_like(flat)
    middle = order[..., (n - 1) // 2 : n // 2 + 1]
    np.put_along_axis(weight, middle, 1.0 if n % 2 else 0.5, axis=-1)
    weight = np.transpose(np.reshape(weight, moved.shape), backend.inverse_permutation(rest + axes))
    return unreduce(g, a, axis, keepdims) * weight


@helper(passes=True, checks=True)
def real_only(g, x):
    """Adjoint of ``np.real``, ``np.conj`` and ``x.real`` of a real ``x``: ``g`` itself."""
    if isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c":
        raise NotImplementedError(
            "the gradient of np.real, np.conj and .real is supported for real inputs only"
        )
    return g


@helper(fresh=True, checks=True)
def unlstsq(g, y, a, b, which):
    """Adjoint of ``a`` (``which`` 0) or ``b`` (1) in ``np.linalg.lstsq(a, b)``, through
    its solution and residuals (the rank and singular values are refused), where the
    rank of ``a`` does not change nearby."""
    gx, gres, _, gs = g
    if np.any(gs):
        raise NotImplementedError(
            "the gradient of np.linalg.lstsq's singular values is not supported"
        )
    x = y[0]
    vector = np.ndim(b) == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    gx2 = gx[:, None] if vector else gx
    pinv = np.linalg.pinv(a)
    if which == 1:
        out = mT(pinv) @ gx2
    else:
        out = unpinv(gx2 @ mT(b2), pinv, a)
    if np.size(y[1]) and np.any(gres):  # residuals: sum of squares of b - a x, x optimal
        resid = (b2 - a @ x2) * (2.0 * np.reshape(gres, (1, -1)))
        out = out + (resid if which == 1 else -(resid @ mT(x2)))
    return cast_like(np.reshape(out, np.shape((a, b)[which])), (a, b)[which])


@helper(fresh=True)
def unvecdot(g, other, mine, axis=-1):
    """Adjoint of ``mine`` in ``np.vecdot`` of ``mine`` and ``other`` (either order) over
    ``axis``: ``g`` times the other operand, summed where ``mine`` was broadcast."""
    return cast_like(unbroadcast(np.expand_dims(_lift(g, other, mine), axis) * other, mine), mine)


@helper(passes=True)
def unarray_cast(g, y, a):
    """Adjoint of ``y = np.array(a, ...)`` or ``np.asarray``: ``unarray``'s, zero where
    ``y`` is of integers or bools (a cast that is a step function of ``a``)."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and dtype.kind not in "fc":
        g = zeros_like(y)
    return unarray(g, a)


# Helpers of the rules of adjoints (second derivatives; ``rules/runtime_adjoints.py``).


def _inverse_transposed(a, what):
    """``inv(a)^T`` for each matrix of ``a``, or NotImplementedError where ``a`` is singular
    or ill-conditioned (the second derivative of ``what`` there is not supported)."""
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        inv = None
    if inv is None or not _well_conditioned(a, inv):
        raise NotImplementedError(
            f"the second derivative of {what} at a singular or ill-conditioned matrix is "
            "not supported"
        )
    return mT(inv)


@helper(fresh=True)
def undet_slope(g, h, y, a):
    """The derivative of ``undet(g, y, a)`` in ``a`` (``y = det(a)`` following it) along
    ``h``: ``g`` times the Hessian of det at each matrix of ``a`` applied to ``h``,
    ``y (<a^-T, h> a^-T - a^-T h^T a^-T)``; the Hessian is symmetric, so this is also the
    adjoint of that derivative for the cotangent ``h``."""
    it = _inverse_transposed(a, "np.linalg.det")
    cross = np.sum(it * h, axis=(-2, -1))
    return _per_matrix(g * y) * (_per_matrix(cross) * it - it @ mT(h) @ it)


@helper(fresh=True)
def unslogdet_slope(g, h, a):
    """The derivative of ``unslogdet(g, a)`` in ``a`` along ``h``, which is also its adjoint
    for the cotangent ``h``: ``-g[1] a^-T h^T a^-T``."""
    it = _inverse_transposed(a, "np.linalg.slogdet")
    return -_per_matrix(g[1]) * (it @ mT(h) @ it)


@helper(fresh=True)
def unslogdet_cotangent(h, g, a):
    """The adjoint of ``g`` in ``unslogdet(g, a)`` for the cotangent ``h``: nothing for the
    sign, ``<a^-T, h>`` for the logdet of each matrix."""
    return [zeros_like(g[0]), np.sum(mT(np.linalg.inv(a)) * h, axis=(-2, -1))]


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
def uneinsum_others(h, g, subscripts, operands, index):
    """The adjoints of the operands in ``uneinsum_any(g, subscripts, operands, index)`` for
    the cotangent ``h``, a list: that function is linear in each operand but ``index``'s
    (read for its shape: its entry is zeros), ``<h, uneinsum_any(g, ...)>`` being
    ``<g, einsum(subscripts, ...)>`` with ``h`` for operand ``index``."""
    given = replaced(operands, index, h)
    return [
        zeros_like(o) if k == index else uneinsum_any(g, subscripts, given, k)
        for k, o in enumerate(operands)
    ]


@helper(fresh=True)
def uneinsum_tangent(g, subscripts, operands, tangents, index):
    """The tangent of ``uneinsum_any(g, subscripts, operands, index)`` along the operands'
    ``tangents`` (``index``'s own is read for its shape only)."""
    out = zeros_like(operands[index])
    for k, tk in enumerate(tangents):
        if k != index:
            out = out + uneinsum_any(g, subscripts, replaced(operands, k, tk), index)
    return out


def _norm_curvature(x, ord, axis):
    """``(p - 1, axes)`` for ``np.linalg.norm(x, ord, axis)``, whose slope ``unnorm_ord``
    gives is ``sign(x) (|x| / y) ** (p - 1)``: ``p - 1`` is 0 for the norms whose slope is
    piecewise constant (``ord`` 0, 1, inf of vectors; 1, inf of matrices)."""
    nd = np.ndim(x)
    if axis is None:
        axis = tuple(range(nd)) if ord is None or nd == 1 else (0, 1)
    axes = _axes(nd, axis)
    if ord is None or ord == "fro" or (ord == 2 and len(axes) == 1):
        return 1.0, axes
    if ord in (1, -1, math.inf, -math.inf) or (ord == 0 and len(axes) == 1):
        return 0.0, axes
    if len(axes) == 2:
        raise NotImplementedError(
            f"the second derivative of np.linalg.norm with ord={ord!r} of matrices is not supported"
        )
    return float(ord) - 1.0, axes


def _kept(v, x, axes, keepdims):
    return v if keepdims else np.expand_dims(_lift(v, x), axes)


@helper(fresh=True)
def unnorm_slope(g, h, y, x, ord=None, axis=None, keepdims=False):
    """The derivative of ``unnorm_ord(g, y, x, ord, axis, keepdims)`` in ``x`` (``y``
    held) along ``h``: ``g (p - 1) (|x| / y) ** (p - 2) / y h``, elementwise, so also its
    adjoint for the cotangent ``h``."""
    c, axes = _norm_curvature(x, ord, axis)
    if c == 0.0:
        return zeros_like(x)
    g, y = _kept(g, x, axes, keepdims), _kept(y, x, axes, keepdims)
    return g * h * (c * (np.abs(x) / y) ** (c - 1.0) / y)


@helper(fresh=True)
def unnorm_norm_adjoint(h, g, y, x, ord=None, axis=None, keepdims=False):
    """The adjoint of ``y`` in ``r = unnorm_ord(g, y, x, ...)`` for the cotangent ``h``:
    ``-(p - 1) sum(h r / y)`` over the norm's axes."""
    c, axes = _norm_curvature(x, ord, axis)
    r = unnorm_ord(g, y, x, ord, axis, keepdims)
    return -c * np.sum(h * r / _kept(y, x, axes, keepdims), axis=axes, keepdims=keepdims)


@helper(fresh=True)
def unnorm_norm_tangent(g, ty, y, x, ord=None, axis=None, keepdims=False):
    """The tangent of ``unnorm_ord(g, y, x, ...)`` along the tangent ``ty`` of ``y``."""
    c, axes = _norm_curvature(x, ord, axis)
    r = unnorm_ord(g, y, x, ord, axis, keepdims)
    return r * (-c * _kept(ty, x, axes, keepdims) / _kept(y, x, axes, keepdims))


@helper(fresh=True)
def unspread(h, g):
    """The adjoint of ``g`` in ``spread(g, items)`` for the cotangent ``h`` (one entry per
    item): the entries broadcast back to ``g``'s shape and added."""
    total = zeros_like(g)
    for v in h:
        total = add(total, unreduce(v, g))
    return total


@helper(fresh=True)
def unhead(h, g):
    """The adjoint of ``g`` in ``head(g, x)`` for the cotangent ``h``: ``h``'s entries, then
    zeros for the entries of ``g`` that ``head`` left out."""
    return [*h, *(zeros_like(v) for v in g[len(h) :])]


@helper(fresh=True)
def untail(h, g):
    """The adjoint of ``g`` in ``tail(g, y)`` for the cotangent ``h``."""
    return [*(zeros_like(v) for v in g[: len(g) - len(h)]), *h]


@helper(shares=True)
def reunrepeat(h, g):
    """The adjoint of ``g`` in ``unrepeat(g, x)`` for the cotangent ``h``: each copy of an
    item gets that item's entry."""
    return [h[k % len(h)] for k in range(len(g))]


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


@helper(fresh=True)
def uninner_a(g, a, b):
    """Adjoint of ``a`` in ``np.inner(a, b)`` (``a`` read for its shape)."""
    return uninner(g, a, b, 0)


@helper(fresh=True)
def uninner_b(g, a, b):
    """Adjoint of ``b`` in ``np.inner(a, b)`` (``b`` read for its shape)."""
    return uninner(g, a, b, 1)


@helper(fresh=True)
def uncumprod_slope(g, h, a, axis=None):
    """The gradient in ``a`` of ``<g, J(a) h>``, ``J(a)`` the Jacobian of ``np.cumprod(a,
    axis)``: the derivative of ``uncumprod(g, cumprod(a), a, axis)`` (``J(a)^T g``) along
    ``h``, and also its adjoint for the cotangent ``h`` (the second derivative is
    symmetric). Entry ``k`` is ``sum_{j >= k} g[j] sum_{i <= j, i != k} h[i]
    prod_{l <= j, l != i, k} a[l]``: the tangent of the products with ``a[k]`` set to 1
    along ``h`` with ``h[k]`` set to 0, exact where entries of ``a`` are 0."""
    if axis is None:
        flat = uncumprod_slope(np.ravel(g), np.ravel(h), np.ravel(a), 0)
        return np.reshape(flat, np.shape(a))
    a, g, h = (np.moveaxis(v, axis, -1) for v in (a, g, h))  # h is shaped like a
    n = a.shape[-1]
    out = np.zeros_like(a * h)
    for k in range(n):
        ak, hk = a.copy(), h.copy()
        ak[..., k], hk[..., k] = 1, 0
        product, tangent = ak[..., 0], hk[..., 0]
        total = g[..., 0] * tangent if k == 0 else 0.0
        for j in range(1, n):  # the tangent of cumprod(ak) along hk, entry j
            tangent = tangent * ak[..., j] + product * hk[..., j]
            product = product * ak[..., j]
            if j >= k:
                total = total + g[..., j] * tangent
        out[..., k] = total
    return np.moveaxis(out, -1, axis)


@helper(fresh=True)
def reaverage(h, g, a, axis=None, weights=None, keepdims=False, returned=False):
    """The adjoint of ``g`` in ``unaverage(g, a, axis, weights, keepdims, returned)`` for
    the cotangent ``h`` (the weights held): ``h`` times each entry's share, summed."""
    mine = g[0] if returned else g
    share = unaverage(np.ones_like(mine), a, axis, weights, keepdims)
    out = unbroadcast(np.sum(h * share, axis=axis, keepdims=keepdims), mine)
    return [out, zeros_like(g[1])] if returned else out


def _cholesky_lower(y, upper):
    """The lower factor of ``y = cholesky(a, upper=upper)`` and its inverse."""
    low = mT(y) if upper else y
    return low, np.linalg.inv(low)


@helper(fresh=True)
def uncholesky_cotangent(h, y, upper=False):
    """The adjoint of ``g`` in ``uncholesky(g, y, upper)`` for the cotangent ``h``:
    ``L Phi(L^-1 (Phi(h) + Phi(h)^T) L^-T)`` (``Phi``: the lower triangle, its diagonal
    halved; ``uncholesky`` is ``Phi`` of that map's transpose, read backwards)."""
    low, inv = _cholesky_lower(y, upper)
    half = _lower_half(mT(h) if upper else h)
    out = low @ _lower_half(inv @ (half + mT(half)) @ mT(inv))
    return mT(out) if upper else out


@helper(fresh=True)
def uncholesky_factor_adjoint(h, g, y, upper=False):
    """The adjoint of ``y`` in ``uncholesky(g, y, upper)`` for the cotangent ``h``:
    ``g Phi(Z)^T - L^-T (P + P^T) Z`` with ``P = Phi(L^T g)`` and
    ``Z = L^-1 (Phi(h) + Phi(h)^T) L^-T``."""
    low, inv = _cholesky_lower(y, upper)
    gl, half = (mT(g), _lower_half(mT(h))) if upper else (g, _lower_half(h))
    z = inv @ (half + mT(half)) @ mT(inv)
    p = _lower_half(mT(low) @ gl)
    out = gl @ mT(_lower_half(z)) - mT(inv) @ (p + mT(p)) @ z
    return mT(out) if upper else out


@helper(fresh=True)
def uncholesky_factor_tangent(g, ty, y, upper=False):
    """The tangent of ``uncholesky(g, y, upper)`` along the tangent ``ty`` of ``y``."""
    low, inv = _cholesky_lower(y, upper)
    gl, tl = (mT(g), mT(ty)) if upper else (g, ty)
    it = mT(inv)
    p = _lower_half(mT(low) @ gl)
    full = it @ (_lower_half(mT(tl) @ gl) - mT(tl) @ it @ p - p @ inv @ tl) @ inv
    out = _lower_half(full + mT(full))
    return mT(out) if upper else out
