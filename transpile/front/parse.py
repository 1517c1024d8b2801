"""Source to gast tree, plus the namespace that resolves the function's free names.

``run(func)`` returns a ``Parsed`` bundle: the function's ``FunctionDef`` (decorators
stripped), where it came from, and a resolver that maps a ``Name`` or an attribute
chain (``np.linalg.norm``) to the object it denotes, through closure cells, globals
and builtins. Local variables never resolve. Every free name the resolver is asked
about is remembered with what it denoted (``reads``): the generated code relies on
those objects, and its entry re-checks them on each call.

The source read is the source of what runs: a function replaced by a decorator
(``functools.wraps``) or whose file changed after it was defined is refused, since
differentiating the text would differentiate another function.
"""

import ast
import builtins
import dis
import inspect
import linecache
import math
import operator
import os
import textwrap
import types
from dataclasses import dataclass, field

import gast

from transpile.core import gast_tree, stack_room
from transpile.core.errors import TranspileError, UndefinedName
from transpile.core.ir import MISSING
from transpile.core.nodes import descendants, function_def, name_nodes
from transpile.front import lambda_source, varargs
from transpile_runtime import instances


@dataclass(frozen=True)
class Parsed:
    name: str
    tree: gast.FunctionDef
    filename: str
    line_offset: int
    namespace: dict = field(repr=False)  # the module globals the function reads
    cells: dict = field(repr=False)  # closure variable -> its cell
    local_names: frozenset = frozenset()
    reads: dict = field(default_factory=dict, repr=False)  # free name -> what it denoted
    bound: dict = field(default_factory=dict)  # parameter -> the function it holds
    contents: dict = field(default_factory=dict)  # chain -> the elements a loop unrolled

    @property
    def free_values(self) -> dict:
        """The current values of the function's closure variables."""
        values = {}
        for n, cell in self.cells.items():
            try:
                values[n] = cell.cell_contents
            except ValueError:  # an empty cell: the variable is not bound yet
                pass
        return values

    def lookup(self, name: str):
        """The object a free name denotes (or a parameter, the function it is known to
        hold: ``bound``), or MISSING for locals and unknown names."""
        if name in self.bound:
            return self.bound[name]
        if name in self.local_names:
            return MISSING
        found = _lookup(name, self.cells, self.namespace)
        self.reads.setdefault(name, found)
        return found

    def resolve(self, node):
        """Resolve a Name or an Attribute chain of names to its object, or MISSING."""
        if isinstance(node, gast.Name):
            return self.lookup(node.id)
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            if base is MISSING:
                return MISSING
            found = getattr(base, node.attr, MISSING)
            chain = _chain(node)
            if chain is not None:
                self.reads.setdefault(chain, found)
            return found
        return MISSING


def _chain(node):
    """``"a.b.c"`` for an attribute chain of names, else None."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _lookup(name, cells, namespace):
    if name in cells:
        try:
            return cells[name].cell_contents
        except ValueError:
            return MISSING
    if name in namespace:
        return namespace[name]
    return getattr(builtins, name, MISSING)


def _source_error(func, why, hint=None):
    code = getattr(func, "__code__", None)
    filename = code.co_filename if code else "<unknown>"
    lineno = code.co_firstlineno if code else 0
    name = getattr(func, "__qualname__", repr(func))
    return TranspileError(
        f"cannot read the source of {name}: {why}",
        filename=filename,
        lineno=lineno,
        hint=hint
        or "define the function with `def` in a .py file or a notebook cell; "
        "functions built by exec/eval and builtins have no usable source",
    )


def assigned_names(tree) -> set:
    """Every name the function binds: parameters, assignment and loop targets."""
    names = set()
    for node in descendants(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
        elif isinstance(node, gast.FunctionDef) and node is not tree:
            names.add(node.name)
    return names


def stage(fn, ctx):
    """Read the source of ``ctx.func``."""
    fn.parsed = run(ctx.func)
    fn.parsed = varargs.spread(fn.parsed, ctx.varargs)
    fn.parsed.bound.update(ctx.functions)
    refuse_undefined(fn.parsed)
    return fn


def refuse_undefined(parsed) -> None:
    """Raise ``UndefinedName`` for the first free name the body reads that denotes
    nothing: the generated code must not give it a meaning of its own (its ``np`` is
    numpy), nor differentiate around it as if it were a constant."""
    local, lookup = parsed.local_names, parsed.lookup
    for stmt in parsed.tree.body:
        for node in name_nodes(stmt):
            if node.id in local or not isinstance(node.ctx, gast.Load):
                continue
            if lookup(node.id) is MISSING and node not in _annotations(stmt):
                raise UndefinedName(
                    node.id,
                    filename=parsed.filename,
                    lineno=getattr(node, "lineno", 1) + parsed.line_offset,
                    function=parsed.name,
                )


def _annotations(stmt) -> list:
    """The names inside annotations in ``stmt``: a local's is never evaluated."""
    found = []
    for node in descendants(stmt):
        for value in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(value, gast.AST):
                found.extend(name_nodes(value))
    return found


def run(func) -> Parsed:
    """Parse ``func`` and bundle what later stages need to resolve its names."""
    try:
        with stack_room.room():  # gast converts a deeply nested expression recursively
            return _run(func)
    except RecursionError:
        raise stack_room.refusal(func) from None


def _run(func):
    func, _ = instances.unwrapped(func)  # a function given objects made in its caller
    if not inspect.isfunction(func):
        raise _source_error(func, "it is not a Python function")
    if func.__code__.co_name == "<lambda>":
        return _read_lambda(func)
    _refuse_wrapped(func)
    spanned = _spanned_lines(func)
    if spanned is not None:
        try:
            return _read(func, spanned, func.__code__.co_firstlineno)
        except TranspileError:
            pass  # the lines the code spans are not the whole def: ask inspect
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        if os.path.isfile(func.__code__.co_filename):  # the file is there, the def is not
            raise _changed_error(func, "the file has no such function there now") from None
        raise _source_error(func, str(exc)) from None
    return _read(func, lines, first)


def _spanned_lines(func):
    """The lines of ``func``'s file from its first line (or decorator) to the last one
    its code, nested code included, has a position on; None where the file's lines are
    not known. ``inspect.getsourcelines`` finds the end by tokenizing, which costs a
    small gradient a tenth of its first call."""
    code = func.__code__
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename, func.__globals__)
    last = _last_line(code)
    if not lines or not code.co_firstlineno <= last <= len(lines):
        return None
    spanned = lines[code.co_firstlineno - 1 : last]
    indent = _indent(spanned[0])
    for line in lines[last:]:  # the next code line must not belong to the def
        if line.strip() and not line.lstrip().startswith("#"):
            return spanned if _indent(line) <= indent else None
    return spanned


def _indent(line):
    return len(line) - len(line.lstrip())


def _last_line(code):
    # the end line of each instruction (None where it has none; 0 changes no maximum)
    ends = [max(filter(None, map(operator.itemgetter(1), code.co_positions())), default=0)]
    ends += [_last_line(c) for c in code.co_consts if inspect.iscode(c)]
    return max(ends)


def _read(func, lines, first):
    """Parse the source ``lines`` of ``func`` (starting at line ``first``) and check that
    they compile to the code that runs."""
    source = textwrap.dedent("".join(lines))
    try:
        module = gast_tree.parse(source)
    except SyntaxError as exc:
        raise _changed_error(func, f"its source no longer parses ({exc.msg})") from None
    tree = module.body[0] if module.body else None
    if not isinstance(tree, (gast.FunctionDef, gast.AsyncFunctionDef)) and os.path.isfile(
        func.__code__.co_filename
    ):  # the file changed: its lines there are no longer this def
        raise _changed_error(func, "the file has no `def` there now")
    if isinstance(tree, gast.AsyncFunctionDef):
        raise TranspileError(
            "async def is not supported",
            filename=func.__code__.co_filename,
            lineno=first,
            hint="differentiate a plain synchronous function",
        )
    if not isinstance(tree, gast.FunctionDef):
        raise _source_error(func, "the source is not a plain `def`")
    _refuse_changed(func, source, tree)
    tree.decorator_list = []
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    return Parsed(
        name=func.__name__,
        tree=tree,
        filename=func.__code__.co_filename,
        line_offset=first - 1,
        namespace=func.__globals__,
        cells=cells,
        local_names=frozenset(assigned_names(tree)),
    )


def _read_lambda(func):
    """A lambda, read as ``def name(params): return body`` (named after the variable
    it is assigned to, where it is)."""
    found = lambda_source.find(func, _same_code)
    if found is None:
        raise _source_error(
            func,
            "no lambda in its file compiles to the code that runs",
            "define the function with `def`, or re-run the cell or module that defines the lambda",
        )
    node, fname = found
    ret = gast.copy_location(gast.Return(value=node.body), node.body)
    tree = gast.copy_location(function_def(fname, node.args, [ret]), node)
    return Parsed(
        name=fname,
        tree=tree,
        filename=func.__code__.co_filename,
        line_offset=0,
        namespace=func.__globals__,
        cells=dict(zip(func.__code__.co_freevars, func.__closure__ or ())),
        local_names=frozenset(assigned_names(tree)),
    )


def _refuse_wrapped(func):
    """A ``functools.wraps`` wrapper reports the wrapped function's source: refuse."""
    inner = inspect.unwrap(func)
    if inner is func:
        return
    code = func.__code__
    raise TranspileError(
        f"{inner.__qualname__} is wrapped by a decorator: what runs is "
        f"{func.__code__.co_name} ({code.co_filename}:{code.co_firstlineno}), "
        f"not the source of {inner.__qualname__}, and differentiating that source would "
        "miss what the wrapper does",
        filename=inner.__code__.co_filename,
        lineno=inner.__code__.co_firstlineno,
        hint=f"differentiate the undecorated function ({inner.__name__}.__wrapped__ is it), "
        "or write what the decorator adds into a function that calls it",
    )


def _changed_error(func, why):
    code = func.__code__
    return TranspileError(
        f"the source of {func.__qualname__} in {code.co_filename} is not the code that runs: {why}",
        filename=code.co_filename,
        lineno=code.co_firstlineno,
        hint="the file changed after the function was defined: re-import the module "
        "(importlib.reload) or re-run the cell that defines it, then call grad again",
    )


def _refuse_changed(func, source, tree):
    """Compile the source read and compare it with the code object that runs."""
    code = func.__code__
    if tree.name != code.co_name:
        raise _changed_error(func, f"the file now defines {tree.name!r} there")
    freevars = code.co_freevars
    text = source
    if freevars:  # compile inside a function that owns the closure variables
        inner = textwrap.indent(source, "    ")
        text = f"def _outer_():\n    {' = '.join(freevars)} = None\n{inner}"
    imports = _imports_of(func)
    # at the lines it runs from: Python 3.13 keeps a class's first line among the
    # constants of its body (__firstlineno__); blank lines put it there, where they can,
    # without a walk of the tree
    shift = code.co_firstlineno - imports.count("\n") - (3 if freevars else 1)
    text = imports + "\n" * max(shift, 0) + text
    try:
        module = text
        if shift < 0:
            module = ast.parse(text, code.co_filename)
            defined = module.body[-1].body[-1] if freevars else module.body[-1]
            ast.increment_lineno(defined, shift)
        compiled = compile(
            module, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True
        )
    except SyntaxError as exc:
        raise _changed_error(func, f"its source no longer compiles ({exc.msg})") from None
    found = _find_code(compiled, code.co_name)
    if found is None or _same_code(found, code):
        return
    if any(n.startswith("@py") for n in code.co_varnames + code.co_names):
        return  # pytest rewrote the asserts of this module: the bytecode differs by design
    raise _changed_error(func, "its text compiles to different code")


def _imports_of(func):
    """Lines that bind, as imports, the globals of ``func`` that hold modules: the compiler
    spells a method call on a name a module imported (``np.sum(x)``) as an attribute load,
    and on any other name as a method load, so without them the text compiled alone
    differs from the code that runs and is compared instruction by instruction (slow).
    The lines are only compiled, never run; a wrong guess only costs that comparison."""
    found, todo = set(), [func.__code__]
    while todo:
        code = todo.pop()
        found.update(code.co_names)
        todo.extend(c for c in code.co_consts if inspect.iscode(c))
    modules = sorted(n for n in found if isinstance(func.__globals__.get(n), types.ModuleType))
    return "".join(f"import _ as {n}\n" for n in modules)


def _future_flags():
    import __future__

    flags = 0
    for feature in __future__.all_feature_names:
        flags |= getattr(__future__, feature).compiler_flag
    return flags


_FUTURE_FLAGS = _future_flags()


def _find_code(code, name):
    for const in code.co_consts:
        if inspect.iscode(const):
            if const.co_name == name:
                return const
            found = _find_code(const, name)
            if found is not None:
                return found
    return None


def _same_code(a, b):
    """The same instructions, names and constants; line numbers and columns may differ,
    and so may the spelling of a method call (``np.sum(x)`` compiles differently where
    ``np`` is known to be imported)."""
    fields = (
        "co_names",
        "co_varnames",
        "co_freevars",
        "co_cellvars",
        "co_argcount",
        "co_kwonlyargcount",
        "co_posonlyargcount",
    )
    if any(getattr(a, f) != getattr(b, f) for f in fields):
        return False
    # equal bytes (the usual case) need no disassembly
    if a.co_code != b.co_code and _instructions(a) != _instructions(b):
        return False
    return _same_constants(a, b)


def _same_constants(a, b):
    """The same constants; a docstring may differ in the indentation of its lines."""
    if len(a.co_consts) != len(b.co_consts):
        return False
    for i, (x, y) in enumerate(zip(a.co_consts, b.co_consts)):
        if inspect.iscode(x) and inspect.iscode(y):
            if not _same_code(x, y):
                return False
        elif i == 0 and _documented(a) and _documented(b) and _same_docstring(x, y):
            continue
        elif type(x) is not type(y) or x != y and not (_is_nan(x) and _is_nan(y)):
            return False
    return True


def _documented(code):
    """Whether the first constant of ``code`` may be its docstring (from Python 3.14 a
    flag says so; before, a function without one has None there)."""
    flag = getattr(inspect, "CO_HAS_DOCSTRING", None)
    return flag is None or bool(code.co_flags & flag)


def _same_docstring(x, y):
    """Two docstrings (the first constant) that differ only in the indentation of their
    lines: the source of a nested function or method is read dedented, which dedents
    the lines of its docstring too; nothing runs them."""
    return isinstance(x, str) and isinstance(y, str) and inspect.cleandoc(x) == inspect.cleandoc(y)


def _is_nan(v):
    return isinstance(v, float) and math.isnan(v)


_SAME_OP = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL_FUNCTION"}


def _instructions(code):
    # EXTENDED_ARG only widens the next argument: where jumps are longer in one
    # compilation than the other, it appears in one only. PUSH_NULL belongs to the
    # call protocol: `functools.partial(f, a)(x)` compiles with one where the module
    # imports functools and a LOAD_METHOD where the text is compiled alone
    skipped = ("EXTENDED_ARG", "PUSH_NULL")
    found = [ins for ins in dis.get_instructions(code) if ins.opname not in skipped]
    index = {}
    for k, ins in enumerate(found):
        index[ins.offset] = k
        index.setdefault(ins.offset - 2, k)  # a jump landing on the EXTENDED_ARG before it
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    out = []
    for ins in found:
        if ins.opcode in jumps:
            arg = index.get(ins.argval)  # instruction sizes may differ: compare indices
        elif inspect.iscode(ins.argval):
            arg = "<code>"
        else:
            arg = ins.argval
        out.append((_SAME_OP.get(ins.opname, ins.opname), arg))
    return out
