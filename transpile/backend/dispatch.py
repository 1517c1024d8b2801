"""The entry of a generated gradient: what it checks on each call, and where it routes.

``grad(f)`` returns an *entry* function with ``f``'s parameters. It calls the current
*route*, a small generated function that checks, in this order, that every free name
the gradient was written for still denotes the same object (``assumptions``), and
that the arguments are what the route was made for; if so it calls the gradient,
and otherwise the slow path (``Dispatcher.slow_call``), which sorts the call out:

* a rebound name: the function is transpiled again and the entry forwards to it;
* arguments that cannot be differentiated: a ``TypeError`` saying why;
* for a straight-line gradient, the first call with a new signature (array types,
  shapes and dtypes, values of integer arguments, and the same of every global
  array the body reads) runs the generic gradient instrumented to record the shapes
  it meets (the probe), returns its result, and has ``specialize`` rewrite the
  body for those shapes; later calls with that signature run the variant.

Every route is compiled once per signature and swapped in by rebinding one cell,
so alternating signatures costs a dictionary lookup, and concurrent first calls
record into their own thread's observations. A signature the specializer cannot
handle keeps the generic gradient, so specializing never changes a result.
"""

import threading
import types
import warnings
import weakref
from dataclasses import dataclass

import numpy as np

from transpile.backend import arguments, probe, specialize
from transpile.cleanup import deadcode
from transpile.core import assumptions, emit, gcpause, progress, stack_room, stages, tracebacks
from transpile.core.ir import Variant, VariantContext
from transpile.core.nodes import clone, function_def
from transpile.front import bound_functions
from transpile_runtime import complex_ops, ops

MAX_VARIANTS = 16


class SpecializationWarning(RuntimeWarning):
    """Shape specialization failed unexpectedly; the generic gradient was used."""


@dataclass
class EntrySpec:
    """What a dispatcher needs to know about one generated gradient."""

    fdef: object  # the generic gradient's FunctionDef
    generic: object  # the generic gradient, compiled; or None, made by compile_generic
    wrt: tuple  # indices of the differentiated parameters
    code_reads: tuple  # assumptions.Read of names whose identity the code relies on
    data_reads: tuple  # assumptions.Read of global arrays and numbers the body reads
    module_globals: dict
    bound: dict  # the generated code's own names (np, ops, ...) -> objects
    cells: dict  # the user's closure variables -> their cells
    names: dict  # runtime names: np, ops, tape, ...
    namer: object  # hands out names that clash with nothing of the user's
    label: str
    rebuild: (
        object  # (sequences) -> Generated: transpile the function again; .origin() the function
    )
    sequences: frozenset = frozenset()  # parameters known to hold lists or tuples
    functions: tuple = ()  # (parameter, the function it was transpiled for)
    assumed_arrays: frozenset = frozenset()  # indices of parameters taken for arrays by + and *
    static: frozenset = None  # parameters that must be ints; None: never specialized
    mode: str = "grad"  # grad, value_and_grad or vjp: where the gradients are in the result
    as_tuple: bool = False  # a tuple of gradients even for one wrt
    adjoint_names: frozenset = frozenset()
    is_pure: object = None
    fuse: bool = False  # variants evaluate elementwise regions in blocks, chains by numexpr
    source_file: tuple = ("", 0)  # the user's file and the line before the function's first
    variant_stages: tuple = ()  # pipeline.VARIANT_STAGES: how a shape variant is made
    has_aux: bool = False  # the function returns (value, aux): value is differentiated
    may_be_complex: bool = True  # its source makes complex values (raw: analysis.complex_use)
    compile_generic: object = None  # () -> the generic gradient, where generic is None


def stage(fn, ctx):
    """The entry of a gradient (callees' forward and adjoint functions need none)."""
    if ctx.mode == "split":
        return fn
    out = fn.outputs[-1]
    body = out.anf if out.anf is not None else out.body  # the probe records per operation
    fdef = function_def(out.name, out.args, body)
    generated = fn.generated
    spec = EntrySpec(
        fdef=fdef,
        generic=generated.function,
        compile_generic=generated.compile,
        wrt=ctx.wrt,
        code_reads=generated.code_reads,
        data_reads=generated.data_reads,
        module_globals=fn.parsed.namespace,
        bound=emit.bound_names(fn),
        cells=fn.parsed.cells,
        names=fn.names,
        namer=fn.namer,
        label=f"{out.name} from {ctx.func.__name__}",
        rebuild=_rebuilder(ctx),
        sequences=ctx.sequences,
        functions=ctx.functions,
        assumed_arrays=frozenset(fn.params.index(p) for p in fn.kinds.assumed_arrays),
        static=fn.static,
        mode=ctx.mode,
        as_tuple=ctx.as_tuple,
        adjoint_names=frozenset(fn.adjoint_names),
        variant_stages=ctx.variant_stages,
        has_aux=ctx.has_aux,
        may_be_complex=fn.emitted.complex_values,
        is_pure=deadcode.purity(fn.parsed, fn.names),
        fuse=ctx.fuse,
        source_file=(fn.parsed.filename, fn.parsed.line_offset),
    )
    entry = Dispatcher(spec).function
    entry.__transpile_generated__ = generated  # (its source: printed when first read)
    generated.function = entry
    return fn


def _rebuilder(ctx):
    """A function that transpiles ``ctx.func`` again, without keeping it alive: the
    cache must not refer back to its own key. If the function is gone, an equal one is
    made from its parts (its code, globals, defaults and closure cells)."""
    origin = _origin(ctx.func)
    wrt, mode, as_tuple, transpile = ctx.wrt, ctx.mode, ctx.as_tuple, ctx.transpile
    varargs, classes, fuse, has_aux = ctx.varargs, ctx.classes, ctx.fuse, ctx.has_aux

    def rebuild(sequences=frozenset(), functions=ctx.functions):
        return transpile(
            origin(),
            wrt,
            mode,
            as_tuple,
            sequences=sequences,
            functions=functions,
            varargs=varargs,
            classes=classes,
            fuse=fuse,
            has_aux=has_aux,
        )

    rebuild.origin = origin
    return rebuild


def _origin(func):
    """``() -> func`` without keeping ``func`` alive; once it is gone, an equal function
    made from its parts (its code, globals, defaults and closure cells)."""
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

    def origin():
        f = ref()
        if f is None:
            code, globs, fname, defaults, closure, kwdefaults, qualname, module = parts
            f = types.FunctionType(code, globs, fname, defaults, closure)
            f.__kwdefaults__, f.__qualname__, f.__module__ = kwdefaults, qualname, module
        return f

    return origin


class Dispatcher:
    def __init__(self, spec: EntrySpec):
        self.spec = spec
        self.compiled_generic = spec.generic
        self.generic_lock = threading.Lock()
        self.fname = spec.fdef.name
        self.params = [a.id for a in spec.fdef.args.args]
        self.specializable = spec.static is not None
        self.static = [self.params.index(p) for p in spec.static or () if p in self.params]
        # the one-operation-per-line body, made for this entry alone (``inline``'s copy)
        self.body = spec.fdef.body if self.specializable else None
        self.sites = None  # probe.Sites: which statements hold a site, each loop's names
        if self.specializable:
            self.sites = probe.number_sites(self.body, spec.names["ops"])
        self.variants = {}  # signature -> (function, source)
        self.pending = {}  # signature -> what its first call observed, until it comes back
        self.routes = {}  # signature -> compiled route
        self.replaced = None  # the entry of a fresh transpilation, once a name was rebound
        self.for_sequences = {}  # parameters passed lists or tuples -> that transpilation
        self.for_functions = {}  # id()s of the functions passed -> that transpilation
        self.lock = threading.Lock()
        self.probe_made = None  # (the probe function, its keys, what it knows unreported)
        namer = spec.namer
        self.private = {
            base: namer.fresh(base) for base in ("_slow", "_fast", "_real", "_result", *_TYPES)
        }
        self.probe_names = (namer.fresh("_probe"), namer.fresh("_seen"))
        self.real_outputs = set()  # signatures of complex arguments seen to give one
        self.function = self.make_entry()

    # -- the entry and its routes --
    def make_entry(self):
        params = ", ".join(self.params)
        route, error, located = (self.spec.namer.fresh(n) for n in ("_route", "error", "_located"))
        source = (  # an error raised in generated code gets a note naming the user's line
            f"def {self.fname}({params}):\n    try:\n        return {route}({params})\n"
            f"    except BaseException as {error}:\n        {located}({error})\n        raise\n"
        )
        bound = {route: self.slow_call, located: tracebacks.locate}
        entry = emit.compile_function(source, self.fname, {}, bound, f"{self.spec.label}: entry")
        self.route_cell = entry.__closure__[entry.__code__.co_freevars.index(route)]
        if self.compiled_generic is not None:  # (one compiled later has neither)
            entry.__defaults__ = self.compiled_generic.__defaults__
            entry.__doc__ = self.compiled_generic.__doc__
        entry.__transpile_dispatch__ = self
        return entry

    @property
    def generic(self):
        """The generic gradient, compiled when first needed (``emit.stage``)."""
        if self.compiled_generic is None:
            with self.generic_lock:
                if self.compiled_generic is None:
                    with gcpause.paused(), stack_room.room():
                        self.compiled_generic = self.spec.compile_generic()
        return self.compiled_generic

    def install(self, route):
        self.route_cell.cell_contents = route  # one store: atomic for other threads

    def compile_route(self, checks, target, bound, label, real=True):
        """A route: call ``target`` when every check holds, else the slow path.
        ``real``: each real argument's gradient made real (``real_return``), where a
        complex value may meet a real one."""
        params = ", ".join(self.params)
        name = self.spec.namer.fresh("_check")
        lines = [f"def {name}({params}):"]
        returned = (
            self.real_return(params) if real else [f"return {self.private['_fast']}({params})"]
        )
        if checks:
            lines.append("    if (")
            lines += [f"        {c} and" for c in checks[:-1]] + [f"        {checks[-1]}"]
            lines.append("    ):")
            lines += [f"        {line}" for line in returned]
            lines.append(f"    return {self.private['_slow']}({params})")
        else:
            lines += [f"    {line}" for line in returned]
        source = "\n".join(lines) + "\n"
        bound = dict(
            bound,
            **{
                self.private["_fast"]: target,
                self.private["_slow"]: self.slow_call,
                self.private["_real"]: self.real_gradients,
                self.private["_ndarray"]: np.ndarray,
                self.private["_float"]: float,
            },
        )
        return emit.compile_function(
            source, name, self.spec.module_globals, bound, f"{self.spec.label}: {label}"
        )

    def real_return(self, params):
        """Lines returning the gradient of the call on ``params``, each real argument's
        real (a real value used with complex ones may have an adjoint with an imaginary
        part, which pairs with no tangent: ``complex_ops``); a real array or a float
        returned as it is, at the cost of one check."""
        p = self.private
        return [
            f"{p['_result']} = {p['_fast']}({params})",
            (
                f"if {p['_result']}.__class__ is {p['_float']} or {p['_result']}.__class__ is "
                f"{p['_ndarray']} and {p['_result']}.dtype.kind != 'c':"
            ),
            f"    return {p['_result']}",
            f"return {p['_real']}({p['_result']}, ({params}{',' if params else ''}))",
        ]

    def real_gradients(self, result, args):
        """``result`` with each real argument's gradient its real part; where a
        differentiated argument is complex, the output checked to be real (``grad``
        folds the seed of a full reduction to 1.0, which says nothing of its dtype)."""
        if self.spec.mode in ("grad", "value_and_grad") and any(
            _has_complex(args[i]) for i in self.spec.wrt
        ):
            self.check_real_output(args, result)
        grads = result[1] if self.spec.mode == "value_and_grad" else result
        single = len(self.spec.wrt) == 1 and not self.spec.as_tuple
        given = [args[i] for i in self.spec.wrt]
        if single:
            fixed = _real_where_real(grads, given[0])
        else:
            fixed = tuple(_real_where_real(g, a) for g, a in zip(grads, given))
        return (result[0], fixed) if self.spec.mode == "value_and_grad" else fixed

    def check_real_output(self, args, result):
        """Raise the seed's error if the output is not a real scalar: the value returned
        (value_and_grad), or ``f(*args)`` run once per signature (grad)."""
        if self.spec.mode == "value_and_grad":
            self.seed_of(result[0])
            return
        key = self.signature(args) if self.specializable else None
        if key is None or key not in self.real_outputs:
            self.seed_of(self.spec.rebuild.origin()(*args))
            if key is not None:  # (only once the seed has passed it)
                self.real_outputs.add(key)

    def seed_of(self, out):
        """The seed's check of an output (the value of a ``(value, aux)`` pair)."""
        ops.seed(out[0] if self.spec.has_aux else out)

    def read_checks(self, bound):
        """Source checks that the code reads still denote what they did, and that the
        parameters holding functions hold the ones transpiled for."""
        checks = []
        for param, function in self.spec.functions:
            obj = self.spec.namer.fresh(f"_{param}_is")
            bound[obj] = function
            checks.append(f"{param} is {obj}")
        for i, read in enumerate(self.spec.code_reads):
            obj = self.spec.namer.fresh(f"_is{i}")
            bound[obj] = read.obj
            plain = read.namespace is self.spec.module_globals and read.cell is None
            if plain and not isinstance(read, assumptions.Contents):
                checks.append(f"{read.chain} is {obj}")
            else:  # a callee's module, or a closure variable: ask the read itself
                holder = self.spec.namer.fresh(f"_read{i}")
                bound[holder] = read
                checks.append(f"{holder}.holds()")
        return checks

    def generic_route(self):
        if None not in self.routes:
            bound = {self.private[k]: v for k, v in _TYPES.items()}
            checks = self.read_checks(bound)
            p = self.private
            for i, param in enumerate(self.params):
                if i in self.spec.wrt:  # (a 0-d array takes the slow path: see shaped_as_...)
                    checks.append(  # float32: the slow path makes its gradient float32
                        f"({param}.__class__ is {p['_float']} or {param}.__class__ is "
                        f"{p['_ndarray']} and {param}.dtype is {p['_float64']} and {param}.ndim)"
                    )
                else:
                    checks.append(
                        f"({param}.__class__ is not {p['_ndarray']} or {param}.dtype.kind != 'c')"
                        f" and {param}.__class__ is not {p['_matrix']} and "
                        f"{param}.__class__ is not {p['_complex']} and "
                        f"{param}.__class__ is not {p['_masked']}"
                    )
                if i in self.spec.assumed_arrays:
                    checks.append(
                        f"{param}.__class__ is not {p['_list']} and "
                        f"{param}.__class__ is not {p['_tuple']}"
                    )
            self.routes[None] = self.compile_route(checks, self.generic, bound, "generic route")
        return self.routes[None]

    def specialized_route(self, key, fn):
        route = self.routes.get(key)
        if route is None:
            bound = {self.private["_float"]: float}
            checks = self.read_checks(bound)
            values = [(p, part) for p, part in zip(self.params, key)]
            for read, part in zip(self.spec.data_reads, key[len(self.params) :]):
                cell = None
                if read.cell is not None:
                    cell = self.spec.namer.fresh("_cell")
                    bound[cell] = read.cell
                values.append((read.expression(cell), part))
            for i, (expr, part) in enumerate(values):
                checks.append(self.value_check(expr, part, i, bound))
            target = self.zero_d_wrapped(key, fn)
            # a signature of real values, of a function that makes no complex one: real
            real = self.spec.may_be_complex or _has_complex_part(key)
            label = f"route for ({_describe_key(key)})"
            route = self.compile_route(checks, target, bound, label, real)
            self.routes[key] = route
        return route

    def value_check(self, expr, part, i, bound):
        fresh = self.spec.namer.fresh
        if part is float:
            return f"{expr}.__class__ is {self.private['_float']}"
        if len(part) == 2:
            if part[1] is None:
                return f"{expr} is None"
            t, v = fresh(f"_type{i}"), fresh(f"_value{i}")
            bound[t], bound[v] = part
            return f"{expr}.__class__ is {t} and {expr} == {v}"
        t, s, d = fresh(f"_type{i}"), fresh(f"_shape{i}"), fresh(f"_dtype{i}")
        bound[t], bound[s], bound[d] = part
        return f"{expr}.__class__ is {t} and {expr}.shape == {s} and {expr}.dtype is {d}"

    # -- the slow path --
    def slow_call(self, *args):
        if self.replaced is not None:
            return self.replaced(*args)
        if not assumptions.hold(self.spec.code_reads):
            return self.refresh()(*args)
        functions = bound_functions.of_arguments(self.params, args)
        if not bound_functions.same(functions, self.spec.functions):
            return self.function_entry(functions)(*args)
        sequences = frozenset(
            self.params[i] for i in self.spec.assumed_arrays if isinstance(args[i], (list, tuple))
        )
        if sequences:  # `xs + xs` on a list: concatenation, transpiled as such
            return self.sequence_entry(sequences | self.spec.sequences)(*args)
        key = self.signature(args) if self.specializable else None
        if key is not None:
            found = self.variants.get(key) or self.built(key)
            if found is not None:  # its arguments were checked when it was made
                self.install(self.specialized_route(key, found[0]))
                return self.shaped_as_arguments(found[0](*args), args)
        arguments.check(args, self.params, self.spec.wrt, self.fname)
        if key is None or len(self.variants) >= MAX_VARIANTS:
            self.install(self.generic_route())
            return self.shaped_as_arguments(self.generic(*args), args)
        return self.first_call(key, args)

    def shaped_as_arguments(self, result, args):
        """Each real argument's gradient real (``real_gradients``), and ``result`` with the gradient of each 0-d array argument a 0-d array (numpy
        arithmetic on 0-d arrays gives numpy scalars), and the gradient of each array
        of float32 (or float16) in that precision: where the function mixes float64 into
        its values, the generic code and a shape variant may differ in precision."""
        result = self.real_gradients(result, args)
        if not any(_has_zero_d(args[i]) or _has_low_float(args[i]) for i in self.spec.wrt):
            return result
        grads = result[1] if self.spec.mode == "value_and_grad" else result
        single = len(self.spec.wrt) == 1 and not self.spec.as_tuple
        given = [args[i] for i in self.spec.wrt]
        fixed = (
            like_arrays(grads, given[0])
            if single
            else tuple(like_arrays(g, a) for g, a in zip(grads, given))
        )
        return (result[0], fixed) if self.spec.mode == "value_and_grad" else fixed

    def zero_d_wrapped(self, key, fn):
        """``fn``, or for a signature with a 0-d array or an array of float32 (float16)
        among the gradients' arguments, ``fn`` followed by ``shaped_as_arguments``."""
        if not any(
            isinstance(part, tuple)
            and len(part) == 3
            and _is_array_type(part[0])
            and (not part[1] or part[2] in _LOW_FLOATS)
            for i, part in enumerate(key)
            if i in self.spec.wrt
        ):
            return fn
        return lambda *args: self.shaped_as_arguments(fn(*args), args)

    def refresh(self):
        """Transpile the function again for the names as they are now, and forward every
        later call to the new gradient's entry."""
        with self.lock:
            if self.replaced is None:
                self.replaced = self.spec.rebuild().function
                self.install(self.replaced)
        return self.replaced

    def function_entry(self, functions):
        """The entry of the gradient transpiled for the functions now passed."""
        key = tuple((p, id(f)) for p, f in functions)
        found = self.for_functions.get(key)
        if found is None or not bound_functions.same(found[0], functions):
            entry = self.spec.rebuild(self.spec.sequences, functions).function
            found = self.for_functions.setdefault(key, (functions, entry))
        return found[1]

    def sequence_entry(self, sequences):
        """The entry of the gradient transpiled with ``sequences`` known to be lists or
        tuples (made once per such set)."""
        entry = self.for_sequences.get(sequences)
        if entry is None:
            entry = self.for_sequences.setdefault(
                sequences, self.spec.rebuild(sequences, self.spec.functions).function
            )
        return entry

    def signature(self, args):
        key = []
        for i, a in enumerate(args):
            t = type(a)
            if i in self.static and not (t is int or t is bool or a is None):
                return None
            part = _part(a)
            if part is None:
                return None
            key.append(part)
        for read in self.spec.data_reads:
            part = _part(read.current())
            if part is None:
                return None
            key.append(part)
        return tuple(key)

    # -- building a variant --
    def first_call(self, key, args):
        """Run the probe; what it observes makes the variant when the signature comes
        back (a gradient called once with a signature never pays for a variant)."""
        probe_function, keys, known = self.probe_function()
        sites, seen = {}, dict(known)
        # this run's own recorders, in the cells of a copy of the probe: what two
        # threads' first calls observe stays apart, at the cost of one closure lookup
        probe_name, seen_name = self.probe_names
        recorders = {probe_name: probe.call_recorder(sites), seen_name: probe.recorder(keys, seen)}
        result = emit.rebound(probe_function, recorders)(*args)
        metas = {p: probe.meta(a) for p, a in zip(self.params, args)}
        self.pending.setdefault(key, (metas, sites, seen))
        return self.shaped_as_arguments(result, args)

    def built(self, key):
        """The variant for ``key``, made now from its first call's observations (None if
        that signature was never seen)."""
        observed = self.pending.get(key)
        if observed is None:
            return None
        steps = progress.Progress(f"the shape variant of {self.fname}", 1)
        steps.step(_describe_key(key))
        try:
            with gcpause.paused(), stack_room.room():
                variant = self.build(key, *observed)
            steps.done()
        except specialize.Unspecializable:
            variant = (self.generic, None)
        except Exception as error:  # noqa: BLE001  (a bug here must not cost a result)
            warnings.warn(
                f"transpile could not specialize {self.fname} for these argument shapes "
                f"({type(error).__name__}: {error}); it runs the generic gradient. "
                "Please report this with the function.",
                SpecializationWarning,
                stacklevel=4,
            )
            variant = (self.generic, None)
        self.pending.pop(key, None)
        return self.variants.setdefault(key, variant)

    def probe_function(self):
        """``(the probe, its keys, what it knows unreported)``, made on the first call;
        the probe's recorders are bound per run (``first_call``)."""
        if self.probe_made is None:
            with gcpause.paused(), stack_room.room():
                self.probe_made = self.made_probe()
        return self.probe_made

    def made_probe(self):
        """The generic gradient with every helper call and assignment reported, and the
        metas of what it knows without reporting (``probe.probe_body``)."""
        probe_name, seen_name = self.probe_names
        body, keys, known = probe.probe_body(
            self.body,
            self.spec.names["ops"],
            probe_name,
            seen_name,
            self.params,
            self.sites,
        )
        fdef = function_def(self.fname, clone(self.spec.fdef.args), body)
        bound = dict(self.spec.bound, **{probe_name: None, seen_name: None})  # (``first_call``)
        source, lines = emit.to_source_and_origins(fdef)
        function = emit.compile_function(
            source,
            self.fname,
            self.spec.module_globals,
            bound,
            f"{self.spec.label}: probe",
            self.spec.cells,
            self.origins(lines),
        )
        return function, keys, known

    def origins(self, lines):
        """The user's file and lines behind the generated ``lines`` (``tracebacks``)."""
        user_file, offset = self.spec.source_file
        return user_file, {k: offset + n for k, n in lines.items()}

    def build(self, key, metas, sites, seen):
        """The variant for ``key``: the generic body through the variant stages
        (``pipeline.VARIANT_STAGES``), as ``(function, source)``."""
        variant = stages.run(
            self.spec.variant_stages, Variant(self.body), self.context(key, metas, sites, seen)
        )
        return variant.function, variant.source

    def context(self, key, metas, sites, seen):
        """The ``ir.VariantContext`` of the variant for ``key``."""
        label = f"{self.spec.label} for ({_describe_key(key)})"
        return VariantContext(
            self.spec, tuple(self.params), metas, sites, seen, label, self.origins
        )

    def observed(self, args):
        """What a first call with ``args`` observed (made now if it was not): the
        arguments of ``context`` for their signature, or None where no variant is made."""
        key = self.signature(args) if self.specializable else None
        if key is None:
            return None
        if key not in self.pending:
            arguments.check(args, self.params, self.spec.wrt, self.fname)
            self.first_call(key, args)
        return (key, *self.pending[key])

    def specialized_source(self, args):
        """The source of the variant for ``args``, building it if needed (None when the
        signature is not specialized)."""
        if self.replaced is not None:
            return self.replaced.__transpile_dispatch__.specialized_source(args)
        key = self.signature(args) if self.specializable else None
        if key is None:
            return None
        if key not in self.variants:
            self.observed(args)
        found = self.variants.get(key) or self.built(key)
        return found[1]

    def current(self):
        """The dispatcher of the gradient calls run now (after a rebuild, the new one)."""
        if self.replaced is not None:
            return self.replaced.__transpile_dispatch__.current()
        return self


_TYPES = {
    "_float": float,
    "_float64": np.dtype(np.float64),
    "_ndarray": np.ndarray,
    "_matrix": np.matrix,
    "_masked": np.ma.MaskedArray,
    "_complex": complex,
    "_list": list,
    "_tuple": tuple,
}


_LOW_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))


def _has_low_float(value):
    if isinstance(value, dict):
        return any(_has_low_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_low_float(v) for v in value)
    return getattr(value, "dtype", None) in _LOW_FLOATS and hasattr(value, "ndim")


def _real_where_real(grad, arg):
    """``grad`` with the gradient of each real leaf of ``arg`` real."""
    if isinstance(arg, dict) and isinstance(grad, dict):
        return {k: _real_where_real(grad[k], v) for k, v in arg.items()}
    if isinstance(arg, (list, tuple)) and isinstance(grad, (list, tuple)):
        items = [_real_where_real(g, a) for g, a in zip(grad, arg)]
        return tuple(items) if isinstance(grad, tuple) else items
    return complex_ops.real_gradient(grad, arg)


def _has_complex_part(part):
    """Whether a signature (or a part of one) names a complex type or dtype."""
    if isinstance(part, np.dtype):
        return part.kind == "c"
    if isinstance(part, type):
        return issubclass(part, (complex, np.complexfloating))
    if isinstance(part, (tuple, list, frozenset)):
        return any(_has_complex_part(p) for p in part)
    return False


def _has_complex(value):
    if isinstance(value, dict):
        return any(_has_complex(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_complex(v) for v in value)
    return complex_ops.is_complex(value)


def _has_zero_d(value):
    if isinstance(value, dict):
        return any(_has_zero_d(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_zero_d(v) for v in value)
    return _is_array_type(type(value)) and value.ndim == 0


def _is_array_type(t):
    """Whether ``t`` is numpy's array type or another library's (cupy's, a NEP-18
    array), not a numpy scalar type."""
    return t is np.ndarray or (
        isinstance(t, type) and hasattr(t, "__array_function__") and not issubclass(t, np.generic)
    )


def like_arrays(grad, arg):
    """``grad`` with a 0-d array wherever ``arg`` has one (and ``grad`` a number), and
    in the precision of each float32 (float16) array of ``arg``."""
    if isinstance(arg, dict):
        return {k: like_arrays(grad[k], v) for k, v in arg.items()}
    if isinstance(arg, (list, tuple)):
        items = [like_arrays(g, a) for g, a in zip(grad, arg)]
        return tuple(items) if isinstance(grad, tuple) else items
    if type(arg) is np.ndarray and arg.ndim == 0 and not isinstance(grad, np.ndarray):
        grad = np.array(grad, dtype=getattr(grad, "dtype", None) or arg.dtype)
    elif _has_zero_d(arg) and type(grad) is not type(arg):  # another library's 0-d array
        grad = np.asarray(grad, dtype=getattr(grad, "dtype", None) or arg.dtype, like=arg)
    return _in_precision_of(complex_ops.real_gradient(grad, arg), arg)


def _in_precision_of(grad, arg):
    """``grad`` in ``arg``'s precision where that is float32 or float16 (float32 in,
    float32 out; ``astype`` makes a new array, shared with nothing)."""
    dtype = getattr(arg, "dtype", None)
    if dtype in _LOW_FLOATS and getattr(grad, "dtype", dtype) != dtype and hasattr(grad, "astype"):
        return grad.astype(dtype)
    if dtype in _LOW_FLOATS and isinstance(arg, np.generic) and type(grad) in (int, float):
        return dtype.type(grad)  # a zero of a float32 scalar: np.float32(0.0)
    return grad


def _part(a):
    """What a signature records of one value, or None if it cannot be specialized on."""
    t = type(a)
    if t is float:
        return float
    if t is int or t is bool or a is None:
        return (t, a)
    shape, dtype = getattr(a, "shape", None), getattr(a, "dtype", None)
    if not isinstance(shape, tuple) or dtype is None or isinstance(a, (list, dict, np.matrix)):
        return None
    return (t, shape, dtype)


def _describe_key(key):
    return ", ".join(_describe(part) for part in key)


def _describe(part):
    if part is float:
        return "float"
    if len(part) == 2:
        return repr(part[1])
    return f"{part[2]}[{'x'.join(map(str, part[1]))}]"
