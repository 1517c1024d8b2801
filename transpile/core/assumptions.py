"""What generated code assumed about the free names its function reads.

A gradient is written for the objects the function's free names denoted when it
was transpiled: ``ACT = np.tanh`` made ``ACT(x)`` take the rule of ``tanh``, a
global helper was differentiated from its source. Those names are still read
live by the user's function, so a rebinding changes what the gradient must be.
``collect`` sorts the names ``parse`` saw into *code* reads (functions, modules,
classes: checked by identity on every call, and a stale one means transpiling
again) and *data* reads (arrays and numbers: the generic code reads them live,
and a shape-specialized variant keys on their shapes).

Attribute chains rooted in a library module (``np.linalg.norm``) are checked at
the root only: a rebound ``np`` is caught, a monkeypatched ``np.linalg.norm`` is
not. Chains rooted anywhere else (``mylib.act``, ``config.W``) are checked whole.
"""

import builtins
import inspect
import types
from dataclasses import dataclass

import gast

from transpile.core.ir import MISSING
from transpile.core.nodes import descendants

LIBRARY_ROOTS = frozenset(
    (
        "numpy",
        "math",
        "cmath",
        "scipy",
        "cupy",
        "dask",
        "builtins",
        "transpile_runtime",
        "transpile",
    )
)


@dataclass(frozen=True, eq=False)
class Read:
    """One free name or attribute chain (``"config.W"``) and what it denoted."""

    chain: str
    obj: object
    namespace: dict  # the module globals of the function that read it
    cell: object = None  # the closure cell of the chain's root, for a closure variable

    def current(self):
        """What the chain denotes now (MISSING if it no longer resolves)."""
        root, *attrs = self.chain.split(".")
        if self.cell is not None:
            try:
                value = self.cell.cell_contents
            except ValueError:
                return MISSING
        elif root in self.namespace:
            value = self.namespace[root]
        else:
            value = getattr(builtins, root, MISSING)
        for attr in attrs:
            if value is MISSING:
                return MISSING
            value = getattr(value, attr, MISSING)
        return value

    def holds(self) -> bool:
        return self.current() is self.obj

    def expression(self, cell_name=None) -> str:
        """The chain as source in a function whose globals are ``namespace``; a closure
        root is read through its cell, bound as ``cell_name``."""
        if self.cell is None:
            return self.chain
        rest = self.chain.split(".", 1)[1:]
        return ".".join([f"{cell_name}.cell_contents", *rest])


@dataclass(frozen=True, eq=False)
class Contents(Read):
    """A global or closure list or tuple whose elements (functions, objects) a loop over
    it was unrolled for, or a dict whose keys ``**d`` was spread into: the same list
    holding the same elements, or the same dict with the same keys, in order."""

    elements: tuple = ()

    def holds(self) -> bool:
        now = self.current()
        if now is not self.obj or len(now) != len(self.elements):
            return False
        if isinstance(now, dict):  # a dict spread into keywords: the same keys, in order
            return tuple(now) == self.elements
        return all(a is b for a, b in zip(now, self.elements))


def is_code(obj) -> bool:
    """Whether an object shapes the generated code (a rule, a callee, a module) rather
    than flowing through it as data."""
    return callable(obj) or inspect.ismodule(obj)


def _is_library_module(obj) -> bool:
    return inspect.ismodule(obj) and obj.__name__.split(".")[0] in LIBRARY_ROOTS


def _is_bound_method(obj) -> bool:
    """A method bound to an object (``norm.logpdf``, ``rng.normal``): made anew on each
    attribute access, so never the same object twice; its object is read as the chain's
    parent."""
    owner = getattr(obj, "__self__", None)
    return (
        isinstance(obj, (types.MethodType, types.BuiltinMethodType))
        and owner is not None
        and not inspect.ismodule(owner)
    )


def collect(parsed):
    """``(code_reads, data_reads)``: the free names and chains ``parsed`` resolved while
    its function was transpiled, restricted to those the function's text mentions."""
    mentioned, attributes = set(), set()
    for node in descendants(parsed.tree):
        if isinstance(node, gast.Name):
            if node.id not in mentioned:  # (a read is recorded by the first lookup)
                mentioned.add(node.id)
                parsed.lookup(node.id)  # every free name is read, whether a pass asked or not
        elif isinstance(node, gast.Attribute):
            if isinstance(node.value, gast.Name):  # np.tanh: each pair resolved once
                pair = (node.value.id, node.attr)
                if pair in attributes:
                    continue
                attributes.add(pair)
            parsed.resolve(node)
    code, data = [], []
    for chain, elements in parsed.contents.items():  # unrolled: no longer in the text
        obj, root = parsed.reads[chain], chain.split(".")[0]
        code.append(Contents(chain, obj, parsed.namespace, parsed.cells.get(root), elements))
    for chain, obj in parsed.reads.items():
        if chain in parsed.contents or not _checked(parsed, chain, obj, mentioned):
            continue
        read = Read(chain, obj, parsed.namespace, parsed.cells.get(chain.split(".")[0]))
        (code if is_code(obj) else data).append(read)
    return tuple(code), tuple(data)


def _checked(parsed, chain, obj, mentioned) -> bool:
    """Whether the read of ``chain`` (which found ``obj``) is one to check on each call."""
    root, *attrs = chain.split(".")
    if obj is MISSING or root not in mentioned or root in parsed.local_names:
        return False
    if inspect.ismodule(parsed.bound.get(root)):
        return False  # the runtime helpers a lowering calls (a loop over a dict's keys)
    if root in parsed.bound and root not in parsed.namespace and root not in parsed.cells:
        return False  # a name the compiler bound (an element of an unrolled list: Contents)
    if attrs and _is_library_module(parsed.reads.get(root)):
        return False  # the root's identity covers the chain
    # a bound method is made anew on each access: the parent chain's identity covers it
    return not (attrs and _is_bound_method(obj))


def merge(*groups):
    """The reads of several functions, each chain of each namespace once."""
    out = {}
    for group in groups:
        for r in group:
            out.setdefault((r.chain, id(r.namespace), id(r.cell)), r)
    return tuple(out.values())


def hold(reads) -> bool:
    """Whether every code read still denotes the object it did."""
    return all(r.holds() for r in reads)
