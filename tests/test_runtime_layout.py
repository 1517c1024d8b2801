"""The runtime's shape: what generated code and the compiler may rely on.

* ``runtime/`` never imports the compiler (``transpile``), at module level or inside
  a function: it is the small stable surface that generated code calls, and an
  exported gradient runs with the runtime alone;
* its modules import each other in no cycle (each family of ``runtime/ops/`` imports
  only the families below it, and none imports the ``ops`` namespace that re-exports
  them);
* the ``ops`` namespace offers every name it offered before it was split into
  families (generated code calls ``ops.unreduce``, the compiler reads
  ``ops.helper``), each the very object its family defines, and every helper a
  family declares is in it.
"""

import ast
import inspect
import pathlib
import types

import transpile_runtime
from transpile_runtime import ops

RUNTIME = pathlib.Path(transpile_runtime.__file__).resolve().parent
PACKAGE = "transpile_runtime"

# The public names of ``ops`` when it was one module (runtime/ops.py, at c87070d),
# the library modules it imported aside (np, math, numbers, itertools, namedtuple,
# backend, refusals: never its interface; generated code binds np itself).
OPS_NAMES = frozenset(
    [
        "Helper",
        "MISSING",
        "UNSET",
        "add",
        "add_at",
        "aux_pair",
        "broadcast_like",
        "cast_like",
        "contribution",
        "copy",
        "cotangent",
        "diff",
        "dot_left",
        "dot_right",
        "filled",
        "fwinner",
        "gather",
        "head",
        "helper",
        "hypot_slope",
        "inner",
        "inside",
        "iterated",
        "iterated_tangent",
        "keys",
        "like",
        "mT",
        "matmul_left",
        "matmul_right",
        "owned",
        "pow_log",
        "pow_slope",
        "real_only",
        "reappend",
        "reatleast",
        "reaverage",
        "rediff",
        "reduced_size",
        "rejoin",
        "replaced",
        "restore_item",
        "retranspose",
        "reunrepeat",
        "saved_item",
        "scaled",
        "scatter_added",
        "seed",
        "select",
        "shape_of",
        "sinc_slope",
        "solve_matrix_adjoint",
        "solve_rhs_adjoint",
        "spread",
        "svd_cofactors",
        "tail",
        "tangent_like",
        "unappend",
        "unarray",
        "unarray_cast",
        "unatleast",
        "unaverage",
        "unaverage_weights",
        "unbroadcast",
        "uncast",
        "uncholesky",
        "uncholesky_cotangent",
        "uncholesky_factor_adjoint",
        "uncholesky_factor_tangent",
        "unconcatenate",
        "uncross",
        "uncumprod",
        "uncumprod_slope",
        "uncumsum",
        "undet",
        "undet_slope",
        "undiag",
        "undiagonal",
        "undiff",
        "uneigh",
        "uneigvalsh",
        "uneinsum",
        "uneinsum_any",
        "uneinsum_others",
        "uneinsum_tangent",
        "unhead",
        "uninner",
        "uninner_a",
        "uninner_b",
        "uniterated",
        "unjoin",
        "unkron",
        "unkron_a",
        "unkron_b",
        "unlstsq",
        "unmatrix_power",
        "unmean",
        "unmedian",
        "unmulti_dot",
        "unnan_extreme",
        "unnanmean",
        "unnanprod",
        "unnanvar",
        "unnorm",
        "unnorm_norm_adjoint",
        "unnorm_norm_tangent",
        "unnorm_ord",
        "unnorm_slope",
        "unpad",
        "unpad_fill",
        "unpinv",
        "unptp",
        "unqr",
        "unreduce",
        "unreduce_extreme",
        "unreduce_prod",
        "unrepeat",
        "unrepeat_array",
        "unroll",
        "unslogdet",
        "unslogdet_cotangent",
        "unslogdet_slope",
        "unsort",
        "unspread",
        "unstack",
        "unsvd",
        "untail",
        "untake",
        "untake_along_axis",
        "untensordot",
        "untensordot_a",
        "untensordot_b",
        "untile",
        "untrace",
        "untranspose",
        "untrapezoid",
        "unvar",
        "unvecdot",
        "unvstack",
        "winner",
        "zeros_like",
    ]
)


def _module_name(path):
    parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def _modules():
    """``{module name: parsed source}`` of every module of the runtime."""
    return {
        _module_name(p): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
        for p in sorted(RUNTIME.rglob("*.py"))
    }


def _is_package(name, modules):
    return any(m.startswith(name + ".") for m in modules)


def _imported(name, tree, modules):
    """The module names ``tree`` (the module ``name``) imports, anywhere in it; a
    ``from P import a`` names ``P.a`` where that is a module, else ``P``."""
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found


def test_the_runtime_never_imports_the_compiler():
    modules = _modules()
    assert len(modules) > 20 and f"{PACKAGE}.ops.broadcast" in modules
    offending = sorted(
        f"{name} imports {target}"
        for name, tree in modules.items()
        for target in _imported(name, tree, modules)
        if target == "transpile" or target.startswith("transpile.")
    )
    assert not offending, offending


def _cycle(graph):
    """One cycle of ``graph`` (``{node: successors}``) as a list of nodes, or None."""
    done, path = set(), []

    def visit(node):
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        for succ in sorted(graph.get(node, ())):
            found = visit(succ)
            if found:
                return found
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        found = visit(node)
        if found:
            return found
    return None


def test_the_runtime_modules_import_each_other_in_no_cycle():
    modules = _modules()
    graph = {
        name: {t for t in _imported(name, tree, modules) if t in modules and t != name}
        for name, tree in modules.items()
    }
    assert f"{PACKAGE}.ops.declare" in graph[f"{PACKAGE}.ops.broadcast"]  # edges are found
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def _public(namespace):
    return {
        n
        for n, v in vars(namespace).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    }


# the helpers added since, each with its family
ADDED = {"except_clause": "structures", "unabs": "elementwise"}


def test_ops_offers_every_name_it_offered():
    assert _public(ops) == OPS_NAMES | set(ADDED)
    assert set(ops.__all__) == OPS_NAMES | set(ADDED)
    for name, family in ADDED.items():
        assert getattr(ops, name).__module__ == f"{ops.__name__}.{family}"


def test_each_name_of_ops_is_the_object_its_family_defines():
    for name in OPS_NAMES:
        value = getattr(ops, name)
        owner = value if inspect.isfunction(value) or inspect.isclass(value) else type(value)
        family = owner.__module__
        assert family.startswith(ops.__name__ + "."), (name, family)
        assert getattr(__import__(family, fromlist=["_"]), name) is value, name


def test_every_helper_a_family_declares_is_in_ops():
    families = [
        m
        for m in vars(ops).values()
        if isinstance(m, types.ModuleType) and m.__name__.startswith(ops.__name__ + ".")
    ]
    assert len(families) >= 10
    for family in families:
        for name, value in vars(family).items():
            if inspect.isfunction(value) and hasattr(value, "declared"):
                assert not name.startswith("_"), f"{family.__name__}.{name}"
                assert getattr(ops, name, None) is value, f"{family.__name__}.{name}"
