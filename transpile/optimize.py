"""Optimizations of the generated function, each a pure pass run to a fixed point.

* ``adjoints``: symbolic zeros. Every adjoint starts as zero; an accumulation
  into a zero becomes a plain first write, a contribution computed from a zero
  adjoint is dropped, and a zero becomes an array (``ops.zeros_like(x)``) only
  where a value must exist.
* ``dead_code``: assignments nobody reads, with no side effects, are removed.
* ``fold_constants``: ``2 - 1`` is ``1``, ``x ** 1`` is ``x``, ``e * 1.0`` is ``e``.
* ``tidy``: empty branches and loops go; a comment with nothing under it goes.
"""

import copy

import gast

from transpile import cfg
from transpile.normalize import assign, const, name
from transpile.reverse import COMMENT, ZERO

ENTRY = "entry"
IN_PLACE_METHODS = {"pop"}
FRESH_OPS = {
    "zeros_like",
    "matmul_left",
    "matmul_right",
    "unstack",
    "unconcatenate",
    "spread",
    "copy",
    "add",
    "unreduce_prod",
    "unreduce_extreme",
}


def _is_zero_marker(stmt):
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Name)
        and stmt.value.func.id == ZERO
    )


def _loads(node):
    return [
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    ]


def _stores(stmt):
    if isinstance(stmt, gast.Assign):
        out = []
        for t in stmt.targets:
            if isinstance(t, gast.Name):
                out.append(t.id)
            elif isinstance(t, gast.Tuple):
                out.extend(e.id for e in t.elts if isinstance(e, gast.Name))
        return out
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        return [stmt.target.id]
    if isinstance(stmt, gast.For):
        return [n.id for n in gast.walk(stmt.target) if isinstance(n, gast.Name)]
    return []


def _in_place_base(stmt):
    """The adjoint name a statement updates in place, if any."""
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        f = stmt.value.func
        if isinstance(f, gast.Attribute) and f.attr == "add_at" and stmt.value.args:
            return stmt.value.args[0].id
        if (
            isinstance(f, gast.Attribute)
            and f.attr in IN_PLACE_METHODS
            and isinstance(f.value, gast.Name)
        ):
            return f.value.id
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
        return stmt.targets[0].value.id
    return None


def _pop_base(node):
    for n in gast.walk(node):
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and n.func.attr == "pop"
            and isinstance(n.func.value, gast.Name)
        ):
            return n.func.value.id
    return None


def _header_stmt(stmt):
    """What a CFG node evaluates: compound statements only evaluate their header."""
    if isinstance(stmt, gast.If):
        return stmt.test
    if isinstance(stmt, gast.For):
        return stmt.iter
    if isinstance(stmt, gast.While):
        return stmt.test
    return stmt


class _Adjoints:
    def __init__(self, names, primal_of, ops_name, containers, given=()):
        self.given = set(given)
        self.names = names
        self.primal_of = primal_of
        self.ops = ops_name
        self.containers = containers
        self.in_place = set()

    def zeros_like(self, adj):
        return gast.Call(
            func=gast.Attribute(value=name(self.ops), attr="zeros_like", ctx=gast.Load()),
            args=[name(self.primal_of.get(adj, adj))],
            keywords=[],
        )

    def run(self, body):
        for _ in range(50):
            self.in_place = {b for s in _all_stmts(body) for b in [_in_place_base(s)] if b}
            changed, body, needed_markers = self.step(body)
            if not changed:
                return self.finish(body, needed_markers)
        raise RuntimeError("adjoint optimization did not converge")

    def reaching(self, body):
        graph = cfg.build(body)
        names = self.names

        def transfer(node, fact):
            s = node.stmt
            if s is None or isinstance(s, (gast.If, gast.While)):
                return fact
            defs = [n for n in _stores(s) if n in names]
            base = _in_place_base(s)
            if base in names:
                defs.append(base)
            pop = _pop_base(s)
            if pop in names:
                defs.append(pop)
            if not defs:
                return fact
            kept = frozenset(f for f in fact if f[0] not in defs)
            kind = "zero" if _is_zero_marker(s) else "value"
            return kept | {(d, kind, id(s)) for d in defs}

        boundary = frozenset((n, "zero", ENTRY) for n in names if n not in self.given) | {
            (n, "value", ENTRY) for n in self.given
        }
        before, _ = cfg.solve(graph, transfer, forward=True, boundary=boundary)
        return graph, before

    def step(self, body):
        graph, before = self.reaching(body)
        edits = {}  # id(stmt) -> ("delete" | "replace", [stmts]) ; insertions before
        needed = set()  # ids of zero markers (or ENTRY) that must become arrays

        def defs(fact, n):
            return [f for f in fact if f[0] == n]

        def all_zero(fact, n):
            return all(f[1] == "zero" for f in defs(fact, n))

        def need(fact, n):
            for f in defs(fact, n):
                if f[1] == "zero":
                    needed.add((n, f[2]))

        for node in graph.nodes:
            s = node.stmt
            if s is None or isinstance(
                s, (gast.If, gast.For, gast.While, gast.Break, gast.Continue)
            ):
                continue
            fact = before[node]
            if _is_zero_marker(s):
                continue
            base = _in_place_base(s)
            pop = _pop_base(s)
            value = s.value if isinstance(s, gast.Assign) else s
            incoming = [n for n in _loads(value) if n in self.names]
            if isinstance(s, gast.AugAssign):
                target = s.target.id
                incoming = [n for n in _loads(s.value) if n in self.names and n != pop]
                if any(all_zero(fact, n) for n in incoming):
                    edits[id(s)] = []
                    continue
                for n in incoming:
                    need(fact, n)
                pre = []
                if pop and all_zero(fact, pop):
                    pre.append(assign(pop, self.zeros_like(pop), s))
                elif pop:
                    need(fact, pop)
                if target in self.names and all_zero(fact, target):
                    edits[id(s)] = pre + [self.first_write(s)]
                elif target in self.names:
                    need(fact, target)
                    if pre:
                        edits[id(s)] = pre + [s]
                elif pre:
                    edits[id(s)] = pre + [s]
                continue
            if base is not None and base in self.names:
                incoming = [n for n in _loads(s) if n in self.names and n != base]
                is_clear = isinstance(s, gast.Assign)
                if is_clear and all_zero(fact, base):
                    edits[id(s)] = []
                    continue
                if any(all_zero(fact, n) for n in incoming):
                    edits[id(s)] = []
                    continue
                for n in incoming:
                    need(fact, n)
                if all_zero(fact, base):
                    edits[id(s)] = [assign(base, self.zeros_like(base), s), s]
                else:
                    need(fact, base)
                continue
            if isinstance(s, gast.Return):
                repl = {}
                for n in _loads(s):
                    if n in self.names:
                        if all_zero(fact, n):
                            repl[n] = self.zeros_like(n)
                        else:
                            need(fact, n)
                if repl:
                    edits[id(s)] = [_replace_names(s, repl)]
                continue
            if isinstance(s, gast.Assign) and incoming:
                if any(all_zero(fact, n) for n in incoming):
                    targets = [t for t in _stores(s) if t in self.names]
                    edits[id(s)] = [
                        gast.copy_location(_zero(t, self.primal_of), s) for t in targets
                    ]
                    continue
                for n in incoming:
                    need(fact, n)
                continue
            for n in _loads(s):
                if n in self.names:
                    need(fact, n)
        if not edits:
            return False, body, needed
        return True, _apply(body, edits), needed

    def first_write(self, s):
        value = s.value
        if isinstance(s.op, gast.Sub):
            value = gast.UnaryOp(op=gast.USub(), operand=value)
        elif s.target.id in self.in_place and not _is_fresh(value, self.ops):
            value = gast.Call(
                func=gast.Attribute(value=name(self.ops), attr="copy", ctx=gast.Load()),
                args=[value],
                keywords=[],
            )
        return gast.copy_location(assign(s.target.id, value, s), s)

    def finish(self, body, needed):
        needed_ids = {i for _, i in needed}
        entry_names = sorted({n for n, i in needed if i == ENTRY})

        def convert(stmts):
            out = []
            for s in stmts:
                if _is_zero_marker(s):
                    if id(s) in needed_ids:
                        t = s.targets[0].id
                        out.append(gast.copy_location(assign(t, self.zeros_like(t), s), s))
                    continue
                if isinstance(s, gast.AugAssign) and s.target.id in self.names:
                    t = s.target.id
                    if t in self.containers:
                        value = gast.Call(
                            func=gast.Attribute(value=name(self.ops), attr="add", ctx=gast.Load()),
                            args=[name(t), s.value],
                            keywords=[],
                        )
                        if isinstance(s.op, gast.Sub):
                            value = gast.BinOp(left=name(t), op=gast.Sub(), right=s.value)
                    else:
                        value = gast.BinOp(left=name(t), op=s.op, right=s.value)
                    out.append(gast.copy_location(assign(t, value, s), s))
                    continue
                for field in ("body", "orelse"):
                    if isinstance(s, (gast.If, gast.For, gast.While)):
                        setattr(s, field, convert(getattr(s, field)))
                out.append(s)
            return out

        inits = [assign(n, self.zeros_like(n), gast.Pass()) for n in entry_names]
        return inits, convert(body)


def _zero(target, primal_of):
    return assign(
        target,
        gast.Call(func=name(ZERO), args=[name(primal_of.get(target, target))], keywords=[]),
        gast.Pass(),
    )


def _is_fresh(value, ops_name):
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return True
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        if getattr(value.func.value, "id", None) != ops_name:
            return False
        if value.func.attr == "unbroadcast":  # returns its argument or a new sum
            return bool(value.args) and _is_fresh(value.args[0], ops_name)
        return value.func.attr in FRESH_OPS
    return False


def _replace_names(stmt, repl):
    stmt = copy.deepcopy(stmt)

    class R(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in repl:
                return copy.deepcopy(repl[node.id])
            return node

    return R().visit(stmt)


def _apply(stmts, edits):
    out = []
    for s in stmts:
        if id(s) in edits:
            out.extend(edits[id(s)])
            continue
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _apply(s.body, edits)
            s.orelse = _apply(s.orelse, edits)
        out.append(s)
    return out


def _all_stmts(stmts):
    for s in stmts:
        yield s
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from _all_stmts(s.body)
            yield from _all_stmts(s.orelse)


def adjoints(body, names, primal_of, ops_name, containers, given=()):
    """Resolve symbolic zeros and accumulations in ``body``; returns ``(inits, body)``:
    ``inits`` are zero arrays that must exist when the adjoint sweep starts. ``given``
    adjoints hold a value on entry (the output cotangent of a split function)."""
    return _Adjoints(set(names), primal_of, ops_name, containers, given).run(body)


def dead_code(body, is_pure, live_out=()):
    """Remove assignments whose targets are never read and whose values are pure."""
    for _ in range(50):
        graph = cfg.build(body)

        def transfer(node, fact):
            s = node.stmt
            if s is None:
                return fact
            h = _header_stmt(s)
            if isinstance(s, gast.For):
                fact = fact - set(_stores(s))
                return fact | set(_loads(h))
            if h is not s:
                return fact | set(_loads(h))
            stores = _stores(s)
            kept = fact - set(stores) if not isinstance(s, gast.AugAssign) else fact
            return kept | set(_loads(s))

        _, after = cfg.solve(graph, transfer, forward=False, boundary=frozenset(live_out))
        edits = {}
        for node in graph.nodes:
            s = node.stmt
            if isinstance(s, (gast.Assign, gast.AugAssign)):
                stores = _stores(s)
                if (
                    not stores
                    or isinstance(s, gast.Assign)
                    and not all(isinstance(t, (gast.Name, gast.Tuple)) for t in s.targets)
                ):
                    continue
                if any(t in after[node] for t in stores):
                    continue
                if is_pure(s.value):
                    edits[id(s)] = []
        if not edits:
            return body
        body = _apply(body, edits)
    return body


class _Folder(gast.NodeTransformer):
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
            if nxt is None or _is_comment(nxt) or s.value.value == last_comment:
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
    keeping the more meaningful name (``dw`` over ``_t11``, ``d_t4`` over ``d_t3``)."""
    counts = {}
    for s in _all_stmts(body):
        for t in _stores(s) + ([_in_place_base(s)] if _in_place_base(s) else []):
            counts[t] = counts.get(t, 0) + 1
    for s in body:
        if not (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name)
        ):
            continue
        a, b = s.targets[0].id, s.value.id
        if a not in adjoint_names or b not in adjoint_names:
            continue
        if counts.get(a) != 1 or counts.get(b) != 1:
            continue
        # keep the name of the value's origin, except a temporary unpacked from a
        # callee's adjoint, which gives way to the adjoint it feeds (dw over _t11)
        keep, drop = (a, b) if _is_temp(b) else (b, a)
        rename = {drop: keep}
        body = [x for x in body if x is not s]
        for stmt in body:
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and n.id in rename:
                    n.id = rename[n.id]
        return propagate_copies(body, adjoint_names | {keep})
    return body


def _is_temp(n):
    return n.startswith("_t") and n[2:].isdigit()


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
