"""Functions whose results are constants to differentiation: they end variedness.

Integer-valued, logical, shape and random functions. Calling them on active
values is fine; no adjoint is emitted for them. Each is declared with the shape
of its result, as the rules are; a draw from ``numpy.random`` is recognized by its
module.
"""

import builtins

import numpy as np

import transpile_runtime as runtime
from transpile.rules.declare import (
    ALL_DATA,
    ELEMENTWISE,
    FILL,
    FIRST_DATA,
    STATIC,
    STATIC_RESULT,
    TWO_DATA,
    VARIES,
    nondiff,
)

NONDIFF = (
    nondiff(runtime.stop_gradient, shape=ELEMENTWISE, passes=True),  # it returns its argument
    nondiff(
        np.argmax, np.argmin, np.argsort, methods=("argmax", "argmin", "argsort"), shape=FIRST_DATA
    ),
    nondiff(np.shape, np.ndim, np.size, builtins.len, shape=STATIC_RESULT),
    nondiff(attributes=("shape", "ndim", "size", "itemsize", "nbytes"), shape=STATIC_RESULT),
    nondiff(attributes=("dtype",), shape=ALL_DATA),
    nondiff(np.sign, shape=ELEMENTWISE),
    nondiff(np.floor, np.ceil, np.rint, np.trunc, np.fix, shape=ALL_DATA),  # of ints: floats
    nondiff(np.round, builtins.round, shape=FIRST_DATA),  # decimals: static
    nondiff(np.zeros, np.ones, np.empty, shape=FILL, fresh=True),
    nondiff(np.zeros_like, np.ones_like, np.empty_like, shape=ALL_DATA, fresh=True),
    nondiff(np.arange, np.eye, np.identity, shape=STATIC, fresh=True),
    # predicates: a bool result, not the dtype the operands promote to
    nondiff(np.isnan, np.isinf, np.isfinite, np.isclose, shape=ALL_DATA),
    nondiff(
        np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, shape=ALL_DATA
    ),
    nondiff(np.logical_and, np.logical_or, np.logical_not, np.logical_xor, shape=ALL_DATA),
    nondiff(np.allclose, np.array_equal, shape=ALL_DATA),
    nondiff(np.all, np.any, np.count_nonzero, methods=("all", "any"), shape=FIRST_DATA),
    nondiff(np.nonzero, np.flatnonzero, methods=("nonzero",), shape=VARIES),
    nondiff(np.searchsorted, shape=TWO_DATA),
    nondiff(np.broadcast_shapes, np.result_type, shape=VARIES),
    nondiff(builtins.int, builtins.bool, shape=ALL_DATA),
    nondiff(builtins.range, builtins.isinstance, builtins.type, shape=VARIES),
    nondiff(builtins.print, builtins.str, builtins.repr, shape=VARIES),
    nondiff(methods=("keys",), shape=VARIES),  # of a dict
)
RANDOM_MODULES = ("numpy.random",)


def is_random(obj) -> bool:
    """A random draw: a constant, unless its parameters are differentiated (an error)."""
    module = getattr(obj, "__module__", None) or ""
    owner = getattr(obj, "__self__", None)
    return module.startswith(RANDOM_MODULES) or (
        owner is not None and type(owner).__module__.startswith(RANDOM_MODULES)
    )
