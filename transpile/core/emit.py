"""gast tree to Python source and a live function object.

The source is registered in ``linecache`` under a readable file name, so
tracebacks and pdb show the generated lines.
"""

import ast
import functools
import itertools
import linecache
import re
import types
import weakref

from transpile.core import assumptions, gcpause, printer, stack_room, tracebacks
from transpile.core.ir import COMMENT, Generated
from transpile.core.nodes import function_def

_COMMENT_LINE = re.compile(r"^(\s*)(\"\"\"|'''|['\"])" + re.escape(COMMENT) + r"(.*)\2$")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_counter = itertools.count(1)  # next() on it is atomic: threads get distinct names


def to_source(tree) -> str:
    """Print ``tree``; comment markers become ``# ...`` lines."""
    return _commented(printer.source(tree))


def to_source_and_origins(tree):
    """``(to_source(tree), {index of a line: the statement line it was printed from})``."""
    text, origins = printer.source_and_origins(tree)
    return _commented(text), origins


def _commented(text):
    lines = []
    for line in text.split("\n"):
        m = _COMMENT_LINE.match(line) if COMMENT in line else None
        if m:
            comment = m.group(3)
            if "\\" in comment:  # an escape: let Python read the literal
                comment = ast.literal_eval(m.group(2) + comment + m.group(2))
            lines.append(f"{m.group(1)}# {comment}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def compile_function(
    source: str, name: str, module_globals: dict, bound: dict, label: str, cells=None, origins=None
):
    """Compile ``source`` (one ``def``) and return the function.

    Names the user's module defines are looked up live in ``module_globals``, as
    the user's own function does; ``bound`` supplies the generated code's own names
    (``np``, ``ops``, callee adjoints) as closure cells, so the user's module
    namespace is never modified. ``cells`` maps the user's closure variables to the
    user's own cells: the generated code reads them live, as the user's function does.
    ``origins``: ``(user file, {index of a source line: line in that file})``, for
    ``tracebacks`` to name the user's line of an error raised in the generated code.
    """
    filename = f"<transpile {label} #{next(_counter)}>"
    params = ", ".join(sorted(bound))
    body = "".join("    " + line if line.strip() else line for line in source.splitlines(True))
    wrapped = f"def _bind({params}):\n{body}    return {name}\n"
    linecache.cache[filename] = (len(wrapped), None, wrapped.splitlines(True), filename)
    scope = {}
    # the generated code is the point of this project: executing it is intended
    exec(compile(wrapped, filename, "exec"), module_globals, scope)  # noqa: S102
    fn = scope["_bind"](**bound)
    if cells and fn.__closure__:
        code = fn.__code__
        closure = tuple(cells.get(n, c) for n, c in zip(code.co_freevars, fn.__closure__))
        fn = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
        if name in code.co_freevars and name not in cells:  # it calls itself (recursion):
            closure[code.co_freevars.index(name)].cell_contents = fn  # as made here
    weakref.finalize(fn, linecache.cache.pop, filename, None)  # the source goes with it
    if origins is not None:
        user_file, lines = origins
        # the wrapped file's first line is `def _bind`: source line k is its line k + 2
        tracebacks.register(filename, user_file, {k + 2: n for k, n in lines.items()})
        weakref.finalize(fn, tracebacks.forget, filename)
    return fn


def rebound(fn, values: dict):
    """A copy of ``fn`` (made by ``compile_function``) whose bound names in ``values``
    hold those values instead; its other cells are shared with ``fn``."""
    code = fn.__code__
    closure = tuple(
        types.CellType(values[n]) if n in values else c
        for n, c in zip(code.co_freevars, fn.__closure__)
    )
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)


def stage(fn, ctx):
    """Compile every output. ``fn.generated`` is the gradient, or for a callee its
    forward function, with the adjoint function as ``extra``. A gradient that gets
    shape variants is compiled by its entry when a call first needs it (``compile``):
    its first call runs the probe and later ones a variant, so most never do; where
    ``inline`` left compacting it for later (``out.compact``), it is printed when its
    source is first read too."""
    code, data = assumptions.collect(fn.parsed)
    code = assumptions.merge(
        code,
        *(c.code_reads for c in fn.callees),
        fn.inlined,  # the helpers inlined: their names and their own globals
    )
    made = []
    for out in fn.outputs:
        generated = Generated(None, None, out.name, list(fn.callees), None, code, data)
        later = _Printing(fn, ctx, out)
        if out.compact is not None:
            generated.make = later.source
        else:
            generated.text = later.source()
        compiled = functools.partial(later.function, generated)
        if out is fn.outputs[-1] and compiled_by_entry(fn, ctx, out.args):
            generated.compile = compiled
        else:
            generated.function = compiled()
        made.append(generated)
    if len(made) == 2:
        made[0].extra = made[1]
    fn.generated = made[0]
    return fn


class _Printing:
    """One output's source and function, each made when first asked (what they need of
    ``fn`` taken now: a later stage's edits of ``fn`` do not reach them)."""

    def __init__(self, fn, ctx, out):
        parsed = fn.parsed  # (its parts: the tree it holds is not kept)
        self.out, self.namespace = out, fn.namespace
        self.module_globals, self.cells = parsed.namespace, parsed.cells
        self.filename, self.offset = parsed.filename, parsed.line_offset
        self.label = f"{out.name} from {ctx.func.__name__}"
        self.lines = None

    def source(self):
        out = self.out
        with gcpause.paused(), stack_room.room():  # (as the stages run: made later)
            body = out.body if out.compact is None else out.compact()
            text, self.lines = to_source_and_origins(function_def(out.name, out.args, body))
        return text

    def function(self, generated):
        source = generated.source  # (made first, if it is not)
        offset = self.offset
        f = compile_function(
            source,
            self.out.name,
            self.module_globals,
            _bound(self.namespace, self.cells, source),
            self.label,
            self.cells,
            (self.filename, {k: offset + n for k, n in self.lines.items()}),
        )
        f.__transpile_source__ = source
        return f


def compiled_by_entry(fn, ctx, args):
    """Whether the entry (``dispatch``) may compile this gradient when first needed: it
    makes shape variants, and it has no defaults, which the entry copies when made."""
    return (
        fn.static is not None
        and ctx.mode != "split"
        and not args.defaults
        and not any(d is not None for d in args.kw_defaults)
    )


def bound_names(fn, source=None):
    """The generated code's own names, and placeholders for the user's closure
    variables holding their values now (``compile_function`` then binds the user's own
    cells there, read live);
    module globals stay live lookups. With ``source``, only the names it mentions.

    Binding a name the code never reads changes nothing (the function made closes
    over the names it reads), so the words of the source are a safe superset."""
    return _bound(fn.namespace, fn.parsed.cells, source)


def _bound(namespace, cells, source=None):
    used = identifiers(source) if source is not None else None
    bound = {k: v for k, v in namespace.items() if used is None or k in used}
    bound.update({k: _contents(c) for k, c in cells.items() if used is None or k in used})
    return bound


def _contents(cell):
    """A closure cell's value now (None while unset): what a default the generated
    signature evaluates (``act=np.tanh`` in code made from generated code) reads,
    before ``compile_function`` binds the cell itself."""
    try:
        return cell.cell_contents
    except ValueError:
        return None


def identifiers(source):
    """Every word of ``source`` that could be a name (a superset of the names read)."""
    return set(_IDENTIFIER.findall(source))
