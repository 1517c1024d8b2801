"""``export(g, path)``: a generated gradient written as a module of plain Python.

The module defines the generic gradient (``source(g)``: no per-call checks, no shape
variants) and the forward and adjoint functions of the user functions it calls, and
imports only numpy and ``transpile_runtime`` (the runtime the gradient calls, which
never imports the compiler), besides modules the user's own code imports. Its header
names the source file, the function, ``wrt``, the mode and the version of transpile;
each ``# grad of:`` comment ends with the user's file and line.

The generated code reads some names that are not in its text: names the compiler
bound (``np``, ``ops``, ``Tape``, the callees' pairs, the rules' helpers) and the
user's module globals and closure variables (read live by the gradient itself).
Each is written into the module as an import (a module, or a function or class that
its module gives back by name), a definition (a generated function; a plain user
function called where nothing is differentiated, its source copied, and what it
reads resolved in turn), or a constant (a number, a string, ``None``, a tuple of
them; its value at export time). Anything else (an array held in a global, an
object) is refused with an ``ExportError`` naming it and saying what to do.
"""

import ast
import builtins
import dataclasses
import importlib
import importlib.metadata
import inspect
import os
import symtable
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

import transpile_runtime
from transpile import bundle, pipeline
from transpile.core import emit, recursion
from transpile.core.ir import COMMENT
from transpile.core.nodes import all_stmts, function_def, name_nodes

_GRAD_OF = COMMENT + "grad of: "
_CONSTANTS = (int, float, complex, bool, str, bytes, type(None))
# the compiler's modules: never imported by an exported gradient
_COMPILER = "transpile"
# where a function or class the generated code names may be imported from
_LIBRARIES = ("transpile_runtime", "numpy", "scipy", "math")


class ExportError(ValueError):
    """A gradient that cannot be written as a module: the message names what it reads
    that cannot be written, and says what to do."""


def export(
    g: Callable[..., Any],
    path: str | os.PathLike | None = None,
    standalone: bool = False,
    args: tuple | None = None,
) -> str:
    """Write the gradient ``g`` (made by ``grad``, ``value_and_grad`` or ``vjp``) as a
    module to ``path`` (if given) and return the module's text. ``standalone=True``:
    the runtime helpers it calls are copied in, so that it needs numpy alone. ``args``:
    example arguments; the module holds the shape variant for them instead of the
    generic gradient (what ``source(g, *args)`` shows)."""
    generated = _generated(g)
    module = _Module(standalone)
    variant = None if args is None else _variant(generated, args)
    top = module.add_generated(generated, variant)
    recipe = generated.recipe
    func = recipe.func()
    params = inspect.signature(func).parameters
    wrt = ", ".join(list(params)[i] for i in recipe.ctx.wrt)
    filename = inspect.getsourcefile(func) or "<unknown>"
    text = module.text(
        f'"""The {recipe.ctx.mode} of {func.__qualname__} with respect to {wrt}, '
        f"exported by transpile {_version()}.\n\n"
        f"source: {filename}\n"
        f"function: {func.__qualname__}\n"
        f"wrt: {wrt}\n"
        f"mode: {recipe.ctx.mode}\n"
        + ("standalone: the runtime helpers it calls are copied in\n" if standalone else "")
        + "\n"
        + _what_runs(top, func, variant)
        + "`# grad of:` comments end with the line of the source they differentiate.\n"
        + '"""',
        top,
    )
    if path is not None:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    return text


def _variant(generated, args):
    """The shape variant (``ir.Variant``, through ``compact``) of the gradient for
    ``args``; refused where none is made or where it is fused."""
    made, why = pipeline.variant(generated.function, args, until="compact")
    if made is None:
        raise ExportError(f"no shape variant is made {why}; export without args")
    if made.fused:
        raise ExportError("a fused variant (fuse=True) reads numexpr's blocks: export without args")
    made.signature = ", ".join(_described(a) for a in args)
    return made


def _described(value):
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{type(value).__name__} {tuple(shape)} {value.dtype}"
    return (
        f"{type(value).__name__} {value!r}"
        if isinstance(value, int | bool)
        else type(value).__name__
    )


def _what_runs(top, func, variant):
    if variant is None:
        return (
            f"{top}{inspect.signature(func)} is the generic gradient: it runs for any shapes,\n"
            "without the checks and shape variants of the live one.\n"
        )
    return (
        f"{top}{inspect.signature(func)} is the shape variant for arguments\n"
        f"({variant.signature}): call it with those types, shapes, dtypes\n"
        "and integer values only, which it does not check.\n"
    )


def _generated(g):
    deferred = getattr(g, "__transpile_deferred__", None)
    if deferred is not None:
        raise ExportError("this gradient is made per call (it waits for the functions passed)")
    dispatcher = getattr(g, "__transpile_dispatch__", None)
    if dispatcher is not None:
        g = dispatcher.current().function
    generated = getattr(g, "__transpile_generated__", None)
    if generated is None or generated.recipe is None:
        raise ExportError(f"{g!r} is not a gradient made by grad, value_and_grad or vjp")
    if generated.recipe.ctx.mode not in ("grad", "value_and_grad", "vjp"):
        raise ExportError(f"export writes reverse-mode gradients, not {generated.recipe.ctx.mode}")
    return generated


def _version():
    try:
        return importlib.metadata.version("transpile")
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


class _Module:
    """The names of the module being written and what each stands for."""

    def __init__(self, standalone=False):
        self.bundle = bundle.Bundle(self._claim, self._bind) if standalone else None
        self.imports = {}  # name -> import statement
        self.constants = {}  # name -> source of its value
        self.definitions = []  # source of each function, callees first
        self.by_object = {}  # id(generated function) -> its name in the module
        self.objects = {}  # name -> the object it denotes (one per name)

    # -- generated functions --
    def add_generated(self, generated, variant=None):
        """Define ``generated``'s functions (its callees' first); return the name of
        its first function (``variant``: the body the gradient has instead, a shape
        variant's)."""
        fn = pipeline.remake(generated.recipe, until="inline")
        outputs = fn.outputs
        if variant is not None:
            outputs = [dataclasses.replace(outputs[-1], body=variant.body)]
        made = [generated.function, generated.extra.function if generated.extra else None]
        if generated.recipe.ctx.mode != "split":
            made = [generated.function]
        names = []
        for out, obj in zip(outputs, made):
            names.append(self._claim_generated(out.name, obj, generated))
        for callee in generated.callees:
            if isinstance(callee, recursion.StandIn) or id(callee.function) in self.by_object:
                continue
            self.add_generated(callee)
        for out, name in zip(outputs, names):
            self.definitions.append(self._function_source(fn, out, name, generated))
        return names[0]

    def _claim_generated(self, base, obj, generated):
        name = base
        n = 1
        while name in self.objects:
            n += 1
            name = f"{base}_{n}"
        self.objects[name] = obj
        self.by_object[id(obj)] = name
        if generated.recipe.ctx.mode != "split" and getattr(obj, "__transpile_dispatch__", None):
            generic = obj.__transpile_dispatch__.generic
            self.by_object[id(generic)] = name
        return name

    def _function_source(self, fn, out, name, generated):
        offset = fn.parsed.line_offset
        where = os.path.basename(fn.parsed.filename)
        for s in all_stmts(out.body):
            if (
                isinstance(s, gast.Expr)
                and isinstance(s.value, gast.Constant)
                and isinstance(s.value.value, str)
                and s.value.value.startswith(_GRAD_OF)
                and getattr(s, "lineno", None) is not None
            ):
                s.value.value += f"  ({where}:{s.lineno + offset})"
        renames = {}
        bound = emit.bound_names(fn)
        tree = function_def(name, out.args, out.body)
        attributes = _attributes_read(tree, gast)
        for free in _free_names(emit.to_source(tree)):
            read = attributes.get(free, ())
            if free in bound and free not in fn.parsed.cells:
                renames[free] = self.resolve(free, bound[free], fn.parsed.name, generated, read)
            else:
                renames[free] = self.resolve_user(free, fn.parsed, fn.parsed.name, read)
        for node in name_nodes(tree):
            new = renames.get(node.id)
            if new is not None and new != node.id:
                node.id = new
        return emit.to_source(tree)

    # -- names --
    def resolve(self, name, obj, where, generated=None, attributes=()):
        """The module's name for ``obj``, read as ``name`` in ``where`` (``attributes``:
        those read of it); refused if it cannot be written."""
        if isinstance(obj, recursion.Placeholder):
            obj = self._placeholder(obj, generated)
        if id(obj) in self.by_object:
            return self.by_object[id(obj)]
        made = getattr(obj, "__transpile_generated__", None)
        if made is not None and getattr(made, "recipe", None) is not None:
            self.add_generated(made)  # a gradient the user's code calls: exported too
            return self.by_object[id(obj)]
        if self.bundle is not None and _from_runtime(obj):
            return self._copy_runtime(name, obj, attributes)
        found = _importable(obj)
        if found is not None:
            return self._bind(name, obj, found)
        if isinstance(obj, _CONSTANTS) or _constant_tuple(obj):
            return self._bind(name, obj, None, constant=repr(obj))
        if inspect.isfunction(obj) and not (obj.__module__ or _COMPILER).startswith(_COMPILER):
            return self._copy_function(name, obj)
        raise ExportError(
            f"{where} reads {name}, {_describe(obj)}, which an exported module cannot "
            "hold: pass it to the function as an argument (or make it a number, a module "
            "or a function defined with def), then export again"
        )

    def _placeholder(self, obj, generated):
        gen = obj.frame.generated
        if gen is None:  # the function being written calls itself
            gen = generated
        return gen.function if obj.forward else gen.extra.function

    def resolve_user(self, name, parsed, where, attributes=()):
        """A name the user's code reads: a closure variable or module global."""
        if name in parsed.cells:
            try:
                value = parsed.cells[name].cell_contents
            except ValueError:
                raise ExportError(f"{where} reads {name}, a closure variable not yet bound")
            return self.resolve(name, value, where, attributes=attributes)
        if name in parsed.namespace:
            value = parsed.namespace[name]
            if value is transpile_package():  # transpile.stop_gradient: the runtime's
                value = transpile_runtime
            return self.resolve(name, value, where, attributes=attributes)
        if hasattr(builtins, name):
            return name
        raise ExportError(f"{where} reads {name}, which is not defined")

    def _claim(self, name, obj):
        """A name for ``obj``, defined in the module: ``name``, or a variant if taken."""
        base, n = name, 1
        while name in self.objects and self.objects[name] is not obj:
            n += 1
            name = f"{base}_{n}"
        self.objects[name] = obj
        return name

    def _copy_runtime(self, name, obj, attributes):
        """A runtime module (the attributes read of it) or definition, copied in."""
        try:
            if isinstance(obj, types.ModuleType):
                return self.bundle.namespace(obj, attributes, name)
            home = sys.modules[obj.__module__]
            return self.bundle.copy(home, obj.__name__)
        except (ValueError, OSError, TypeError) as exc:
            raise ExportError(f"standalone: {exc}; export without standalone=True") from None

    def _bind(self, name, obj, found, constant=None):
        """Give ``obj`` the module name ``name`` (or a variant of it, if taken)."""
        base, n = name, 1
        while name in self.objects and self.objects[name] is not obj:
            if constant is not None and self.constants.get(name) == constant:
                return name
            n += 1
            name = f"{base}_{n}"
        if name in self.objects:
            return name
        self.objects[name] = obj
        if constant is not None:
            self.constants[name] = constant
        else:
            module, attr = found
            if attr is None and "." in module:
                module, attr = module.rsplit(".", 1)  # from transpile_runtime import ops
            if attr is None:
                self.imports[name] = (
                    f"import {module}" if module == name else f"import {module} as {name}"
                )
            else:
                self.imports[name] = (
                    f"from {module} import {attr}"
                    if attr == name
                    else f"from {module} import {attr} as {name}"
                )
        return name

    def _copy_function(self, name, func):
        """Copy a user function called where nothing is differentiated."""
        if name in self.objects and self.objects[name] is func:
            return name
        try:
            source = textwrap.dedent(inspect.getsource(func))
        except (OSError, TypeError):
            raise ExportError(f"{func.__qualname__}: its source is not available") from None
        if source.lstrip().startswith("@") or func.__name__ == "<lambda>":
            raise ExportError(
                f"{func.__qualname__} is called by the gradient and is decorated or a lambda: "
                "an exported module cannot copy it"
            )
        self.objects[name] = func
        self.by_object[id(func)] = name
        tree = ast.parse(source)
        parsed = _FuncNames(func)
        renamed = name != func.__name__
        attributes = _attributes_read(tree, ast)
        for free in _free_names(source):
            read = attributes.get(free, ())
            new = self.resolve_user(free, parsed, func.__qualname__, read)
            if new != free:
                renamed = True
                for node in ast.walk(tree):
                    if isinstance(node, ast.Name) and node.id == free:
                        node.id = new
        tree.body[0].name = name
        copied = ast.unparse(tree) + "\n" if renamed else source
        where = (
            f"{os.path.basename(inspect.getsourcefile(func) or '?')}:{func.__code__.co_firstlineno}"
        )
        self.definitions.append(f"# {func.__qualname__}, copied from {where}\n" + copied)
        return name

    def text(self, header, top):
        lines = [header, ""]
        imports = sorted(self.imports.values(), key=lambda s: (not s.startswith("import"), s))
        if self.bundle is not None and self.bundle.statements:
            namespace = self._bind("types", types, ("types", None))
            imports = sorted(self.imports.values(), key=lambda s: (not s.startswith("import"), s))
            lines += imports
            lines += ["", "", "# the runtime helpers the gradient calls, copied (standalone)", ""]
            lines.append(self.bundle.text(f"{namespace}.SimpleNamespace"))
        else:
            lines += imports
        if self.constants:
            lines.append("")
            lines += [f"{n} = {v}  # its value at export" for n, v in self.constants.items()]
        for d in self.definitions:
            lines += ["", "", d.rstrip("\n")]
        lines += ["", "", f"__all__ = [{top!r}]", ""]
        return "\n".join(lines)


class _FuncNames:
    """The closure cells and globals of a plain function, as ``parse.Parsed`` has them."""

    def __init__(self, func):
        self.cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
        self.namespace = func.__globals__


def transpile_package():
    return importlib.import_module(_COMPILER)


def _importable(obj):
    """``(module, attribute)`` that imports ``obj`` (attribute None: ``obj`` is the
    module), for objects outside the compiler; None otherwise."""
    if isinstance(obj, types.ModuleType):
        return None if _is_compiler(obj.__name__) else (obj.__name__, None)
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(obj, np.ufunc):
        module, qualname = "numpy", obj.__name__
    if not module or not qualname or "." in qualname or "<" in qualname:
        return None
    if _is_compiler(module) or module.split(".")[0] not in _LIBRARIES:
        return None
    if _imported(module, qualname) is obj:
        return module, qualname
    if module.startswith("numpy") and getattr(np, qualname, None) is obj:
        return "numpy", qualname  # np.tanh, which says it is numpy.core's
    return None


def _is_compiler(module):
    return module == _COMPILER or module.startswith(_COMPILER + ".") or module == "__main__"


def _imported(module, attribute):
    try:
        return getattr(importlib.import_module(module), attribute, None)
    except ImportError:
        return None


def _from_runtime(obj):
    if isinstance(obj, types.ModuleType):
        return bundle.is_runtime(obj.__name__)
    return bundle.is_runtime(getattr(obj, "__module__", None) or "") and hasattr(obj, "__name__")


def _attributes_read(tree, syntax):
    """``{name: attributes read of it}`` in ``tree`` (a gast or an ast tree)."""
    found = {}
    for node in syntax.walk(tree):
        if isinstance(node, syntax.Attribute) and isinstance(node.value, syntax.Name):
            found.setdefault(node.value.id, set()).add(node.attr)
    return found


def _constant_tuple(obj):
    return isinstance(obj, tuple) and all(
        isinstance(x, _CONSTANTS) or _constant_tuple(x) for x in obj
    )


def _describe(obj):
    if isinstance(obj, np.ndarray):
        return f"an array of shape {obj.shape}"
    return f"an object of type {type(obj).__name__}"


def _free_names(source):
    """The names ``source`` (one ``def``) reads that it does not bind: its globals."""
    table = symtable.symtable(source, "<export>", "exec")
    found = set()

    def walk(t):
        for sym in t.get_symbols():
            if sym.is_global() and sym.is_referenced():
                found.add(sym.get_name())
        for child in t.get_children():
            walk(child)

    for child in table.get_children():
        walk(child)
    return sorted(found)
