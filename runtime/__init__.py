"""What generated gradient code calls at run time.

This package is small and stable, and it never imports ``transpile``: the
compiler depends on it, not the other way round.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from .gradcheck import (
    GradReport,
    assert_grad_close,
    check_directions,
    check_entries,
    check_grad,
    numeric_grad,
)

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


def stop_gradient(x: _T) -> _T:
    """Return ``x`` unchanged; differentiation treats the result as a constant."""
    return x


def checkpoint(fn: _F) -> _F:
    """Mark ``fn``, a function of yours that a differentiated function calls, to be
    recomputed instead of remembered: its call runs as written (keeping none of its
    intermediate values), and the backward sweep runs its forward function again where
    its adjoint needs them. Returns ``fn`` itself; usable as ``@checkpoint``."""
    fn.__transpile_checkpoint__ = True  # type: ignore[attr-defined]
    return fn


def checkpointed(iterable: _T, snapshots: int = 20) -> _T:
    """Mark a loop to be differentiated within a fixed memory: ``for t in
    checkpointed(range(T), snapshots=20):``, or ``while checkpointed(cond, snapshots=k):``.
    Returns its argument unchanged; a gradient keeps at most ``snapshots`` states of the
    loop and runs the steps between them again in its backward sweep (a binomial
    schedule for a ``for`` loop, an online one for a ``while`` loop: ``revolve``)."""
    return iterable


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
    "check_directions",
    "check_entries",
    "check_grad",
    "checkpoint",
    "checkpointed",
    "insert_grad_of",
    "numeric_grad",
    "stop_gradient",
]
