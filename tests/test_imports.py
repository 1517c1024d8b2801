"""The import graph of the compiler and the runtime, read from their source.

Imports point down only: the module-level imports form no cycle, and no function
imports a project module on use (a local import is how a cycle hides: it compiles,
and the order of the modules is no longer what the files say). The runtime never
imports the compiler. Optional third-party libraries (scipy, numexpr, pygments) may
still be imported where they are used.
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"transpile": ROOT / "transpile", "transpile_runtime": ROOT / "runtime"}


def _modules():
    """``{dotted name: path}`` of every module of the two packages."""
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _package_of(module):
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _targets(module, node):
    """The project modules an import statement in ``module`` names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = node.module or ""
    if node.level:
        parts = _package_of(module).split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
    named = [f"{base}.{a.name}" for a in node.names]
    return [n for n in named if n in MODULES] or ([base] if base in MODULES else [])


def _imports(module):
    """(module-level imports, [(line, target)] of imports inside a function)."""
    tree = ast.parse(MODULES[module].read_text())
    top, local = set(), []
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    inside = {id(n) for f in functions for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(module, node):
                if id(node) in inside:
                    local.append((node.lineno, target))
                else:
                    top.add(target)
    return top, local


GRAPH = {m: _imports(m)[0] for m in MODULES}


def _cycle_from(start):
    """A cycle through ``start`` in GRAPH, as a list of modules, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        module, path = stack.pop()
        for target in GRAPH[module]:
            if target == start:
                return path + [start]
            if target not in seen:
                seen.add(target)
                stack.append((target, path + [target]))
    return None


def test_the_graph_is_read_from_every_module():
    assert len(MODULES) > 80
    assert "transpile.pipeline" in GRAPH["transpile.api"]
    assert "transpile_runtime.ops" in GRAPH["transpile.front.higher"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_on_an_import_cycle(module):
    # a package's __init__ importing its own modules is not a cycle back to it unless
    # one of them imports the package, which this finds too
    assert _cycle_from(module) is None, " -> ".join(_cycle_from(module))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_function_imports_a_project_module(module):
    assert _imports(module)[1] == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("transpile_runtime")))
def test_the_runtime_never_imports_the_compiler(module):
    assert not [t for t in GRAPH[module] if t.split(".")[0] == "transpile"]


# the compiler's folders, bottom to top: a module imports from its own folder or from
# folders below it; the modules at the top of the package (api, pipeline, ...) from any
LAYERS = (
    "core",
    "rules",
    "front",
    "analysis",
    "cleanup",
    "reverse",
    "forward",
    "backend",
    "variant",
)


def _layer(module):
    """The index of ``module``'s folder in LAYERS, or len(LAYERS) for the top."""
    parts = module.split(".")
    if (
        parts[0] != "transpile"
        or len(parts) < 3
        and module not in {f"transpile.{f}" for f in LAYERS}
    ):
        return len(LAYERS)
    return LAYERS.index(parts[1])


def test_every_compiler_module_is_in_a_folder_or_at_the_top():
    folders = {p.name for p in PACKAGES["transpile"].iterdir() if (p / "__init__.py").exists()}
    assert folders == set(LAYERS)
    top = sorted(m for m in MODULES if m.startswith("transpile.") and m.count(".") == 1)
    assert top == [
        f"transpile.{n}"
        for n in sorted(
            ("__main__", "api", "bundle", "checking", "explain", "export", "holomorphic")
            + ("jacobians", "pipeline", "second_order")
            + LAYERS
        )
    ]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("transpile.")))
def test_imports_point_down_the_folders(module):
    upward = [t for t in GRAPH[module] if t.startswith("transpile.") and _layer(t) > _layer(module)]
    assert upward == [], f"{module} ({LAYERS[_layer(module)]}/) imports from above: {upward}"


def test_a_cycle_and_a_local_import_are_found(tmp_path, monkeypatch):
    """The checks above can fail: a two-module cycle and a local import are reported."""
    folder = tmp_path / "transpile"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "a.py").write_text("from transpile import b\n")
    (folder / "b.py").write_text("def f():\n    from transpile import a\n\nimport transpile.a\n")
    monkeypatch.setitem(PACKAGES, "transpile", folder)
    monkeypatch.delitem(PACKAGES, "transpile_runtime")
    this = sys.modules[__name__]
    modules = _modules()
    monkeypatch.setattr(this, "MODULES", modules)
    monkeypatch.setattr(this, "GRAPH", {m: _imports(m)[0] for m in modules})
    assert _cycle_from("transpile.a") == ["transpile.a", "transpile.b", "transpile.a"]
    assert _imports("transpile.b")[1] == [(2, "transpile.a")]
