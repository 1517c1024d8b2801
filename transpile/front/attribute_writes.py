"""Attribute writes (``self.nfev += 1``, ``self.cache = key``) in a differentiated function.

``normalize`` makes ``obj.attr = value`` the call statement ``setattr(obj, "attr",
value)``, which runs as written in the primal sweep (and prints as the assignment it
is): counters and caches that no differentiated value reads work as they do in
Python. A write of a differentiated value is refused by name, in every mode: the
code that reads the attribute back (here, in another method, after the call) would
read it as a constant, and its gradient would be lost without a word.
"""

import builtins

import gast

from transpile.core.errors import at


def written(parsed, s):
    """``(owner, attr, value)`` atoms of the statement ``s`` if it writes an attribute
    (``setattr(owner, "attr", value)``), else None."""
    value = s.value if isinstance(s, gast.Expr) else None
    if not (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and len(value.args) == 3
        and not value.keywords
        and parsed.resolve(value.func) is builtins.setattr
    ):
        return None
    owner, attr, item = value.args
    return owner, getattr(attr, "value", None), item


def check(parsed, s, is_varied) -> None:
    """Refuse ``s`` where it writes a value that ``is_varied(s, name)`` says depends on
    the differentiated inputs into an attribute."""
    found = written(parsed, s)
    if found is None:
        return
    _, attr, item = found
    if isinstance(item, gast.Name) and is_varied(s, item.id):
        raise at(
            parsed,
            s,
            f"writing a differentiated value into the attribute .{attr}: what reads it "
            "back would not be differentiated",
            "keep the value in a local variable and pass or return it; to keep it only "
            "for display, write stop_gradient(value)",
        )
