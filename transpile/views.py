"""What memory an assigned value may share, read from the rules' declarations.

One question, asked of a value in A-normal form (``r = out.T``, ``r = np.ravel(out)``):
which names' arrays may the value be, or be a view of? The rules answer it where
they are written (``rules/declare.py``): a call declared ``fresh`` (``np.zeros``,
``x.copy()``) or declared neither (``np.sqrt``, ``np.concatenate``) makes a new
array; one declared ``passes`` (``np.reshape``, ``x.T``, ``np.asarray``) or
``shares`` (``np.broadcast_to``, ``np.diagonal``) may hand back its arguments'
memory. A subscript may be a view of its base, a name is the same object, and a
call the rules do not know (a user function, an undeclared method) may return any
of its arguments. ``out=`` names the array a call writes and returns.
"""

import gast
import numpy as np

from transpile.parse import MISSING
from transpile.rules import registry


def sources(value, resolve) -> frozenset:
    """The names whose arrays ``value`` may be or be a view of (empty for new memory);
    ``resolve`` maps a Name or an attribute chain to its object, or ``MISSING``."""
    if isinstance(value, gast.Name):
        return frozenset([value.id])
    if isinstance(value, gast.Subscript):  # basic indexing makes a view
        return _names([value.value])
    if isinstance(value, gast.Attribute):  # x.T
        declared = registry().attribute_declaration(value.attr)
        if declared is not None and not (declared.passes or declared.shares):
            return frozenset()  # x.shape, x.size: a new value
        return _names([value.value])
    if isinstance(value, gast.Call):
        return _call_sources(value, resolve)
    if isinstance(value, (gast.Tuple, gast.List)):  # a container holds references
        return _names(value.elts)
    if isinstance(value, gast.IfExp):
        return sources(value.body, resolve) | sources(value.orelse, resolve)
    return frozenset()  # arithmetic, comparisons, constants: a new value


def _call_sources(call, resolve):
    out = [k.value for k in call.keywords if k.arg == "out"]
    obj = resolve(call.func)
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg != "out")]
    if isinstance(call.func, gast.Attribute) and obj is MISSING:  # a method: g.reshape(4)
        declared = registry().method_declaration(call.func.attr)
        arguments.append(call.func.value)
    elif obj is MISSING:
        declared = None
    elif isinstance(obj, np.ufunc) or isinstance(getattr(obj, "__self__", None), np.ufunc):
        return _names(out)  # a ufunc (or its reduce): new memory, or its out=
    elif isinstance(obj, type) and issubclass(obj, (np.generic, int, float, complex, bool)):
        return _names(out)  # a number
    else:
        declared = registry().declaration(obj)
    if declared is not None and not (declared.passes or declared.shares):
        return _names(out)
    return _names([*arguments, *out])  # may hand back an argument's memory


def _names(nodes):
    found = set()
    for node in nodes:
        if isinstance(node, gast.Starred):
            node = node.value
        if isinstance(node, gast.Name):
            found.add(node.id)
        elif isinstance(node, (gast.Tuple, gast.List)):
            found |= _names(node.elts)
    return frozenset(found)


def written_by(stmt):
    """The names whose arrays ``stmt`` writes into: ``a[i] = v``, ``out=a``."""
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
        base = stmt.targets[0].value
        return frozenset([base.id]) if isinstance(base, gast.Name) else frozenset()
    value = stmt.value if isinstance(stmt, (gast.Assign, gast.Expr)) else None
    if isinstance(value, gast.Call):
        return _names([k.value for k in value.keywords if k.arg == "out"])
    return frozenset()
