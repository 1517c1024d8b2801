"""Parameter structures: which arguments to differentiate, and nested containers.

``wrt`` names the arguments a gradient is taken with respect to: an index, a
parameter name, or a tuple of them. An argument may be a float, an array, or a
nest of dicts, lists and tuples of those; gradients come back in the same
structure. Both the compiler and the numeric checker use these helpers.

``flatten`` also looks into an object of the user's own class (``is_object``): its
fields holding floats or float arrays (or containers or objects holding them, a
list of layers) are its children; integers, strings and functions are not, so a
layer count or an activation stays what it is. ``unflatten`` makes a new instance
without calling ``__init__`` (``cls.__new__(cls)``), the other attributes the
original's; the original is never modified.
"""

import inspect
import numbers
import sys
from collections.abc import Sequence

# what ``wrt`` may be: a parameter index, a parameter name, or a tuple (list) of them
Wrt = int | str | Sequence[int | str]


def _positional_names(func):
    """``func``'s positional parameters, or None where it has no signature (a ufunc on
    numpy 2.0): an index is then taken as given, and its call tells."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _index(func, item, names):
    """The positional index ``item`` (an index or a name) stands for among ``names``
    (None: ``func`` has no signature)."""
    if isinstance(item, bool) or not isinstance(item, (int, str)):
        raise TypeError(f"wrt entries are parameter indices or names, not {item!r}")
    if isinstance(item, str):
        if item not in (names or ()):
            raise ValueError(
                f"wrt={item!r}: {func.__name__} has no parameter {item!r}; "
                f"its parameters are {names}"
            )
        return names.index(item)
    if names is None:
        if item < 0:
            raise ValueError(f"wrt={item}: {func!r} has no signature to count from")
        return item
    index = item + len(names) if item < 0 else item
    if not 0 <= index < len(names):
        raise ValueError(
            f"wrt={item}: {func.__name__} has {len(names)} positional parameters {names}"
        )
    return index


def resolve_wrt(func, wrt, names=None):
    """Return ``(indices, as_tuple)`` for ``wrt`` against ``func``'s parameters (or
    against ``names``, the parameters it is transpiled with).

    ``indices`` are positional parameter indices; ``as_tuple`` says whether the
    caller asked for a tuple (and so gets a tuple of gradients back).
    """
    if names is None:
        names = _positional_names(func)
    as_tuple = isinstance(wrt, (tuple, list))
    items = tuple(wrt) if as_tuple else (wrt,)
    if as_tuple and not items:
        raise ValueError("wrt is an empty tuple: name at least one argument")
    indices = []
    for item in items:
        index = _index(func, item, names)
        if index in indices:
            shown = index if names is None else repr(names[index])
            raise ValueError(f"wrt names parameter {shown} twice")
        indices.append(index)
    return tuple(indices), as_tuple


_LIBRARIES = frozenset(("numpy", "scipy", "cupy", "dask", "jax", "torch", "transpile"))


def is_object(value) -> bool:
    """An instance of a class of the user's with a ``__dict__`` (not a number, array,
    container, function, class, module, or a library's or the standard library's)."""
    if isinstance(value, (type, dict, list, tuple, str, bytes, numbers.Number)):
        return False
    if not hasattr(value, "__dict__") or inspect.isroutine(value) or inspect.ismodule(value):
        return False
    root = (getattr(type(value), "__module__", "") or "").split(".")[0]
    return root not in _LIBRARIES and root not in sys.stdlib_module_names


def object_fields(value, _seen=()) -> list:
    """The names of the fields of object ``value`` that hold floats, float arrays, or
    containers or objects of them (an object without such fields counts: a ``Tanh``
    layer in a list)."""
    seen = _seen + (id(value),)
    return [k for k, v in vars(value).items() if _holds_floats(v, seen)]


def _holds_floats(value, seen):
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "shape"):
        return dtype.kind == "f"
    if is_object(value):
        return id(value) not in seen
    items = list(value.values()) if isinstance(value, dict) else value
    if isinstance(value, (dict, list, tuple)) and items:
        return all(_holds_floats(v, seen) for v in items)
    return False


def flatten(tree):
    """Return ``(leaves, treedef)``: the non-container leaves in a fixed order."""
    leaves = []

    def walk(node):
        if isinstance(node, dict):
            keys = list(node.keys())
            return ("dict", keys, [walk(node[k]) for k in keys])
        if isinstance(node, (list, tuple)):
            return (type(node).__name__, None, [walk(v) for v in node])
        if is_object(node):
            keys = object_fields(node)
            return ("object", (node, keys), [walk(vars(node)[k]) for k in keys])
        leaves.append(node)
        return ("leaf", None, None)

    return leaves, walk(tree)


def unflatten(treedef, leaves):
    """Rebuild the structure described by ``treedef`` from ``leaves``."""
    it = iter(leaves)

    def build(node):
        kind, keys, children = node
        if kind == "leaf":
            return next(it)
        values = [build(c) for c in children]
        if kind == "dict":
            return dict(zip(keys, values))
        if kind == "object":
            return _instance(*keys, values)
        return tuple(values) if kind == "tuple" else list(values)

    return build(treedef)


def _instance(original, keys, values):
    """A new instance of ``original``'s class with fields ``keys`` set to ``values`` and
    its other attributes the original's (the dict of those fields where ``__new__``
    alone cannot make one)."""
    cls = type(original)
    try:
        out = cls.__new__(cls)
        out.__dict__.update(vars(original))
    except (TypeError, AttributeError):
        return dict(zip(keys, values))
    out.__dict__.update(zip(keys, values))
    return out
