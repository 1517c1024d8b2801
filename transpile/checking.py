"""Gradient checks that default to the generated gradient.

``transpile_runtime.gradcheck`` compares any gradient function with central differences;
these wrappers fill in ``grad_fn`` with ``transpile.grad(f, wrt)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transpile.api import grad
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
) -> GradReport:
    """Compare the generated gradient of ``f`` (or ``grad_fn``, a gradient to check)
    with central finite differences at ``args``; returns a report that prints as a
    table (and renders as HTML in Jupyter); ``bool(report)`` says whether it passed."""
    grad_fn = grad_fn if grad_fn is not None else grad(f, wrt=wrt)
    return gradcheck.check_grad(f, *args, wrt=wrt, rtol=rtol, atol=atol, grad_fn=grad_fn, eps=eps)


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
