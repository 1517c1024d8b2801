"""Which objects a normalized statement may change in place, and where nothing can say.

``reverse/recompute.py`` asks it before computing a value again in a loop's reverse
step: the values it reads must be what they were when the primal computed it. A
slot write changes its array (the tape restores it where it is read), ``out=`` the
array it names, a changing method (``sort``, ``fill``, ``append``) its object; a call
that is not a pure rule (a user function, ``np.copyto``, a random shuffle) may change
whatever it is given. Nothing here is refused: a changing statement only keeps a value
on the tape.
"""

import gast

from transpile.analysis.effect_calls import CHANGING
from transpile.core.nodes import all_stmts, descendants, header, name_nodes
from transpile.rules import user_rules

# what a statement of these kinds does with the names it is given: read them
_PURE_KINDS = frozenset(["template", "subscript", "copy", "display", "constant", "nondiff"])
_QUIET = (gast.For, gast.Break, gast.Continue, gast.Pass)  # a loop's target is a name


def header_calls(s) -> list:
    """The calls the statement ``s`` evaluates (its header's, for a block): what ``hard``
    and ``changed`` may be given, so that each statement is walked once."""
    return _calls(header(s))


def hard(s, calls=None) -> bool:
    """Whether the statement ``s`` (its header only, for a block) may write into an
    array that the names it reads do not tell: a slot write, ``out=``, a call made for
    its effect other than an append, a statement of another kind. ``calls``:
    ``header_calls(s)``, where known."""
    calls = header_calls(s) if calls is None else calls
    if isinstance(s, gast.Assign):
        return bool(_slots(s.targets)) or _any_out(_value_calls(s, calls))
    if isinstance(s, gast.Expr):
        return _appended(s) is None or _any_out(calls)
    if isinstance(s, (gast.If, gast.While)):
        return _any_out(calls)
    return not isinstance(s, _QUIET)


def changed(s, calls=None) -> set:
    """The names whose objects the statement ``s`` changes by a changing method (an
    append's list included). ``calls``: ``header_calls(s)``, where known."""
    if isinstance(s, gast.For):
        return set()
    calls = header_calls(s) if calls is None else calls
    found = {_receiver(c) for c in calls if _receiver(c) is not None}
    if isinstance(s, gast.Expr) and _appended(s) is not None:
        found.add(_appended(s))
    return found


def summary(stmts, resolve, matches, calls_of=None):
    """``(whether any call in stmts writes through out=, the names whose objects some
    statement may change)``, over every statement of ``stmts`` at any depth;
    ``matches`` is ``activity.Activity.matches``; ``calls_of``: id(stmt) ->
    ``header_calls(stmt)``, where the caller has them."""
    out, names = False, set()
    for s in all_stmts(stmts):
        calls = header_calls(s) if calls_of is None else calls_of[id(s)]
        out = out or _any_out(calls)
        names |= _may_change(s, calls, resolve, matches)
    return out, names


def _may_change(s, calls, resolve, matches):
    if isinstance(s, (gast.If, gast.For, gast.While)):
        return _names(header(s)) if calls else set()
    if isinstance(s, gast.Expr):
        return changed(s, calls) if _appended(s) is not None else _names(s)
    if not isinstance(s, gast.Assign):
        return _names(s)
    found = {_root(t) for t in _slots(s.targets)} | changed(s, calls)
    value_calls = _value_calls(s, calls)
    if value_calls and _impure(s, value_calls, resolve, matches):
        found |= _names(s.value)
    return found - {None}


def _value_calls(assignment, calls):
    """The calls of ``assignment``'s value, of ``calls``, those of the whole statement:
    the same where every target is a name (or a tuple of names), which holds no call."""
    for t in assignment.targets:
        for e in t.elts if isinstance(t, gast.Tuple) else [t]:
            if not isinstance(e, gast.Name):
                return _calls(assignment.value)
    return calls


def _impure(s, calls, resolve, matches):
    """Whether the calls of the assignment ``s`` may change what they are given: all but
    the rules' (pure) functions, subscripts, copies, displays and constants."""
    match = matches.get(id(s))
    if match is None or match.kind not in _PURE_KINDS:
        return True
    if match.kind == "nondiff":  # a random draw may shuffle; a user's nondifferentiable
        return match.why == "random" or any(
            user_rules.find(resolve(c.func)) is not None for c in calls
        )
    return False


def _slots(targets):
    """The targets (in tuples too) that are not names: slot and attribute writes."""
    found = []
    for t in targets:
        elts = t.elts if isinstance(t, gast.Tuple) else [t]
        found.extend(e for e in elts if not isinstance(e, gast.Name))
    return found


def _root(target):
    """The name under a subscript or attribute target (``a`` of ``a[0].x``)."""
    while isinstance(target, (gast.Subscript, gast.Attribute, gast.Starred)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _calls(node):
    return [n for n in descendants(node) if isinstance(n, gast.Call)]


def _names(node):
    return {n.id for n in name_nodes(node) if isinstance(n, gast.Name)}


def _any_out(calls):
    """Whether one of ``calls`` writes through ``out=``."""
    return any(k.arg == "out" for c in calls for k in c.keywords)


def _receiver(call):
    """The name a changing method is called on (``ys`` of ``ys.sort()``, of
    ``ys[0].sort()``), or None."""
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in CHANGING:
        return _root(func.value)
    return None


def _appended(s):
    """The list ``x`` of the statement ``x.append(...)``, or None."""
    call = s.value
    if (
        isinstance(call, gast.Call)
        and isinstance(call.func, gast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, gast.Name)
    ):
        return call.func.value.id
    return None
