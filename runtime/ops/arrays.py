"""Small functions on values that the helper families share: a value's shape (an
array's, a number's, a shape a loop recorded), the array library of some values (for
NEP-35 ``like=``), a number lifted to a 0-d array of that library, the identity, and
reduction axes made explicit. Not called by generated code.
"""

import numpy as np


def _like(*xs):
    """The first of ``xs`` that is an array of a library other than numpy (for NEP-35
    ``like=``), else None (numpy's own creation, at numpy's speed)."""
    for x in xs:
        if type(x) is not np.ndarray and hasattr(x, "__array_function__"):
            return x
    return None


def _lift(g, *likes):
    """``g`` as an array: a number (a Python or numpy scalar) as a 0-d array of the
    library of ``likes`` (numpy's where they are numpy), so that reshaping or expanding
    it keeps it in that library; an array as it is."""
    if hasattr(g, "ndim") and not isinstance(g, np.generic):
        return g
    return np.asarray(g, like=_like(*likes))


def _eye(n, *likes):
    """The boolean identity of size ``n`` in the library of ``likes``."""
    return np.eye(n, dtype=bool, like=_like(*likes))


def _shape(x):
    if type(x) is tuple and all(type(n) is int for n in x):  # a shape recorded by a loop
        return x
    if isinstance(x, (list, tuple)):
        return np.shape(x)
    return getattr(x, "shape", ())


def _axes(ndim, axis):
    if axis is None or ndim == 0:  # numpy accepts axis 0 or -1 on a 0-d value
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim for a in axis)
