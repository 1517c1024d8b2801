"""Arguments a gradient cannot be taken with: refused with a ``TypeError`` that says why.

A differentiated argument (and every leaf of a dict, list or tuple of parameters)
must be a real or complex number or array (complex ones in JAX's convention:
``transpile_runtime.complex_ops``); an integer becomes a float gradient.
Anywhere in the arguments, ``np.matrix`` (whose ``*`` is a matrix product, so every
rule would be wrong) and masked arrays (``np.ma``: no rule reads the mask) are refused
rather than differentiated.
"""

import numbers

import numpy as np


def check(args, params, wrt, fname):
    """Raise ``TypeError`` for the first argument the gradient cannot be taken with."""
    for i, (param, value) in enumerate(zip(params, args)):
        _check_value(value, param, fname, differentiated=i in wrt)


def _check_value(value, where, fname, differentiated):
    if isinstance(value, dict):
        for k, v in value.items():
            _check_value(v, f"{where}[{k!r}]", fname, differentiated)
        return
    if isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            _check_value(v, f"{where}[{k}]", fname, differentiated)
        return
    _check_any_leaf(value, where, fname)
    if differentiated:
        _check_differentiated_leaf(value, where, fname)


def _check_any_leaf(value, where, fname):
    """Refuse what no argument may be, differentiated or not: a matrix, a masked array."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(
            f"{fname}: argument {where} is a masked array (np.ma); masked arrays are not "
            "supported (the gradient would ignore the mask): pass np.ma.filled(...) of it, "
            "or the data and the mask as separate arrays"
        )
    if isinstance(value, np.matrix):
        raise TypeError(
            f"{fname}: argument {where} is an np.matrix, whose `*` is a matrix product; "
            "pass np.asarray(...) of it"
        )


def _check_differentiated_leaf(value, where, fname):
    """Refuse a leaf with no real gradient: a boolean, a non-numeric array or object."""
    dtype = getattr(value, "dtype", None)
    if isinstance(value, bool) or getattr(dtype, "kind", None) == "b":
        raise TypeError(f"{fname}: cannot differentiate with respect to {where}, a boolean")
    if dtype is not None and hasattr(value, "shape"):
        if dtype.kind not in "fiuc":
            raise TypeError(
                f"{fname}: cannot differentiate with respect to {where}, an array of "
                f"dtype {dtype}; pass a float array"
            )
        return
    if isinstance(value, numbers.Complex):
        return
    hint = " (the parameter's default is None: pass a value)" if value is None else ""
    raise TypeError(
        f"{fname}: cannot differentiate with respect to {where}, which is {_kind(value)}; "
        f"pass a float, an array of floats, or a dict/list/tuple of them{hint}"
    )


def _kind(value):
    if value is None:
        return "None"
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return f"{type(value).__name__} of dtype {dtype}"
    return f"a {type(value).__name__} ({value!r:.40})"


def check_like(value, primal, what, fname):
    """Raise ``ValueError`` where ``value`` (a tangent, or hvp's ``v``) does not have the
    structure and shapes of the argument ``primal``: a tangent of shape (1,) for a (3,)
    argument would broadcast into a wrong product, as a wrong ``dout`` would (which the
    vjp's own code refuses)."""
    if isinstance(primal, (dict, list, tuple)):
        keys = list(primal) if isinstance(primal, dict) else range(len(primal))
        same = (
            isinstance(value, dict) and set(value) == set(primal)
            if isinstance(primal, dict)
            else isinstance(value, (list, tuple)) and len(value) == len(primal)
        )
        if not same:
            raise ValueError(
                f"{fname}: {what} must have the structure of the argument, "
                f"{_structure(primal)}, but it is {_structure(value)}"
            )
        for k in keys:
            check_like(value[k], primal[k], f"{what}[{k!r}]", fname)
        return
    if not _is_leaf(primal):
        return  # an object of the user's class: its fields are checked where they are read
    if not _is_leaf(value) or np.shape(value) != np.shape(primal):
        found = f"has shape {np.shape(value)}" if _is_leaf(value) else f"is {_structure(value)}"
        raise ValueError(
            f"{fname}: {what} {found}, but the argument it goes with has shape "
            f"{np.shape(primal)}; pass one shaped like the argument"
        )


def _is_leaf(value):
    return isinstance(value, numbers.Number) or hasattr(value, "shape")


def _structure(value):
    if isinstance(value, dict):
        return f"a dict with keys {', '.join(sorted(map(repr, value)))}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    return str(np.shape(value)) if _is_leaf(value) else _kind(value)
