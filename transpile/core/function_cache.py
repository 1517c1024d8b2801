"""A cache keyed by a function that does not keep the function alive.

What is cached for a function refers back to it: a gradient's code runs in the
function's module globals, which hold the function itself. In a
``WeakKeyDictionary`` that path from the value to its key keeps every entry alive
for good (Python has no ephemerons): 3,000 functions made by ``exec`` and dropped
stayed in memory. So each function carries its own entries, as an attribute: the
function, its entries and its module form an ordinary reference cycle, freed with
the function. The entries remember which function they belong to, so a copy of
the function's ``__dict__`` (``functools.wraps`` copies it to a wrapper) finds
none. An object whose attributes cannot be set keeps its entries in a
``WeakKeyDictionary`` instead (a builtin has no module globals to refer back).
"""

import itertools
import weakref

_ATTRIBUTE = "__transpile_cache__"
_GENERATIONS = itertools.count(1)


class FunctionCache:
    """``func -> {key: value}`` with ``WeakKeyDictionary``'s ``get``, ``setdefault``,
    ``pop`` and ``clear``, each function's entries kept on it and freed with it."""

    def __init__(self, name):
        self._attribute = f"{_ATTRIBUTE}{name}"
        self._others = weakref.WeakKeyDictionary()
        self._generation = next(_GENERATIONS)  # entries of an older one were cleared

    def get(self, func, default=None):
        """The entries of ``func``, or ``default``."""
        holder = getattr(func, "__dict__", None)
        if holder is None:
            return self._others.get(func, default)
        found = holder.get(self._attribute)
        if found is not None and found[0]() is func and found[1] == self._generation:
            return found[2]
        return default

    def setdefault(self, func, default):
        """The entries of ``func``, ``default`` stored as them if there were none."""
        found = self.get(func)
        if found is not None:
            return found
        try:
            setattr(func, self._attribute, (weakref.ref(func), self._generation, default))
        except (AttributeError, TypeError):
            return self._others.setdefault(func, default)
        return default

    def pop(self, func, default=None):
        """Forget the entries of ``func``; they, or ``default``."""
        found = self.get(func)
        if found is None:
            return default
        if getattr(func, "__dict__", None) is None or self._attribute not in func.__dict__:
            return self._others.pop(func, default)
        del func.__dict__[self._attribute]
        return found

    def clear(self):
        """Forget every function's entries."""
        self._generation = next(_GENERATIONS)
        self._others.clear()
