"""What a gradient checks where it meets its caller: the seed of a real scalar output,
the ``(value, aux)`` pair of ``has_aux``, a vjp's cotangent shaped like the output, a
contribution a user's ``defvjp`` rule returned, and what it returns owned by no one
else (``owned``). Each raises a clear error instead of letting a wrong value through.
"""

import numbers

import numpy as np

from .arrays import _shape
from .declare import helper

_COMPLEX_HINT = (
    "; for the complex derivative of a holomorphic function use grad(f, holomorphic=True), "
    "else differentiate np.real or np.abs of it"
)


@helper(fresh=True, checks=True)
def seed(out):
    """The cotangent 1.0 of a real scalar output; a clear error for anything else."""
    if isinstance(out, (list, tuple, dict)) or getattr(out, "ndim", 0) != 0:
        raise ValueError(
            "grad needs a function that returns a scalar, but it returned "
            + (
                f"a {type(out).__name__} of {len(out)}; for a function that returns "
                "(value, auxiliary data), use grad(f, has_aux=True)"
                if isinstance(out, (list, tuple))
                else f"a value of shape {_shape(out)}; use transpile.vjp(f)(*args, dout) "
                "for non-scalar outputs"
            )
        )
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        if isinstance(out, bool) or not isinstance(out, numbers.Real):
            hint = _COMPLEX_HINT if isinstance(out, complex) else ""
            raise TypeError(
                f"grad needs a function that returns a real scalar, but it returned "
                f"{_describe(out)}{hint}"
            )
        return 1.0
    if dtype.kind not in "fiu":
        hint = _COMPLEX_HINT if dtype.kind == "c" else ""
        raise TypeError(
            "grad needs a function that returns a real scalar, but it returned "
            f"{_describe(out)}{hint}"
        )
    if isinstance(out, np.generic):
        return out.dtype.type(1)
    return np.ones_like(out)  # a 0-d array, possibly of another array module


@helper(passes=True, checks=True)
def aux_pair(out):
    """``out``, checked to be the ``(value, aux)`` pair a ``has_aux=True`` function returns."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"has_aux=True needs a function that returns a pair (value, aux), but it "
            f"returned {_describe(out)}"
        )
    return out


def _is_complex(x):
    return isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c"


@helper(passes=True, checks=True)
def cotangent(dout, out):
    """``dout``, checked to be shaped like the output ``out`` of the function a vjp is
    taken of (a wrong shape would broadcast into a wrong gradient), and complex only
    where ``out`` is (JAX's rule: a real output's cotangent is real)."""
    if isinstance(out, (list, tuple, dict)):
        if type(dout) is not type(out) or len(dout) != len(out):
            raise ValueError(
                f"dout must have the structure of the function's output, a {type(out).__name__} "
                f"of {len(out)}, but it is {_describe(dout)}"
            )
        pairs = out.items() if isinstance(out, dict) else enumerate(out)
        for k, o in pairs:
            cotangent(dout[k], o)
        return dout
    if _is_complex(dout) and not _is_complex(out):
        raise TypeError(
            "dout is complex but the function's output is real; a real output's cotangent "
            "is real (pass np.real(dout))"
        )
    if _shape(dout) != _shape(out):
        raise ValueError(
            f"dout has shape {_shape(dout)}, but the function's output has shape "
            f"{_shape(out)}; pass a dout shaped like the output"
        )
    return dout


@helper(passes=True, checks=True)
def contribution(value, arg, rule, param):
    """``value``, what the adjoint a user's ``defvjp`` rule gave for the argument
    ``arg`` (the parameter ``param`` of ``rule``) returned, checked to be real and shaped
    like ``arg``: one of another shape would broadcast into a wrong gradient (JAX's
    custom_vjp checks the same). A dict, list or tuple argument is not checked here."""
    if isinstance(arg, (list, tuple, dict)):
        return value
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    real = kind in ("f", "i", "u") if kind is not None else _is_real_number(value)
    if real and getattr(value, "shape", ()) == getattr(arg, "shape", ()):
        return value
    what = (
        f"has shape {getattr(value, 'shape', ())}"
        if real
        else f"is {_describe(value) if value is not None else 'None'}"
    )
    raise ValueError(
        f"the adjoint that defvjp was given for argument {param!r} of {rule}() returned a "
        f"contribution that {what}, but the argument has shape {getattr(arg, 'shape', ())}: "
        f"an adjoint returns one real value shaped like its argument (sum a broadcast "
        f"contribution over the broadcast axes)"
    )


def _is_real_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@helper(passes=True)
def owned(value, *args):
    """``value`` (a gradient, or a tuple, list or dict of them) with every array that
    is read-only, a view, an argument, or already returned once replaced by a copy:
    what the caller gets shares memory with nothing."""
    taken = set()
    for a in args:
        for leaf in _array_leaves(a):
            taken.add(id(leaf))
    return _owned(value, taken)


def _array_leaves(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _array_leaves(v)]
    return [value] if hasattr(value, "shape") and not isinstance(value, np.generic) else []


def _owned(value, taken):
    if isinstance(value, tuple):
        return tuple(_owned(v, taken) for v in value)
    if isinstance(value, list):
        return [_owned(v, taken) for v in value]
    if isinstance(value, dict):
        return {k: _owned(v, taken) for k, v in value.items()}
    if not hasattr(value, "shape") or isinstance(value, np.generic):
        return value  # numbers are immutable
    writeable = getattr(getattr(value, "flags", None), "writeable", True)
    if id(value) in taken or getattr(value, "base", None) is not None or not writeable:
        value = value.copy()
    taken.add(id(value))
    return value


def _describe(value):
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return f"a {type(value).__name__} of dtype {dtype} and shape {_shape(value)}"
    return f"{type(value).__name__} {value!r:.40}"
