"""Which straight-line bodies have every shape fixed by the call's signature.

A shape-specialized variant is valid for every call with the signature it was
made for only if no value's shape depends on the values of the arguments. That
holds when every operation is one whose output shape follows from its input
shapes (elementwise math, reductions with constant axes, matrix products,
reshapes, ...) and every argument that sets a shape, an axis or an index is a
constant, a shape, or an integer parameter (whose value becomes part of the
signature). ``eligible`` checks this at transpile time, conservatively: an
unlisted function or a value-dependent index makes the body ineligible, and the
gradient simply stays generic.
"""

import gast
import numpy as np

import runtime

_SHAPE_ATTRS = ("shape", "ndim", "size")
_DATA_ATTRS = ("T", "real", "imag", "dtype") + _SHAPE_ATTRS


def _numpy_functions(names):
    """The ids of the numpy functions named in a space-separated string."""
    out = set()
    for n in names.split():
        obj = np
        for part in n.split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            out.add(id(obj))
    return frozenset(out)


# numpy functions whose output shape follows from their input shapes, by which
# positional arguments are arrays (the others must be static: constants, shapes,
# integer parameters)
_ALL_DATA = _numpy_functions(
    "dot vdot outer inner where clip zeros_like ones_like full_like empty_like copy "
    "linalg.inv linalg.det linalg.solve"
)
_FIRST_DATA = _numpy_functions(
    "sum mean max min amax amin prod std var cumsum argmax argmin reshape transpose "
    "swapaxes moveaxis squeeze expand_dims broadcast_to flip roll triu tril diag trace "
    "ravel linalg.norm"
)
_TWO_DATA = _numpy_functions("tensordot")
_LIST_FIRST = _numpy_functions("stack concatenate vstack hstack")
_STATIC_RESULT = _numpy_functions("shape ndim size") | {id(len)}
_BUILTIN_DATA = {id(abs), id(float), id(max), id(min), id(pow), id(runtime.stop_gradient)}


class _Ineligible(Exception):
    pass


def eligible(body, params, resolve, ops_name):
    """The parameters that must be Python ints (they set shapes or indices) if ``body``
    can be specialized per signature, else None."""
    checker = _Eligibility(params, resolve, ops_name)
    try:
        for stmt in body:
            checker.statement(stmt)
    except _Ineligible:
        return None
    return frozenset(checker.static_params)


class _Eligibility:
    def __init__(self, params, resolve, ops_name):
        self.params = set(params)
        self.resolve = resolve
        self.ops = ops_name
        self.static = {}  # name -> parameters it depends on, for names holding shapes
        self.static_params = set()

    def statement(self, s):
        if isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant) and isinstance(s.value.value, str):
                return  # a comment marker
            f = getattr(s.value, "func", None)
            if isinstance(f, gast.Attribute) and getattr(f.value, "id", None) == self.ops:
                self.call(s.value)  # ops.add_at(buffer, index, g): slots of an adjoint
                return
            raise _Ineligible
        if isinstance(s, gast.Return):
            if s.value is not None:
                self.data(s.value)
            return
        if isinstance(s, gast.AugAssign):
            self.target(s.target)
            self.data(s.value)
            return
        if not isinstance(s, gast.Assign) or len(s.targets) != 1:
            raise _Ineligible
        deps = self.static_deps(s.value)
        if deps is None:
            self.data(s.value)
        for t in s.targets:
            self.target(t)
            if isinstance(t, gast.Name):
                if deps is None:
                    self.static.pop(t.id, None)
                else:
                    self.static[t.id] = deps

    def target(self, t):
        if isinstance(t, gast.Name):
            return
        if isinstance(t, gast.Tuple):
            for e in t.elts:
                self.target(e)
            return
        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
            self.require_static(t.slice)
            return
        raise _Ineligible

    def static_deps(self, node):
        """The parameters a shape-like value depends on, or None if it is data."""
        if isinstance(node, gast.Constant):
            return frozenset()
        if isinstance(node, gast.Name):
            if node.id in self.static:
                return self.static[node.id]
            return frozenset([node.id]) if node.id in self.params else None
        if isinstance(node, gast.Attribute):
            return frozenset() if node.attr in _SHAPE_ATTRS else None
        if isinstance(node, (gast.Tuple, gast.List)):
            parts = [self.static_deps(e) for e in node.elts]
            return None if None in parts else frozenset().union(*parts)
        if isinstance(node, gast.Slice):
            parts = [self.static_deps(p) for p in (node.lower, node.upper, node.step) if p]
            return None if None in parts else frozenset().union(*parts)
        if isinstance(node, gast.UnaryOp):
            return self.static_deps(node.operand)
        if isinstance(node, gast.BinOp):
            left, right = self.static_deps(node.left), self.static_deps(node.right)
            return None if left is None or right is None else left | right
        if isinstance(node, gast.Subscript):
            value, index = self.static_deps(node.value), self.static_deps(node.slice)
            return None if value is None or index is None else value | index
        if isinstance(node, gast.Call) and id(self.resolve(node.func)) in _STATIC_RESULT:
            return frozenset()
        return None

    def require_static(self, node):
        deps = self.static_deps(node)
        if deps is None:
            raise _Ineligible
        self.static_params |= deps

    def data(self, node):
        """Check an expression whose value may be an array."""
        if isinstance(node, (gast.Name, gast.Constant)):
            return
        if isinstance(node, (gast.BinOp,)):
            self.data(node.left)
            self.data(node.right)
        elif isinstance(node, gast.UnaryOp):
            self.data(node.operand)
        elif isinstance(node, gast.Compare):
            for part in [node.left, *node.comparators]:
                self.data(part)
        elif isinstance(node, (gast.Tuple, gast.List)):
            for e in node.elts:
                self.data(e)
        elif isinstance(node, gast.Attribute):
            if node.attr not in _DATA_ATTRS:
                raise _Ineligible
            self.data(node.value)
        elif isinstance(node, gast.Subscript):
            if self.resolve(node.value) is not np.s_:  # np.s_[...] is an index, not data
                self.data(node.value)
            self.require_static(node.slice)
        elif isinstance(node, gast.Call):
            self.call(node)
        else:
            raise _Ineligible

    def call(self, node):
        f = node.func
        if isinstance(f, gast.Attribute) and getattr(f.value, "id", None) == self.ops:
            data, static = node.args, []
        else:
            obj = self.resolve(f)
            key = id(obj)
            if obj is np.where and len(node.args) != 3:
                raise _Ineligible  # np.where(condition) lists indices: data-dependent shape
            if isinstance(obj, np.ufunc) or key in _ALL_DATA or key in _BUILTIN_DATA:
                data, static = node.args, []
            elif key in _FIRST_DATA or key in _LIST_FIRST:
                data, static = node.args[:1], node.args[1:]
            elif key in _TWO_DATA:
                data, static = node.args[:2], node.args[2:]
            elif obj is np.einsum:
                data, static = node.args[1:], node.args[:1]
            elif key in _STATIC_RESULT:
                data, static = node.args, []
            else:
                raise _Ineligible
        for a in data:
            if isinstance(a, gast.Starred):
                raise _Ineligible
            self.data(a)
        for a in static:
            self.require_static(a)
        for k in node.keywords:
            if k.arg is None:
                raise _Ineligible
            self.require_static(k.value)
