"""A strict NEP-13/NEP-18 array type wrapping numpy, standing in for cupy in tests.

``StrictArray`` holds a numpy array and takes part in numpy's protocols the way a
device array library does, without a device: numpy ufuncs (every method: call,
``reduce``, ``accumulate``, ``reduceat``, ``outer``, ``at``, and ``out=``) go
through ``__array_ufunc__``, numpy functions through ``__array_function__``
(creation functions too, with ``like=``), and every result is a ``StrictArray``
again. Like cupy it is strict where a library whose data lives elsewhere must be:

* implicit conversion to numpy raises ``TypeError`` (``np.asarray(x)``,
  ``np.array(x)``, anything that calls ``__array__``); ``x.get()``, ``x.item()``,
  ``x.tolist()`` and ``float(x)``/``int(x)``/``bool(x)`` of one element are the
  explicit ways out, as in cupy;
* mixing with a numpy array of one or more dimensions raises ``TypeError``, in
  ufuncs and operators (``x + numpy_array``), in numpy functions
  (``np.concatenate([x, numpy_array])``) and in writes (``x[i] = numpy_array``);
  Python numbers, numpy scalars and 0-d numpy arrays mix freely. Integer numpy
  arrays are accepted where numpy functions take axes, shapes or indices
  (``np.transpose(x, np.argsort(axes))``, ``x[np.arange(3)]``), as cupy accepts them;
* reductions return 0-d arrays, not numpy scalars (``np.sum(x)``, ``x.max()``,
  ``x[0]`` of a vector), as cupy does;
* it has no ``fill`` method and no ``flags.writeable``, which other libraries
  (dask) lack too.

``strict(value)`` converts numpy arrays inside a structure (dicts, lists, tuples);
``to_numpy(value)`` converts back. ``StrictArray.calls`` counts the numpy functions
and ufunc methods it served, for tests that look at what a gradient calls.
"""

import collections
from typing import ClassVar

import numpy as np


class _Flags:
    """cupy's ``ndarray.flags``: contiguity and ownership, no ``writeable``."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, a):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata


class StrictArray:
    """A numpy array behind NEP-13/18 only: see the module docstring."""

    __slots__ = ("__weakref__", "_a")
    __array_priority__ = 100
    calls: ClassVar[collections.Counter] = collections.Counter()

    def __init__(self, data):
        if not isinstance(data, np.ndarray):
            raise TypeError(f"StrictArray wraps a numpy array, not {type(data).__name__}")
        self._a = data

    # -- conversions: implicit ones raise, explicit ones work --
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly."
        )

    def get(self):
        """A numpy copy of the data (cupy's ``ndarray.get``)."""
        return self._a.copy()

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __bool__(self):
        return bool(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __repr__(self):
        return f"StrictArray({self._a!r})"

    __hash__ = None

    # -- attributes --
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a))

    @property
    def base(self):
        """None for an array that owns its data, else (a stand-in for) what it views."""
        return None if self._a.base is None else StrictArray(np.asarray(self._a.base))

    @property
    def T(self):
        return np.transpose(self)

    @property
    def real(self):
        return np.real(self)

    @property
    def imag(self):
        return np.imag(self)

    # -- methods: each is the numpy function of the same name, dispatched to us --
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        out = self._a.astype(dtype, order=order, casting=casting, copy=copy)
        return self if out is self._a else StrictArray(out)

    def copy(self, order="C"):
        return StrictArray(self._a.copy(order))

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return np.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)) or axes == ():
            axes = axes[0] if axes else None
        return np.transpose(self, axes)

    def view(self, dtype=None):
        return StrictArray(self._a.view() if dtype is None else self._a.view(dtype))

    def flatten(self, order="C"):
        return StrictArray(self._a.flatten(order))

    def sort(self, axis=-1, kind=None, order=None):
        self._a.sort(axis, kind, order)

    def dot(self, b):
        return np.dot(self, b)

    def nonzero(self):
        return np.nonzero(self)

    def __getitem__(self, key):
        return _wrap(self._a[_index(key)], {id(self._a): self})

    def __setitem__(self, key, value):
        self._a[_index(key)] = _unwrap_data(value)

    # -- the protocols --
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        StrictArray.calls[f"{ufunc.__name__}.{method}"] += 1
        own = _originals(inputs)
        out = kwargs.get("out")
        if out is not None:
            out = out if isinstance(out, tuple) else (out,)
            own.update(_originals(out))
            kwargs["out"] = tuple(_unwrap_out(o) for o in out)
        if method == "at":
            args = (_unwrap_data(inputs[0]), _index(inputs[1])) + tuple(
                _unwrap_data(i) for i in inputs[2:]
            )
        else:
            args = tuple(_unwrap_data(i) for i in inputs)
        kwargs = {k: _unwrap_data(v) if k == "where" else v for k, v in kwargs.items()}
        result = getattr(ufunc, method)(*args, **kwargs)
        return _wrap(result, own)

    def __array_function__(self, func, types, args, kwargs):
        if not all(issubclass(t, (StrictArray, np.ndarray)) for t in types):
            return NotImplemented
        StrictArray.calls[func.__name__] += 1
        own = _originals(args) | _originals(kwargs.values())
        result = func(*_unwrap_tree(args), **_unwrap_tree(kwargs))
        return _wrap(result, own)


def _method(name):
    fn = getattr(np, name)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


_METHODS = (
    "all any argmax argmin argsort clip conj conjugate cumprod cumsum diagonal max mean "
    "min prod ravel repeat round squeeze std sum swapaxes take trace var"
)
for _name in _METHODS.split(" "):
    setattr(StrictArray, _name, _method(_name))


def _operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace(ufunc):
    def method(self, other):
        ufunc(self, other, out=(self,))
        return self

    return method


for _name, _ufunc in {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "matmul": np.matmul,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}.items():
    setattr(StrictArray, f"__{_name}__", _operator(_ufunc))
    setattr(StrictArray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    setattr(StrictArray, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}.items():
    setattr(StrictArray, f"__{_name}__", _operator(_ufunc))
StrictArray.__neg__ = lambda self: np.negative(self)
StrictArray.__pos__ = lambda self: np.positive(self)
StrictArray.__abs__ = lambda self: np.absolute(self)
StrictArray.__invert__ = lambda self: np.invert(self)
StrictArray.__divmod__ = _operator(np.divmod)


# -- unwrapping and wrapping --


def _mixing_error(value):
    return TypeError(
        f"StrictArray does not mix with numpy arrays of ndim >= 1 (got a numpy array of "
        f"shape {value.shape} and dtype {value.dtype}); convert explicitly"
    )


def _unwrap_data(value):
    """A ufunc operand or a written value: a numpy array of ndim >= 1 is refused."""
    if isinstance(value, StrictArray):
        return value._a
    if isinstance(value, np.ndarray) and value.ndim >= 1:
        raise _mixing_error(value)
    if isinstance(value, (list, tuple)):
        raise TypeError(
            f"StrictArray does not take a Python {type(value).__name__} as an array operand"
        )
    return value


def _unwrap_out(value):
    if isinstance(value, StrictArray):
        return value._a
    if value is None:
        return None
    raise TypeError(f"out= must be a StrictArray, not {type(value).__name__}")


def _index(key):
    """An index: StrictArrays unwrapped; numpy integer and bool arrays accepted, as
    cupy accepts them for indexing; numpy float arrays refused."""
    if isinstance(key, tuple):
        return tuple(_index(k) for k in key)
    if isinstance(key, StrictArray):
        return key._a
    if isinstance(key, np.ndarray) and key.ndim >= 1 and key.dtype.kind not in "iub":
        raise _mixing_error(key)
    return key


def _unwrap_tree(value):
    """A numpy function's arguments: StrictArrays unwrapped inside lists, tuples and
    dicts; numpy arrays of ndim >= 1 refused unless they hold integers (axes, shapes,
    indices)."""
    if isinstance(value, StrictArray):
        return value._a
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.dtype.kind not in "iu":
        raise _mixing_error(value)
    if isinstance(value, dict):
        return {k: _unwrap_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not _is_namedtuple(value):
        return type(value)(_unwrap_tree(v) for v in value)
    return value


def _originals(values):
    """id of each wrapped numpy array -> its StrictArray (results that are those arrays
    come back as the same object, as cupy returns ``out`` or ``self``)."""
    found = {}
    for v in values:
        if isinstance(v, StrictArray):
            found[id(v._a)] = v
        elif isinstance(v, (list, tuple)):
            found.update(_originals(v))
    return found


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _wrap(result, own):
    """Results as StrictArrays: arrays and numpy scalars (0-d, as cupy returns them),
    inside tuples and lists; other values (shapes, dtypes, Python numbers) as they are."""
    if isinstance(result, np.ndarray):
        found = own.get(id(result))
        return found if found is not None else StrictArray(result)
    if isinstance(result, np.generic):
        return StrictArray(np.asarray(result))
    if _is_namedtuple(result):
        return type(result)(*(_wrap(r, own) for r in result))
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap(r, own) for r in result)
    return result


# -- structures --


def strict(value):
    """``value`` with every numpy array (and numpy float scalar, as a 0-d array) inside
    dicts, lists and tuples made a ``StrictArray`` holding a copy."""
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(strict(v) for v in value)
    if isinstance(value, np.ndarray):
        return StrictArray(value.copy())
    return value


def to_numpy(value):
    """``value`` with every ``StrictArray`` inside dicts, lists and tuples made numpy
    (a 0-d one a numpy array of 0 dimensions)."""
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not _is_namedtuple(value):
        return type(value)(to_numpy(v) for v in value)
    if isinstance(value, StrictArray):
        return value.get()
    return value


def contains_numpy(value):
    """Whether a numpy array or numpy scalar hides anywhere in ``value``."""
    if isinstance(value, dict):
        return any(contains_numpy(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_numpy(v) for v in value)
    return isinstance(value, (np.ndarray, np.generic))


__all__ = ["StrictArray", "contains_numpy", "strict", "to_numpy"]
