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

import inspect

import gast
import numpy as np

from transpile.core.ir import MISSING
from transpile.rules import registry
from transpile.rules.declare import Memory, helper_of, memory


def sources(value, resolve, masks=frozenset()) -> frozenset:
    """The names whose arrays ``value`` may be or be a view of (empty for new memory);
    ``resolve`` maps a Name or an attribute chain to its object, or ``MISSING``;
    ``masks`` are names known to hold comparisons' results (``x[mask]`` is a copy)."""
    if isinstance(value, gast.Name):
        return frozenset([value.id])
    if isinstance(value, gast.Subscript):  # basic indexing makes a view
        index = value.slice
        if isinstance(index, gast.Compare) or getattr(index, "id", None) in masks:
            return frozenset()  # a boolean mask: advanced indexing copies
        return _names([value.value])
    if isinstance(value, gast.Attribute):  # x.T
        declared = registry().attribute_declaration(value.attr)
        if declared is not None and not (declared.passes or declared.shares):
            return frozenset()  # x.shape, x.size: a new value
        return _names([value.value])
    if isinstance(value, gast.Call):
        return _call_sources(value, resolve)
    if isinstance(value, (gast.Tuple, gast.List, gast.Set)):  # a container holds references
        return _names(value.elts)
    if isinstance(value, gast.Dict):
        return _names(value.values)
    if isinstance(value, gast.IfExp):
        return sources(value.body, resolve, masks) | sources(value.orelse, resolve, masks)
    return frozenset()  # arithmetic, comparisons, constants: a new value


def _call_sources(call, resolve):
    out = [k.value for k in call.keywords if k.arg == "out"]
    obj = resolve(call.func)
    if _is_ufunc(obj) or _is_number_type(obj):
        return _names(out)  # a ufunc (or its reduce) or a number: new memory, or its out=
    declared, receiver = _declared(call, obj)
    kind = memory(declared, call.keywords)
    if kind is Memory.ANY:  # may hand back any argument's memory
        arguments = [*call.args, *(k.value for k in call.keywords if k.arg != "out")]
        return _names([*receiver, *arguments, *out])
    if kind is Memory.FIRST:
        return _names([*receiver, *call.args[:1], *out])
    if kind is Memory.DATA:  # each argument, where all are data: atleast_1d(a, b)
        return _names([*receiver, *call.args, *out])
    return _names(out)


def _declared(call, obj):
    """``(declaration, [the object of a method call])`` of a call: a rule's, an adjoint
    helper's (``ops``), a method's, or None."""
    if obj is not MISSING:
        declared = getattr(obj, "declared", None) or registry().declaration(obj)
        if declared is None and _is_bound_method(obj):  # of a global array: W.reshape(4)
            return registry().method_declaration(call.func.attr), [call.func.value]
        return declared, []
    if isinstance(call.func, gast.Attribute):  # a method: g.reshape(4)
        return registry().method_declaration(call.func.attr), [call.func.value]
    return None, []


def _is_bound_method(obj):
    owner = getattr(obj, "__self__", None)
    return owner is not None and not (inspect.ismodule(owner) or isinstance(owner, type))


def _is_ufunc(obj):
    return isinstance(obj, np.ufunc) or isinstance(getattr(obj, "__self__", None), np.ufunc)


def _is_number_type(obj):
    return isinstance(obj, type) and issubclass(obj, (np.generic, int, float, complex, bool))


def fresh(value, resolve, owned) -> bool:
    """Whether ``value`` is a new array that the function may write into: arithmetic, an
    allocation or copy (declared ``fresh``), a ufunc's result, or a call declared
    ``passes`` of a name in ``owned`` (``np.zeros(6).reshape(2, 3)``: the array itself
    or a view of it, whose other names ``aliasing`` then watches)."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return True
    if not isinstance(value, gast.Call) or any(k.arg == "out" for k in value.keywords):
        return False
    obj = resolve(value.func)
    if _is_ufunc(obj):
        return True
    declared, receiver = _declared(value, obj)
    kind = memory(declared, value.keywords)
    if kind in (Memory.FIRST, Memory.DATA):
        first = (receiver or value.args)[:1]
        return bool(first) and isinstance(first[0], gast.Name) and first[0].id in owned
    return kind is Memory.FRESH


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


def new_array(value, ops_name) -> bool:
    """Whether generated ``value`` is a new array that no other name holds: arithmetic,
    an adjoint helper declared ``fresh``, or one declared ``passes`` of such a value."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return True
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        if getattr(value.func.value, "id", None) != ops_name:
            return False
        kind = memory(helper_of(value.func.attr))
        if kind is Memory.FIRST:  # its argument, or a new array
            return bool(value.args) and new_array(value.args[0], ops_name)
        return kind is Memory.FRESH
    return False
