"""Which names hold lists or tuples: there ``+`` and ``*`` concatenate and repeat.

On arrays and numbers ``a + b`` is arithmetic; on lists and tuples it is
concatenation, and ``[a] * 2`` is repetition. The two need different derivatives,
so ``run`` decides, over the normalized body, which names surely hold sequences:
a name whose every binding is a list or tuple display, ``list(...)`` or
``tuple(...)``, a slice of a sequence, a sequence concatenated or repeated, a copy
of a sequence, or a parameter the caller is known to pass a list or tuple for.

Any other operand of ``+`` or ``*`` is taken for a number or an array. Parameters
used that way are listed in ``assumed_arrays``: the gradient's entry checks them,
and a list or tuple passed there makes the function transpile again with that
parameter known to be a sequence.
"""

import builtins
from dataclasses import dataclass

import gast

from transpile.core import fixpoint
from transpile.core.nodes import all_stmts, bound_values
from transpile.rules.sequences import SEQUENCE_OPS, is_sequence_op
from transpile_runtime import ops

# runtime helpers in a gradient's code differentiated again: those that always make a
# list, and those whose result is of the kind of their first argument
_LIST_HELPERS = (ops.head, ops.tail, ops.unrepeat, ops.spread, ops.unhead, ops.untail)
_KIND_KEEPING = (ops.zeros_like, ops.scatter_added, ops.copy, ops.add, ops.like)
# adjoints of joining arrays: a list where the arrays joined (their second argument) were
_KIND_OF_SECOND = (ops.unconcatenate, ops.unstack)


@dataclass(frozen=True)
class Kinds:
    sequences: frozenset  # names that hold a list or a tuple wherever they are bound
    assumed_arrays: frozenset  # parameters used as an operand of + or * as a number/array
    dicts: frozenset = frozenset()  # local names bound only to dicts the function builds


def stage(fn, ctx):
    fn.kinds = run(fn.tree, fn.parsed, ctx.sequences)
    return fn


def run(tree, parsed, known=frozenset()) -> Kinds:
    params = [a.id for a in tree.args.args]
    bindings = _bindings(tree.body, params)
    sequences = _sequences(bindings, known, parsed)
    assumed = _used_as_numbers(tree.body, sequences)
    dicts = _dicts(bindings, parsed)
    return Kinds(frozenset(sequences), frozenset(assumed & set(params)), frozenset(dicts))


def _bindings(body, params):
    """name -> the values bound to it: ``_PARAM`` for a parameter, ``None`` for an
    element of an unpacking or a loop target (whose kind is unknown)."""
    bindings = {p: [_PARAM] for p in params}
    for n, values in bound_values(body).items():
        bindings.setdefault(n, []).extend(values)
    return bindings


def _sequences(bindings, known, parsed):
    """The names every binding of which is a sequence, to a fixed point."""
    return _least(
        bindings,
        lambda n, found: all(_is_sequence(v, n, found, known, parsed) for v in bindings[n]),
    )


def _least(bindings, holds):
    """``fixpoint.least(bindings, holds)``, which most functions (no list, no dict) make
    empty: asked first in the order it asks, of nothing found yet, the first name that
    holds, if any, hands over to it; with none, none is found, and the readers of every
    bound value (which ``fixpoint`` would find first) are never needed."""
    for n in reversed(list(bindings)):  # ``least`` pops its names from the end
        if holds(n, set()):
            return fixpoint.least(bindings, holds)
    return set()


def _used_as_numbers(body, sequences):
    """Names used as an operand of ``+`` or ``*`` that is arithmetic, not concatenation."""
    assumed = set()
    for s in all_stmts(body):
        v = getattr(s, "value", None)
        if (
            isinstance(v, gast.BinOp)
            and isinstance(v.op, SEQUENCE_OPS)
            and not is_sequence_op(v, sequences)
        ):
            assumed |= {o.id for o in (v.left, v.right) if isinstance(o, gast.Name)}
    return assumed


_PARAM = object()


def _dicts(bindings, parsed):
    """The names every binding of which builds a new dict, to a fixed point."""
    return _least(
        bindings,
        lambda n, found: bool(bindings[n]) and all(_is_dict(v, parsed, found) for v in bindings[n]),
    )


def _is_dict(value, parsed, dicts):
    """Whether ``value`` builds a new dict (a display, ``dict(...)``, or in a gradient
    read again the adjoint or tangent of one: ``ops.zeros_like(d)``)."""
    if isinstance(value, gast.Dict):
        return True
    if not isinstance(value, gast.Call):
        return False
    func = parsed.resolve(value.func)
    if func is builtins.dict:
        return True
    return any(func is h for h in _KIND_KEEPING) and bool(value.args) and _in(value.args[0], dicts)


def is_sequence_call(value, resolve) -> bool:
    """Whether ``value`` is a call making a list or tuple (``list(xs)``, ``tuple(xs)``)."""
    return isinstance(value, gast.Call) and resolve(value.func) in (builtins.list, builtins.tuple)


def _in(node, sequences):
    return isinstance(node, gast.Name) and node.id in sequences


def _is_sequence_result(call, sequences, parsed):
    """Whether ``call`` makes a list or tuple: ``list(...)``, a helper that always does,
    or one whose result has the kind of an argument that is a sequence."""
    func = parsed.resolve(call.func)
    helper = _HELPER_KINDS.get(id(func))
    if helper is not None and helper[0] is func:
        kind = helper[1]
        if kind == "list":
            return True
        if kind == "first" and call.args:
            return _in(call.args[0], sequences)
        if kind == "second" and len(call.args) > 1:
            return _in(call.args[1], sequences)
    return func in (builtins.list, builtins.tuple)  # is_sequence_call, resolved once


# id(helper) -> (helper, "list" | "first" | "second"): what kind its result is of
_HELPER_KINDS = {
    **{id(h): (h, "second") for h in _KIND_OF_SECOND},
    **{id(h): (h, "first") for h in _KIND_KEEPING},
    **{id(h): (h, "list") for h in _LIST_HELPERS},
}


def _is_sequence(value, target, sequences, known, parsed):
    if value is _PARAM:
        return target in known
    if isinstance(value, (gast.List, gast.Tuple)):
        return True
    if isinstance(value, gast.Name):
        return value.id in sequences
    if isinstance(value, gast.Call):
        return _is_sequence_result(value, sequences, parsed)
    if isinstance(value, gast.Subscript):
        return (
            isinstance(value.slice, gast.Slice)
            and isinstance(value.value, gast.Name)
            and value.value.id in sequences
        )
    return is_sequence_op(value, sequences)
