"""Names bound once, at the top level, to a new array whose layout is known there.

``out = np.zeros((2, 2))`` (an allocation declared ``fresh`` whose first argument is
the shape: ``np.zeros``, ``np.ones``, ``np.empty``, ``np.full``) bound once makes ``out`` a C-ordered array of two axes
wherever it is read: its reshapes and ravels are views, never copies, and ``out[0, 1]``
is a number (a copy), never a view. ``retake`` and ``aliasing`` ask these questions;
A-normal form has hoisted the shape into a name bound once to a constant, followed
here. ``np.zeros_like`` keeps its prototype's order and ``x.copy()`` may be a list's:
neither is one of these allocations.
"""

import gast

from transpile.core.ir import MISSING
from transpile.core.nodes import all_stmts, stores
from transpile.rules import registry
from transpile.rules.declare import Shape


class Allocations:
    """The facts of one normalized function body."""

    def __init__(self, tree, resolve):
        self.resolve = resolve
        self.bindings = {}  # name -> the statements binding it (any binding)
        for s in all_stmts(tree.body):
            for n in stores(s):
                self.bindings.setdefault(n, []).append(s)
        self.top = {id(s) for s in tree.body}

    def bound_once(self, name):
        """The top-level ``name = value`` statement that is ``name``'s only binding."""
        made = self.bindings.get(name, [])
        if len(made) != 1 or id(made[0]) not in self.top:
            return None
        s = made[0]
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return None
        return s

    def constant(self, node):
        """Whether ``node`` is a constant (an int, a tuple of them, ...), or a name bound
        once to one."""
        if isinstance(node, gast.Constant):
            return True
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            return isinstance(node.operand, gast.Constant)
        if isinstance(node, gast.Tuple):
            return all(self.constant(e) for e in node.elts)
        if isinstance(node, gast.Name):
            s = self.bound_once(node.id)
            return s is not None and self.constant(s.value)
        return False

    def c_ordered(self, name):
        """The numpy allocation ``name`` is bound once to, C-ordered (no ``order=``, no
        ``like=``), or None."""
        s = self.bound_once(name)
        value = None if s is None else s.value
        if not isinstance(value, gast.Call) or not value.args:
            return None
        if any(k.arg in ("order", "like") for k in value.keywords):
            return None
        obj = self.resolve(value.func)
        if obj is MISSING or registry().canonical(obj) is not obj:
            return None  # cupy's twin: an item of a cupy array is a view (0-d)
        declared = registry().declaration(obj)
        if declared is None or not declared.fresh or declared.shape is not Shape.FILL:
            return None  # not np.zeros, np.ones, np.empty, np.full: a shape, then data
        return value

    def ndim(self, name):
        """The number of axes of the C-ordered allocation ``name`` holds, where its
        shape is a constant, or None."""
        value = self.c_ordered(name)
        if value is None:
            return None
        shape = self._constant_value(value.args[0])
        if isinstance(shape, gast.Tuple) and all(_int(e) for e in shape.elts):
            return len(shape.elts)
        return 1 if _int(shape) else None

    def is_item(self, value):
        """Whether ``value`` is ``a[i, j]`` with an int for every axis of ``a``: a number."""
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)):
            return False
        index = value.slice
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return self.ndim(value.value.id) == len(parts) and all(_int(p) for p in parts)

    def _constant_value(self, node):
        if isinstance(node, gast.Name):
            s = self.bound_once(node.id)
            return None if s is None else s.value
        return node


def _int(node):
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int
