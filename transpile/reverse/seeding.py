"""The two ends of the adjoint sweep: the seed of the output's adjoint, and the
return of the gradients.

The seed is ``1.0`` for a scalar by construction (a full reduction), else
``ops.seed(result)``, which checks that the output is a real scalar; for a vjp it
is ``dout``, checked against the output's shape (and realness) by ``ops.cotangent``. The return
gives one gradient per ``wrt`` parameter, in the container types of the argument
where its adjoint was filled slot by slot (``ops.like``).
"""

import gast

from transpile.analysis.kinds import is_sequence_call
from transpile.core import fixpoint
from transpile.core.ir import MISSING
from transpile.core.nodes import assign, clone, const, descendants, name
from transpile.rules import registry
from transpile.rules.sequences import is_sequence_op
from transpile_runtime import ops


def stage(fn, ctx):
    """``fn.adjoint`` becomes seed + raw adjoint + return; also sets the adjoint names,
    which of them hold containers, ``d_result`` and the extra parameters (``dout``)."""
    em, namer, ops = fn.emitted, fn.namer, fn.names["ops"]
    result = em.result
    varied = isinstance(result, gast.Name) and result.id in _varied_at_end(fn.activity, fn.tree)
    d_result = namer.adjoint(result.id) if isinstance(result, gast.Name) else None
    if d_result:
        em.primal_of[d_result] = result.id
    seed = _seed(fn, ctx, result, d_result, ops)
    wrt_names = [fn.params[i] for i in ctx.wrt]
    tree = _TreeFacts(fn)
    fn.emitted.walked = ()  # read: no longer kept
    grads = [_gradient(fn, tree, p, ops) for p in wrt_names]
    if ctx.mode == "split" or len(ctx.wrt) != 1 or ctx.as_tuple:
        value = gast.Tuple(elts=grads, ctx=gast.Load())
    else:
        value = grads[0]
    fn.d_result = d_result
    fn.adjoint = seed + (em.adjoint if varied else []) + [gast.Return(value=value)]
    fn.adjoint_names = set(em.primal_of) | {namer.adjoint(p) for p in wrt_names}
    fn.containers = {namer.adjoint(n) for n in _container_names(fn, tree)}
    fn.primal = _arguments_kept(fn, tree, wrt_names) + em.primal
    return fn


class _TreeFacts:
    """What the helpers below read of the primal tree, found in one walk: the names
    stored to, the names subscripted, the assignments, and those to one name; and,
    each found once, what the calls of those assignments denote, the names holding
    sequences and those a loop goes over."""

    def __init__(self, fn):
        self.stored, self.subscripted, self.assigns, self.to_names = set(), set(), [], []
        tree, nodes = fn.emitted.walked or (None, None)
        if tree is not fn.tree:  # not the tree the sweep read
            nodes = descendants(fn.tree)
        for n in nodes:
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Store):
                    self.stored.add(n.id)
            elif isinstance(n, gast.Subscript):
                if isinstance(n.value, gast.Name):
                    self.subscripted.add(n.value.id)
            elif isinstance(n, gast.Assign):
                self.assigns.append(n)
                if isinstance(n.targets[0], gast.Name):
                    self.to_names.append(n)
        self._fn, self._resolved = fn, {}
        self._sequences = self._iterated = None

    def resolve(self, node):
        """``parsed.resolve(node)``, asked once per node (a node is kept with its object,
        so that its id is not reused)."""
        hit = self._resolved.get(id(node))
        if hit is None:
            hit = self._resolved[id(node)] = (node, self._fn.parsed.resolve(node))
        return hit[1]

    def sequences(self):
        if self._sequences is None:
            self._sequences = _sequences(self._fn, self)
        return self._sequences

    def iterated(self):
        if self._iterated is None:
            self._iterated = _iterated(self)
        return self._iterated


def _arguments_kept(fn, tree, wrt_names):
    """``y_in = y`` for a differentiated parameter that a branch or loop rebinds: a zero
    gradient is shaped like the argument, not like the value ``y`` holds at the end."""
    kept = []
    for p in wrt_names:
        if p in tree.stored:
            arg = fn.namer.fresh(p + "_in")
            kept.append(assign(arg, name(p), gast.Pass()))
            fn.emitted.primal_of[fn.namer.adjoint(p)] = arg
            fn.emitted.at_end[fn.namer.adjoint(p)] = p
    return kept


def _seed(fn, ctx, result, d_result, ops):
    if ctx.mode == "grad" and isinstance(result, gast.Name) and result.id in fn.emitted.scalars:
        # the output is a scalar by construction (a full reduction): no run-time check
        return [assign(d_result, const(1.0), gast.Pass())]
    if ctx.mode in ("grad", "value_and_grad"):
        return [
            assign(
                d_result or fn.namer.fresh("dout"),
                _ops_call(ops, "seed", [clone(result)]),
                gast.Pass(),
            )
        ]
    if ctx.mode == "vjp":
        dout = fn.namer.fresh("dout")
        fn.extra_args = [dout]
        checked = _ops_call(ops, "cotangent", [name(dout), clone(result)])
        return [assign(d_result or fn.namer.fresh("dout"), checked, gast.Pass())]
    return []  # split: the caller hands in the output's adjoint


def _gradient(fn, tree, p, ops):
    dp = fn.namer.adjoint(p)
    fn.emitted.primal_of[dp] = p
    if p in tree.subscripted or p in tree.sequences() or p in tree.iterated():
        # filled slot by slot
        return _ops_call(ops, "like", [name(dp), name(p)])
    return name(dp)


def _ops_call(ops, attr, args):
    return gast.Call(
        func=gast.Attribute(value=name(ops), attr=attr, ctx=gast.Load()), args=args, keywords=[]
    )


def _sequences(fn, tree):
    """Names that hold sequences, or are concatenated or repeated: their adjoints are lists."""
    operands = {
        o.id
        for n in tree.assigns
        if is_sequence_op(n.value, fn.kinds.sequences)
        for o in (n.value.left, n.value.right)
        if isinstance(o, gast.Name)
    }
    return fn.kinds.sequences | operands


def _container_names(fn, tree):
    """Names that may hold lists, tuples or dicts: their adjoints add with ops.add."""
    names, passed = set(tree.subscripted), set()
    for n in tree.to_names:
        v = n.value
        match = fn.activity.matches.get(id(n))
        if isinstance(v, (gast.List, gast.Tuple, gast.Dict)) or _makes_sequence(v, tree.resolve):
            names.add(n.targets[0].id)
        elif match is not None and match.kind == "user":
            # the result, and every argument: a callee's adjoint of a dict is a dict
            names.add(n.targets[0].id)
            names |= {a.id for a in match.operands if isinstance(a, gast.Name)}
            passed |= {a.id for a in match.operands if isinstance(a, gast.Name)}
    # the items of a tuple passed to a callee (the tangents a jvp is given, `(self_dot,
    # z_dot)`): each may be a dict or a list (an object's tangent), as the callee's
    # adjoint of it is
    for n in tree.to_names:
        if n.targets[0].id in passed and isinstance(n.value, (gast.List, gast.Tuple)):
            names |= {e.id for e in n.value.elts if isinstance(e, gast.Name)}
    return _through_copies(tree, names | tree.sequences(), tree.resolve)


def _makes_sequence(value, resolve):
    """Whether ``value`` calls a function declared to return a list or tuple of arrays
    (``np.split``, ``cho_factor``): its adjoint has an entry per array."""
    if not isinstance(value, gast.Call):
        return False
    obj = resolve(value.func)
    declared = registry().declaration(obj) if obj is not MISSING else None
    return declared is not None and declared.sequence_result


def _copied(value, resolve):
    """The name ``value`` copies (``ws``, ``list(ws)``, ``tuple(ws)``, what a loop goes
    over: ``ops.iterated(ws)``), or None."""
    if isinstance(value, gast.Name):
        return value.id
    if (
        (is_sequence_call(value, resolve) or _is_iterated(value, resolve))
        and len(value.args) == 1
        and isinstance(value.args[0], gast.Name)
    ):
        return value.args[0].id
    return None


def _is_iterated(value, resolve):
    return isinstance(value, gast.Call) and resolve(value.func) is ops.iterated


def _iterated(tree):
    """Names a loop goes over (``ops.iterated(ws)``): their adjoints are filled per item."""
    return {
        n.value.args[0].id
        for n in tree.to_names
        if _is_iterated(n.value, tree.resolve) and isinstance(n.value.args[0], gast.Name)
    }


def _through_copies(tree, names, resolve):
    """``names`` and every name a copy (``a = ws``, ``b = list(ws)``) ties to one of
    them: a list copied into two names gets two list adjoints, which must add with
    ops.add (``+`` would concatenate them)."""
    copies = [(n.targets[0].id, _copied(n.value, resolve)) for n in tree.to_names]
    tied = {}  # name -> the names copies tie it to, directly
    for a, b in copies:
        if b is not None:
            tied.setdefault(a, []).append(b)
            tied.setdefault(b, []).append(a)
    return fixpoint.reachable(tied, names)


def _varied_at_end(activity, tree):
    return activity.varied_before.get(id(tree.body[-1]), frozenset())
