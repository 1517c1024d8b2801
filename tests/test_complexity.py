"""No function in ``transpile/`` or ``runtime/`` above cyclomatic complexity 15, as radon
counts it.

Every ``def`` is measured, at any depth: functions, methods, closures, and methods
of classes defined inside functions. Each is measured on its own with radon's
``cc_visit_ast`` (a nested function counts for itself, not for the function around
it, as in radon's own report); ``cc_visit`` on a whole module would leave out the
methods of a class defined inside a function.

``ALLOWED`` lists the exceptions, each with its complexity when it was listed. A
listed function may not grow past that number, and an entry is removed as soon as
its function is split (``test_allowlist_is_current`` says when).
"""

import ast
import pathlib

from radon.complexity import cc_visit_ast

LIMIT = 15
ROOT = pathlib.Path(__file__).resolve().parent.parent
# the compiler, and the runtime that generated code calls
PACKAGES = (ROOT / "transpile", ROOT / "runtime")

# "path from the repository root:qualified name" -> complexity when listed: none today.
ALLOWED = {}


def _defs(node, prefix=""):
    """``(qualified name, def node)`` for every function under ``node``, nested ones
    included, named as ``__qualname__`` names them."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = prefix + child.name
            yield qualname, child
            yield from _defs(child, qualname + ".<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _defs(child, prefix + child.name + ".")
        else:
            yield from _defs(child, prefix)


def _complexities():
    """``"path:qualname" -> (complexity, line)`` for every function in the packages."""
    found = {}
    for path in sorted(p for package in PACKAGES for p in package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(ROOT).as_posix()
        for qualname, node in _defs(tree):
            (block,) = cc_visit_ast(node)
            found[f"{where}:{qualname}"] = (block.complexity, node.lineno)
    return found


def test_no_function_above_the_limit():
    too_complex = []
    for key, (complexity, line) in sorted(_complexities().items()):
        ceiling = ALLOWED.get(key, LIMIT)
        if complexity > ceiling:
            listed = f" (listed at {ceiling})" if key in ALLOWED else ""
            too_complex.append(f"{key} (line {line}): {complexity}{listed}")
    assert not too_complex, (
        f"functions above cyclomatic complexity {LIMIT}; split them by meaning (a method "
        "per case, a helper per concern, a table instead of a chain of ifs):\n  "
        + "\n  ".join(too_complex)
    )


def test_allowlist_is_current():
    found = _complexities()
    stale = [
        f"{key}: {found[key][0] if key in found else 'no such function'}"
        for key in sorted(ALLOWED)
        if key not in found or found[key][0] <= LIMIT
    ]
    assert not stale, "remove these from ALLOWED, they are within the limit now:\n  " + (
        "\n  ".join(stale)
    )
