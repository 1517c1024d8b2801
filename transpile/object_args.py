"""User objects as arguments: ``grad(loss)(model, x)`` where ``loss`` reads ``model.W``.

An argument that is an instance of the user's own class (not a number, array,
container, function, class or library object; ``is_user_object``) is described by
a ``Layout``: its class, its numeric fields (floats, ints, arrays, and lists,
tuples and dicts of them; a nested object has a layout of its own) and the
functions it holds. The gradient is transpiled per layout (``Context.classes``), so
``objects.stage`` knows what ``model.W`` and ``model.forward(x)`` are.

The generated code is handed a ``View`` of such an argument: a new dict of its
numeric fields that also answers any other attribute from the object itself. To the
compiler an attribute of a parameter is then a string key of a dict parameter, and
its gradient a dict of field gradients. ``deferred`` turns that dict back into the
argument's structure: a new instance of its class, made without calling
``__init__`` (``cls.__new__(cls)``), whose numeric fields hold their gradients and
whose other attributes are the argument's own (shared, never modified). A class
that ``__new__`` alone cannot make gives the dict of field gradients instead.
The caller's objects are never modified.
"""

import functools
import inspect
import numbers
import sys
from dataclasses import dataclass

import numpy as np

from transpile import bound_functions
from transpile.assumptions import LIBRARY_ROOTS


@dataclass(frozen=True)
class Layout:
    """What the compiler knows of one object: equal layouts share a gradient."""

    cls: type
    view: bool  # handed to the generated code as a View (else as the object itself)
    fields: tuple = ()  # (name, Layout of a nested object or None): the numeric fields
    functions: tuple = ()  # (name, function) the instance holds

    def field(self, name):
        """``(True, nested Layout or None)`` for a numeric field, ``(False, None)`` else."""
        for n, sub in self.fields:
            if n == name:
                return True, sub
        return False, None

    def function(self, name):
        return dict(self.functions).get(name)


def is_user_object(value) -> bool:
    """An instance of a class of the user's (with a ``__dict__``), not of a library's."""
    if isinstance(value, type) or bound_functions.is_function_value(value):
        return False
    if not hasattr(value, "__dict__") or inspect.ismodule(value):
        return False
    root = (getattr(type(value), "__module__", "") or "").split(".")[0]
    return root not in LIBRARY_ROOTS and root not in sys.stdlib_module_names


def _numeric(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Real):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "shape"):
        return dtype.kind in "fiu"
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_numeric(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(_numeric(v) for v in value.values())
    return False


def layout(value, view=True, _seen=()) -> Layout:
    """The ``Layout`` of the user object ``value`` (a cycle of objects ends as a leaf
    that is neither a field nor a function)."""
    fields, functions = [], []
    seen = _seen + (id(value),)
    for k, v in vars(value).items():
        if is_user_object(v) and id(v) not in seen:
            fields.append((k, layout(v, view, seen)))
        elif _numeric(v):
            fields.append((k, None))
        elif bound_functions.is_function_value(v):
            functions.append((k, v))
    return Layout(type(value), view, tuple(fields), tuple(functions))


class View(dict):
    """A user object as the generated code sees it: its numeric fields as items (nested
    objects as views), every other attribute read from the object itself."""

    __slots__ = ("_source",)

    def __getattr__(self, name):
        if name == "_source":
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            return getattr(self._source, name)


def to_view(value, lay: Layout) -> View:
    """A new ``View`` of ``value``; ``value`` itself is not touched."""
    fields = vars(value)
    view = View((k, to_view(fields[k], sub) if sub else fields[k]) for k, sub in lay.fields)
    view._source = value
    return view


def from_gradient(g, value, lay: Layout):
    """The dict of field gradients ``g`` in ``value``'s structure: a new instance of its
    class (not initialized: ``__new__`` only), or ``g`` itself where that fails."""
    if not isinstance(g, dict):
        return g
    cls = type(value)
    try:
        out = cls.__new__(cls)
        out.__dict__.update(vars(value))
    except (TypeError, AttributeError):
        return g
    for k, sub in lay.fields:
        if k in g:
            out.__dict__[k] = from_gradient(g[k], vars(value)[k], sub) if sub else g[k]
    return out


def receivers(func) -> tuple:
    """The parameters of ``func`` that it calls, or of which it reads an attribute that
    neither arrays nor lists and dicts have (``model.W``, not ``x.shape``): those may be
    user objects, whose class the gradient waits for."""
    import gast

    from transpile import parse

    try:
        tree = parse.run(func).tree
    except Exception:  # noqa: BLE001 - no source: the caller's error stands
        return ()
    params = [a.id for a in tree.args.args]
    used = set()
    for n in gast.walk(tree):
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name):
            if not any(hasattr(t, n.attr) for t in (np.ndarray, list, dict)):
                used.add(n.value.id)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name):
            used.add(n.func.id)
    return tuple(p for p in params if p in used)


def deferred(func, indices, mode, as_tuple, transpile):
    """The gradient of ``func``, transpiled at each call for the classes of the user
    objects passed (and the functions passed; a dictionary lookup once made). Objects
    go in as views; their gradients come back in their structure."""
    sig = inspect.signature(func)
    params = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]

    def entry_for(args):
        layouts = tuple((p, layout(a)) for p, a in zip(params, args) if is_user_object(a))
        functions = bound_functions.of_arguments(params, args)
        generated = transpile(
            func, indices, mode, as_tuple=as_tuple, functions=functions, classes=layouts
        )
        return generated.function, dict(layouts)

    @functools.wraps(func)
    def gradient(*args, **kwargs):
        extra = ()
        if mode == "vjp" and len(args) + len(kwargs) > len(params):
            args, extra = args[:-1], args[-1:]
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        args = bound.args
        entry, layouts = entry_for(args)
        views = [to_view(a, layouts[p]) if p in layouts else a for p, a in zip(params, args)]
        result = entry(*views, *extra)
        back = [(args[i], layouts.get(params[i])) for i in indices]
        return _in_structure(result, back, mode, len(indices) == 1 and not as_tuple)

    gradient.__transpile_deferred__ = lambda args: entry_for(args)[0]
    gradient.__transpile_waiting__ = receivers(func)
    del gradient.__wrapped__  # not the function itself: what inspect.unwrap must not find
    return gradient


def _in_structure(result, back, mode, single):
    """``result`` with the gradient of each object argument in its structure; ``back``:
    ``(argument, Layout or None)`` per differentiated argument."""
    grads = result[1] if mode == "value_and_grad" else result
    items = [grads] if single else list(grads)
    items = [from_gradient(g, a, lay) if lay else g for g, (a, lay) in zip(items, back)]
    grads = items[0] if single else tuple(items)
    return (result[0], grads) if mode == "value_and_grad" else grads
