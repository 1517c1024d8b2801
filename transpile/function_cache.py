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

import threading
import weakref

_ATTRIBUTE = "__transpile_cache__"
_LOCK = threading.Lock()


class FunctionCache:
    """``func -> {key: value}``, each function's entries freed with it."""

    def __init__(self, name):
        self._attribute = f"{_ATTRIBUTE}{name}"
        self._others = weakref.WeakKeyDictionary()

    def get(self, func, key):
        """The value cached for ``(func, key)``, or None."""
        return self._entries(func, create=False).get(key)

    def setdefault(self, func, key, value):
        """The value cached for ``(func, key)``, ``value`` stored there if none was."""
        with _LOCK:
            return self._entries(func, create=True).setdefault(key, value)

    def put(self, func, key, value):
        """Cache ``value`` for ``(func, key)``, replacing what was there."""
        with _LOCK:
            self._entries(func, create=True)[key] = value

    def _entries(self, func, create):
        holder = getattr(func, "__dict__", None)
        if holder is None:
            if create:
                return self._others.setdefault(func, {})
            return self._others.get(func, {})
        found = holder.get(self._attribute)
        if found is not None and found[0]() is func:
            return found[1]
        if not create:
            return {}
        entries = {}
        try:
            setattr(func, self._attribute, (weakref.ref(func), entries))
        except (AttributeError, TypeError):
            return self._others.setdefault(func, entries)
        return entries
