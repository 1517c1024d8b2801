"""gast tree to Python source and a live function object.

The source is registered in ``linecache`` under a readable file name, so
tracebacks and pdb show the generated lines.
"""

import ast
import linecache
import re

import gast

from transpile.reverse import COMMENT

_COMMENT_LINE = re.compile(r"^(\s*)(\"\"\"|'''|['\"])" + re.escape(COMMENT) + r"(.*)\2$")
_counter = [0]


def to_source(tree) -> str:
    """Unparse ``tree``; comment markers become ``# ...`` lines."""
    module = gast.Module(body=[tree], type_ignores=[])
    gast.fix_missing_locations(module)
    text = gast.unparse(module)
    lines = []
    for line in text.splitlines():
        m = _COMMENT_LINE.match(line)
        if m:
            raw = ast.literal_eval(m.group(2) + COMMENT + m.group(3) + m.group(2))
            lines.append(f"{m.group(1)}# {raw[len(COMMENT) :]}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def compile_function(source: str, name: str, module_globals: dict, bound: dict, label: str):
    """Compile ``source`` (one ``def``) and return the function.

    Names the user's module defines are looked up live in ``module_globals``, as
    the user's own function does; ``bound`` supplies the generated code's own names
    (``np``, ``ops``, callee adjoints, closure values) as closure cells, so the
    user's module namespace is never modified.
    """
    _counter[0] += 1
    filename = f"<transpile {label} #{_counter[0]}>"
    params = ", ".join(sorted(bound))
    body = "".join("    " + line if line.strip() else line for line in source.splitlines(True))
    wrapped = f"def _bind({params}):\n{body}    return {name}\n"
    linecache.cache[filename] = (len(wrapped), None, wrapped.splitlines(True), filename)
    scope = {}
    # the generated code is the point of this project: executing it is intended
    exec(compile(wrapped, filename, "exec"), module_globals, scope)  # noqa: S102
    return scope["_bind"](**bound)
