"""Signs moved to where they cancel: ``d[x] -= e`` rules leave negated adjoints.

``propagate_negations`` moves a unary minus on an adjoint into its single use, where
it cancels another minus or turns ``a + b`` into ``a - b`` (adjoints are linear in
each other, so a sign passes through products with primal values and through the
linear helpers); ``fold_negated_first_writes`` turns ``dp = -e; dp = dp + x`` into
``dp = x - e``. Each is one pass over a def-use index; copies they leave are then
propagated once more.
"""

import gast

from transpile.cleanup.copies import Written, propagate_copies
from transpile.core import defuse
from transpile.core.nodes import descendants, loads
from transpile.rules.declare import helper_of


def stage(fn, ctx):
    """Move the signs of the adjoint sweep, then drop the copies that leaves."""
    body = fn.adjoint
    # one index for the three passes, kept up to date by each: the one ``copies`` kept
    # up to date (as ``Written(body)`` would find it), used up here
    index = fn.adjoint_index if fn.adjoint_index is not None else Written(body)
    fn.adjoint_index = None
    propagate_negations(body, fn.adjoint_names, fn.names["ops"], index)
    body = fold_negated_first_writes(body, fn.adjoint_names, index)
    fn.adjoint = propagate_copies(body, fn.adjoint_names, index)
    return fn


def propagate_negations(body, adjoint_names, ops_name, index=None):
    """Move a unary minus on a top-level adjoint towards its use, where it cancels
    another minus or turns ``a + b`` into ``a - b``: ``d_t4 = -(dp * p / _t4)``,
    ``d_t2 = d_t4 * _t3``, ``dz = -d_t2`` become two products and no negation.
    Adjoints are linear in each other, so a sign passes through products with
    primal values and through the linear helpers. One pass in program order: a sign
    moved into a later statement is moved on when that statement is reached. The
    rewrites keep every name node in its statement, so ``index`` stays valid."""
    index = defuse.Index(body) if index is None else index
    top = {id(s): i for i, s in enumerate(body)}
    for s in body:
        t = _negated_name(s, adjoint_names, index)
        if t is None:
            continue
        ((_, use),) = index.reads[t]
        if id(use) not in top or top[id(use)] <= top[id(s)] or not isinstance(use, gast.Assign):
            continue
        if any(w is not s and w is not use for _, w in index.writes.get(t, ())):
            continue  # written again elsewhere: not a single accumulation
        new = _absorb_sign(use.value, t, ops_name)
        if new is None:
            continue
        s.value = s.value.operand  # t = E
        use.value = new
    return body


def _negated_name(s, adjoint_names, index):
    """``t`` for a top-level ``t = -E`` where ``t`` is an adjoint written and read once."""
    if not (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.UnaryOp)
        and isinstance(s.value.op, gast.USub)
    ):
        return None
    t = s.targets[0].id
    # written once, or once more by the accumulation that is its only read (t = t + x)
    if t not in adjoint_names or index.read_count(t) != 1 or index.write_count(t) not in (1, 2):
        return None
    return t


def _absorb_sign(value, t, ops_name):
    """``value`` with ``t`` read as ``-t`` folded in, or None if the sign cannot pass."""
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
        if _is_name(value.operand, t):
            return value.operand  # -(-E) is E
        return None
    if isinstance(value, gast.BinOp):
        return _absorb_sign_in_binop(value, t, ops_name)
    if _linear_in(value, t, ops_name):
        return gast.UnaryOp(op=gast.USub(), operand=value)
    return None


def _absorb_sign_in_binop(value, t, ops_name):
    """``_absorb_sign`` for ``a + b``, ``a - b`` (the sign flips the operator) and
    ``a * b``, ``a / b`` (the sign moves out of the product)."""
    left, right = value.left, value.right
    if isinstance(value.op, gast.Add):
        if _is_name(right, t):  # a + (-E) is a - E
            return gast.BinOp(left=left, op=gast.Sub(), right=right)
        if _is_name(left, t):  # (-E) + b is b - E
            return gast.BinOp(left=right, op=gast.Sub(), right=left)
    if isinstance(value.op, gast.Sub) and _is_name(right, t):  # a - (-E) is a + E
        return gast.BinOp(left=left, op=gast.Add(), right=right)
    if isinstance(value.op, (gast.Mult, gast.Div)) and (
        _contains(left, t)
        and _linear_in(left, t, ops_name)
        or isinstance(value.op, gast.Mult)
        and _contains(right, t)
        and _linear_in(right, t, ops_name)
    ):
        return gast.UnaryOp(op=gast.USub(), operand=value)
    return None


def _linear_in(node, t, ops_name):
    """Whether ``node`` is linear in ``t`` through products and the helpers declared
    ``linear`` (in their first argument)."""
    if _is_name(node, t):
        return True
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
        if _contains(node.left, t):
            return not _contains(node.right, t) and _linear_in(node.left, t, ops_name)
        return isinstance(node.op, gast.Mult) and _linear_in(node.right, t, ops_name)
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and getattr(node.func.value, "id", None) == ops_name
        and getattr(helper_of(node.func.attr), "linear", False)
        and node.args
    ):
        return _linear_in(node.args[0], t, ops_name) and not any(
            _contains(a, t) for a in node.args[1:]
        )
    return False


def _is_name(node, n):
    return isinstance(node, gast.Name) and node.id == n


def _contains(node, n):
    return any(isinstance(x, gast.Name) and x.id == n for x in descendants(node))


def fold_negated_first_writes(body, adjoint_names, index=None):
    """``dp = -d_t8`` followed by ``dp = dp + x`` is ``dp = x - d_t8``: one operation.

    One pass over a def-use index: between the two statements nothing may write what
    ``d_t8`` is computed from, and no branch or loop may stand. ``index`` is kept up
    to date."""
    index = defuse.Index(body) if index is None else index
    top = {id(s): i for i, s in enumerate(body)}
    compound_before = [0]  # how many branches and loops stand before each position
    for s in body:
        compound_before.append(compound_before[-1] + isinstance(s, (gast.If, gast.For, gast.While)))
    dropped = set()
    for i, s in enumerate(body):
        t = _negated_adjoint(s, adjoint_names)
        later = _next_use(index, s, t) if t is not None else None
        if later is None:
            continue
        j = top.get(id(later))
        if j is None or compound_before[j] != compound_before[i + 1]:
            continue  # in a branch or loop, or one stands between
        negated = s.value.operand
        if _written_between(index, loads(negated), s, later):
            continue  # what the negated value reads changes in between
        if _accumulates_onto(later, t):
            index.drop_read(later.value.left)
            later.value = gast.BinOp(left=later.value.right, op=gast.Sub(), right=negated)
            dropped.add(id(s))
            index.move_reads(s, later)
    return [s for s in body if id(s) not in dropped]


def _negated_adjoint(s, adjoint_names):
    """``t`` for ``t = -E`` where ``t`` is an adjoint, else None."""
    if (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and s.targets[0].id in adjoint_names
        and isinstance(s.value, gast.UnaryOp)
        and isinstance(s.value.op, gast.USub)
    ):
        return s.targets[0].id
    return None


def _next_use(index, s, t):
    """The first statement after ``s`` that reads or writes ``t``, or None."""
    here = index.position[id(s)]
    touching = [
        st
        for _, st in index.reads.get(t, []) + index.writes.get(t, [])
        if st is not s and index.position[id(st)] > here
    ]
    if not touching:
        return None
    return min(touching, key=lambda st: index.position[id(st)])


def _written_between(index, names, first, last):
    """Whether one of ``names`` is written strictly between statements ``first`` and
    ``last``."""
    here, there = index.position[id(first)], index.position[id(last)]
    return any(
        here < index.position[id(w)] < there for n in set(names) for _, w in index.writes.get(n, ())
    )


def _accumulates_onto(s, t):
    """Whether ``s`` is ``t = t + x`` with ``x`` not reading ``t``."""
    v = getattr(s, "value", None)
    return (
        isinstance(s, gast.Assign)
        and _is_name(s.targets[0], t)
        and isinstance(v, gast.BinOp)
        and isinstance(v.op, gast.Add)
        and _is_name(v.left, t)
        and not _contains(v.right, t)
    )
