"""A list that is appended to after an operation read it is read through a copy.

``s = np.sum(np.stack(hs)); hs.append(x)``: the adjoint of the stack runs after the
append, and would see three items where two were stacked. The operation is given
a copy made when it ran (``_t = list(hs)``: a new list of the same items, cheap),
and the adjoint of that copy sends each entry back to its item of ``hs``.
"""

import builtins

import gast

from transpile.core.nodes import assign, call, name

_READS_ONLY_LENGTH = ("len", "range", "print")


def stage(fn, ctx):
    fn.tree = run(fn.tree, fn.parsed, fn.namer)
    return fn


def run(tree, parsed, namer):
    """Insert the copies into ``tree`` (normalized) in place; returns it."""
    appended = _appended(tree.body)
    if not appended or parsed.lookup("list") is not builtins.list:
        return tree
    order, loops_of = {}, {}

    def number(stmts, loops):
        for s in stmts:
            order[id(s)] = len(order)
            loops_of[id(s)] = loops
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if inner:
                    deeper = (*loops, id(s)) if isinstance(s, (gast.For, gast.While)) else loops
                    number(inner, deeper)

    number(tree.body, ())
    later = {}  # list name -> [(position, loops)] of its appends
    for s_id, (base, pos) in appended.items():
        later.setdefault(base, []).append((order[s_id], loops_of[s_id]))

    def appended_after(base, s):
        pos, loops = order[id(s)], set(loops_of[id(s)])
        return any(p > pos or loops & set(ls) for p, ls in later.get(base, ()))

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if getattr(s, field, None):
                    setattr(s, field, block(getattr(s, field)))
            value = getattr(s, "value", None)
            if (
                isinstance(s, gast.Assign)
                and isinstance(value, gast.Call)
                and not _length_only(value)
            ):
                for k, a in enumerate(value.args):
                    if isinstance(a, gast.Name) and a.id in later and appended_after(a.id, s):
                        copy_name = namer.temp()
                        out.append(assign(copy_name, call(name("list"), [name(a.id)], s), s))
                        value.args[k] = name(copy_name)
            out.append(s)
        return out

    tree.body = block(tree.body)
    return tree


def _length_only(value):
    return isinstance(value.func, gast.Name) and value.func.id in _READS_ONLY_LENGTH


def _appended(stmts, found=None):
    """id(append statement) -> (list name, None), over all nested blocks."""
    found = {} if found is None else found
    for s in stmts:
        if (
            isinstance(s, gast.Expr)
            and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append"
            and isinstance(s.value.func.value, gast.Name)
        ):
            found[id(s)] = (s.value.func.value.id, None)
        for field in ("body", "orelse"):
            _appended(getattr(s, field, None) or [], found)
    return found
