"""Shape specialization of gradients: straight-line code and loops over static ranges.

The generated gradient is shape-generic: it calls ``ops.unbroadcast``,
``ops.unreduce`` and friends, which decide at run time which axes to sum and
whether an adjoint must be materialized. For a function without control flow
whose every operation has an output shape fixed by its input shapes, those
decisions depend only on the *signature* of the call (array types, shapes and
dtypes; values of integer arguments). This module rewrites the generic body for
one signature, using the shapes a probe run observed:

* ``unbroadcast`` becomes nothing or one ``np.add.reduce`` over known axes (``np.sum``
  for array types other than numpy's);
* ``matmul_left``/``matmul_right`` (and ``dot_left``/``dot_right`` of matrices) become
  ``g @ y.T`` / ``x.T @ g``;
* the adjoint of a full reduction stays a *lazy* scalar (``-1.0 / 64``) instead
  of a filled array, as long as every use broadcasts it back to its true shape
  (elementwise arithmetic whose other operands already have that shape); any
  other use materializes it first;
* values computed only for their shape are then dead and removed.

In a loop over a static range (``fixed_shapes``), each helper call site that saw
the same shapes on every iteration of the probe's run is rewritten the same way;
the shapes a loop recorded on the tape only for those helpers are then dropped
with their pushes and pops (``record.drop_unread``).

``fixed_shapes.eligible`` decides, at transpile time, whether a body can be
specialized at all; ``Specializer`` does the rewrite for one probe's
observations (``probe``). Anything it cannot prove leaves that line or that
signature generic, never a guess.
"""

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import gast
import numpy as np

from transpile.backend.probe import helper_name, single_target
from transpile.cleanup import buffers
from transpile.core.ir import Annotation, annotate, annotation, has_annotation
from transpile.core.nodes import assign, clone, const, descendants, name, name_nodes


class Unspecializable(Exception):
    """The observations do not let this body be specialized; use the generic code.
    ``stmt``: the innermost statement of the body being rewritten when it was raised
    (None if raised outside one), for ``explain`` to name its line."""

    stmt = None


class _NeedConcrete(Exception):
    def __init__(self, names):
        super().__init__(names)
        self.names = names


def _broadcast(*shapes):
    if any(s is None for s in shapes):
        return None
    try:
        return _broadcast_shapes(shapes)
    except ValueError:
        raise Unspecializable("shapes do not broadcast") from None


@functools.lru_cache(maxsize=4096)
def _broadcast_shapes(shapes):
    """``np.broadcast_shapes`` (a tuple of Python ints, whatever ints it is given),
    remembered: most lines of a body broadcast the same few shapes, and numpy's answer
    costs some arrays each time."""
    return tuple(np.broadcast_shapes(*shapes))


class Val(NamedTuple):
    """A rewritten expression: its value is ``scale * node`` broadcast to ``true``.

    ``actual`` is the shape ``node`` really has; it is smaller than ``true`` for a
    lazy adjoint (one that broadcasts to its true shape where it is used). Shapes
    are None where unknown. ``scale`` is a Python number deferred out of the
    arithmetic: the adjoint is linear in the seed, so a constant factor such as
    the ``1/n`` of a mean can ride along until a sum or a product makes it cheap.
    """

    node: object
    true: object
    actual: object
    scale: float = 1.0
    borrowed: bool = False  # node may be an array the generic code would have copied


@dataclass
class Facts:
    """What the rewrite knows of one name at the statement it is at."""

    true: object = None  # shape of the value the name stands for (None: unknown)
    actual: object = None  # shape of the array the name holds: smaller while lazy
    scale: float = 1.0  # a deferred constant factor: the value is scale * the array
    dtype: object = None  # the dtype the probe saw
    seen_type: object = None  # the type the probe saw
    python: bool = False  # holds a Python number, not a numpy scalar
    numpy_scalar: bool = False  # the generic code held a numpy scalar here
    numpy_typed: bool = False  # surely holds a numpy value (array or scalar)
    borrowed: bool = False  # bound to another value's array by a dropped product
    constant: object = None  # bound to a number: read as that number

    @property
    def deferred(self) -> bool:
        """Lazy or scaled: the name does not hold its true value yet."""
        return self.true != self.actual or self.scale != 1.0

    @property
    def unfinished(self) -> bool:
        """It must be made whole before it leaves or is written through."""
        return self.deferred or self.borrowed or self.numpy_scalar and not self.numpy_typed


_UNKNOWN = Facts()


class Specializer:
    """Rewrites one generic body for the shapes that a probe observed.

    ``facts`` holds, per name, what is known at the current statement (``Facts``);
    a rewritten expression is a ``Val``.
    """

    def __init__(self, names, param_metas, sites, seen, adjoint_names=frozenset()):
        self.np, self.ops = names["np"], names["ops"]
        self.adjoint_names = adjoint_names
        self.sites = sites  # site -> (metas of the helper's arguments)
        self.seen = seen  # statement index -> meta of its target
        # the loops whose body the probe ran (a tuple key starts with their path)
        self.seen_loops = {k[:n] for k in seen if isinstance(k, tuple) for n in range(1, len(k))}
        self.facts = {}
        self.names_of_loops = {}  # a loop's path -> the names it holds, those it binds
        self.loop_nodes = {}  # a loop's path -> its Name nodes, where already walked
        self.written = set()  # names whose arrays the body writes into
        self.ref = None  # a parameter whose array module builds materialized arrays
        for p, m in param_metas.items():
            if m[0] in ("float", "int"):
                self.facts[p] = Facts(true=(), actual=(), python=True, seen_type=m[3])
            elif m[0] == "array":
                self.facts[p] = Facts(true=m[1], actual=m[1], dtype=m[2], numpy_typed=True)
                self.ref = self.ref or p

    def fact(self, n) -> Facts:
        return self.facts.get(n, _UNKNOWN)

    def run(self, body, path=None):
        """``body`` rewritten; ``path``: None for the function's own statements, whose
        positions key the probe's observations of their targets, or the positions that
        lead to a loop's body, whose statements are keyed by them and their own."""
        if path is None:  # one walk for what is written and the names of its loops
            loops = {}
            self.written = buffers.written_through(body, self.ops, loops)
            self.loop_nodes = {(k,): nodes for k, nodes in loops.items()}
        out = []
        for i, stmt in enumerate(body):
            try:
                out += self.rewritten(i if path is None else (*path, i), stmt)
            except Unspecializable as refused:
                if refused.stmt is None:  # the innermost: a loop's body passes it up first
                    refused.stmt = stmt
                raise
        return out

    def rewritten(self, i, stmt):
        """The statements ``stmt`` becomes: the materializations it needs, then itself."""
        out = []
        while True:
            try:
                new = self.statement(i, _fresh(stmt))
                break
            except _NeedConcrete as need:
                names = sorted(n for n in need.names if self.fact(n).unfinished)
                if not names:
                    raise Unspecializable("a lazy value that no name holds") from None
                out += [self.materialize(n, stmt) for n in names]
        out.append(new)
        return out

    # -- statements --
    def statement(self, i, s):
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant):
            return s  # a comment
        if isinstance(s, gast.For):
            return self.loop(s, i if isinstance(i, tuple) else (i,))
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            return self.assignment(i, s)
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
            return self.accumulation(s)
        return self.other(i, s)

    def loop(self, s, path):
        """A loop over a static range: every iteration runs the same operations, and a
        helper call site whose observations agreed on every iteration (``probe.merged``)
        is rewritten for them, as is a line whose target the probe saw alike on every
        iteration (``probe.observe``). What the loop reads is made whole first; each
        iteration starts knowing of a name the loop binds only what the probe saw of it
        at the start of every iteration, and leaves every name it binds whole; after the
        loop they are as an iteration leaves them (a name's facts must hold on every
        iteration at once)."""
        named, bound = self.loop_names(s, path)
        unfinished = {n for n in named if self.fact(n).deferred or self.fact(n).borrowed}
        if unfinished:
            raise _NeedConcrete(unfinished)
        for n in bound:  # each iteration starts from what the probe saw there on all
            self.facts[n] = _observed(self.seen.get((*path, n)))
        s.body, after = self.iteration(s.body, path, bound)
        ran = path in self.seen_loops  # then always: the signature fixes the trip count
        for n in bound:
            self.facts[n] = after[n] if ran else Facts()
        return s

    def loop_names(self, s, path):
        """The names loop ``s`` (at ``path``) holds, and those it binds. A loop is
        rewritten again once what it reads is made whole (``rewritten``), from a fresh
        copy of the same statements: its names are found only the first time, a loop
        of the function's own body's where ``run`` found them."""
        names = self.names_of_loops.get(path)
        if names is None:
            nodes = self.loop_nodes.pop(path, None) or name_nodes(s)
            bound = {n.id for n in nodes if isinstance(n.ctx, gast.Store)}
            names = self.names_of_loops[path] = ({n.id for n in nodes}, bound)
        return names

    def iteration(self, body, path, bound):
        """The loop's ``body`` rewritten from the facts now known, each name it binds left
        whole at its end; and the facts of those names there."""
        body = self.run(body, path)
        unfinished = sorted(n for n in bound if self.fact(n).unfinished)
        body += [self.materialize(n, body[-1]) for n in unfinished]
        return body, {n: _whole(self.fact(n)) for n in bound}

    def assignment(self, i, s):
        """``t = value``: the value rewritten, and what is known of ``t`` after it."""
        v = self.expr(s.value)
        t = s.targets[0].id
        m = self.seen.get(i)
        observed = m is not None and m[0] in ("array", "float", "int")
        v = self.reconciled(v, t, m, observed)
        if isinstance(i, tuple) and v.scale != 1.0 and v.true == v.actual:
            # in a loop a factor cannot wait past the iteration: put in here, once
            v = Val(self.applied(v), v.true, v.actual, 1.0, v.borrowed)
        new = Facts(
            # what the value is, judged before t is rebound (the value may read t)
            python=self.is_python(v.node),
            numpy_typed=self.is_numpy(v.node),
            borrowed=v.borrowed and isinstance(v.node, gast.Name),
            numpy_scalar=_numpy_scalar_seen(m),
        )
        if observed:
            _observe(new, v, m, s)
        self.facts[t] = new
        s.value = self.same_type(v.node, t) if v.scale == 1.0 else v.node
        if s.value is not v.node:
            new.python = False
        return s

    def reconciled(self, v, t, m, observed):
        """``v``, assigned to ``t``, checked against the probe's meta ``m`` of ``t``: its
        shapes taken from ``m`` where the rewrite could not derive them, or made whole
        and unknown where the probe did not see an array or a number."""
        if not observed:
            if v.true is not None and v.actual != v.true:
                raise Unspecializable(f"{t}: a lazy value where the probe saw {m}")
            return Val(self.applied(v), None, None)
        if v.true is None:  # a call whose operands were checked concrete
            return v._replace(true=m[1], actual=m[1])
        if v.true != m[1]:
            raise Unspecializable(f"{t}: derived shape {v.true}, observed {m[1]}")
        return v

    def accumulation(self, s):
        """``t += value``: ``t`` must hold its own, true value first."""
        f = self.fact(s.target.id)
        if f.deferred or f.borrowed:
            raise _NeedConcrete({s.target.id})
        v = self.expr(s.value)
        if v.true is None:
            self.require_concrete(s.value)
        s.value = self.applied(v)
        return s

    def other(self, i, s):
        """Any other statement: what it reads is made whole; what it binds is known only
        as far as the probe saw it."""
        nodes = descendants(s)  # one walk for what it reads, stands for and binds
        deferred = self.deferred_among(nodes)
        if deferred:
            raise _NeedConcrete(deferred)
        names = [n for n in nodes if isinstance(n, gast.Name)]
        self.require_own(s, {n.id for n in names})
        for node in names:  # names this statement binds lose what we knew
            if isinstance(node.ctx, gast.Store):
                m = self.seen.get(i) if single_target(s) == node.id else None
                self.facts[node.id] = _observed(m)
        return s

    def require_own(self, s, read):
        """What statement ``s`` reads (the names ``read``) holds values of its own type
        and array before it leaves or is written through."""
        if isinstance(s, gast.Return):  # scalars leave with the generic code's type
            untyped = {
                n for n in read if self.fact(n).numpy_scalar and not self.fact(n).numpy_typed
            }
            if untyped:
                raise _NeedConcrete(untyped)
        borrowed = {n for n in read if self.fact(n).borrowed}
        if borrowed:  # what leaves or is written through must be our own array
            raise _NeedConcrete(borrowed)

    def same_type(self, node, t):
        """``node`` as the type the generic code produced for ``t``: a Python number that
        the generic code held as a numpy scalar is converted."""
        if not self.fact(t).numpy_scalar or not self.is_python(node):
            return node
        return self.numpy_scalar_of(node, t)

    def numpy_scalar_of(self, node, t):
        dtype = self.fact(t).dtype
        if dtype is None or dtype.kind not in "fc":
            raise Unspecializable(f"a Python number where the generic code had {dtype}")
        return gast.Call(func=self.np_attr(dtype.name), args=[node], keywords=[])

    def is_numpy(self, node):
        """Whether ``node`` surely evaluates to a numpy value (array or scalar)."""
        if isinstance(node, gast.Name):
            return self.fact(node.id).numpy_typed
        if isinstance(node, gast.BinOp):
            return self.is_numpy(node.left) or self.is_numpy(node.right)
        if isinstance(node, gast.UnaryOp):
            return self.is_numpy(node.operand)
        if isinstance(node, gast.Call):
            root = node.func
            while isinstance(root, gast.Attribute):
                root = root.value
            return isinstance(root, gast.Name) and root.id == self.np
        return False

    def is_python(self, node):
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float))
        if isinstance(node, gast.Name):
            return self.fact(node.id).python
        if isinstance(node, gast.BinOp):
            return self.is_python(node.left) and self.is_python(node.right)
        if isinstance(node, gast.UnaryOp):
            return self.is_python(node.operand)
        return False

    def deferred_names(self, node):
        return self.deferred_among(descendants(node))

    def deferred_among(self, nodes):
        """The deferred names that ``nodes`` (all of an expression's) read or stood for."""
        names = set()
        for n in nodes:
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                names.add(n.id)
            elif has_annotation(n, Annotation.NAME):
                names.add(annotation(n, Annotation.NAME))
        return {n for n in names if self.fact(n).deferred}

    def require_concrete(self, node):
        deferred = self.deferred_names(node)
        if deferred:
            raise _NeedConcrete(deferred)

    def materialize(self, n, origin):
        """The statement that gives ``n`` its true value: scaled, then filled out."""
        f = self.facts[n]
        if f.constant is not None:  # write the number itself, not a name bound to it
            value = const(f.constant * f.scale)
        else:
            value = _times(name(n), f.scale)
        if not f.deferred:  # borrowed: copied
            value = gast.Call(
                func=gast.Attribute(value=name(self.ops), attr="copy", ctx=gast.Load()),
                args=[value],
                keywords=[],
            )
        if f.true != f.actual:
            if self.ref is None:
                raise Unspecializable("no array argument to build a materialized adjoint from")
            value = gast.Call(
                func=gast.Attribute(value=name(self.ops), attr="filled", ctx=gast.Load()),
                args=[name(self.ref), value, const(f.true), const(str(f.dtype))],
                keywords=[],
            )
        f.actual, f.scale, f.borrowed, f.constant = f.true, 1.0, False, None
        if not self.is_python(value):
            f.python = False
        if f.numpy_scalar and not self.is_numpy(value):
            value = self.numpy_scalar_of(value, n)
            f.numpy_typed = True
        if not isinstance(value, gast.Name):
            f.python = False
        stmt = assign(n, value, origin)
        if f.seen_type is np.ndarray:
            annotate(stmt, Annotation.ARRAY, (f.true, f.dtype))
        return stmt

    def applied(self, v):
        """The node of ``v`` with its scale multiplied in."""
        return _times(v.node, v.scale)

    # -- expressions --
    def expr(self, node):
        """``node`` rewritten, as a ``Val``; a node with no rule of its own is left
        generic, what it reads made whole first."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        v = method(node) if method is not None else None
        return v if v is not None else self.generic(node)

    def expr_Name(self, node):
        f = self.fact(node.id)
        if f.constant is not None:
            number = const(f.constant)
            annotate(number, Annotation.NAME, node.id)  # to find what to materialize
            node = number
        return Val(node, f.true, f.actual, f.scale, f.borrowed)

    def expr_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Val(node, (), ())
        return Val(node, None, None)

    def expr_BinOp(self, node):
        if isinstance(node.op, gast.MatMult):
            return None
        return self.binop(node, self.expr(node.left), self.expr(node.right))

    def expr_UnaryOp(self, node):
        """``-v`` of a scaled value or an adjoint negates the scale; otherwise the scale
        is applied and the operation stays."""
        v = self.expr(node.operand)
        adjoint = isinstance(v.node, gast.Name) and v.node.id in self.adjoint_names
        if isinstance(node.op, gast.USub) and v.true is not None and (v.scale != 1 or adjoint):
            return Val(v.node, v.true, v.actual, -v.scale, v.borrowed or not adjoint)
        node.operand = self.applied(v)
        return self.elementwise(node, [v])

    def expr_Call(self, node):
        """A helper the probe observed (rewritten by the method of its name) or a ufunc;
        None for any other call."""
        kind = helper_name(node, self.ops)
        if kind is not None and has_annotation(node, Annotation.SITE):
            return getattr(self, kind)(node, self.sites.get(annotation(node, Annotation.SITE)))
        if self.is_ufunc(node):
            vals = [self.expr(a) for a in node.args]
            node.args = [self.applied(v) for v in vals]
            return self.elementwise(node, vals)
        if self.is_seed_of_number(node):
            return Val(const(1.0), (), ())
        if self.is_mean_of_float64(node):
            return self.mean_as_sum(node)
        return None

    def is_mean_of_float64(self, node):
        """``np.mean(a)`` of a name holding a whole, non-empty float64 array."""
        f, args = node.func, node.args
        if not (
            isinstance(f, gast.Attribute)
            and getattr(f.value, "id", None) == self.np
            and f.attr == "mean"
            and len(args) == 1
            and not node.keywords
            and isinstance(args[0], gast.Name)
        ):
            return False
        fact = self.fact(args[0].id)
        return (
            fact.dtype == np.float64
            and fact.seen_type is np.ndarray
            and fact.true is not None
            and fact.true == fact.actual
            and fact.scale == 1.0
            and math.prod(fact.true) > 0
        )

    def mean_as_sum(self, node):
        """``np.mean(a)`` as numpy computes it for float64 (``np.add.reduce`` over every
        axis, then a division by the count), without the layers of Python around it:
        the same operations, so the same bits."""
        a = node.args[0]
        total = gast.Call(
            func=self.np_attr("add", "reduce"),
            args=[a],
            keywords=[gast.keyword(arg="axis", value=const(None))],
        )
        count = math.prod(self.fact(a.id).true)
        return Val(gast.BinOp(left=total, op=gast.Div(), right=const(count)), (), ())

    def is_seed_of_number(self, node):
        """``ops.seed(e)`` of sums, differences and products of Python floats and numbers:
        that is 1.0 and cannot raise (no division, no power), so ``e`` need not be
        computed."""
        f = node.func
        return (
            isinstance(f, gast.Attribute)
            and getattr(f.value, "id", None) == self.ops
            and f.attr == "seed"
            and len(node.args) == 1
            and not node.keywords
            and self.is_float_number(node.args[0], (gast.Add, gast.Sub, gast.Mult))
        )

    def is_float_number(self, node, ops=(gast.Add, gast.Sub, gast.Mult, gast.Div)):
        """Whether ``node`` surely evaluates to a Python float by the operators ``ops``
        (a float, a name the probe saw holding one, and arithmetic of two of them: no
        int, which could be too large for a float)."""
        if isinstance(node, gast.Constant):
            return type(node.value) is float
        if isinstance(node, gast.Name):
            f = self.fact(node.id)
            return f.python and f.seen_type is float
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return self.is_float_number(node.operand, ops)
        if isinstance(node, gast.BinOp) and isinstance(node.op, ops):
            return self.is_float_number(node.left, ops) and self.is_float_number(node.right, ops)
        return False

    def elementwise(self, node, vals, scale=1.0):
        true = _broadcast(*[v.true for v in vals])
        if true is None:
            self.require_concrete(node)
            return Val(node, None, None)
        return Val(node, true, _broadcast(*[v.actual for v in vals]), scale)

    def binop(self, node, left, right):
        """Arithmetic on scaled values, moving constant factors into the scale."""
        if left.true is None or right.true is None or 0.0 in (left.scale, right.scale):
            return self.scale_applied(node, left, right)
        if isinstance(node.op, gast.Mult):
            return self.scaled_product(node, left, right)
        if isinstance(node.op, gast.Div):
            return self.scaled_quotient(node, left, right)
        if isinstance(node.op, (gast.Add, gast.Sub)):
            return self.scaled_sum(node, left, right)
        return self.scale_applied(node, left, right)

    def scale_applied(self, node, left, right):
        """The operation on the operands' values, their scales multiplied in."""
        node.left, node.right = self.applied(left), self.applied(right)
        return self.elementwise(node, [left, right])

    def scaled_product(self, node, left, right):
        """``a * b``: the scales multiply; a number times a scaled value is that value,
        the number moved into the scale."""
        scale = left.scale * right.scale
        for a, b in ((left, right), (right, left)):
            k = _number(a.node)
            if k is not None and k != 0 and (b.scale != 1.0 or a.scale != 1.0):
                shapes = [_broadcast(a.true, b.true), _broadcast(a.actual, b.actual)]
                return Val(b.node, *shapes, scale * k, True)
            if k == 1 and self.unchanged_by_one(a, b):
                return b._replace(scale=scale, borrowed=True)
        node.left, node.right = left.node, right.node
        if scale != 1.0 and _one_scalar(left, right):
            # a scalar times an array: the factor on the scalar costs a number's product,
            # where carried it would cost a pass over the array later
            if left.actual == ():
                node.left = _times(left.node, scale)
            else:
                node.right = _times(right.node, scale)
            return self.elementwise(node, [left, right])
        return self.elementwise(node, [left, right], scale)

    def scaled_quotient(self, node, left, right):
        """``a / b``: the scales divide; a scaled value over a number is that value, the
        number moved into the scale."""
        k = _number(right.node)
        if k == 1 and self.unchanged_by_one(right, left):
            return left._replace(scale=left.scale / right.scale, borrowed=True)
        if k is not None and k != 0 and left.scale != 1.0:
            shapes = [_broadcast(left.true, right.true), _broadcast(left.actual, right.actual)]
            return Val(left.node, *shapes, left.scale / (k * right.scale), True)
        node.left, node.right = left.node, right.node
        return self.elementwise(node, [left, right], left.scale / right.scale)

    def unchanged_by_one(self, one, v):
        """Whether ``v`` times (or over) the number 1 ``one`` is ``v`` itself, bit for bit
        and in type: ``v`` names a whole float array whose shape the product keeps (``one``
        a number, or the lazy seed of a reduction spread no wider than ``v``). ``1.0 * d``
        is a pass over ``d`` that makes a new array."""
        if one.actual != () or v.true is None:
            return False
        if v.true == () and one.true == () and self.is_float_number(v.node):
            return True  # a Python float
        if not isinstance(v.node, gast.Name) or v.node.id in self.written:
            return False  # (an array written into later would change under the borrower)
        f = self.fact(v.node.id)
        return (
            f.dtype is not None
            and f.dtype.kind in "fc"
            and f.true == v.true == v.actual
            and _broadcast(one.true, v.true) == v.true
        )

    def scaled_sum(self, node, left, right):
        """``a + b``, ``a - b``: opposite scales flip the operator; otherwise a common
        scale is kept and each operand rescaled to it."""
        op = node.op
        if left.scale == -right.scale:
            node.op = gast.Sub() if isinstance(op, gast.Add) else gast.Add()
            node.left, node.right = left.node, right.node
            return self.elementwise(node, [left, right], left.scale)
        if left.scale != 1.0 or right.scale != 1.0:
            scale = left.scale if left.scale != 1.0 else right.scale
            node.left = _rescaled(left, scale)
            node.right = _rescaled(right, scale)
            return self.elementwise(node, [left, right], scale)
        return self.scale_applied(node, left, right)

    def is_ufunc(self, node):
        f = node.func
        return (
            not node.keywords
            and isinstance(f, gast.Attribute)
            and getattr(f.value, "id", None) == self.np
            and isinstance(getattr(np, f.attr, None), np.ufunc)
            and getattr(np, f.attr).signature is None  # not matmul: a generalized ufunc
        )

    def operand(self, node, observed):
        """A helper's array argument, its true shape cross-checked with the probe's."""
        v = self.expr(node)
        if observed is None or observed[0] not in ("array", "float", "int"):
            self.require_concrete(node)
            return Val(v.node, None, None)
        if v.true is None:
            self.require_concrete(node)
            return Val(v.node, observed[1], observed[1])
        if v.true != observed[1]:
            raise Unspecializable(f"derived shape {v.true}, observed {observed[1]}")
        return v

    # -- the helpers; each is linear in its first argument, so scales pass through --
    def unbroadcast(self, node, metas):
        if metas is None or len(node.args) != 2:
            return self.generic(node)
        g = self.operand(node.args[0], metas[0])
        target = metas[1][1]
        if g.true is None or target is None:
            return self.generic(node)
        if g.true == target:
            return g._replace(true=target)
        if g.actual == ():  # a lazy scalar: the sum is a product
            factor = math.prod(g.true) // max(math.prod(target), 1)
            return Val(g.node, target, (), g.scale * factor, g.borrowed)
        if g.actual != g.true:
            raise _NeedConcrete(self.deferred_names(node.args[0]))
        numpy = metas[0][3] is np.ndarray
        return Val(self.sum_to(g.node, g.true, target, numpy), target, target, g.scale)

    def unabs(self, node, metas):
        """np.abs's adjoint of a real ``x``: ``g * np.sign(x)``, elementwise as written."""
        if metas is None or len(node.args) != 2 or not _is_real(metas[1]):
            return self.generic(node)
        sign = gast.Call(func=self.np_attr("sign"), args=[node.args[1]], keywords=[])
        return self.expr(gast.BinOp(left=node.args[0], op=gast.Mult(), right=sign))

    def sum_to(self, g, shape, target, numpy=True):
        """``g`` of ``shape`` summed to ``target``: ``np.add.reduce`` for a numpy array
        (no Python layer), ``np.sum`` for other array types (not all have it)."""
        extra = len(shape) - len(target)
        ones = [extra + i for i, n in enumerate(target) if n == 1 and shape[extra + i] != 1]
        axes = list(range(extra)) + ones
        keywords = []
        if axes != [0] or not numpy:  # (np.add.reduce's axis is 0 by default)
            keywords.append(gast.keyword(arg="axis", value=const(_axis(axes))))
        if ones:
            keywords.append(gast.keyword(arg="keepdims", value=const(True)))
        func = self.np_attr("add", "reduce") if numpy else self.np_attr("sum")
        total = gast.Call(func=func, args=[g], keywords=keywords)
        if ones and extra:
            return gast.Call(
                func=gast.Attribute(value=total, attr="reshape", ctx=gast.Load()),
                args=[const(tuple(target))],
                keywords=[],
            )
        return total

    def unmean(self, node, metas):
        return self.unreduce(node, metas, mean=True)

    def unreduce(self, node, metas, mean=False):
        if metas is None or not 2 <= len(node.args) <= 4:
            return self.generic(node)
        g = self.operand(node.args[0], metas[0])
        x = metas[1]
        if x[0] not in ("array", "float", "int") or g.true is None or not x[1]:
            return self.generic(node)  # (a 0-d input: nothing to spread over)
        options = _reduction_options(list(metas[2:]), node.args)
        if options is None:
            return self.generic(node)
        axis, keepdims = options
        return self.spread(node, g, x[1], axis, keepdims, mean)

    def spread(self, node, g, shape, axis, keepdims, mean):
        """The adjoint ``g`` of a reduction over ``axis`` of an array of ``shape``, spread
        back over it: lazy where ``g`` broadcasts as it is, else with the reduced axes
        put back as length-1 axes. A mean's ``1/n`` goes into the scale."""
        axes = tuple(range(len(shape))) if axis is None else _normalize(axis, len(shape))
        scale = g.scale / math.prod(shape[a] for a in axes) if mean else g.scale
        gnode = g.node
        if isinstance(gnode, gast.Constant) and g.actual == ():  # the seed of a reduction
            gnode, scale = const(1.0), scale * gnode.value
        if g.actual == () or axis is None or keepdims:
            return Val(gnode, shape, g.actual, scale, g.borrowed)
        if g.actual != g.true:
            raise _NeedConcrete(self.deferred_names(node.args[0]))
        index, kept = _axes_put_back(shape, axes)
        return Val(_subscript(gnode, index), shape, kept, scale, g.borrowed)

    def matmul_left(self, node, metas):
        return self.matmul(node, metas, left=True)

    def matmul_right(self, node, metas):
        return self.matmul(node, metas, left=False)

    # np.dot of matrices (or a matrix and a vector) is their matrix product; the
    # rewrite below covers only those shapes and leaves every other call generic
    dot_left, dot_right = matmul_left, matmul_right

    def matmul(self, node, metas, left):
        if metas is None or len(node.args) != 3:
            return self.generic(node)
        g = self.operand(node.args[0], metas[0])
        if g.true is None or g.actual != g.true:
            self.require_concrete(node.args[0])
            return self.generic(node)
        g = self.scaled_if_smaller(g, metas[1][1] if left else metas[2][1])
        x, y = node.args[1], node.args[2]
        new = _transposed_product(g.node, x, y, metas[1][1], metas[2][1], left)
        if new is None:
            node.args[0] = self.applied(g)
            return Val(node, None, None)
        return Val(new, None, None, g.scale)

    def scaled_if_smaller(self, g, out):
        """``g`` with its scale applied when ``g`` is no larger than the product's result
        of shape ``out``: scaling the smaller of the two is cheaper."""
        if g.scale != 1.0 and (out is None or math.prod(out) >= math.prod(g.true)):
            if isinstance(g.node, gast.Name):
                raise _NeedConcrete({g.node.id})
            return Val(self.applied(g), g.true, g.actual)
        return g

    def generic(self, node):
        self.require_concrete(node)
        return Val(node, None, None)

    def np_attr(self, *parts):
        node = name(self.np)
        for p in parts:
            node = gast.Attribute(value=node, attr=p, ctx=gast.Load())
        return node


def _is_real(m):
    """Whether the probe saw a real number or a real array (``probe.meta``)."""
    return m[0] in ("float", "int") or (m[0] == "array" and m[2].kind != "c")


def _whole(f):
    """What stays known of a name that holds its whole value: its shape and types."""
    if f.deferred or f.borrowed or f.true is None:
        return _UNKNOWN
    return Facts(
        true=f.true,
        actual=f.true,
        dtype=f.dtype,
        seen_type=f.seen_type,
        python=f.python,
        numpy_scalar=f.numpy_scalar,
        numpy_typed=f.numpy_typed,
    )


def _numpy_scalar_seen(m):
    """Whether the probe's meta ``m`` is of a numpy scalar (a 0-d value of a numpy type)."""
    return bool(m is not None and m[0] == "array" and m[1] == () and issubclass(m[3], np.generic))


def _observe(facts, v, m, s):
    """Fill in ``facts`` of the target of ``s``, assigned ``v``, from the probe's meta
    ``m`` of it; an array that is whole is annotated for buffer reuse."""
    facts.true, facts.actual, facts.scale = m[1], v.actual, v.scale
    facts.dtype, facts.seen_type = m[2], m[3]
    facts.constant = _number(v.node)
    if v.actual == m[1] and m[3] is np.ndarray:
        annotate(s, Annotation.ARRAY, (m[1], m[2]))  # what buffer reuse needs


def _reduction_options(statics, args):
    """``(axis, keepdims)`` as the probe saw a reduction's options (``statics``: their
    metas), or None where one is not an int, a tuple or a literal None."""
    if any(m[0] not in ("int", "tuple") and m[:3] != ("other", None, None) for m in statics):
        return None
    if statics and statics[0][0] == "other" and not _is_none(args[2]):
        return None
    values = [m[2] for m in statics]
    axis = values[0] if values else None
    keepdims = bool(values[1]) if len(values) > 1 else False
    return axis, keepdims


def _axes_put_back(shape, axes):
    """``(index, kept)``: the subscript that gives a reduced array back the reduced
    ``axes`` of ``shape`` as length-1 axes, and the shape it then has."""
    index = tuple(None if a in axes else slice(None) for a in range(len(shape)))
    kept = tuple(1 if a in axes else n for a, n in enumerate(shape))
    return index, kept


def _transposed_product(g, x, y, x_shape, y_shape, left):
    """The adjoint of ``x @ y`` for matrices as a product with a transpose (``g @ y.T``,
    or ``x.T @ g`` for a matrix or vector ``y``), or None for other shapes."""
    xn, yn = len(x_shape or (0, 0, 0)), len(y_shape or (0, 0, 0))
    if left and xn == 2 and yn == 2:
        return gast.BinOp(left=g, op=gast.MatMult(), right=_transposed(y))
    if not left and xn == 2 and yn in (1, 2):
        return gast.BinOp(left=_transposed(x), op=gast.MatMult(), right=g)
    return None


def _observed(m):
    """What is known of a name a statement binds, from the probe's meta of it."""
    if m and m[0] in ("float", "int"):
        return Facts(python=True)
    if m and m[0] == "array":
        return Facts(true=m[1], actual=m[1], dtype=m[2], numpy_typed=True)
    return Facts()


def _number(node):
    """The Python number ``node`` spells (``2.0``, ``-1.0``), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, gast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _rescaled(v, scale):
    """``v``'s node, multiplied so that ``scale`` times it is ``v``'s value."""
    k = _number(v.node)
    if k is not None:
        return const(k * v.scale / scale)
    return _times(v.node, v.scale / scale)


def _axis(axes):
    return axes[0] if len(axes) == 1 else tuple(axes)


def _normalize(axis, ndim):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % ndim for a in axes)


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _one_scalar(left, right):
    """Whether one of a product's operands is a number (or a 0-d array) and the other an
    array whose shape is known."""
    shapes = (left.actual, right.actual)
    return () in shapes and any(a for a in shapes if a is not None)


def _times(g, factor):
    if factor == 1:
        return g
    if isinstance(g, gast.Constant):
        return const(g.value * factor)
    return gast.BinOp(left=g, op=gast.Mult(), right=const(factor))


def _subscript(g, index):
    parts = [
        const(None) if i is None else gast.Slice(lower=None, upper=None, step=None) for i in index
    ]
    return gast.Subscript(value=g, slice=gast.Tuple(elts=parts, ctx=gast.Load()), ctx=gast.Load())


def _transposed(node):
    return gast.Attribute(value=clone(node), attr="T", ctx=gast.Load())


def _fresh(stmt):
    """A copy of ``stmt`` to rewrite; for a loop, of its header only: each statement of
    its body is copied where it is rewritten (``rewritten``), so copying the body here
    too would copy a long loop twice."""
    if not isinstance(stmt, gast.For):
        return clone(stmt)
    new = stmt.__class__.__new__(stmt.__class__)
    new.__dict__.update(stmt.__dict__)
    new.target, new.iter, new.orelse = clone(stmt.target), clone(stmt.iter), clone(stmt.orelse)
    new.body = list(stmt.body)
    return new
