"""``transpile --rules``: every function, method, attribute and operator
the registry knows, by the name a program spells it with."""

import builtins
import importlib
import types

import gast

from transpile.rules.declare import Kind

# where the public names live, searched in this order for an object's spelling
_NAMESPACES = (
    "numpy",
    "numpy.linalg",
    "numpy.fft",
    "math",
    "scipy.special",
    "scipy.stats",
    "scipy.linalg",
    "scipy.fft",
)

_OPERATORS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.FloorDiv: "//",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.MatMult: "@",
    gast.USub: "unary -",
    gast.UAdd: "unary +",
    gast.Not: "not",
    gast.Invert: "~",
}


def _spellings():
    """id(object) (for a bound method: its owner and function) -> ``module.name``."""
    found = {}
    for module_name in _NAMESPACES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        # an object's own name first (numpy.arccos, not its alias numpy.acos)
        items = sorted(
            (attr, value) for attr, value in vars(module).items() if not attr.startswith("_")
        )
        items.sort(key=lambda item: getattr(item[1], "__name__", None) != item[0])
        for attr, value in items:
            found.setdefault(_key(value), f"{module_name}.{attr}")
            if (
                module_name == "scipy.stats"
                and hasattr(value, "logpdf")
                or hasattr(value, "logpmf")
            ):
                for method in ("logpdf", "pdf", "cdf", "logcdf", "logpmf", "pmf"):
                    bound = getattr(value, method, None)
                    if bound is not None:
                        found.setdefault(_key(bound), f"{module_name}.{attr}.{method}")
    for attr, value in vars(builtins).items():
        found.setdefault(_key(value), attr)
    return found


def _key(obj):
    if isinstance(obj, types.MethodType):
        return ("method", id(obj.__self__), id(obj.__func__))
    return id(obj)


def _spell(obj, spellings):
    name = spellings.get(_key(obj))
    if name is not None:
        return name
    module = getattr(obj, "__module__", None) or ""
    return f"{module}.{getattr(obj, '__qualname__', getattr(obj, '__name__', repr(obj)))}"


# each kind of rule: its label on the lines of the listing, and what it means
_KINDS = {
    Kind.RULE: ("differentiated", "a derivative rule"),
    Kind.NONDIFF: ("constant", "ends differentiation: no gradient flows through it, no error"),
    Kind.NO_RULE: (
        "unsupported",
        "known, not differentiable yet: a differentiated use is an error",
    ),
}
_WIDTH = max(len(label) for label, _ in _KINDS.values())


def table(registry) -> str:
    """The listing: one line per rule, its kind first, so that grep finds a name with
    what it is (``transpile --rules | grep tanh``), or every rule of a kind."""
    spellings = _spellings()
    sections = {kind: {"functions": set(), "methods": set(), "other": set()} for kind in Kind}
    for decl in registry.all_declarations():
        part = sections[decl.kind]
        part["functions"] |= {_spell(o, spellings) for o in decl.objects}
        part["methods"] |= {f"x.{m}()" for m in decl.methods}
        part["other"] |= {f"x.{a}" for a in decl.attributes}
        part["other"] |= {
            _OPERATORS.get(op, op.__name__) + (" on lists and tuples" if decl.sequences else "")
            for op in decl.operators
        }
    lines = [
        "# every function, method, attribute and operator the rules know: KIND  NAME, one a line",
        *(f"#   {label:<{_WIDTH}}  {meaning}" for label, meaning in _KINDS.values()),
    ]
    for kind, (label, _) in _KINDS.items():
        part = sections[kind]
        for group in ("functions", "methods", "other"):
            lines += [f"{label:<{_WIDTH}}  {n}" for n in sorted(part[group], key=str.lower)]
    lines.append(
        "# and, by rule or by reading their source: your own functions, lambdas, local "
        "functions, methods of your classes"
    )
    return "\n".join(lines)
