"""Whether the gradients a function returns provably own their arrays.

A gradient handed to the caller must be a fresh, writable array that shares memory
with no argument and no other returned gradient. Most are: arithmetic and matrix
products allocate. Some adjoint helpers may hand back their input (``unbroadcast``
when nothing was broadcast), a view of it (a reshape, a transpose) or a read-only
broadcast (``unreduce`` of a large input); two gradients may come from one value
(``x + y``), and ``dout`` belongs to the caller. ``guard_return`` proves ownership
where it can, following each returned name back through such pass-throughs to the
allocation it came from, and otherwise wraps the returned value in ``ops.owned``,
which copies exactly the leaves that need it at run time.
"""

import gast
import numpy as np

from transpile.core.nodes import bound_values, clone, name
from transpile.rules import registry
from transpile.rules.declare import Memory, helper_of, memory


def stage(fn, ctx):
    """Guard the return of the gradient (not of a callee's forward and adjoint
    functions: they return to generated code, not to the user)."""
    if ctx.mode != "split":
        out = fn.outputs[-1]
        params = [a.id for a in out.args.args]
        out.body[-1] = guard_return(
            out.body[-1], out.body[:-1], fn.names["ops"], fn.names["np"], params
        )
    return fn


def guard_return(ret, body, ops_name, np_name, params):
    """``ret`` unchanged if every returned name provably owns its array, else
    ``return ops.owned(value, *params)``."""
    leaves = _leaves(ret.value, ops_name)
    if leaves is not None:
        defs = bound_values(body)
        roots = [_roots(leaf, defs, set(params), ops_name, np_name, set()) for leaf in leaves]
        if None not in roots and sum(map(len, roots)) == len(frozenset().union(*roots)):
            return ret
    value = gast.Call(
        func=gast.Attribute(value=name(ops_name), attr="owned", ctx=gast.Load()),
        args=[clone(ret.value), *(name(p) for p in params)],
        keywords=[],
    )
    return gast.copy_location(gast.Return(value=value), ret)


def unguarded(ret, ops_name):
    """``ret`` without the ``ops.owned`` that ``guard_return`` may have put there."""
    v = ret.value
    if (
        isinstance(v, gast.Call)
        and isinstance(v.func, gast.Attribute)
        and v.func.attr == "owned"
        and getattr(v.func.value, "id", None) == ops_name
    ):
        return gast.copy_location(gast.Return(value=v.args[0]), ret)
    return ret


def _leaves(value, ops_name):
    """The names a returned value is made of, or None if it is anything else."""
    if isinstance(value, gast.Constant):
        return []
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, gast.Tuple):
        out = []
        for e in value.elts:
            part = _leaves(e, ops_name)
            if part is None:
                return None
            out += part
        return out
    return None


def _roots(n, defs, params, ops_name, np_name, visiting):
    """The allocations ``n``'s array may come from (ids), or None if not provably fresh."""
    values = defs.get(n)
    if n in params or n in visiting or not values:
        return None
    roots = set()
    for value in values:
        if value is None:
            return None
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Constant)):
            roots.add(id(value))  # arithmetic allocates; a Python number is immutable
            continue
        source = _passed_through(value, ops_name, np_name)
        if source is _FRESH:
            roots.add(id(value))
            continue
        if not isinstance(source, gast.Name):
            return None
        inner = _roots(source.id, defs, params, ops_name, np_name, visiting | {n})
        if inner is None:
            return None
        roots |= inner
    return frozenset(roots)


_FRESH = object()


def _passed_through(value, ops_name, np_name):
    """``_FRESH`` for an allocation, the operand node a pass-through hands on, or None."""
    if isinstance(value, gast.Name):
        return value
    if isinstance(value, gast.Attribute):  # x.T
        return _handed_on(registry().attribute_declaration(value.attr), value.value)
    if isinstance(value, gast.Subscript):
        return value.value
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        return _call_passed_through(value, ops_name, np_name)
    return None


def _call_passed_through(call, ops_name, np_name):
    """``_passed_through`` for a call of an attribute: an adjoint helper ``ops.f(x)``,
    a numpy function ``np.f(x)`` (or ``np.add.reduce(x)``), a method ``x.f()``."""
    for k in call.keywords:
        if k.arg == "out":  # np.add(a, b, out=a) hands back its buffer
            return k.value
    f = call.func
    root = f.value
    chain = [f.attr]
    while isinstance(root, gast.Attribute):  # np.add.reduce: the chain's root
        chain.append(root.attr)
        root = root.value
    owner = getattr(root, "id", None)
    first = call.args[0] if call.args else None
    if owner == ops_name:
        return _handed_on(helper_of(f.attr), first)
    if owner == np_name:
        return _numpy_passed_through(chain, first, call.keywords)
    if isinstance(f.value, gast.Name):  # a method: g.reshape(...)
        return _handed_on(registry().method_declaration(f.attr), f.value, call.keywords)
    return None


def _numpy_passed_through(chain, first, keywords):
    """``_passed_through`` for ``np.<chain>(first, ...)`` (``chain`` innermost first)."""
    obj = np
    for attr in reversed(chain):
        obj = getattr(obj, attr, None)
    if isinstance(obj, np.ufunc) or isinstance(getattr(obj, "__self__", None), np.ufunc):
        return _FRESH  # a ufunc, or a ufunc's reduce: a new array (out= is above)
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return _FRESH  # np.float64(g): a number
    return _handed_on(registry().declaration(obj), first, keywords)


def _handed_on(declaration, first, keywords=()):
    """What a call declared so hands on: ``_FRESH`` for a new array, its first argument
    (``first``) where it may pass that through, None where it may share memory another
    way or is not declared."""
    kind = memory(declaration, keywords)
    if kind is Memory.ANY:
        return None
    return first if kind in (Memory.FIRST, Memory.DATA) else _FRESH
