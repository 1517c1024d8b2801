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


def may_be_complex(tree, parsed) -> bool:
    """Whether the normalized function ``tree`` may compute with complex numbers."""
    rules = registry()
    for node in descendants(tree):
        if isinstance(node, gast.Constant) and isinstance(node.value, complex):
            return True
        if isinstance(node, gast.Attribute) and _makes_complex(
            rules.attribute_declaration(node.attr) or rules.method_declaration(node.attr)
        ):
            return True
        if isinstance(node, (gast.Name, gast.Attribute)):
            obj = parsed.resolve(node)
            if _is_complex_type(obj) or _makes_complex(_declaration(rules, obj)):
                return True
    return False


def _declaration(rules, obj):
    try:
        return rules.declaration(obj)
    except TypeError:  # an unhashable object: no rule
        return None


def _makes_complex(declaration) -> bool:
    return declaration is not None and declaration.complex_values


def _is_complex_type(obj) -> bool:
    return obj is complex or isinstance(obj, type) and issubclass(obj, np.complexfloating)
