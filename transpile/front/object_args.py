"""User objects as arguments: ``grad(loss)(model, x)`` where ``loss`` reads ``model.W``.

An argument that is an instance of the user's own class (not a number, array,
container, function, class or library object; ``is_user_object``) is described by
a ``Layout``: its class, its numeric fields (floats, ints, arrays, and lists,
tuples and dicts of them; a nested object has a layout of its own) and the
functions it holds. A list, tuple or dict holding objects (``self.layers =
[Dense(...), Tanh(), Dense(...)]``, or such a list passed in) is an ``Items``: the
layout of each element, so its length and each element's class are part of what a
gradient is transpiled for (``objects`` unrolls a loop over it). The gradient is transpiled per layout (``Context.classes``), so
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

import gast
import numpy as np

from transpile.core.assumptions import LIBRARY_ROOTS
from transpile.front import bound_functions, parse
from transpile_runtime.structure import object_fields


@dataclass(frozen=True)
class Layout:
    """What the compiler knows of one object: equal layouts share a gradient."""

    cls: type
    view: bool  # handed to the generated code as a View (else as the object itself)
    fields: tuple = ()  # (name, Layout of a nested object or None): the numeric fields
    functions: tuple = ()  # (name, function) the instance holds
    made: bool = False  # made in the function as the dict of its fields: no object behind
    counters: tuple = ()  # numeric fields holding no float (ints): never differentiated

    def field(self, name):
        """``(True, nested Layout or None)`` for a numeric field, ``(False, None)`` else."""
        for n, sub in self.fields:
            if n == name:
                return True, sub
        return False, None

    def function(self, name):
        return dict(self.functions).get(name)


@dataclass(frozen=True)
class Items:
    """A list, tuple or dict holding user objects: the layout of each element (a
    ``Layout``, an ``Items``, or None for a numeric one), in order."""

    kind: type  # list, tuple or dict
    keys: tuple  # the dict's keys, or the indices 0, 1, ...
    elements: tuple
    view: bool = True  # its objects are handed to the generated code as views

    def element(self, key):
        """``(True, layout)`` for the element at ``key``, ``(False, None)`` if none."""
        if isinstance(key, int) and not isinstance(key, bool) and self.kind is not dict:
            key = key + len(self.keys) if key < 0 else key
        for k, sub in zip(self.keys, self.elements):
            if k == key and type(k) is type(key):
                return True, sub
        return False, None

    def common(self):
        """The layout every element has (for an index not known when transpiling), or
        None where they differ or there are none."""
        first = self.elements[0] if self.elements else None
        return first if all(e == first for e in self.elements) else None


def is_user_object(value) -> bool:
    """An instance of a class of the user's (with a ``__dict__``), not of a library's."""
    if isinstance(value, type) or bound_functions.is_function_value(value):
        return False
    if not hasattr(value, "__dict__") or inspect.ismodule(value):
        return False
    root = (getattr(type(value), "__module__", "") or "").split(".")[0]
    return root not in LIBRARY_ROOTS and root not in sys.stdlib_module_names


def is_user_class(cls) -> bool:
    """A class of the user's: defined outside the libraries and the standard library."""
    root = (getattr(cls, "__module__", "") or "").split(".")[0]
    return (
        inspect.isclass(cls) and root not in LIBRARY_ROOTS and root not in sys.stdlib_module_names
    )


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
        sub = _structure(v, view, seen)
        if sub is not None or _numeric(v):
            fields.append((k, sub))
        elif bound_functions.is_function_value(v):
            functions.append((k, v))
        elif view and _hides_parameters(v):  # an argument's: differentiated
            raise TypeError(
                f"{type(value).__name__}.{k} mixes arrays or objects of your classes with "
                "other values (strings, None, ...): a gradient cannot flow through it, nor "
                "be returned in its place; keep the arrays (or objects) in a field of their "
                "own, or pass it as a separate argument"
            )
    floats = set(object_fields(value))
    counters = tuple(k for k, _ in fields if k not in floats)
    return Layout(type(value), view, tuple(fields), tuple(functions), counters=counters)


def _hides_parameters(value) -> bool:
    """A container that holds an array or an object of the user's among values that are
    neither: not a field, so what it holds would be read as a constant and handed back
    unchanged in the gradient's structure."""
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return False
    return any(
        is_user_object(v) or getattr(v, "ndim", 0) >= 1 and _numeric(v) or _hides_parameters(v)
        for v in items
    )


def argument_layout(value, view=True):
    """The ``Layout`` or ``Items`` of an argument holding user objects, else None."""
    return _structure(value, view, ())


def _structure(value, view, seen):
    """A ``Layout`` for a user object, an ``Items`` for a container whose elements are
    all objects, numbers or such containers (one object at least), else None."""
    if is_user_object(value):
        return None if id(value) in seen else layout(value, view, seen)
    if isinstance(value, dict):
        keys, values = tuple(value), tuple(value.values())
    elif isinstance(value, (list, tuple)):
        keys, values = tuple(range(len(value))), tuple(value)
    else:
        return None
    subs = tuple(_structure(v, view, seen) for v in values)
    if all(s is None for s in subs):
        return None
    if not all(s is not None or _numeric(v) for s, v in zip(subs, values)):
        return None
    kind = dict if isinstance(value, dict) else tuple if isinstance(value, tuple) else list
    return Items(kind, keys, subs, view)


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

    def __setattr__(self, name, value):
        if name == "_source":
            object.__setattr__(self, name, value)
            return
        if name in self:  # a counter (objects refuses a float field's write): read back
            self[name] = value
        setattr(self._source, name, value)  # the user's object counts, as it would


def to_view(value, lay):
    """``value`` as the generated code sees it: a new ``View`` of an object (``lay`` a
    ``Layout``), a new container of views (an ``Items``); ``value`` is not touched."""
    if lay is None:
        return value
    if isinstance(lay, Items):
        pairs = zip(_values(value), lay.elements)
        views = [to_view(v, sub) for v, sub in pairs]
        return dict(zip(lay.keys, views)) if lay.kind is dict else lay.kind(views)
    fields = vars(value)
    view = View((k, to_view(fields[k], sub)) for k, sub in lay.fields)
    view._source = value
    return view


def _values(value):
    return list(value.values()) if isinstance(value, dict) else list(value)


def from_gradient(g, value, lay):
    """The gradient ``g`` (dicts of field gradients where ``value`` holds objects) in
    ``value``'s structure: each object a new instance of its class (not initialized:
    ``__new__`` only), or its dict of field gradients where that fails."""
    if lay is None:
        return g
    if isinstance(lay, Items):
        if not isinstance(g, (list, tuple, dict)) or len(g) != len(lay.keys):
            return g
        grads = _values(g)
        out = [from_gradient(d, v, sub) for d, v, sub in zip(grads, _values(value), lay.elements)]
        return dict(zip(lay.keys, out)) if lay.kind is dict else lay.kind(out)
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
            out.__dict__[k] = from_gradient(g[k], vars(value)[k], sub)
    return out


def receivers(func) -> tuple:
    """The parameters of ``func`` that it calls, or of which it reads an attribute that
    neither arrays nor lists and dicts have (``model.W``, not ``x.shape``), directly or
    through an element (``layers[0](x)``, ``for layer in layers: layer(x)``): those may
    hold user objects, whose classes the gradient waits for."""
    try:
        tree = parse.run(func).tree
    except Exception:  # noqa: BLE001 - no source: the caller's error stands
        return ()
    params = [a.id for a in tree.args.args]
    used = set()
    for n in gast.walk(tree):
        if isinstance(n, gast.Attribute):
            if not any(hasattr(t, n.attr) for t in (np.ndarray, list, dict)):
                used.add(_element_root(n.value))
        elif isinstance(n, gast.Call):
            used.add(_element_root(n.func))
    for n in gast.walk(tree):
        if isinstance(n, gast.For) and used & {t.id for t in _names(n.target)}:
            used.add(_element_root(_unwrap_iterable(n.iter)))
    return tuple(p for p in params if p in used)


def _element_root(node):
    """``layers`` for ``layers``, ``layers[0]`` and ``layers[0][1]``; None otherwise."""
    while isinstance(node, gast.Subscript):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _unwrap_iterable(node):
    """``seq`` for ``seq``, ``enumerate(seq)`` and ``reversed(seq)``."""
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Name)
        and node.func.id in ("enumerate", "reversed")
        and node.args
    ):
        return node.args[0]
    return node


def _names(target):
    return [n for n in gast.walk(target) if isinstance(n, gast.Name)]


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
        found = ((p, argument_layout(a)) for p, a in zip(params, args))
        layouts = tuple((p, lay) for p, lay in found if lay is not None)
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
