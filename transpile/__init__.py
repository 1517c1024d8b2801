"""transpile: source-to-source reverse-mode automatic differentiation for NumPy code.

``grad(f)`` reads ``f``'s source and returns an explicit, readable adjoint function
written in plain numpy; ``source(grad(f))`` shows it. ``defvjp``, ``rule`` (with ``d``)
and ``nondifferentiable`` give derivative rules of your own; ``hvp`` and ``hessian``
second derivatives (``grad(grad(f))`` works too); ``jvp`` is forward mode and
``jacobian`` the full Jacobian, by either mode.
"""

from transpile.analysis.cuts import CutGradientWarning
from transpile.api import grad, jvp, source, value_and_grad, vjp
from transpile.checking import GradReport, assert_grad_close, check_grad, numeric_grad
from transpile.core.errors import TranspileError
from transpile.core.template import d
from transpile.explain import explain
from transpile.export import ExportError, export
from transpile.jacobians import jacobian
from transpile.rules.user_rules import defvjp, nondifferentiable, rule
from transpile.second_order import hessian, hvp
from transpile_runtime import checkpoint, checkpointed, insert_grad_of, stop_gradient

__all__ = [
    "CutGradientWarning",
    "ExportError",
    "GradReport",
    "TranspileError",
    "assert_grad_close",
    "check_grad",
    "checkpoint",
    "checkpointed",
    "d",
    "defvjp",
    "explain",
    "export",
    "grad",
    "hessian",
    "hvp",
    "insert_grad_of",
    "jacobian",
    "jvp",
    "nondifferentiable",
    "numeric_grad",
    "rule",
    "source",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
