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
    np.full,
    np.arange,
    np.linspace,
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
    np.unique,
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
METHODS = {
    "argmax",
    "argmin",
    "argsort",
    "nonzero",
    "any",
    "all",
    "item_index",
    "keys",
    "astype_int",
    "tolist_shape",
}
ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
MODULE_PREFIXES = ("numpy.random",)


def is_nondiff(obj) -> bool:
    """Whether ``obj`` (a resolved callable) is registered as non-differentiable."""
    if any(obj is f for f in FUNCTIONS):
        return True
    module = getattr(obj, "__module__", None) or ""
    if module.startswith(MODULE_PREFIXES):
        return True
    owner = getattr(obj, "__self__", None)
    return type(owner).__module__.startswith(MODULE_PREFIXES) if owner is not None else False
