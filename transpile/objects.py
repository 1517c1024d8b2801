"""Methods of the user's classes: ``model.predict(x)``, ``layer(x)``, ``self.W``.

A method is differentiated like any user function, with ``self`` its first
parameter: ``stage`` rewrites ``obj.method(a)`` into a call of the function
``type(obj).method`` with ``obj`` first (``Model_predict(model, a)``), and
``obj(a)`` into one of ``type(obj).__call__``, wherever the class of ``obj`` is
known when transpiling: ``obj`` a global or closure variable or an attribute chain
of them (the entry re-checks ``obj.__class__`` on every call), or a parameter whose
``object_args.Layout`` the context names (``Context.classes``: an object passed to
the gradient, or by the caller, ``passed``), or a field of one.

A parameter whose layout is a view (``object_args.View``: an object passed to the
gradient, a dict of its numeric fields) has its numeric fields read as string keys,
``self.W`` as ``self["W"]``, which is what makes them differentiable; a property
is a call of its getter; a function it holds is called as that function; any other
attribute (a class constant, a string) is read through ``stop_gradient``. Writing
an attribute stays refused (``normalize``).
"""

import inspect

import gast

from transpile import object_args
from transpile.nodes import all_stmts, const, name
from transpile.parse import MISSING
from transpile_runtime import stop_gradient


def stage(fn, ctx):
    """Calls of methods become calls of functions; attributes of views, subscripts."""
    _Rewrite(fn, dict(ctx.classes)).visit(fn.parsed.tree)
    return fn


class _Rewrite(gast.NodeTransformer):
    def __init__(self, fn, layouts):
        self.fn, self.parsed = fn, fn.parsed
        stored = _stored(fn.parsed.tree)
        self.layouts = {p: lay for p, lay in layouts.items() if p not in stored}
        self.bound = {}  # id(object) -> the name it is bound to

    def visit_FunctionDef(self, node):
        node.body = [self.visit(s) for s in node.body]  # not the parameters or decorators
        return node

    def bind(self, obj, base):
        """A name for ``obj`` in the generated code and to the compiler."""
        if id(obj) not in self.bound:
            n = self.fn.namer.fresh(base)
            self.parsed.bound[n] = obj
            self.fn.namespace[n] = obj
            self.bound[id(obj)] = n
        return self.bound[id(obj)]

    def layout_of(self, node):
        """The ``Layout`` of the object ``node`` denotes, or None."""
        if isinstance(node, gast.Name) and node.id in self.layouts:
            return self.layouts[node.id]
        if isinstance(node, gast.Attribute) and _root(node) in self.layouts:
            base = self.layout_of(node.value)
            return base.field(node.attr)[1] if base is not None else None
        root = _root(node)
        if root is None or root in self.parsed.local_names:
            return None
        obj = self.parsed.resolve(node)
        if obj is MISSING or not object_args.is_user_object(obj):
            return None
        # the code is written for this class: a rebinding to another one is seen
        self.parsed.reads.setdefault(_chain(node) + ".__class__", type(obj))
        return object_args.layout(obj, view=False)

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        for kw in node.keywords:
            kw.value = self.visit(kw.value)
        target = self.callee(node.func)
        if target is None:
            node.func = self.visit(node.func)
            return node
        function, receiver, base = target
        node.func = gast.copy_location(name(self.bind(function, base)), node.func)
        if receiver is not None:
            node.args.insert(0, self.visit(receiver))
        return node

    def callee(self, func):
        """``(function, receiver or None, readable name)`` for a call of a method, a
        callable object or a function an object holds; None for any other call."""
        receiver, attr = (
            (func.value, func.attr) if isinstance(func, gast.Attribute) else (func, None)
        )
        lay = self.layout_of(receiver)
        if lay is None:
            return None
        if attr is None:
            return _method(lay.cls, "__call__", receiver)
        if lay.field(attr)[0]:
            return None
        held = lay.function(attr)
        if held is not None and _root(receiver) in self.layouts:
            return held, None, f"{attr}"
        return _method(lay.cls, attr, receiver)

    def visit_Attribute(self, node):
        if not isinstance(node.ctx, gast.Load):
            return self.generic_visit(node)
        lay = self.layout_of(node.value)
        if lay is None or not lay.view:
            return self.generic_visit(node)
        base = self.visit(node.value)
        is_field, _ = lay.field(node.attr)
        member = inspect.getattr_static(lay.cls, node.attr, None)
        if is_field:
            new = gast.Subscript(value=base, slice=const(node.attr), ctx=gast.Load())
        elif lay.function(node.attr) is not None:
            new = name(self.bind(lay.function(node.attr), node.attr))
        elif isinstance(member, property) and inspect.isfunction(member.fget):
            getter = self.bind(member.fget, f"{lay.cls.__name__}_{node.attr}")
            new = gast.Call(func=name(getter), args=[base], keywords=[])
        else:  # a class constant, a string, ...: never differentiated
            sg = gast.Call(
                func=name(self.bind(stop_gradient, "stop_gradient")), args=[base], keywords=[]
            )
            new = gast.Attribute(value=sg, attr=node.attr, ctx=gast.Load())
        return gast.copy_location(new, node)


def _method(cls, attr, receiver):
    member = inspect.getattr_static(cls, attr, None)
    base = f"{cls.__name__}_{attr.strip('_')}"
    if isinstance(member, staticmethod) and inspect.isfunction(member.__func__):
        return member.__func__, None, base
    if inspect.isfunction(member):
        return member, receiver, base
    return None


def _root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _chain(node):
    return _root(node) if isinstance(node, gast.Name) else f"{_chain(node.value)}.{node.attr}"


def _stored(tree):
    return {
        n.id
        for n in gast.walk(tree)
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))
    }


def passed(fn, ctx, arguments) -> tuple:
    """``(callee parameter, Layout)`` for the arguments of a call that are objects of a
    known class: a parameter of the caller's with a layout, a field of one (through the
    temporary A-normal form made of it), or a global object."""
    layouts = dict(ctx.classes)
    out = []
    for pname, node in arguments.items():
        lay = _argument_layout(fn, layouts, node)
        if lay is not None:
            out.append((pname, lay))
    return tuple(out)


def _argument_layout(fn, layouts, node):
    if not isinstance(node, gast.Name):
        return None
    if node.id in layouts:
        return layouts[node.id] if node.id not in _stored(fn.tree) else None
    if node.id in fn.namer.temporaries:
        values = [
            s.value
            for s in all_stmts(fn.tree.body)
            if isinstance(s, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == node.id for t in s.targets)
        ]
        if len(values) == 1:
            return _field_layout(fn, layouts, values[0])
        return None
    obj = fn.parsed.resolve(node)
    if obj is not MISSING and object_args.is_user_object(obj):
        return object_args.layout(obj, view=False)
    return None


def _field_layout(fn, layouts, value):
    """The layout of ``p["f"]`` or ``p.f`` for a parameter ``p`` with a layout, or of a
    global attribute chain."""
    if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant):
        base, attr = value.value, value.slice.value
    elif isinstance(value, gast.Attribute):
        base, attr = value.value, value.attr
    else:
        return None
    if isinstance(base, gast.Name) and base.id in layouts:
        return layouts[base.id].field(attr)[1]
    obj = fn.parsed.resolve(value) if isinstance(value, gast.Attribute) else MISSING
    if obj is not MISSING and object_args.is_user_object(obj):
        return object_args.layout(obj, view=False)
    return None
