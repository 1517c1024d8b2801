"""The stages in order: parse, fence, normalize, activity, reverse, optimize, emit.

``transpile(func, wrt, mode)`` returns a ``Generated``: the live function and its
source. ``mode`` is ``grad``, ``value_and_grad``, ``vjp``, or ``split`` (a forward
function returning its result plus what its adjoint needs, and that adjoint; used
for calls to user functions). ``dump(func, wrt, stage)`` returns the source of an
intermediate stage, for debugging.
"""

import functools
import inspect
import threading
import types
import weakref
from dataclasses import dataclass, field

import gast
import numpy as np

import runtime
from runtime import ops as runtime_ops
from runtime.tape import Tape
from transpile import activity as activity_pass
from transpile import (
    assumptions,
    dispatch,
    emit,
    fence,
    fixed_shapes,
    kinds,
    normalize,
    optimize,
    ownership,
    parse,
    record,
    reverse,
    shapes,
    snapshot,
    zeros,
)
from transpile.errors import TranspileError, at
from transpile.naming import Namer
from transpile.nodes import all_stmts, assign, clone, const, descendants, function_def, name, stores
from transpile.rules import build_registry

STAGES = ("parse", "anf", "raw", "final")
_REGISTRY = []
# function -> {(wrt, mode, as_tuple): Generated}; a dropped function (and what it
# closes over) is freed with its entry, since nothing generated refers back to it
_CACHE = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def registry():
    """The rule registry, built once on first use."""
    with _LOCK:
        if not _REGISTRY:
            _REGISTRY.append(build_registry())
    return _REGISTRY[0]


@dataclass
class Generated:
    function: object
    source: str
    name: str
    callees: list = field(default_factory=list)  # Generated of fwd/bwd functions
    extra: object = None  # for split mode: the bwd function
    code_reads: tuple = ()  # assumptions.Read that must still hold, callees' included
    data_reads: tuple = ()  # assumptions.Read of global data this function reads


@dataclass
class Context:
    parsed: object
    namer: Namer
    activity: object
    runtime_names: dict
    differentiate_call: object
    filename: str
    line_offset: int


def transpile(func, wrt, mode, as_tuple=False, stack=(), sequences=frozenset()):
    """The generated function for ``func`` (cached per function, wrt, mode and which
    parameters hold lists or tuples, and made again when a name it relied on was
    rebound)."""
    if not inspect.isfunction(func):
        parse.run(func)  # raises the located "cannot read the source" error
    key = (tuple(wrt), mode, as_tuple, frozenset(sequences))
    with _LOCK:
        found = _CACHE.get(func, {}).get(key)
    if found is not None and assumptions.hold(found.code_reads):
        return found
    generated = _Build(func, tuple(wrt), mode, stack, as_tuple=as_tuple, sequences=sequences).run()
    with _LOCK:
        _CACHE.setdefault(func, {})[key] = generated
    return generated


def _rebuilder(func, wrt, mode, as_tuple):
    """A function that transpiles ``func`` again, without keeping ``func`` alive: the
    cache must not refer back to its own key. If ``func`` is gone, an equal function
    is made from its parts (its code, globals, defaults and closure cells)."""
    ref = weakref.ref(func)
    parts = (
        func.__code__,
        func.__globals__,
        func.__name__,
        func.__defaults__,
        func.__closure__,
        func.__kwdefaults__,
        func.__qualname__,
        func.__module__,
    )

    def rebuild(sequences=frozenset()):
        f = ref()
        if f is None:
            code, globs, fname, defaults, closure, kwdefaults, qualname, module = parts
            f = types.FunctionType(code, globs, fname, defaults, closure)
            f.__kwdefaults__, f.__qualname__, f.__module__ = kwdefaults, qualname, module
        return transpile(f, wrt, mode, as_tuple, sequences=sequences)

    return rebuild


def dump(func, wrt, stage):
    """The source of ``func`` after ``stage`` (one of STAGES)."""
    return _Build(func, tuple(wrt), "grad", (), dump=stage).run()


class _Build:
    def __init__(self, func, wrt, mode, stack, dump=None, as_tuple=False, sequences=frozenset()):
        self._as_tuple = as_tuple
        self.known_sequences = frozenset(sequences)
        self.func = func
        self.wrt = wrt
        self.mode = mode
        self.stack = stack + (func,)
        self.dump = dump
        self.namespace = {}
        self.callees = []
        self.callee_names = {}

    def run(self):
        parsed = parse.run(self.func)
        if self.dump == "parse":
            return emit.to_source(parsed.tree)
        fence.run(parsed, helper=self.mode == "split")
        tree = parsed.tree
        namer = Namer.for_tree(tree)
        names = self.runtime_names(parsed, namer)
        self.parsed, self.namer, self.names = parsed, namer, names
        tree = normalize.run(parsed, namer)
        tree = snapshot.run(tree, parsed, namer)
        if self.dump == "anf":
            return emit.to_source(tree)
        params = [a.id for a in tree.args.args]
        self.params = params
        wrt_names = [params[i] for i in self.wrt]
        self.kinds = kinds.run(tree, parsed, self.known_sequences)
        act = activity_pass.run(tree.body, wrt_names, parsed, registry(), self.kinds.sequences)
        ctx = Context(
            parsed, namer, act, names, self.differentiate_call, parsed.filename, parsed.line_offset
        )
        self.ctx = ctx
        em = reverse.run(tree, ctx)
        return self.assemble(tree, em, params, wrt_names)

    def reads(self):
        """What the generated code relies on: this function's reads and its callees'."""
        code, data = assumptions.collect(self.parsed)
        return assumptions.merge(code, *(c.code_reads for c in self.callees)), data

    def runtime_names(self, parsed, namer):
        names = {}
        for key, obj in (("np", np), ("ops", runtime_ops), ("Tape", Tape)):
            found = parsed.lookup(key)
            ok = key not in parsed.local_names and (found is obj or found is parse.MISSING)
            names[key] = namer.reserve(key) if ok else namer.fresh(key + "_")
            self.namespace[names[key]] = obj
        names["tape"] = namer.fresh("tape")
        return names

    # -- assembly -------------------------------------------------------------------
    def assemble(self, tree, em, params, wrt_names):
        namer, names, ops = self.namer, self.names, self.names["ops"]
        result = em.result
        varied_result = isinstance(result, gast.Name) and result.id in _varied_at_end(
            self.ctx.activity, tree.body
        )
        d_result = namer.adjoint(result.id) if isinstance(result, gast.Name) else None
        if d_result:
            em.primal_of[d_result] = result.id
        seed, extra_args = [], []
        if self.mode == "grad" and isinstance(result, gast.Name) and result.id in em.scalars:
            # the output is a scalar by construction (a full reduction): no run-time check
            seed = [assign(d_result, const(1.0), gast.Pass())]
        elif self.mode in ("grad", "value_and_grad"):
            seed_call = gast.Call(
                func=gast.Attribute(value=name(ops), attr="seed", ctx=gast.Load()),
                args=[clone(result)],
                keywords=[],
            )
            seed = [assign(d_result or namer.fresh("dout"), seed_call, gast.Pass())]
        elif self.mode == "vjp":
            dout = namer.fresh("dout")
            extra_args = [dout]
            checked = gast.Call(
                func=gast.Attribute(value=name(ops), attr="cotangent", ctx=gast.Load()),
                args=[name(dout), clone(result)],
                keywords=[],
            )
            seed = [assign(d_result or namer.fresh("dout"), checked, gast.Pass())]
        containers = self.container_names(tree, em, params)
        subscripted = {
            n.value.id
            for n in descendants(tree)
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
        }
        sequences = self.kinds.sequences | self.sequence_operands(tree)
        grads = []
        for p in wrt_names:
            dp = namer.adjoint(p)
            em.primal_of[dp] = p
            if p in subscripted or p in sequences:  # filled slot by slot: tuples as tuples
                grads.append(
                    gast.Call(
                        func=gast.Attribute(value=name(ops), attr="like", ctx=gast.Load()),
                        args=[name(dp), name(p)],
                        keywords=[],
                    )
                )
            else:
                grads.append(name(dp))
        if self.mode == "split" or len(self.wrt) != 1 or self.as_tuple():
            grad_value = gast.Tuple(elts=grads, ctx=gast.Load())
        else:
            grad_value = grads[0]
        adjoint = em.adjoint if varied_result else []
        adj_names = set(em.primal_of) | {namer.adjoint(p) for p in wrt_names}
        body = seed + adjoint + [gast.Return(value=grad_value)]
        if self.dump == "raw":
            return emit.to_source(self.function_def(tree, "raw", em.primal + body, extra_args))
        given = {d_result} if self.mode == "split" and d_result else set()
        inits, body = zeros.run(body, adj_names, em.primal_of, ops, containers, given)
        adjoint_part = optimize.propagate_copies(inits + body, adj_names)
        adjoint_part = optimize.propagate_negations(adjoint_part, adj_names, ops)
        adjoint_part = optimize.fold_negated_first_writes(adjoint_part, adj_names)
        adjoint_part = optimize.propagate_copies(adjoint_part, adj_names)
        primal = em.primal
        needed = record.needed(adjoint_part, adj_names, primal)
        primal, adjoint_part, pushed = record.run(
            primal, adjoint_part, em.restores, needed, params, self.names
        )
        top_reads = {n for st in adjoint_part if not isinstance(st, _BLOCKS) for n in _loads(st)}
        primal = _prebind(primal, top_reads, params)
        if pushed:
            primal = [
                assign(
                    names["tape"],
                    gast.Call(func=name(names["Tape"]), args=[], keywords=[]),
                    gast.Pass(),
                )
            ] + primal
        ret = adjoint_part.pop()
        if self.mode == "value_and_grad":
            value = clone(result)
            if isinstance(result, gast.Name) and any(
                result.id in stores(s) for s in all_stmts(adjoint_part)
            ):  # the adjoint sweep restores older values of it: keep the one returned
                value = name(namer.fresh("value"))
                primal = primal + [assign(value.id, clone(result), gast.Pass())]
            ret = gast.Return(value=gast.Tuple(elts=[value, ret.value], ctx=gast.Load()))
        if self.mode == "split":
            return self.split(tree, primal, adjoint_part, ret, result, d_result, adj_names)
        body = self.finish(primal + adjoint_part + [ret])
        body[-1] = ownership.guard_return(
            body[-1], body[:-1], names["ops"], names["np"], params + extra_args
        )
        fname = {
            "grad": f"d{self.func.__name__}",
            "value_and_grad": f"{self.func.__name__}_value_and_grad",
            "vjp": f"{self.func.__name__}_vjp",
        }[self.mode]
        fdef = self.function_def(tree, fname, body, extra_args)
        generated = self.compile(fdef, fname)
        if self.dump is not None:
            return generated
        static = None
        if not self.callees:
            static = fixed_shapes.eligible(body, self.params, self.resolve, names["ops"])
        spec = dispatch.EntrySpec(
            fdef=fdef,
            generic=generated.function,
            wrt=self.wrt,
            code_reads=generated.code_reads,
            data_reads=generated.data_reads,
            module_globals=self.parsed.namespace,
            bound=self.bound_names(fdef),
            cells=self.parsed.cells,
            names=names,
            namer=namer,
            label=f"{fname} from {self.func.__name__}",
            rebuild=_rebuilder(self.func, self.wrt, self.mode, self._as_tuple),
            sequences=self.known_sequences,
            assumed_arrays=frozenset(params.index(p) for p in self.kinds.assumed_arrays),
            static=static,
            mode=self.mode,
            as_tuple=self._as_tuple,
            adjoint_names=frozenset(adj_names),
            is_pure=functools.partial(_is_pure, self.parsed, names),
        )
        entry = dispatch.Dispatcher(spec).function
        entry.__transpile_source__ = generated.source
        entry.__transpile_generated__ = generated
        generated.function = entry
        return generated

    def resolve(self, node):
        """The object a name in generated code denotes: ours, or the user's."""
        if isinstance(node, gast.Name) and node.id in self.namespace:
            return self.namespace[node.id]
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            return (
                parse.MISSING if base is parse.MISSING else getattr(base, node.attr, parse.MISSING)
            )
        return self.parsed.resolve(node)

    def as_tuple(self):
        return self._as_tuple

    def finish(self, body):
        body = optimize.dead_code(body, self.is_pure)
        changed = True
        while changed:  # values computed only for their shapes are not computed
            body, changed = shapes.read_shapes_from_sources(
                body, self.parsed, self.names["ops"], self.params
            )
            if changed:
                body = optimize.dead_code(body, self.is_pure)
        body = optimize.fold_constants(body)
        body = optimize.drop_default_args(body, self.names["ops"])
        return optimize.tidy(body)

    def function_def(self, tree, fname, body, extra_args):
        args = clone(tree.args)
        args.args = args.args + [name(a, gast.Param()) for a in extra_args]
        return function_def(fname, args, body)

    def compile(self, fdef, fname, extra=None):
        source = emit.to_source(fdef)
        if self.dump == "final":
            return source
        fn = emit.compile_function(
            source,
            fname,
            self.parsed.namespace,
            self.bound_names(fdef),
            f"{fname} from {self.func.__name__}",
            self.parsed.cells,
        )
        fn.__transpile_source__ = source
        code_reads, data_reads = self.reads()
        return Generated(fn, source, fname, list(self.callees), extra, code_reads, data_reads)

    def bound_names(self, fdef):
        """The generated code's own names, and placeholders for the user's closure
        variables (``emit`` binds the user's own cells there, read live); module
        globals stay live lookups."""
        used = {n.id for n in descendants(fdef) if isinstance(n, gast.Name)}
        bound = {k: v for k, v in self.namespace.items() if k in used}
        bound.update({k: None for k in self.parsed.cells if k in used})
        return bound

    def container_names(self, tree, em, params):
        """Names that may hold lists, tuples or dicts: their adjoints add with ops.add."""
        names = set()
        for n in descendants(tree):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                v = n.value
                match = self.ctx.activity.matches.get(id(n))
                if isinstance(v, (gast.List, gast.Tuple, gast.Dict)):
                    names.add(n.targets[0].id)
                elif match is not None and match.kind == "user":
                    # the result, and every argument: a callee's adjoint of a dict is a dict
                    names.add(n.targets[0].id)
                    names |= {a.id for a in match.operands if isinstance(a, gast.Name)}
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
                names.add(n.value.id)
        names |= self.kinds.sequences | self.sequence_operands(tree)
        return {self.namer.adjoint(n) for n in names}

    def sequence_operands(self, tree):
        """Names concatenated or repeated: their adjoints are lists."""
        return {
            o.id
            for n in descendants(tree)
            if isinstance(n, gast.Assign) and kinds.is_sequence_op(n.value, self.kinds.sequences)
            for o in (n.value.left, n.value.right)
            if isinstance(o, gast.Name)
        }

    # -- user functions --------------------------------------------------------------
    def differentiate_call(self, call, callee, stmt, act):
        if callee in self.stack:
            raise at(
                self.ctx,
                stmt,
                f"recursive call to {callee.__name__}() cannot be differentiated",
                "rewrite the recursion as a loop",
            )
        sig = inspect.signature(callee)
        try:
            bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            raise at(
                self.ctx, stmt, f"call to {callee.__name__}() does not match its signature: {exc}"
            ) from None
        params = list(sig.parameters)
        wrt, nodes = [], []
        for pname, node in bound.arguments.items():
            if isinstance(node, gast.Name) and act.is_varied(stmt, node.id):
                wrt.append(params.index(pname))
                nodes.append(node)
        try:
            parse.run(callee)
        except TranspileError as exc:
            raise at(
                self.ctx,
                stmt,
                f"no derivative rule for {callee.__name__}(), and its "
                f"source is not available ({exc.what})",
                "define it with `def` in a file, or wrap the value in "
                "stop_gradient(...) if it is a constant",
            ) from None
        sequences = frozenset(
            pname
            for pname, node in bound.arguments.items()
            if isinstance(node, gast.Name) and node.id in self.kinds.sequences
        )
        gen = transpile(callee, tuple(wrt), "split", stack=self.stack, sequences=sequences)
        if id(gen) not in self.callee_names:
            fwd_name = self.namer.fresh(gen.name)
            bwd_name = self.namer.fresh(gen.extra.name)
            self.namespace[fwd_name] = gen.function
            self.namespace[bwd_name] = gen.extra.function
            self.callees.append(gen)
            self.callee_names[id(gen)] = (fwd_name, bwd_name)
        fwd_name, bwd_name = self.callee_names[id(gen)]
        return fwd_name, bwd_name, [params[i] for i in wrt], nodes

    def split(self, tree, primal, adjoint, ret, result, d_result, adj_names):
        namer = self.namer
        defined = set(tree_params(tree)) | {t for s in all_stmts(primal) for t in stores(s)}
        saved_names = sorted((record.free_loads(adjoint + [ret], adj_names) - {d_result}) & defined)
        primal = _prebind(primal, set(saved_names), tree_params(tree))
        if any(_uses_name(s, self.names["tape"]) for s in primal):
            saved_names = sorted(set(saved_names) | {self.names["tape"]})
        saved = namer.fresh("saved")
        fwd_ret = gast.Return(
            value=gast.Tuple(
                elts=[
                    clone(result),
                    gast.Tuple(elts=[name(n) for n in saved_names], ctx=gast.Load()),
                ],
                ctx=gast.Load(),
            )
        )
        fwd_body = self.finish(primal + [fwd_ret])
        base = self.func.__name__
        fwd = self.compile(self.function_def(tree, f"{base}_fwd", fwd_body, []), f"{base}_fwd")
        unpack = gast.Assign(
            targets=[
                gast.Tuple(elts=[name(n, gast.Store()) for n in saved_names], ctx=gast.Store())
            ],
            value=name(saved),
            type_comment=None,
        )
        bwd_body = [unpack] if saved_names else []
        bwd_body = self.finish(bwd_body + adjoint + [ret])
        dres = d_result or namer.fresh("dout")
        bargs = gast.arguments(
            args=[name(saved, gast.Param()), name(dres, gast.Param())],
            posonlyargs=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        bdef = function_def(f"{base}_bwd", bargs, bwd_body)
        bwd = self.compile(bdef, f"{base}_bwd")
        fwd.extra = bwd
        return fwd

    def is_pure(self, value):
        return _is_pure(self.parsed, self.names, value)


def _is_pure(parsed, names, value):
    """Whether evaluating ``value`` has no effect but its result."""
    if isinstance(value, gast.Call):
        f = value.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            if f.value.id == names["ops"]:
                return f.attr not in ("seed", "cotangent")  # they check, and may raise
            if f.value.id == names["tape"] or f.attr in ("pop", "append"):
                return False
        obj = parsed.resolve(f)
        if obj is parse.MISSING:
            if isinstance(f, gast.Attribute):  # a method on a value
                return f.attr in registry().methods or f.attr in ("shape",)
            return getattr(f, "id", None) in (
                names["np"],
                "range",
                "len",
                "min",
                "reversed",
            )
        if obj is runtime.stop_gradient:
            return True
        module = getattr(obj, "__module__", "") or ""
        if module.startswith("numpy.random"):
            return False
        return (
            id(obj) in registry().functions
            or module.startswith("numpy")
            or obj in (range, len, min, max, abs, int, float)
        )
    if isinstance(value, (gast.Lambda,)):
        return True
    return True


_BLOCKS = (gast.If, gast.For, gast.While)


def _loads(stmt):
    return {
        n.id for n in descendants(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def _prebind(primal, needed, params):
    """``primal`` with ``name = None`` first for each of ``needed`` that only a branch or
    a loop binds: what reads it after the primal sweep runs whether or not they ran."""
    top = set(params)
    for st in primal:
        if not isinstance(st, _BLOCKS):
            top |= set(stores(st))
    nested = {t for st in primal if isinstance(st, _BLOCKS) for t in _stores_within(st)}
    missing = sorted((needed & nested) - top)
    return [assign(n, const(None), gast.Pass()) for n in missing] + primal


def _stores_within(block):
    return {
        n.id
        for n in descendants(block)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }


def tree_params(tree):
    return [a.id for a in tree.args.args]


def _uses_name(stmt, n):
    return any(isinstance(x, gast.Name) and x.id == n for x in descendants(stmt))


def _varied_at_end(act, body):
    ret = body[-1]
    return act.varied_before.get(id(ret), frozenset())
