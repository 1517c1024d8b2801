"""Deterministic, readable, collision-free names for generated code.

One ``Namer`` serves one transpilation. It knows every name the user's code
mentions and hands out new ones: temporaries ``_t1, _t2, ...``, versions of a
re-assigned variable ``h2, h3``, and adjoints ``dx`` (``d_x`` when ``dx`` is taken).
"""

import gast
import numpy as np

from transpile.core import recursion
from transpile.core.ir import MISSING
from transpile.core.nodes import const, descendants, name
from transpile_runtime import complex_ops, forward_ops, ops, scipy_ops, spectral
from transpile_runtime.tape import Tape


def stage(fn, ctx):
    """A namer that avoids every name of the user's function, and the names the
    generated code calls numpy (``np``), the runtime helpers (``ops``, ``scipy_ops``
    of the scipy rules, ``complex_ops`` and ``spectral``) and the tape by: the usual ones unless the function uses them
    for something else. A callee's forward and adjoint functions are ``f_fwd`` and
    ``f_bwd`` (``recursion.pair_names``): reserved, so no other name is given them."""
    parsed = fn.parsed
    fn.namer = Namer.for_tree(parsed.tree)
    for key, obj in (
        ("np", np),
        ("ops", ops),
        ("scipy_ops", scipy_ops),
        ("forward_ops", forward_ops),
        ("complex_ops", complex_ops),
        ("spectral", spectral),
        ("Tape", Tape),
    ):
        found = parsed.lookup(key)
        usual = key not in parsed.local_names and (found is obj or found is MISSING)
        fn.names[key] = fn.namer.reserve(key) if usual else fn.namer.fresh(key + "_")
        fn.namespace[fn.names[key]] = obj
    fn.names["tape"] = fn.namer.fresh("tape")
    _defaults_as_evaluated(fn, ctx.func)
    if ctx.mode == "split":  # a recursive call calls the pair by these names
        pair = (f"{parsed.name}_fwd", f"{parsed.name}_bwd")
        if ctx.stack:
            pair = recursion.pair_names(ctx.stack, len(ctx.stack) - 1, parsed.name)
        fn.names["fwd"], fn.names["bwd"] = (fn.namer.reserve(n) for n in pair)
    return fn


def _defaults_as_evaluated(fn, func):
    """Each default that the ``def`` computed (``scale=K * 2.0``) becomes the value
    Python evaluated then: printed again in the generated ``def``, the expression would
    read ``K`` as it is now, or a local of an enclosing function that the generated code
    cannot see. A number stays a literal; any other value is bound to a name of its own
    (``scale_default``). A literal or a name of the same object is left as written."""
    args = fn.parsed.tree.args
    values = getattr(func, "__defaults__", None) or ()
    if len(args.defaults) < len(values):
        return  # *args spread: the call fills every parameter, and no default is left
    params = args.args[len(args.args) - len(args.defaults) :]
    for k, (param, node, value) in enumerate(zip(params, args.defaults, values)):
        if _written_as(fn.parsed, node, value):
            continue
        if type(value) in (bool, int, float) and np.isfinite(value) or value is None:
            args.defaults[k] = const(value)
        else:
            bound = fn.namer.fresh(f"{param.id}_default")
            fn.namespace[bound] = value
            args.defaults[k] = name(bound)


def _written_as(parsed, node, value):
    """Whether the default expression ``node`` is a literal, or a name or attribute
    chain that denotes ``value`` itself."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    if isinstance(node, gast.Constant):
        return True
    return isinstance(node, (gast.Name, gast.Attribute)) and parsed.resolve(node) is value


class Namer:
    def __init__(self, taken):
        self._taken = set(taken)
        self._counter = 0
        self._adjoints = {}
        self._versions = {}
        # a version (``h2``) or a fresh name (``h_1``) -> the name it was made from
        self.version_of = {}
        self.temporaries = set()  # the temporaries handed out, and their adjoints

    @classmethod
    def for_tree(cls, tree, extra=()):
        """A namer that avoids every identifier appearing in ``tree``."""
        taken = {n.id for n in descendants(tree) if isinstance(n, gast.Name)}
        return cls(taken | set(extra))

    def reserve(self, name: str) -> str:
        self._taken.add(name)
        return name

    def fresh(self, base: str) -> str:
        """``base`` itself if free, else ``base_1``, ``base_2``, ..."""
        if base not in self._taken:
            return self.reserve(base)
        i = 1
        while f"{base}_{i}" in self._taken:
            i += 1
        self.version_of[f"{base}_{i}"] = self.version_of.get(base, base)
        return self.reserve(f"{base}_{i}")

    def temp(self) -> str:
        while True:
            self._counter += 1
            name = f"_t{self._counter}"
            if name not in self._taken:
                self.temporaries.add(name)
                return self.reserve(name)

    def version(self, name: str) -> str:
        """A new name for a re-assignment of ``name``: ``h2``, ``h3``, ..."""
        n = self._versions.get(name, 1)
        while True:
            n += 1
            sep = "_" if name[-1].isdigit() else ""
            candidate = f"{name}{sep}{n}"
            if candidate not in self._taken:
                self._versions[name] = n
                self.version_of[candidate] = self.version_of.get(name, name)
                return self.reserve(candidate)

    def adjoint(self, name: str) -> str:
        """The adjoint of ``name``: ``dx`` for ``x``, ``d_t1`` for ``_t1``; stable per name."""
        if name not in self._adjoints:
            base = f"d{name}"
            if base in self._taken:
                base = f"d_{name.lstrip('_')}"
            self._adjoints[name] = self.fresh(base)
            if name in self.temporaries:
                self.temporaries.add(self._adjoints[name])
        return self._adjoints[name]
