"""Functions whose results are constants to differentiation: they end variedness.

Integer-valued, logical, shape and random functions. Calling them on active
values is fine; no adjoint is emitted for them.
"""

import builtins

import numpy as np

FUNCTIONS = [
    np.argmax,
    np.argmin,
    np.argsort,
    np.shape,
    np.ndim,
    np.size,
    np.floor,
    np.ceil,
    np.round,
    np.rint,
    np.trunc,
    np.sign,
    np.fix,
    np.zeros,
    np.zeros_like,
    np.ones,
    np.ones_like,
    np.empty,
    np.empty_like,
    np.arange,
    np.eye,
    np.identity,
    np.isnan,
    np.isinf,
    np.isfinite,
    np.isclose,
    np.allclose,
    np.array_equal,
    np.equal,
    np.not_equal,
    np.less,
    np.less_equal,
    np.greater,
    np.greater_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.logical_xor,
    np.all,
    np.any,
    np.nonzero,
    np.flatnonzero,
    np.count_nonzero,
    np.searchsorted,
    np.broadcast_shapes,
    np.result_type,
    builtins.len,
    builtins.int,
    builtins.bool,
    builtins.range,
    builtins.round,
    builtins.isinstance,
    builtins.type,
    builtins.print,
    builtins.str,
    builtins.repr,
]
METHODS = {"argmax", "argmin", "argsort", "nonzero", "any", "all", "keys"}
ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
MODULE_PREFIXES = ("numpy.random",)


def is_random(obj) -> bool:
    """A random draw: a constant, unless its parameters are differentiated (an error)."""
    module = getattr(obj, "__module__", None) or ""
    owner = getattr(obj, "__self__", None)
    return module.startswith(MODULE_PREFIXES) or (
        owner is not None and type(owner).__module__.startswith(MODULE_PREFIXES)
    )


def is_nondiff(obj) -> bool:
    """Whether ``obj`` (a resolved callable) is registered as non-differentiable."""
    return any(obj is f for f in FUNCTIONS) or is_random(obj)
