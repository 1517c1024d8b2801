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
attribute (a class constant, a string) is read through ``stop_gradient``, as is a
numeric field holding no float (a counter, ``Layout.counters``). An attribute write
(``self.nfev += 1``) runs as written (``attribute_writes``); on a view, a field
holding floats, or any field of an object made in the function, is refused.

A loop over a list or tuple of objects whose layout is known (``for layer in
self.layers``, ``enumerate(...)`` or ``reversed(...)`` of one) is unrolled: the
layout fixes the list's length and each element's class, so copy ``k`` of the body
reads element ``k`` under a name of its own (``layer0 = self["layers"][0]``), whose
layout ``fn.objects`` records, and its method calls are resolved for that
element's class (Dense and Tanh layers in one list). An element picked by a
constant index (``self.layers[-1]``) has that element's layout; by any other index,
the layout all elements share. Such a loop may not ``break`` or ``continue``; a
list of objects (or of functions) that a global or closure variable holds is
unrolled per element by ``unroll_globals``, the gradient checking on every call that
it holds the same elements.

An object made in the function (``layer = Dense(W, b)``, bound once) of a class
whose ``__init__`` only stores its parameters (``self.W = W``; a docstring, constants
too), or of a dataclass without ``__post_init__``, is built as the dict of its
fields (``layer = {"W": W, "b": b}``), a view whose layout ``fn.objects`` records:
its methods, fields and class attributes then read as for an object passed in. A
function it is given (a default ``act=np.tanh``, a global function) is held, not
stored. Any other construction is left to the reverse sweep, which refuses it
where it carries a differentiated value, naming the class.
"""

import collections
import dataclasses
import inspect

import gast

from transpile.core.errors import at
from transpile.core.ir import MISSING
from transpile.core.nodes import (
    all_stmts,
    clone,
    const,
    contains_jump,
    descendants,
    name,
    name_nodes,
    names_and_calls,
    walked_fields,
)
from transpile.front import bound_functions, object_args, parse, unroll_globals
from transpile_runtime import instances, stop_gradient


def stage(fn, ctx):
    """Calls of methods become calls of functions; attributes of views, subscripts."""
    rewrite = _Rewrite(fn, dict(ctx.classes))
    rewrite.visit(fn.parsed.tree)
    fn.objects = dict(rewrite.locals)
    return fn


class _Rewrite(gast.NodeTransformer):
    def __init__(self, fn, layouts):
        self.fn, self.parsed = fn, fn.parsed
        # the names assigned, once per assignment, in the function as it is now: no
        # rewrite binds a name before ``store_counts`` is first asked (the loops it
        # unrolls and the objects it binds to names ask it first)
        names, calls = names_and_calls(fn.parsed.tree)
        self._assigned = [n.id for n in names if isinstance(n.ctx, (gast.Store, gast.Del))]
        # whether a call calls what a call returns (``Cls(a)(x)``, ``Cls(a).m(x)``):
        # without one, no statement has an instance to bind (``instances_called``);
        # the rewrite makes such calls only inside statements it has looked at
        self._calls_results = any(_calls_a_result(c) for c in calls)
        stored = set(self._assigned)
        self.layouts = {p: lay for p, lay in layouts.items() if p not in stored}
        self.bound = {}  # (id(object), wrapped) -> the name it is bound to
        self.locals = {}  # a name bound once to an element of a list of objects -> Layout
        self._store_counts = None

    def store_counts(self):
        """How often each name is assigned in the function (counted once, on demand)."""
        if self._store_counts is None:
            self._store_counts = collections.Counter(self._assigned)
        return self._store_counts

    def visit_FunctionDef(self, node):
        node.body = self.visit_block(node.body)  # not the parameters or decorators
        return node

    def visit(self, node):
        cls = node.__class__
        if cls in _LEAVES or cls is gast.Name and node.annotation is None:
            return node  # nothing under it: generic_visit would only walk it
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
            made = self.instances_called(node)
            if made:  # LeastSquares()(p, d): the object made first, bound to a name
                return [self.visit(s) for s in made] + _listed(self.visit(node))
        return super().visit(node)

    def generic_visit(self, node):
        """``NodeTransformer.generic_visit`` over the fields that may hold a node to
        change (``walked_fields``: a context, an operator, an identifier holds none)."""
        for field in walked_fields(node.__class__):
            old = getattr(node, field, None)
            if isinstance(old, list):
                new = []
                for value in old:
                    if isinstance(value, gast.AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, gast.AST):
                            new.extend(value)
                            continue
                    new.append(value)
                old[:] = new
            elif isinstance(old, gast.AST):
                value = self.visit(old)
                if value is None:
                    delattr(node, field)
                else:
                    setattr(node, field, value)
        return node

    def local_displays(self):
        """Name -> the list or tuple display of names it is bound to, where bound once."""
        counts = self.store_counts()
        return {
            s.targets[0].id: s.value
            for s in descendants(self.parsed.tree)
            if isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and counts[s.targets[0].id] == 1
            and isinstance(s.value, (gast.List, gast.Tuple))
            and all(_chain(e) and _root(e) not in self.parsed.local_names for e in s.value.elts)
        }

    def of_super(self, node):
        """``super().method(x)`` in a method of class ``C``: a call of the ``method`` that
        the first class after ``C`` in ``C.__mro__`` defines, ``self`` first (the class
        after ``C`` in the instance's own order, unless a subclass merges hierarchies)."""
        func = node.func
        if not (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Call)
            and not func.value.args
            and isinstance(func.value.func, gast.Name)
            and self.parsed.resolve(func.value.func) is super
            and "__class__" in self.parsed.cells
            and self.parsed.tree.args.args
        ):
            return False
        owner = self.parsed.cells["__class__"].cell_contents
        found = next((k for k in owner.__mro__[1:] if func.attr in vars(k)), None)
        method = vars(found).get(func.attr) if found is not None else None
        if not inspect.isfunction(method):
            return False
        base = f"{found.__name__}_{func.attr.strip('_') or 'call'}"
        node.func = gast.copy_location(name(self.bind(method, base)), func)
        node.args.insert(0, name(self.parsed.tree.args.args[0].id))
        return True

    def instances_called(self, stmt):
        """``obj = Cls(a)`` for each ``Cls(a)(x)`` or ``Cls(a).method(x)`` in ``stmt``
        (``Cls`` a class of the user's, made of names and constants), which then calls
        ``obj``; none where there is no such call."""
        made = []
        if not self._calls_results:
            return made
        for n in descendants(stmt):
            if not isinstance(n, gast.Call):
                continue
            holder, field = (n.func, "value") if isinstance(n.func, gast.Attribute) else (n, "func")
            inner = getattr(holder, field)
            if not (isinstance(inner, gast.Call) and _chain(inner.func)):
                continue
            if not object_args.is_user_class(self.parsed.resolve(inner.func)):
                continue
            values = inner.args + [k.value for k in inner.keywords]
            if not all(isinstance(v, gast.Constant) or _chain(v) for v in values):
                continue
            cls = self.parsed.resolve(inner.func)
            obj = self.fn.namer.fresh(cls.__name__.lower())
            self.store_counts()[obj] = 1
            made.append(_assign(name(obj, gast.Store()), inner, stmt))
            setattr(holder, field, gast.copy_location(name(obj), inner))
        return made

    def visit_block(self, stmts):
        out = []
        for s in stmts:
            new = self.visit(s)
            out.extend(new if isinstance(new, list) else [new])
        return out

    def visit_For(self, node):
        found = unroll_globals.loop(self.parsed, node, self.local_displays())
        if found is not None:
            chain, items, position, targets, _ = found
            element = targets[position]
            if not unroll_globals.read_after(self.parsed.tree, node, element):
                if chain is not None:
                    self.parsed.contents[chain] = items
                names = [self.bind(e, f"{element.id}{k}") for k, e in enumerate(items)]
                return self.visit_block(unroll_globals.unrolled(node, found, names))
        seq, index, order = _iterated(node)
        lay = self.layout_of(seq)
        if not isinstance(lay, object_args.Items) or lay.kind is dict:
            return self.generic_visit(node)
        self.check_unrollable(node, seq, lay)
        target = index[1] if index else node.target
        out, element = [], None
        if not isinstance(seq, gast.Name):  # read once: layers = self["layers"]
            held = self.fn.namer.fresh(getattr(seq, "attr", "items"))
            self.locals[held] = lay
            out.append(self.visit(_assign(name(held, gast.Store()), seq, node)))
            seq = name(held)
        for k in order(range(len(lay.keys))):
            element = self.fn.namer.fresh(f"{target.id}{k}")
            self.locals[element] = lay.elements[k]
            item = gast.Subscript(value=clone(seq), slice=const(k), ctx=gast.Load())
            out.append(self.visit(_assign(name(element, gast.Store()), item, node)))
            if index:
                out.append(_assign(clone(index[0]), const(k), node))
            out.extend(self.visit_block(_renamed(clone(node.body), target.id, element)))
        if element is not None:
            out.append(_assign(clone(target), name(element), node))
        return out + self.visit_block(node.orelse)

    def visit_Assign(self, node):
        built = self.built_object(node)
        if built is None:
            return self.generic_visit(node)
        target, lay, fields = built
        self.locals[target] = lay
        keys = [const(k) for k, _ in fields]
        node.value = gast.Dict(keys=keys, values=[self.visit(clone(v)) for _, v in fields])
        return node

    def built_object(self, node):
        """``(name, Layout, ((field, value node), ...))`` for ``name = Cls(...)``, ``Cls``
        a user class whose ``__init__`` only stores its parameters, ``name`` bound once;
        None for any other assignment."""
        call = node.value
        if not (
            isinstance(call, gast.Call)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            return None
        cls = self.parsed.resolve(call.func) if _chain(call.func) else MISSING
        stores = _stores(cls) if object_args.is_user_class(cls) else None
        if stores is None or self.store_counts()[node.targets[0].id] != 1:
            return None
        try:
            bound = inspect.signature(cls).bind(
                *call.args, **{k.arg: k.value for k in call.keywords}
            )
        except TypeError:
            return None
        bound.apply_defaults()
        made = _made_fields(stores, bound.arguments, self.parsed.resolve)
        if made is None:
            return None
        fields, functions = made
        names = tuple((k, None) for k, _ in fields)
        lay = object_args.Layout(cls, True, names, functions, made=True)
        return node.targets[0].id, lay, fields

    def check_unrollable(self, node, seq, lay):
        """Refuse a loop over a list of objects that cannot be unrolled."""
        what = f"a loop over {_chain(seq) or 'a list'}, a list of objects,"
        if not lay.view:
            raise at(
                self.parsed,
                node,
                f"{what} read from a global or closure variable is not differentiated",
                "pass the object holding the list as an argument of the function you "
                "differentiate (grad(loss)(model, x)): its elements' classes are then "
                "checked on every call",
            )
        if contains_jump(node.body, (gast.Break, gast.Continue)):
            raise at(
                self.parsed,
                node,
                f"{what} is unrolled per element, and may not break or continue",
                "use an if around the rest of the body instead",
            )
        target = node.target if isinstance(node.target, gast.Name) else node.target.elts[-1]
        if target.id in _stored_in(node.body):
            raise at(
                self.parsed,
                node,
                f"{what} is unrolled per element, and its loop variable "
                f"{target.id!r} may not be assigned in the loop",
                "assign the result to another name",
            )

    def bind(self, obj, base, runs=None, variant=None):
        """A name for ``obj`` to the compiler, bound to ``runs`` (``obj`` by default) in
        the generated code (one name per ``variant`` of ``runs``)."""
        key = (id(obj), runs is not None and runs is not obj, variant)
        if key not in self.bound:
            n = self.fn.namer.fresh(base)
            self.parsed.bound[n] = obj
            self.fn.namespace[n] = obj if runs is None else runs
            self.bound[key] = n
        return self.bound[key]

    def layout_of(self, node):
        """The ``Layout`` of the object ``node`` denotes (``Items`` for a list of them),
        or None."""
        if isinstance(node, gast.Name) and node.id in self.locals:
            return self.locals[node.id]
        if isinstance(node, gast.Name) and node.id in self.layouts:
            return self.layouts[node.id]
        if isinstance(node, gast.Subscript):
            return _element(self.layout_of(node.value), node.slice)
        if isinstance(node, gast.Attribute) and _root(node) in self.layouts.keys() | self.locals:
            base = self.layout_of(node.value)
            return base.field(node.attr)[1] if isinstance(base, object_args.Layout) else None
        return self.global_layout(node)

    def global_layout(self, node):
        """The layout of a global or closure object (or of a list one holds), or None."""
        root = _root(node)
        if root is None or root in self.parsed.local_names:
            return None
        obj = self.parsed.resolve(node)
        if obj is not MISSING and isinstance(node, gast.Attribute):
            base = self.layout_of(node.value)  # a list of objects that a global object holds
            if isinstance(base, object_args.Layout) and not object_args.is_user_object(obj):
                return base.field(node.attr)[1]
        if obj is MISSING or not object_args.is_user_object(obj):
            return None
        # the code is written for this class: a rebinding to another one is seen
        self.parsed.reads.setdefault(_chain(node) + ".__class__", type(obj))
        return object_args.layout(obj, view=False)

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        for kw in node.keywords:
            kw.value = self.visit(kw.value)
        if self.of_super(node):
            return node
        target = self.callee(node.func)
        if target is None:
            node.func = self.visit(node.func)
            self.hold_made_arguments(node)
            return node
        function, receiver, base = target
        runs = function
        made = self.layout_of(receiver) if receiver is not None else None
        if isinstance(made, object_args.Layout) and made.made:
            # where the call is not differentiated, the method runs on an instance
            receiver_param = next(iter(inspect.signature(function).parameters))
            runs = instances.with_instances(function, ((receiver_param, made.cls, made),))
        node.func = gast.copy_location(name(self.bind(function, base, runs)), node.func)
        if receiver is not None:
            node.args.insert(0, self.visit(receiver))
        return node

    def hold_made_arguments(self, node):
        """A call of a function of the user's given an object made in the function:
        where the call is not differentiated, it runs on an instance holding the
        fields of the dict the object is built as (``instances.with_instances``)."""
        if not _chain(node.func) or not any(
            self.made(a) for a in [*node.args, *(k.value for k in node.keywords)]
        ):
            return
        function = self.parsed.resolve(node.func)
        if not inspect.isfunction(function):
            return
        try:
            bound = inspect.signature(function).bind(
                *node.args, **{k.arg: k.value for k in node.keywords}
            )
        except TypeError:
            return  # (the call's own error, where it runs)
        made = tuple(
            (p, lay.cls, lay)
            for p, arg in bound.arguments.items()
            if isinstance(arg, gast.AST) and (lay := self.made(arg)) is not None
        )
        if made:
            runs = instances.with_instances(function, made)
            held = self.bind(function, function.__name__, runs, tuple(p for p, _, _ in made))
            node.func = gast.copy_location(name(held), node.func)

    def made(self, node):
        """The layout of the object made in the function that ``node`` names, or None."""
        lay = self.locals.get(node.id) if isinstance(node, gast.Name) else None
        return lay if isinstance(lay, object_args.Layout) and lay.made else None

    def callee(self, func):
        """``(function, receiver or None, readable name)`` for a call of a method, a
        callable object or a function an object holds; None for any other call."""
        receiver, attr = (
            (func.value, func.attr) if isinstance(func, gast.Attribute) else (func, None)
        )
        lay = self.layout_of(receiver)
        if not isinstance(lay, object_args.Layout):
            return None
        if attr is None:
            return _method(lay.cls, "__call__", receiver)
        is_field, sub = lay.field(attr)
        if is_field and isinstance(sub, object_args.Layout):  # self.head(h): a held object
            return _method(sub.cls, "__call__", func)
        if is_field:
            return None
        held = lay.function(attr)
        if held is not None and _root(receiver) in self.layouts.keys() | self.locals:
            return held, None, f"{attr}"
        return _method(lay.cls, attr, receiver)

    def visit_Attribute(self, node):
        lay = self.layout_of(node.value)
        if not isinstance(lay, object_args.Layout) or not lay.view:
            return self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load):
            self.check_written(node, lay)
            return self.generic_visit(node)
        base = self.visit(node.value)
        is_field, _ = lay.field(node.attr)
        member = inspect.getattr_static(lay.cls, node.attr, None)
        if is_field and node.attr not in lay.counters:
            new = gast.Subscript(value=base, slice=const(node.attr), ctx=gast.Load())
        elif lay.function(node.attr) is not None:
            new = name(self.bind(lay.function(node.attr), node.attr))
        elif isinstance(member, property) and inspect.isfunction(member.fget):
            getter = self.bind(member.fget, f"{lay.cls.__name__}_{node.attr}")
            new = gast.Call(func=name(getter), args=[base], keywords=[])
        elif lay.made:  # no object behind the dict: a class attribute, never differentiated
            new = _class_attribute(self.parsed, self.bind, node, lay)
        else:  # a class constant, a string, ...: never differentiated
            sg = gast.Call(
                func=name(self.bind(stop_gradient, "stop_gradient")), args=[base], keywords=[]
            )
            new = gast.Attribute(value=sg, attr=node.attr, ctx=gast.Load())
        return gast.copy_location(new, node)

    def visit_AugAssign(self, node):
        """``self.nfev += 1`` on an object passed in: ``self.nfev = self.nfev + 1``, its
        read made as any other (a counter's never differentiated)."""
        target = node.target
        if not isinstance(target, gast.Attribute) or self.layout_of(target.value) is None:
            return self.generic_visit(node)
        read = gast.Attribute(value=clone(target.value), attr=target.attr, ctx=gast.Load())
        value = gast.BinOp(left=gast.copy_location(read, target), op=node.op, right=node.value)
        return self.visit(_assign(target, gast.copy_location(value, node), node))

    def check_written(self, node, lay):
        """An attribute of an object passed in (or made here) written: a float field is
        differentiated, and an object made here is a dict, so either is refused; an
        int field (a counter) or any other attribute is written on the object."""
        is_field, _ = lay.field(node.attr)
        if lay.made or (is_field and node.attr not in lay.counters):
            what = "made in this function" if lay.made else "passed in, a field holding floats"
            raise at(
                self.parsed,
                node,
                f"writing the attribute .{node.attr} of an object {what}, which is differentiated",
                "keep the new value in a local variable and return it; a counter "
                "(a field holding ints) or one that holds no number can be written",
            )


# the nodes nothing in the rewrite changes and that hold no node it may change:
# contexts, operators, constants (the most of a function's nodes, with its names)
_LEAVES = frozenset(
    cls
    for cls in vars(gast).values()
    if isinstance(cls, type) and issubclass(cls, gast.AST) and not cls._fields
) | {gast.Constant}


def _class_attribute(parsed, bind, node, lay):
    if not hasattr(lay.cls, node.attr):
        raise at(
            parsed,
            node,
            f"{lay.cls.__name__} object made in the function has no attribute {node.attr!r} "
            "(only what its __init__ stores, and its class attributes)",
            "make the object outside the function and pass it as an argument",
        )
    cls = name(bind(lay.cls, lay.cls.__name__))
    return gast.Attribute(value=cls, attr=node.attr, ctx=gast.Load())


def _method(cls, attr, receiver):
    member = inspect.getattr_static(cls, attr, None)
    base = f"{cls.__name__}_{attr.strip('_')}"
    if isinstance(member, staticmethod) and inspect.isfunction(member.__func__):
        return member.__func__, None, base
    if inspect.isfunction(member):
        return member, receiver, base
    return None


def _made_fields(stores, arguments, resolve):
    """``(((field, value node), ...), ((name, function), ...))`` of an object made from
    ``arguments`` (parameter -> node or default) by an ``__init__`` storing ``stores``;
    None where a stored default is neither a constant nor a function."""
    fields, functions = [], []
    for attr, is_parameter, value in stores:
        value = arguments[value] if is_parameter else value
        held = resolve(value) if isinstance(value, gast.AST) else value
        if bound_functions.is_function_value(held):
            functions.append((attr, held))
        elif isinstance(value, gast.AST):
            fields.append((attr, value))
        elif value is None or isinstance(value, (bool, int, float, str)):
            fields.append((attr, const(value)))
        else:
            return None
    return tuple(fields), tuple(functions)


def _stores(cls):
    """``((attribute, is a parameter, its name or the constant), ...)``: what
    ``cls.__init__`` stores, where that is all it does (a dataclass without
    ``__post_init__``: its fields; a class without ``__init__``: nothing); None for
    any other class."""
    if dataclasses.is_dataclass(cls):
        if hasattr(cls, "__post_init__"):
            return None
        return tuple((f.name, True, f.name) for f in dataclasses.fields(cls) if f.init)
    init = inspect.getattr_static(cls, "__init__", None)
    if init is object.__init__:
        return ()
    if not inspect.isfunction(init):
        return None
    try:
        tree = parse.run(init).tree
    except Exception:  # noqa: BLE001 - no source: not built as a dict
        return None
    params = [a.id for a in tree.args.args]
    out = [_stored_attribute(s, params) for s in tree.body if not _is_docstring(s)]
    return None if None in out else tuple(out)


def _is_docstring(stmt):
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)


def _stored_attribute(stmt, params):
    """``(attribute, is a parameter, its name or the constant)`` for ``self.attribute =
    parameter`` or ``self.attribute = constant``; None for any other statement."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and params):
        return None
    target, value = stmt.targets[0], stmt.value
    if not (
        isinstance(target, gast.Attribute)
        and isinstance(target.value, gast.Name)
        and target.value.id == params[0]
    ):
        return None
    if isinstance(value, gast.Name) and value.id in params[1:]:
        return target.attr, True, value.id
    if isinstance(value, gast.Constant):
        return target.attr, False, value.value
    return None


def _listed(visited):
    return visited if isinstance(visited, list) else [visited]


def _calls_a_result(call):
    """Whether ``call`` calls the result of a call, or a method of it."""
    func = call.func
    return isinstance(func, gast.Call) or (
        isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call)
    )


def _element(lay, index):
    """The layout of element ``index`` (a node) of what has layout ``lay``."""
    if not isinstance(lay, object_args.Items):
        return None
    if isinstance(index, gast.Constant):
        return lay.element(index.value)[1]
    return lay.common() if lay.kind is not dict else None


def _iterated(node):
    """``(sequence, (index target, element target) or None, order)`` of a ``for``
    over ``seq``, ``enumerate(seq)`` or ``reversed(seq)``; sequence None otherwise."""
    it, target = node.iter, node.target
    call = it.func.id if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) else None
    plain = len(getattr(it, "args", ())) == 1 and not getattr(it, "keywords", ())
    if call == "reversed" and plain and isinstance(target, gast.Name):
        return it.args[0], None, reversed
    pair = isinstance(target, gast.Tuple) and len(target.elts) == 2
    if call == "enumerate" and plain and pair and isinstance(target.elts[1], gast.Name):
        return it.args[0], tuple(target.elts), list
    if call is None and isinstance(target, gast.Name):
        return it, None, list
    return None, None, list


def _assign(target, value, origin):
    node = gast.Assign(targets=[target], value=value, type_comment=None)
    return gast.copy_location(node, origin)


def _renamed(stmts, old, new):
    for s in stmts:
        for n in name_nodes(s):
            if n.id == old:
                n.id = new
    return stmts


def _stored_in(stmts):
    return {n.id for s in stmts for n in name_nodes(s) if isinstance(n.ctx, (gast.Store, gast.Del))}


def _root(node):
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _chain(node):
    """``model.layers`` for an attribute chain; None for anything else."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = _chain(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _stored(tree):
    return {n.id for n in name_nodes(tree) if isinstance(n.ctx, (gast.Store, gast.Del))}


def passed(fn, ctx, arguments, made=()) -> tuple:
    """``(callee parameter, Layout)`` for the arguments of a call that are objects of a
    known class: a parameter of the caller's with a layout, a field of one (through the
    temporary A-normal form made of it), a global object, or one of ``made`` (what
    ``instances.unwrapped`` gives: objects made in the caller, in a gradient read
    again)."""
    layouts = dict(ctx.classes)
    held = {p: lay for p, _, lay in made}
    out = []
    for pname, node in arguments.items():
        lay = _argument_layout(fn, layouts, node) or held.get(pname)
        if lay is not None:
            out.append((pname, lay))
    return tuple(out)


def _argument_layout(fn, layouts, node):
    if not isinstance(node, gast.Name):
        return None
    if node.id in fn.objects:
        return fn.objects[node.id]
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
    """The layout of ``p["f"]``, ``p.f`` or ``p[0]`` for ``p`` with a layout (a
    parameter, a local of ``fn.objects``, or a temporary made of one), or of a global
    attribute chain."""
    if isinstance(value, gast.Subscript):
        return _element(_argument_layout(fn, layouts, value.value), value.slice) or (
            _member(_argument_layout(fn, layouts, value.value), value.slice)
        )
    if not isinstance(value, gast.Attribute):
        return None
    base = _argument_layout(fn, layouts, value.value)
    if isinstance(base, object_args.Layout):
        return base.field(value.attr)[1]
    obj = fn.parsed.resolve(value)
    if obj is not MISSING and object_args.is_user_object(obj):
        return object_args.layout(obj, view=False)
    return None


def _member(lay, key):
    """The layout of the field ``key`` (a string constant) of an object's view."""
    if isinstance(lay, object_args.Layout) and isinstance(key, gast.Constant):
        return lay.field(key.value)[1]
    return None
