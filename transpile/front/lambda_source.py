"""Finding a lambda's own expression in its file, so that ``grad(lambda x: ...)`` can
read it as the function ``def name(x): return ...``.

A lambda's code object knows its first line but not its columns, and one line may
hold several lambdas. Every lambda on that line with the same parameters is a
candidate; the one whose text compiles to the code that runs is the lambda.
"""

import collections
import inspect
import linecache
import textwrap
import threading

import gast

from transpile.core.nodes import clone, descendants


def find(func, same_code):
    """``(lambda node, a name for it)`` for the lambda ``func``; the node's line
    numbers are the file's. None where its file's text has no lambda compiling to
    ``func``'s code (``same_code(a, b)`` compares two code objects)."""
    code = func.__code__
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename, func.__globals__)
    if not lines:
        return None
    params = list(code.co_varnames[: code.co_argcount])
    for node, fname in _lambdas(code.co_filename, lines).get(code.co_firstlineno, ()):
        if [a.id for a in node.args.args] == params and _compiles_to(
            _text(lines, node), code, same_code
        ):
            return clone(node), fname  # the stages edit the tree: never the cached one
    return None


# file name -> (its lines, {first line: [(lambda node, name)]}): a file is parsed once
# for all the lambdas in it, while linecache holds the same lines for it (a file
# changed on disk, or a notebook cell run again, gets new lines: parsed again)
_INDEX = collections.OrderedDict()
_INDEXED_FILES = 8
_LOCK = threading.Lock()


def _lambdas(filename, lines):
    with _LOCK:
        found = _INDEX.get(filename)
        if found is not None and found[0] is lines:
            _INDEX.move_to_end(filename)
            return found[1]
    try:
        module = gast.parse("".join(lines))
    except SyntaxError:
        return {}
    names = _assigned_names(module)
    by_line = {}
    for node in descendants(module):
        if isinstance(node, gast.Lambda):
            by_line.setdefault(node.lineno, []).append((node, names.get(id(node), "lambda_")))
    with _LOCK:
        _INDEX[filename] = (lines, by_line)
        while len(_INDEX) > _INDEXED_FILES:
            _INDEX.popitem(last=False)
    return by_line


def _assigned_names(module):
    """id(lambda) -> the name it is assigned to (``objective = lambda p: ...``)."""
    found = {}
    for node in descendants(module):
        if (
            isinstance(node, gast.Assign)
            and isinstance(node.value, gast.Lambda)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            found[id(node.value)] = node.targets[0].id
    return found


def _text(lines, node):
    """The source text of ``node`` (its offsets count UTF-8 bytes)."""
    parts = [line.encode() for line in lines[node.lineno - 1 : node.end_lineno]]
    parts[-1] = parts[-1][: node.end_col_offset]
    parts[0] = parts[0][node.col_offset :]
    return b"".join(parts).decode()


def _compiles_to(text, code, same_code):
    freevars = code.co_freevars
    body = f"return ({text})"
    if freevars:  # compiled inside a function owning the closure variables
        body = f"{' = '.join(freevars)} = None\n{body}"
    source = "def _outer_():\n" + textwrap.indent(body, "    ")
    try:
        compiled = compile(source, code.co_filename, "exec", dont_inherit=True)
    except SyntaxError:
        return False
    outer = next(c for c in compiled.co_consts if inspect.iscode(c))
    inner = [c for c in outer.co_consts if inspect.iscode(c) and c.co_name == "<lambda>"]
    return len(inner) == 1 and same_code(inner[0], code)
