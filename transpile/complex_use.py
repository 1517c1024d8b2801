"""Whether a function may compute with complex numbers, read from its source: a complex
literal (``1j``), a complex dtype, a function whose rule is in ``rules/complex_numbers.py``
or ``rules/spectral.py`` (``np.real``, ``np.vdot``, ``np.fft.*``), or ``.real``, ``.imag``,
``.conj()``. A real value used with complex ones may then have an adjoint with an
imaginary part (``transpile_runtime.complex_ops``), which ``reverse`` keeps out of a real
argument's adjoint buffer where it writes into one (``ops.add_at``).
"""

import gast
import numpy as np

from transpile.nodes import descendants

_FUNCTIONS = (np.real, np.imag, np.conjugate, np.angle, np.vdot, complex)
_DTYPES = (np.complex64, np.complex128, np.complexfloating)
_ATTRIBUTES = frozenset(("real", "imag", "conj", "conjugate"))
_MODULES = ("numpy.fft", "scipy.fft")


def may_be_complex(tree, parsed) -> bool:
    """Whether the normalized function ``tree`` may compute with complex numbers."""
    for node in descendants(tree):
        if isinstance(node, gast.Constant) and isinstance(node.value, complex):
            return True
        if isinstance(node, gast.Attribute) and node.attr in _ATTRIBUTES:
            return True
        if isinstance(node, (gast.Name, gast.Attribute)) and _is_marker(parsed.resolve(node)):
            return True
    return False


def _is_marker(obj) -> bool:
    if any(obj is f for f in _FUNCTIONS) or any(obj is t for t in _DTYPES):
        return True
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and module.startswith(_MODULES)
