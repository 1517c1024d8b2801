"""What generated gradient code calls at run time.

This package is small and stable, and it never imports ``transpile``: the
compiler depends on it, not the other way round.
"""

from .gradcheck import GradReport, assert_grad_close, check_grad, numeric_grad


def stop_gradient(x):
    """Return ``x`` unchanged; differentiation treats the result as a constant."""
    return x


def checkpoint(fn):
    """Mark ``fn``, a function of yours that a differentiated function calls, to be
    recomputed instead of remembered: its call runs as written (keeping none of its
    intermediate values), and the backward sweep runs its forward function again where
    its adjoint needs them. Returns ``fn`` itself; usable as ``@checkpoint``."""
    fn.__transpile_checkpoint__ = True
    return fn


class insert_grad_of:  # a lowercase name: it reads as a statement, like `with open(...)`
    """``with insert_grad_of(x) as dx: ...``: in a gradient, the block runs in the
    backward sweep, on the adjoint of ``x`` as it stands there (it may read, print or
    change ``dx``). Where the function runs undifferentiated, the block runs once with
    ``dx`` a zero: no gradient flows in a plain call."""

    def __init__(self, x):
        self.x = x

    def __enter__(self):
        return 0.0

    def __exit__(self, *exc):
        return False


__all__ = [
    "GradReport",
    "assert_grad_close",
    "check_grad",
    "checkpoint",
    "insert_grad_of",
    "numeric_grad",
    "stop_gradient",
]
