"""A loop over a global or closure list or tuple of functions or objects, unrolled.

``for fun in funs: v = fun(v)`` with ``funs = [np.sin] * 8``, or ``for layer in
layers: x = layer.forward_pass(x, params)`` with ``layers`` built at module level:
each element is bound to a name of its own (``fun0``, ``fun1``, ...; the same name for
the same element) which the compiler resolves to it, so the body's copy ``k`` calls
element ``k`` as a function or a method of its class. The gradient relies on the
list's contents: every call checks that the name still denotes the same list holding
the same elements (``assumptions.Contents``), and transpiles again where not.

A list display of global functions bound once in the function (``funs = [np.sin,
np.cos]``) is unrolled the same way. Unrolled only where the elements are all
functions or all objects of the user's classes (a list of numbers stays a loop), the loop does not ``break``, ``continue``
or assign its variable, and the variable is not read after the loop.
"""

import gast

from transpile.core.ir import MISSING
from transpile.core.nodes import clone, const, contains_jump
from transpile.front import bound_functions, object_args

_MOST = 256  # elements unrolled; a longer list stays a loop


def loop(parsed, node, local_lists=None):
    """``(chain, elements, position, targets, others)`` where the ``for`` statement
    ``node`` goes over a global or closure list or tuple it can be unrolled for,
    directly (``for fun in funs``), zipped (``for fun, p in zip(funs, params)``: the
    others read ``params[k]``) or enumerated (``for i, fun in enumerate(funs)``:
    ``i`` is ``k``); else None. ``position``: which target takes the elements."""
    it, target = node.iter, node.target
    if isinstance(target, gast.Name):
        seqs, targets, position = [it], [target], 0
    elif _plain_call(parsed, it, zip) and _names(target, len(it.args)):
        seqs, targets = it.args, target.elts
        position = next((k for k, s in enumerate(seqs) if _chain(s) is not None), None)
    elif _plain_call(parsed, it, enumerate) and len(it.args) == 1 and _names(target, 2):
        seqs, targets, position = [None, it.args[0]], target.elts, 1
    else:
        return None
    if position is None or node.orelse:
        return None
    found = elements(parsed, seqs[position], targets[position], node.body, local_lists or {})
    if found is None or any(t.id in _stored(node.body) for t in targets):
        return None
    return found[0], found[1], position, targets, seqs


def elements(parsed, seq, target, body, local_lists):
    """``(chain, elements)`` where ``seq`` is a global or closure list or tuple a loop
    with variable ``target`` and ``body`` can be unrolled for, or a local name of
    ``local_lists`` (name -> a display bound once, of functions named by globals: chain
    None, nothing to re-check), else None."""
    chain = _chain(seq)
    if chain is None:
        return None
    if chain in local_lists:
        found = [parsed.resolve(e) for e in local_lists[chain].elts]
        chain = None
    elif chain.split(".")[0] in parsed.local_names:
        return None
    else:
        found = parsed.resolve(seq)
    if found is MISSING or not isinstance(found, (list, tuple)) or not 0 < len(found) <= _MOST:
        return None
    if not (
        all(bound_functions.is_function_value(e) for e in found)
        or all(object_args.is_user_object(e) for e in found)
    ):
        return None
    if contains_jump(body, (gast.Break, gast.Continue)) or target.id in _stored(body):
        return None
    return chain, tuple(found)


def unrolled(node, found, names):
    """The body of ``node`` once per element: the elements' variable read as
    ``names[k]``, a zipped one bound to ``seq[k]``, an enumerated index to ``k``."""
    _, _, position, targets, seqs = found
    element = targets[position].id
    out = []
    for k, element_name in enumerate(names):
        for t, seq in zip(targets, seqs):
            if t is targets[position]:
                continue
            value = const(k) if seq is None else _item(seq, k)
            out.append(gast.copy_location(_assign(t.id, value), node))
        for s in node.body:
            copy = clone(s)
            for n in gast.walk(copy):
                if isinstance(n, gast.Name) and n.id == element:
                    n.id = element_name
            out.append(copy)
    return out


def read_after(tree, node, target) -> bool:
    """Whether ``target``, a variable of the loop ``node``, is read outside its body."""
    inside = {id(n) for s in node.body for n in gast.walk(s)}
    return any(
        isinstance(n, gast.Name)
        and n.id == target.id
        and isinstance(n.ctx, gast.Load)
        and id(n) not in inside
        for n in gast.walk(tree)
    )


def _item(seq, k):
    return gast.Subscript(value=clone(seq), slice=const(k), ctx=gast.Load())


def _assign(target, value):
    store = gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None)
    return gast.Assign(targets=[store], value=value, type_comment=None)


def _plain_call(parsed, node, builtin):
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Name)
        and parsed.resolve(node.func) is builtin
        and node.args
        and not node.keywords
        and not any(isinstance(a, gast.Starred) for a in node.args)
    )


def _names(target, count):
    return (
        isinstance(target, (gast.Tuple, gast.List))
        and len(target.elts) == count
        and all(isinstance(t, gast.Name) for t in target.elts)
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
