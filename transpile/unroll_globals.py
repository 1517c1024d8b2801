"""A loop over a global or closure list or tuple of functions or objects, unrolled.

``for fun in funs: v = fun(v)`` with ``funs = [np.sin] * 8``, or ``for layer in
layers: x = layer.forward_pass(x, params)`` with ``layers`` built at module level:
each element is bound to a name of its own (``fun0``, ``fun1``, ...; the same name for
the same element) which the compiler resolves to it, so the body's copy ``k`` calls
element ``k`` as a function or a method of its class. The gradient relies on the
list's contents: every call checks that the name still denotes the same list holding
the same elements (``assumptions.Contents``), and transpiles again where not.

Unrolled only where the elements are all functions or all objects of the user's
classes (a list of numbers stays a loop), the loop does not ``break``, ``continue``
or assign its variable, and the variable is not read after the loop.
"""

import gast

from transpile import bound_functions, object_args
from transpile.nodes import clone, contains_jump
from transpile.parse import MISSING

_MOST = 256  # elements unrolled; a longer list stays a loop


def elements(parsed, node):
    """``(chain, elements)`` where the ``for`` statement ``node`` goes over a global or
    closure list or tuple it can be unrolled for, else None."""
    seq, target = node.iter, node.target
    chain = _chain(seq)
    if chain is None or not isinstance(target, gast.Name) or node.orelse:
        return None
    if chain.split(".")[0] in parsed.local_names:
        return None
    found = parsed.resolve(seq)
    if found is MISSING or not isinstance(found, (list, tuple)) or not 0 < len(found) <= _MOST:
        return None
    if not (
        all(bound_functions.is_function_value(e) for e in found)
        or all(object_args.is_user_object(e) for e in found)
    ):
        return None
    if contains_jump(node.body, (gast.Break, gast.Continue)) or target.id in _stored(node.body):
        return None
    return chain, tuple(found)


def unrolled(node, names):
    """The body of ``node`` once per element, its loop variable read as ``names[k]``."""
    out = []
    for element_name in names:
        for s in node.body:
            copy = clone(s)
            for n in gast.walk(copy):
                if isinstance(n, gast.Name) and n.id == node.target.id:
                    n.id = element_name
            out.append(copy)
    return out


def read_after(tree, node) -> bool:
    """Whether the loop variable of ``node`` is read anywhere outside its body."""
    inside = {id(n) for s in node.body for n in gast.walk(s)}
    return any(
        isinstance(n, gast.Name)
        and n.id == node.target.id
        and isinstance(n.ctx, gast.Load)
        and id(n) not in inside
        for n in gast.walk(tree)
    )


def _stored(stmts):
    return {
        n.id
        for s in stmts
        for n in gast.walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))
    }


def _chain(node):
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = _chain(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None
