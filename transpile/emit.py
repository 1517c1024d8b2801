"""gast tree to Python source and a live function object.

The source is registered in ``linecache`` under a readable file name, so
tracebacks and pdb show the generated lines.
"""

import ast
import linecache
import re

import gast

from transpile.reverse import COMMENT

_COMMENT_LINE = re.compile(r"^(\s*)(['\"])" + re.escape(COMMENT) + r"(.*)\2$")
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
            lines.append(f"{m.group(1)}# {raw[len(COMMENT):]}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def compile_function(source: str, name: str, namespace: dict, label: str):
    """Execute ``source`` (one ``def``) in ``namespace`` and return the function."""
    _counter[0] += 1
    filename = f"<transpile {label} #{_counter[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    exec(code, namespace)
    return namespace[name]
