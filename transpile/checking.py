"""Gradient checks that default to the generated gradient.

``transpile_runtime.gradcheck`` compares any gradient function with central differences;
these wrappers fill in ``grad_fn`` with ``transpile.grad(f, wrt)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transpile.api import grad, jvp
from transpile.second_order import hvp
from transpile_runtime import gradcheck
from transpile_runtime.gradcheck import GradReport, numeric_grad
from transpile_runtime.structure import Wrt


def check_grad(
    f: Callable[..., Any],
    *args: Any,
    wrt: Wrt = 0,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    grad_fn: Callable[..., Any] | None = None,
    eps: float | None = None,
    mode: str = "full",
    n: int = 8,
    order: int = 1,
    seed: int = 0,
    entries: int | None = None,
) -> GradReport:
    """Compare the generated gradient of ``f`` (or ``grad_fn``, a gradient to check)
    with central finite differences at ``args``; returns a report that prints as a
    table (and renders as HTML in Jupyter); ``bool(report)`` says whether it passed.

    ``mode="full"``: every entry of the gradient (two calls of ``f`` per entry), or
    with ``entries=K`` that many entries drawn at random (seeded by ``seed``).
    ``mode="directions"``: ``n`` random directions, as JAX's ``check_grads``: along each,
    the reverse-mode gradient and the forward-mode ``jvp`` against a central difference
    of ``f``, and with ``order=2`` the ``hvp`` against a central difference of the
    gradient; a few calls of ``f`` per direction, whatever the arguments' size."""
    grad_fn = grad_fn if grad_fn is not None else grad(f, wrt=wrt)
    if mode == "full" and entries is not None:
        return gradcheck.check_entries(
            f,
            *args,
            grad_fn=grad_fn,
            entries=entries,
            wrt=wrt,
            seed=seed,
            rtol=rtol,
            atol=atol,
            eps=eps,
        )
    if mode == "full":
        return gradcheck.check_grad(
            f, *args, wrt=wrt, rtol=rtol, atol=atol, grad_fn=grad_fn, eps=eps
        )
    if mode != "directions":
        raise ValueError(f"mode is 'full' or 'directions', not {mode!r}")
    if order not in (1, 2):
        raise ValueError(f"order is 1 or 2, not {order!r}")
    return gradcheck.check_directions(
        f,
        *args,
        grad_fn=grad_fn,
        jvp_fn=jvp(f, wrt=wrt),
        hvp_fn=hvp(f, wrt=wrt) if order == 2 else None,
        wrt=wrt,
        n=n,
        seed=seed,
        rtol=rtol,
        atol=atol,
        eps=eps,
    )


def assert_grad_close(
    f: Callable[..., Any],
    *args: Any,
    wrt: Wrt = 0,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    grad_fn: Callable[..., Any] | None = None,
    eps: float | None = None,
) -> GradReport:
    """Like ``check_grad``, but raises ``AssertionError`` with the table on a mismatch."""
    grad_fn = grad_fn if grad_fn is not None else grad(f, wrt=wrt)
    return gradcheck.assert_grad_close(
        f, *args, wrt=wrt, rtol=rtol, atol=atol, grad_fn=grad_fn, eps=eps
    )


__all__ = ["GradReport", "assert_grad_close", "check_grad", "numeric_grad"]
