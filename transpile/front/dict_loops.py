"""Which loops go over a dict: there ``for k in d`` goes over the keys, in order.

``normalize`` lowers ``for item in seq`` to ``for i in range(len(seq))`` reading
``item = seq[i]``, which is right for lists, tuples and arrays; on a dict it would
read ``d[0]``. So each loop's iterable is classified here:

- surely a dict (``surely_dict``): ``d.keys()``, ``d.values()``, ``d.items()``
  (``view``), or a name bound only to dict displays, comprehensions or ``dict()``;
  the loop reads the keys list ``ops.keys(d)`` and ``d[k]``;
- maybe a dict (``may_be_dict``): a parameter, an item of a container, what a
  function returned, a global dict; the loop goes over ``ops.iterated(seq)``, which
  is ``seq`` itself, or for a dict its keys (which carry no derivative);
- surely not: displays and comprehensions of lists, tuples and sets, arithmetic,
  what numpy or ``list``/``sorted``/``range``... return, a name bound only to those.
"""

import builtins
import types

import gast
import numpy as np

from transpile.core.ir import MISSING

VIEWS = ("keys", "values", "items")
_NOT_DICTS = (
    gast.List,
    gast.Tuple,
    gast.ListComp,
    gast.GeneratorExp,
    gast.SetComp,
    gast.Set,
    gast.BinOp,
    gast.UnaryOp,
    gast.Compare,
    gast.Constant,
)
_SEQUENCE_MAKERS = (list, tuple, range, sorted, reversed, enumerate, zip, map, set, str)


def bindings(walked) -> dict:
    """name -> the values assigned to it, ``None`` for a binding of unknown value (a
    parameter, a loop target, an item unpacked); ``walked``: the function's nodes, in
    ``nodes.descendants`` order (breadth first: an assignment before its targets)."""
    found, assigned = {}, set()
    for n in walked:
        kind = n.__class__
        if kind is gast.Assign:
            for t in n.targets:
                if isinstance(t, gast.Name):
                    found.setdefault(t.id, []).append(n.value)
                    assigned.add(id(t))
        elif (
            kind is gast.Name
            and isinstance(n.ctx, (gast.Store, gast.Param))
            and id(n) not in assigned
        ):
            found.setdefault(n.id, []).append(None)
    return found


def view(parsed, node):
    """``(the dict, "keys" | "values" | "items")`` for ``d.values()`` and its siblings
    (not a method of a builtin object other than a dict), else None."""
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr in VIEWS
        and not node.args
        and not node.keywords
        and not isinstance(parsed.resolve(node.func), types.BuiltinFunctionType)
    ):
        return node.func.value, node.func.attr
    return None


def surely_dict(parsed, node, bound, keys_helper):
    """``(the dict, kind)`` where the loop over ``node`` surely goes over a dict: a
    view, ``keys_helper(d)`` (``ops.keys``), or a name bound only to new dicts."""
    found = view(parsed, node)
    if found is not None:
        return found
    if isinstance(node, gast.Call) and parsed.resolve(node.func) is keys_helper:
        return node.args[0], "keys"
    values = bound.get(node.id) if isinstance(node, gast.Name) else None
    if values and all(_makes_dict(parsed, v) for v in values):
        return node, "keys"
    return None


def may_be_dict(parsed, node, bound, seen=frozenset()) -> bool:
    """Whether ``node`` may hold a dict when the loop runs."""
    if node is None:
        return True
    if isinstance(node, gast.Name):
        if node.id in seen:
            return False  # a cycle of copies: the other bindings decide
        values = bound.get(node.id)
        if values is None:  # a global or closure variable: its value now
            found = parsed.lookup(node.id)
            return found is MISSING or isinstance(found, dict)
        return any(may_be_dict(parsed, v, bound, seen | {node.id}) for v in values)
    if isinstance(node, _NOT_DICTS):
        return False
    if isinstance(node, gast.Call):
        made = parsed.resolve(node.func)
        return not (made in _SEQUENCE_MAKERS or _from_numpy(made))
    return True


def _makes_dict(parsed, value):
    return isinstance(value, (gast.Dict, gast.DictComp)) or (
        isinstance(value, gast.Call) and parsed.resolve(value.func) is builtins.dict
    )


def _from_numpy(obj):
    """Whether ``obj`` is a numpy function (its result is an array, never a dict)."""
    module = getattr(obj, "__module__", None) or ""
    return isinstance(obj, np.ufunc) or module.startswith("numpy")
