"""Calls of a straight-line gradient, routed to a variant specialized for their shapes.

The first call with a new signature (array types, shapes and dtypes; values of
integer arguments) runs the generic gradient instrumented to record the shapes it
meets (the probe), and returns its result; ``specialize`` then rewrites the body
for those shapes. Later calls with that signature run the specialized variant
after a few identity and tuple comparisons. A signature the specializer cannot
handle keeps the generic gradient, so specializing never changes a result.
"""

import copy
import linecache
import warnings

import gast

from transpile import buffers, emit, optimize, probe, specialize
from transpile.nodes import function_def

_MAX_VARIANTS = 16


class SpecializationWarning(RuntimeWarning):
    """Shape specialization failed unexpectedly; the generic gradient was used."""


class Dispatcher:
    def __init__(self, build, fdef, generic, static_params, adjoint_names):
        self.generic = generic
        self.fname = fdef.name
        self.args = fdef.args
        self.params = [a.id for a in fdef.args.args]
        self.static = [self.params.index(p) for p in static_params if p in self.params]
        self.body = copy.deepcopy(fdef.body)
        self.sites = probe.number_sites(self.body, build.names["ops"])
        self.names = build.names
        self.adjoint_names = frozenset(adjoint_names)
        self.is_pure = build.is_pure
        self.module_globals = build.func.__globals__
        self.bound = dict(build.bound_names(fdef))
        self.label = f"{self.fname} from {build.func.__name__}"
        self.variants = {}  # signature -> (function, source)
        self.probe_fn = None
        self.cells = {"_slow": self.slow_call}
        self.function = self.make_entry()

    # -- the entry point and its routing --
    def make_entry(self):
        entry = self.compile_entry(None)
        entry.__defaults__ = self.generic.__defaults__
        entry.__doc__ = self.generic.__doc__
        entry.__transpile_dispatch__ = self
        return entry

    def compile_entry(self, key):
        """The entry function: it sends calls with signature ``key`` straight to that
        variant after a few cheap checks, and every other call to ``slow_call``."""
        params = ", ".join(self.params)
        lines = [f"def {self.fname}({params}):"]
        if key is not None:
            lines += [
                "    try:",
                f"        hit = {self.guard(key)}",
                "    except AttributeError:  # a number where an array was",
                "        hit = False",
                "    if hit:",
                f"        return _fast({params})",
            ]
        lines.append(f"    return _slow({params})")
        source = "\n".join(lines) + "\n"
        filename = f"<transpile {self.label}: dispatch>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        scope = {}
        exec(compile(source, filename, "exec"), self.cells, scope)  # noqa: S102
        return scope[self.fname]

    def guard(self, key):
        checks = []
        for i, (p, part) in enumerate(zip(self.params, key)):
            if part is float:
                checks.append(f"{p}.__class__ is float")
            elif part[1] is None and len(part) == 2:
                checks.append(f"{p} is None")
            elif len(part) == 2:
                self.cells[f"_t{i}"], self.cells[f"_v{i}"] = part
                checks.append(f"{p}.__class__ is _t{i} and {p} == _v{i}")
            else:
                self.cells[f"_t{i}"], self.cells[f"_s{i}"], self.cells[f"_d{i}"] = part
                if part[1]:  # shape and dtype decide; any array type with them will do
                    checks.append(f"{p}.shape == _s{i} and {p}.dtype is _d{i}")
                else:
                    checks.append(f"{p}.__class__ is _t{i} and {p}.dtype is _d{i}")
        return " and ".join(checks) or "True"

    def route(self, key, fn):
        """Make ``fn`` the fast path, for calls with signature ``key``."""
        self.cells["_fast"] = fn
        self.function.__code__ = self.compile_entry(key).__code__

    def signature(self, args):
        key = []
        for i, a in enumerate(args):
            t = type(a)
            if i in self.static and not (t is int or t is bool or a is None):
                return None
            if t is float:
                key.append(float)
            elif t is int or t is bool or a is None:
                key.append((t, a))
            else:
                shape, dtype = getattr(a, "shape", None), getattr(a, "dtype", None)
                if not isinstance(shape, tuple) or dtype is None or isinstance(a, (list, dict)):
                    return None
                key.append((t, shape, dtype))
        return tuple(key)

    def slow_call(self, *args):
        key = self.signature(args)
        if key is None:
            return self.generic(*args)
        found = self.variants.get(key)
        if found is not None:
            self.route(key, found[0])
            return found[0](*args)
        if len(self.variants) >= _MAX_VARIANTS:
            return self.generic(*args)
        return self.first_call(key, args)

    # -- building a variant --
    def first_call(self, key, args):
        sites, seen = {}, {}
        result = self.probe_function(sites, seen)(*args)
        try:
            variant = self.build(key, args, sites, seen)
        except specialize.Unspecializable:
            variant = (self.generic, None)
        except Exception as error:  # noqa: BLE001  (a bug here must not cost a result)
            warnings.warn(
                f"transpile could not specialize {self.fname} for these argument shapes "
                f"({type(error).__name__}: {error}); it runs the generic gradient. "
                "Please report this with the function.",
                SpecializationWarning,
                stacklevel=3,
            )
            variant = (self.generic, None)
        self.variants[key] = variant
        self.route(key, variant[0])
        return result

    def probe_function(self, sites, seen):
        if self.probe_fn is None:
            body = probe.probe_body(self.body, self.names["ops"])
            fdef = function_def(self.fname, copy.deepcopy(self.args), body)
            bound = dict(self.bound, _probe=self.record_call, _seen=self.record_value)
            self.probe_fn = emit.compile_function(
                emit.to_source(fdef), self.fname, self.module_globals, bound, f"{self.label}: probe"
            )
        self.observed = (sites, seen)
        return self.probe_fn

    def record_call(self, site, helper, *args):
        self.observed[0].setdefault(site, tuple(probe.meta(a) for a in args))
        return helper(*args)

    def record_value(self, index, value):
        self.observed[1].setdefault(index, probe.meta(value))

    def build(self, key, args, sites, seen):
        metas = {p: probe.meta(a) for p, a in zip(self.params, args)}
        body = specialize.Specializer(self.names, metas, sites, seen, self.adjoint_names).run(
            self.body
        )
        body = optimize.dead_code(buffers.propagate_copies(body), self.is_pure)
        body = buffers.reuse_buffers(optimize.tidy(body), self.names["np"])
        for stmt in body:
            for node in gast.walk(stmt):
                node.__dict__.pop("transpile_site", None)
                node.__dict__.pop("transpile_name", None)
                node.__dict__.pop("transpile_array", None)
        fdef = function_def(self.fname, copy.deepcopy(self.args), body)
        source = emit.to_source(fdef)
        shapes = ", ".join(_describe(part) for part in key)
        fn = emit.compile_function(
            source,
            self.fname,
            self.module_globals,
            self.bound_for(fdef),
            f"{self.label} for ({shapes})",
        )
        fn.__transpile_source__ = source
        return fn, source

    def bound_for(self, fdef):
        used = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        return {k: v for k, v in self.bound.items() if k in used}

    def specialized_source(self, args):
        """The source of the variant for ``args``, building it if needed (None when the
        signature is not specialized)."""
        key = self.signature(args)
        if key is None:
            return None
        if key not in self.variants:
            self.first_call(key, args)
        return self.variants[key][1]


def _describe(part):
    if part is float:
        return "float"
    if len(part) == 2:
        return repr(part[1])
    return f"{part[2]}[{'x'.join(map(str, part[1]))}]"
