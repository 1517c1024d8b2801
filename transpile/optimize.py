"""Optimizations of the generated function, each a pure pass run to a fixed point.

(Symbolic zeros, the first write instead of accumulation, are ``zeros.run``.)
* ``dead_code``: assignments nobody reads, with no side effects, are removed.
* ``fold_constants``: ``2 - 1`` is ``1``, ``x ** 1`` is ``x``, ``e * 1.0`` is ``e``.
* ``tidy``: empty branches and loops go; a comment with nothing under it goes.
"""

import gast

from transpile import cfg, defuse
from transpile.nodes import all_stmts, apply_edits, clone, const, descendants, header, loads, stores
from transpile.reverse import COMMENT
from transpile.zeros import in_place_base


def dead_code(body, is_pure, live_out=()):
    """Remove assignments whose targets are never read and whose values are pure.

    One backward dataflow solve of *strong* liveness: a removable statement whose
    targets are dead does not make its operands live, so a chain of values feeding
    only dead ones dies in the same solve (no repeated rounds)."""
    graph = cfg.build(body)
    removable = {}
    for node in graph.nodes:
        s = node.stmt
        if isinstance(s, (gast.Assign, gast.AugAssign)):
            written = stores(s)
            if (
                written
                and not (
                    isinstance(s, gast.Assign)
                    and not all(isinstance(t, (gast.Name, gast.Tuple)) for t in s.targets)
                )
                and is_pure(s.value)
            ):
                removable[id(s)] = frozenset(written)

    def transfer(node, fact):
        s = node.stmt
        if s is None:
            return fact
        h = header(s)
        if isinstance(s, gast.For):
            fact = fact - set(stores(s))
            return fact | set(loads(h))
        if h is not s:
            return fact | set(loads(h))
        written = removable.get(id(s))
        if written is not None and not written & fact:
            return fact  # dead: its reads keep nothing alive
        kept = fact - set(stores(s)) if not isinstance(s, gast.AugAssign) else fact
        return kept | set(loads(s))

    _, after = cfg.solve(graph, transfer, forward=False, boundary=frozenset(live_out))
    edits = {
        id(node.stmt): []
        for node in graph.nodes
        if id(node.stmt) in removable and not removable[id(node.stmt)] & after[node]
    }
    return apply_edits(body, edits) if edits else body


class _Folder(gast.NodeTransformer):
    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        operand = node.operand
        if (
            isinstance(node.op, gast.USub)
            and isinstance(operand, gast.Constant)
            and _number(operand.value)
        ):
            return gast.copy_location(const(-operand.value), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        lc = isinstance(left, gast.Constant) and _number(left.value)
        rc = isinstance(right, gast.Constant) and _number(right.value)
        if lc and rc:
            try:
                value = _OPS[type(node.op)](left.value, right.value)
            except (KeyError, ArithmeticError):
                return node
            return gast.copy_location(const(value), node)
        if rc and right.value == 1 and isinstance(node.op, (gast.Pow, gast.Mult, gast.Div)):
            return left
        if lc and left.value == 1 and isinstance(node.op, gast.Mult):
            return right
        return node


_OPS = {
    gast.Add: lambda a, b: a + b,
    gast.Sub: lambda a, b: a - b,
    gast.Mult: lambda a, b: a * b,
    gast.Div: lambda a, b: a / b,
}


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fold_constants(body):
    folder = _Folder()
    return [folder.visit(s) for s in body]


def tidy(stmts):
    """Drop empty compound statements, and comments with no statement under them."""
    out = []
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = tidy(s.body)
            s.orelse = tidy(s.orelse)
            if isinstance(s, gast.If) and not _real(s.body) and not _real(s.orelse):
                continue
            if isinstance(s, gast.For) and not _real(s.body):
                continue
            if not s.body:
                s.body = [gast.Pass()]
            if isinstance(s, gast.If) and not _real(s.body) and _real(s.orelse):
                s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                s.body, s.orelse = s.orelse, []
        out.append(s)
    cleaned = []
    last_comment = None
    for i, s in enumerate(out):
        if _is_comment(s):
            nxt = out[i + 1] if i + 1 < len(out) else None
            ends = nxt is None or _is_comment(nxt) or isinstance(nxt, gast.Return)
            if ends or s.value.value == last_comment:
                continue
            last_comment = s.value.value
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            last_comment = None
        if isinstance(s, gast.Pass) and len(out) > 1:
            continue
        cleaned.append(s)
    return cleaned


def _is_comment(s):
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Constant)
        and isinstance(s.value.value, str)
        and s.value.value.startswith(COMMENT)
    )


def _real(stmts):
    return any(not _is_comment(s) and not isinstance(s, gast.Pass) for s in stmts)


def propagate_copies(body, adjoint_names):
    """Remove top-level copies ``a = b`` between adjoints that are each written once,
    keeping the more meaningful name (``dw`` over ``_t11``, ``d_t4`` over ``d_t3``), and
    fold a constant adjoint written once (the seed 1.0 of a scalar output) into its
    uses. One pass over a def-use index, in program order."""
    index = defuse.Index(body)
    in_place = {}
    for s in all_stmts(body):
        base = in_place_base(s)
        if base:
            in_place[base] = in_place.get(base, 0) + 1

    def written(n):
        return index.write_count(n) + in_place.get(n, 0)

    adjoint_names = set(adjoint_names)
    out = []
    for s in body:
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            out.append(s)
            continue
        t = s.targets[0].id
        if isinstance(s.value, gast.Constant) and t in adjoint_names and written(t) == 1:
            index.forget(s)
            for reader in index.reading(t):
                _Folder().visit(_substitute(reader, t, s.value))
            index.reads.pop(t, None)
            continue
        if not isinstance(s.value, gast.Name):
            out.append(s)
            continue
        a, b = t, s.value.id
        if not (a in adjoint_names and b in adjoint_names and written(a) == 1 and written(b) == 1):
            out.append(s)
            continue
        # keep the name of the value's origin, except where a temporary would displace a
        # user's name: dw over _t11 (from a callee's adjoint), dz over d_t2
        keep, drop = (a, b) if _is_temp(b) and not _is_temp(a) else (b, a)
        index.forget(s)
        index.rename(drop, keep, writes=True)
        in_place[keep] = in_place.get(keep, 0) + in_place.pop(drop, 0)
        adjoint_names.add(keep)
    return out


def _substitute(stmt, n, constant):
    """``stmt`` with every read of ``n`` replaced by ``constant`` (in place)."""

    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == n and isinstance(node.ctx, gast.Load):
                return clone(constant)
            return node

    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        for field in ("test", "iter"):
            if hasattr(stmt, field):
                setattr(stmt, field, Replace().visit(getattr(stmt, field)))
        return stmt
    return Replace().visit(stmt)


def _is_temp(n):
    """A compiler temporary or its adjoint (``_t11``, ``d_t4``): a user's name reads better."""
    return (n.startswith("_t") and n[2:].isdigit()) or (n.startswith("d_t") and n[3:].isdigit())


def drop_default_args(body, ops_name):
    """``ops.unreduce(g, x, None, False)`` reads better as ``ops.unreduce(g, x)``."""
    import inspect

    from runtime import ops

    class Dropper(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if (
                isinstance(f, gast.Attribute)
                and isinstance(f.value, gast.Name)
                and f.value.id == ops_name
                and hasattr(ops, f.attr)
            ):
                params = list(inspect.signature(getattr(ops, f.attr)).parameters.values())
                while node.args and len(node.args) <= len(params):
                    last, param = node.args[-1], params[len(node.args) - 1]
                    if not (
                        isinstance(last, gast.Constant)
                        and param.default is not inspect.Parameter.empty
                        and last.value is param.default
                        or isinstance(last, gast.Constant)
                        and type(last.value) is type(param.default)
                        and last.value == param.default
                    ):
                        break
                    node.args.pop()
            return node

    dropper = Dropper()
    return [dropper.visit(s) for s in body]


_LINEAR_OPS = {"unbroadcast", "unreduce", "unmean", "matmul_left", "matmul_right"}


def propagate_negations(body, adjoint_names, ops_name):
    """Move a unary minus on a top-level adjoint towards its use, where it cancels
    another minus or turns ``a + b`` into ``a - b``: ``d_t4 = -(dp * p / _t4)``,
    ``d_t2 = d_t4 * _t3``, ``dz = -d_t2`` become two products and no negation.
    Adjoints are linear in each other, so a sign passes through products with
    primal values and through the linear helpers. One pass in program order: a sign
    moved into a later statement is moved on when that statement is reached."""
    index = defuse.Index(body)
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


def _reads(stmt, n):
    return n in loads(header(stmt))


def _absorb_sign(value, t, ops_name):
    """``value`` with ``t`` read as ``-t`` folded in, or None if the sign cannot pass."""
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
        if _is_name(value.operand, t):
            return value.operand  # -(-E) is E
        return None
    if isinstance(value, gast.BinOp):
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
    if _linear_in(value, t, ops_name):
        return gast.UnaryOp(op=gast.USub(), operand=value)
    return None


def _linear_in(node, t, ops_name):
    """Whether ``node`` is linear in ``t`` through products and the linear helpers."""
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
        and node.func.attr in _LINEAR_OPS
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


def fold_negated_first_writes(body, adjoint_names):
    """``dp = -d_t8`` followed by ``dp = dp + x`` is ``dp = x - d_t8``: one operation.

    One pass over a def-use index: between the two statements nothing may write what
    ``d_t8`` is computed from, and no branch or loop may stand."""
    index = defuse.Index(body)
    top = {id(s): i for i, s in enumerate(body)}
    compound_before = [0]
    for s in body:
        compound_before.append(compound_before[-1] + isinstance(s, (gast.If, gast.For, gast.While)))
    dropped = set()
    for i, s in enumerate(body):
        if not (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in adjoint_names
            and isinstance(s.value, gast.UnaryOp)
            and isinstance(s.value.op, gast.USub)
        ):
            continue
        t, negated = s.targets[0].id, s.value.operand
        here = index.position[id(s)]
        touching = [
            st
            for _, st in index.reads.get(t, []) + index.writes.get(t, [])
            if st is not s and index.position[id(st)] > here
        ]
        if not touching:
            continue
        later = min(touching, key=lambda st: index.position[id(st)])
        j = top.get(id(later))
        if j is None or compound_before[j] != compound_before[i + 1]:
            continue  # in a branch or loop, or one stands between
        there = index.position[id(later)]
        if any(
            here < index.position[id(w)] < there
            for n in set(loads(negated))
            for _, w in index.writes.get(n, ())
        ):
            continue  # what the negated value reads changes in between
        v = getattr(later, "value", None)
        if (
            isinstance(later, gast.Assign)
            and _is_name(later.targets[0], t)
            and isinstance(v, gast.BinOp)
            and isinstance(v.op, gast.Add)
            and _is_name(v.left, t)
            and not _contains(v.right, t)
        ):
            later.value = gast.BinOp(left=v.right, op=gast.Sub(), right=negated)
            dropped.add(id(s))
            index.forget(s)
    return [s for s in body if id(s) not in dropped]
