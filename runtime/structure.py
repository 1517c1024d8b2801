"""Parameter structures: which arguments to differentiate, and nested containers.

``wrt`` names the arguments a gradient is taken with respect to: an index, a
parameter name, or a tuple of them. An argument may be a float, an array, or a
nest of dicts, lists and tuples of those; gradients come back in the same
structure. Both the compiler and the numeric checker use these helpers.
"""

import inspect


def resolve_wrt(func, wrt, names=None):
    """Return ``(indices, as_tuple)`` for ``wrt`` against ``func``'s parameters (or
    against ``names``, the parameters it is transpiled with).

    ``indices`` are positional parameter indices; ``as_tuple`` says whether the
    caller asked for a tuple (and so gets a tuple of gradients back).
    """
    if names is None:
        names = [
            p.name
            for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    as_tuple = isinstance(wrt, (tuple, list))
    items = tuple(wrt) if as_tuple else (wrt,)
    if as_tuple and not items:
        raise ValueError("wrt is an empty tuple: name at least one argument")
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt entries are parameter indices or names, not {item!r}")
        if isinstance(item, str):
            if item not in names:
                raise ValueError(
                    f"wrt={item!r}: {func.__name__} has no parameter {item!r}; "
                    f"its parameters are {names}"
                )
            index = names.index(item)
        else:
            index = item + len(names) if item < 0 else item
            if not 0 <= index < len(names):
                raise ValueError(
                    f"wrt={item}: {func.__name__} has {len(names)} positional parameters {names}"
                )
        if index in indices:
            raise ValueError(f"wrt names parameter {names[index]!r} twice")
        indices.append(index)
    return tuple(indices), as_tuple


def flatten(tree):
    """Return ``(leaves, treedef)``: the non-container leaves in a fixed order."""
    leaves = []

    def walk(node):
        if isinstance(node, dict):
            keys = list(node.keys())
            return ("dict", keys, [walk(node[k]) for k in keys])
        if isinstance(node, (list, tuple)):
            return (type(node).__name__, None, [walk(v) for v in node])
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
        return tuple(values) if kind == "tuple" else list(values)

    return build(treedef)
