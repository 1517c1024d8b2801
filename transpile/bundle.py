"""The runtime helpers an exported gradient calls, copied into it (``export(g,
standalone=True)``): a module that needs numpy alone.

``Bundle.namespace(module, attributes)`` copies what the generated code reads of a
runtime module (``ops.unbroadcast``, ``ops.unreduce``, ...), and ``Bundle.copy``
one function, class or module-level value, each with what it reads in turn: other
runtime definitions (copied, once each), standard-library and numpy names (imported),
builtins (left as they are). The ``@helper(...)`` declarations are dropped (they
tell the compiler what it may assume, and change nothing at run time). A runtime
module read as a whole (``ops``, ``backend``) becomes a ``types.SimpleNamespace`` of
the attributes read from it, so the copied code reads as the original.
"""

import ast
import builtins
import functools
import inspect
import symtable
import sys
import textwrap
import types

_RUNTIME = "transpile_runtime"
_DECLARATIONS = ("helper",)  # decorators that only declare: dropped from copies


class Bundle:
    """Runtime definitions copied into one module."""

    def __init__(self, claim, bind_import):
        self.claim = claim  # (wanted name, object) -> the name it gets in the module
        self.bind_import = bind_import  # (name, object, (module, attribute)) -> name
        self.copied = {}  # (module name, name) -> its name in the module
        self.statements = []  # source of each definition, what it reads first
        self.namespaces = {}  # name in the module -> {attribute: name in the module}

    def namespace(self, module, attributes, wanted):
        """The name of a namespace holding ``attributes`` of the runtime ``module``."""
        key = (module.__name__, "<module>")
        if key not in self.copied:
            self.copied[key] = self.claim(wanted, module)
            self.namespaces[self.copied[key]] = {}
        name = self.copied[key]
        for attribute in sorted(attributes):
            if attribute not in self.namespaces[name]:
                self.namespaces[name][attribute] = self.copy(module, attribute)
        return name

    def copy(self, module, name):
        """The module's name for ``module.name``, copied with what it reads."""
        value = module.__dict__[name]
        home, home_name = _home(value, name)
        if home is not None and home is not module:
            return self.copy(home, home_name)  # imported there: copied from its home
        key = (module.__name__, name)
        if key in self.copied:
            return self.copied[key]
        new = self.claim(name, value)
        self.copied[key] = new
        source, free_names = _read(module.__name__, name)
        tree = ast.parse(source)
        renames = {name: new}
        for free in free_names:
            if free != name:
                renames[free] = self._resolve(module, free, tree)
        if any(k != v for k, v in renames.items()):
            _rename(tree, renames)
            source = ast.unparse(tree)  # printed again: comments and layout are lost
        self.statements.append(source.rstrip("\n"))
        return new

    def _resolve(self, module, free, tree):
        if free not in module.__dict__:
            if hasattr(builtins, free):
                return free
            raise ValueError(f"{module.__name__} reads {free}, which it does not define")
        value = module.__dict__[free]
        if isinstance(value, types.ModuleType):
            if is_runtime(value.__name__):
                return self.namespace(value, _attributes(tree, free), free)
            return self.bind_import(free, value, (value.__name__, None))
        found = importable(value)
        if found is not None:
            return self.bind_import(free, value, found)
        return self.copy(module, free)

    def text(self, namespace_type):
        """The copied definitions, then the namespaces (``namespace_type``: the name
        ``types.SimpleNamespace`` has in the module)."""
        lines = list(self.statements)
        for name, members in self.namespaces.items():
            fields = ", ".join(f"{a}={n}" for a, n in members.items())
            lines.append(f"{name} = {namespace_type}({fields})")
        return "\n\n\n".join(lines)


def _home(value, name):
    """``(module, name)`` of the runtime module that defines ``value`` (imported where it
    is read: ``ops`` re-exports its families' helpers), or ``(None, None)``. A function
    or class knows its module; a marker such as ``ops.UNSET`` is defined, as ``name``,
    in the module of its class."""
    if inspect.isfunction(value) or inspect.isclass(value):
        home = sys.modules.get(value.__module__ or "")
        name = value.__name__
    else:
        home = sys.modules.get(getattr(type(value), "__module__", None) or "")
        if home is not None and home.__dict__.get(name) is not value:
            home = None
    if home is None or not is_runtime(home.__name__):
        return None, None
    return home, name


def is_runtime(module_name):
    return module_name == _RUNTIME or module_name.startswith(_RUNTIME + ".")


def _stdlib():
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return names
    return frozenset(("itertools", "math", "numbers", "collections", "functools", "operator"))


def importable(value):
    """``(module, attribute)`` importing a standard-library or numpy object, or None."""
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    top = module.split(".")[0]
    if not name or (top not in _stdlib() and top != "numpy"):
        return None
    try:
        if getattr(sys.modules[module], name) is value:
            return module, name
    except (KeyError, AttributeError):
        pass
    return None


@functools.cache
def _read(module_name, name):
    """``(source, free names)`` of the runtime's definition of ``name`` (the runtime
    does not change while the process runs: read once)."""
    module = sys.modules[module_name]
    source = _definition(module, name, module.__dict__[name])
    return source, tuple(_free_names(ast.parse(source)))


def _definition(module, name, value):
    """The source defining ``module.name``: its ``def`` or ``class`` (declarations
    dropped), or the module's top-level statements that assign it."""
    if (inspect.isfunction(value) or inspect.isclass(value)) and value.__name__ == name:
        try:
            source = textwrap.dedent(inspect.getsource(value))
        except (OSError, TypeError):  # a class made by a call (a namedtuple): its assignment
            source = None
        if source is not None and source.lstrip().startswith(("def ", "class ", "@")):
            lines = source.splitlines(True)
            for d in ast.parse(source).body[0].decorator_list:
                if _declares(d):  # its lines, the "@" included
                    lines[d.lineno - 1 : d.end_lineno] = [""] * (d.end_lineno - d.lineno + 1)
            return "".join(lines)
    found = [
        ast.get_source_segment(_module_source(module), s)
        for s in ast.parse(_module_source(module)).body
        if name in _assigned(s)
    ]
    if not found:
        raise ValueError(f"cannot copy {module.__name__}.{name}")
    return "\n".join(found)


@functools.cache
def _module_source(module):
    return inspect.getsource(module)


def _declares(decorator):
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(func, ast.Name) and func.id in _DECLARATIONS


def _assigned(stmt):
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _free_names(tree):
    """The global names ``tree`` (one definition) reads, in order of first use."""
    table = symtable.symtable(ast.unparse(tree), "<bundle>", "exec")
    found = [
        sym.get_name()
        for sym in table.get_symbols()
        if sym.is_referenced() and not sym.is_assigned() and not sym.is_imported()
    ]

    def walk(t):
        for sym in t.get_symbols():
            if sym.is_global() and sym.is_referenced():
                found.append(sym.get_name())
        for child in t.get_children():
            walk(child)

    for child in table.get_children():
        walk(child)
    return list(dict.fromkeys(found))


def _attributes(tree, name):
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name
    }


def _rename(tree, renames):
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in renames:
            node.id = renames[node.id]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in renames:
            node.name = renames[node.name]
