"""What generated gradient code calls at run time.

This package is small and stable, and it never imports ``transpile``: the
compiler depends on it, not the other way round.
"""

from .gradcheck import GradReport, assert_grad_close, check_grad, numeric_grad


def stop_gradient(x):
    """Return ``x`` unchanged; differentiation treats the result as a constant."""
    return x


__all__ = ["GradReport", "assert_grad_close", "check_grad", "numeric_grad", "stop_gradient"]
