"""Whether a function may compute with complex numbers, read from its source: a complex
literal (``1j``), a complex type (``complex``, ``np.complex128``), a call of a function
whose declaration says it takes complex values apart or makes them (``complex_values``:
``np.real``, ``np.vdot``, ``np.fft.*``), or such a method or attribute (``.real``,
``.conj()``). A real value used with complex ones may then have an adjoint with an
imaginary part (``transpile_runtime.complex_ops``), which ``reverse`` keeps out of a
real argument's adjoint buffer where it writes into one (``ops.add_at``).
"""

import gast
import numpy as np

from transpile.core.nodes import descendants
from transpile.rules import registry


def may_be_complex(tree, parsed, nodes=None) -> bool:
    """Whether the normalized function ``tree`` may compute with complex numbers;
    ``nodes``: ``descendants(tree)``, where the caller has it."""
    rules = registry()
    asked = set()  # the names, attributes and chains already found not complex
    for node in descendants(tree) if nodes is None else nodes:
        cls = node.__class__
        if cls is gast.Name:
            # most names were asked already: told here, without a call
            if node.id not in asked and _names_complex(node, parsed, rules, asked):
                return True
        elif cls is gast.Constant:
            if isinstance(node.value, complex):
                return True
        elif cls is gast.Attribute and _names_complex(node, parsed, rules, asked):
            return True
    return False


def _names_complex(node, parsed, rules, asked):
    """Whether the name or attribute ``node`` denotes something complex; what it asks
    goes in ``asked`` (a name, a chain of names, ``.attr``), answered no once for all:
    a name resolves to the same object wherever it is read."""
    key = node.id if node.__class__ is gast.Name else _chain(node)
    if key in asked:
        return False
    if node.__class__ is gast.Attribute and ("." + node.attr) not in asked:
        attr = node.attr
        if _makes_complex(rules.attribute_declaration(attr) or rules.method_declaration(attr)):
            return True
        asked.add("." + attr)
    obj = parsed.resolve(node)
    if _is_complex_type(obj) or _makes_complex(_declaration(rules, obj)):
        return True
    if key is not None:
        asked.add(key)
    return False


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


def _declaration(rules, obj):
    try:
        return rules.declaration(obj)
    except TypeError:  # an unhashable object: no rule
        return None


def _makes_complex(declaration) -> bool:
    return declaration is not None and declaration.complex_values


def _is_complex_type(obj) -> bool:
    return obj is complex or isinstance(obj, type) and issubclass(obj, np.complexfloating)
