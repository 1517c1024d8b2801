"""The adjoints of linear algebra in ``transpile_runtime.ops`` (``solve_rhs_adjoint``,
``undet``, ``untensordot_a``, ``uneinsum_any``, ``unnorm_ord``, ``uncholesky``, ...), as
rules: second derivatives through ``np.linalg.solve``, ``det``, ``slogdet``, ``norm``,
``cholesky``, and the products ``np.dot``, ``tensordot``, ``kron``, ``inner``, ``vecdot``
and ``einsum``.

The adjoint of one operand of a product is linear in the cotangent and in the other
operands, and reads its own operand for its shape: its rule is the product again and
the adjoint of the other operand. Where an adjoint depends on a result of its operand
(``undet`` on ``det(a)``, ``uncumprod`` on ``cumprod(a)``), that result is an option
(``_y``) and the helper the rule calls holds its dependence (``ops.undet_slope``).
Where the math is longer than a line, it is a named helper in ``ops`` (without a rule
of its own: a third derivative through it is refused by name), next to the helper it
differentiates in that helper's family (``runtime/ops/linalg.py``, ``decompositions.py``,
``products.py``, ``einsum.py``).
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import VARIES, rule
from transpile_runtime import forward_ops, ops


@rule(ops.solve_rhs_adjoint, shape=VARIES, fresh=True)
def solve_rhs_adjoint(r, g, a, _b):  # r = solve(a^T, g)
    d[g] += np.linalg.solve(a, d[r])
    d[a] += ops.mT(ops.solve_matrix_adjoint(d[r], ops.mT(a), g, r))
    t[r] += ops.solve_rhs_adjoint(t[g], a, _b)
    t[r] -= ops.solve_rhs_adjoint(ops.mT(t[a]) @ r, a, _b)


@rule(ops.solve_matrix_adjoint, shape=VARIES, fresh=True)
def solve_matrix_adjoint(r, g, a, _b, x):  # -solve(a^T, g) x^T: linear in g and x; b: its ndim
    d[g] -= np.linalg.solve(a, d[r] @ x)
    d[x] -= ops.mT(d[r]) @ ops.solve_rhs_adjoint(g, a, _b)
    d[a] -= ops.mT(
        ops.solve_matrix_adjoint(d[r] @ x, ops.mT(a), g, ops.solve_rhs_adjoint(g, a, _b))
    )
    t[r] += ops.solve_matrix_adjoint(t[g], a, _b, x)
    t[r] += ops.solve_matrix_adjoint(g, a, _b, t[x])
    t[r] -= ops.solve_matrix_adjoint(ops.mT(t[a]) @ ops.solve_rhs_adjoint(g, a, _b), a, _b, x)


@rule(ops.undet, shape=VARIES, fresh=True)
def undet(r, g, _y, a):  # g y a^-T, with y = det(a): the slope holds y's dependence on a
    d[g] += ops.unbroadcast(np.sum(d[r] * ops.undet(np.ones_like(g), _y, a), axis=(-2, -1)), g)
    d[a] += ops.undet_slope(g, d[r], _y, a)
    t[r] += ops.undet(t[g], _y, a)
    t[r] += ops.undet_slope(g, t[a], _y, a)


@rule(ops.unslogdet, shape=VARIES, fresh=True)
def unslogdet(r, g, a):  # g[1] a^-T
    d[g] += ops.unslogdet_cotangent(d[r], g, a)
    d[a] += ops.unslogdet_slope(g, d[r], a)
    t[r] += ops.unslogdet(t[g], a)
    t[r] += ops.unslogdet_slope(g, t[a], a)


@rule(ops.unnorm_ord, shape=VARIES, fresh=True)
def unnorm_ord(r, g, y, x, _ord=None, _axis=None, _keepdims=False):  # g times the slope
    d[g] += ops.unbroadcast(
        np.sum(
            d[r] * ops.unnorm_ord(np.ones_like(g), y, x, _ord, _axis, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    d[x] += ops.unnorm_slope(g, d[r], y, x, _ord, _axis, _keepdims)
    d[y] += ops.unnorm_norm_adjoint(d[r], g, y, x, _ord, _axis, _keepdims)
    t[r] += ops.unnorm_ord(t[g], y, x, _ord, _axis, _keepdims)
    t[r] += ops.unnorm_slope(g, t[x], y, x, _ord, _axis, _keepdims)
    t[r] += ops.unnorm_norm_tangent(g, t[y], y, x, _ord, _axis, _keepdims)


@rule(ops.uncholesky, shape=VARIES, fresh=True)
def uncholesky(r, g, y, _upper=False):  # linear in g; y, the factor, through its inverse
    d[g] += ops.uncholesky_cotangent(d[r], y, _upper)
    d[y] += ops.uncholesky_factor_adjoint(d[r], g, y, _upper)
    t[r] += ops.uncholesky(t[g], y, _upper)
    t[r] += ops.uncholesky_factor_tangent(g, t[y], y, _upper)


# Tangents of linear algebra (``forward_ops``), reversed: a gradient through a loop's tape
# differentiated again is reverse over forward (``through_tape``). Each tangent is
# linear in the argument's tangent, and its adjoint there is the first-order adjoint.


@rule(forward_ops.slogdet, shape=VARIES, fresh=True, sequence_result=True)
def slogdet_tangent(r, _y, a, ta):  # (0, trace(a^-1 ta))
    d[ta] += ops.unslogdet(d[r], a)
    d[a] += ops.unslogdet_slope(d[r], ta, a)
    t[r] += forward_ops.slogdet(_y, a, t[ta])
    t[r] += forward_ops.slogdet(_y, a, -(t[a] @ np.linalg.solve(a, ta)))


@rule(forward_ops.cholesky, shape=VARIES, fresh=True)
def cholesky_tangent(r, y, ta, _upper=False):  # L Phi(L^-1 ta L^-T) = uncholesky's adjoint
    d[ta] += ops.uncholesky(d[r], y, _upper)
    d[y] += ops.uncholesky_factor_adjoint(ta, d[r], y, _upper)
    t[r] += forward_ops.cholesky(y, t[ta], _upper)
    t[r] += forward_ops.cholesky_factor(y, t[y], ta, _upper)


# Products: the adjoint of one operand is linear in the cotangent and in the other
# operands, and reads its own operand for its shape.


@rule(ops.dot_left, shape=VARIES, fresh=True)
def dot_left(r, g, _x, y):
    d[g] += np.dot(d[r], y)
    d[y] += ops.dot_right(g, d[r], y)
    t[r] += ops.dot_left(t[g], _x, y)
    t[r] += ops.dot_left(g, _x, t[y])


@rule(ops.dot_right, shape=VARIES, fresh=True)
def dot_right(r, g, x, _y):
    d[g] += np.dot(x, d[r])
    d[x] += ops.dot_left(g, x, d[r])
    t[r] += ops.dot_right(t[g], x, _y)
    t[r] += ops.dot_right(g, t[x], _y)


@rule(ops.untensordot_a, shape=VARIES, fresh=True)
def untensordot_a(r, g, _a, b, _axes):
    d[g] += np.tensordot(d[r], b, _axes)
    d[b] += ops.untensordot_b(g, d[r], b, _axes)
    t[r] += ops.untensordot_a(t[g], _a, b, _axes)
    t[r] += ops.untensordot_a(g, _a, t[b], _axes)


@rule(ops.untensordot_b, shape=VARIES, fresh=True)
def untensordot_b(r, g, a, _b, _axes):
    d[g] += np.tensordot(a, d[r], _axes)
    d[a] += ops.untensordot_a(g, a, d[r], _axes)
    t[r] += ops.untensordot_b(t[g], a, _b, _axes)
    t[r] += ops.untensordot_b(g, t[a], _b, _axes)


@rule(ops.unkron_a, shape=VARIES, fresh=True)
def unkron_a(r, g, _a, b):
    d[g] += np.kron(d[r], b)
    d[b] += ops.unkron_b(g, d[r], b)
    t[r] += ops.unkron_a(t[g], _a, b)
    t[r] += ops.unkron_a(g, _a, t[b])


@rule(ops.unkron_b, shape=VARIES, fresh=True)
def unkron_b(r, g, a, _b):
    d[g] += np.kron(a, d[r])
    d[a] += ops.unkron_a(g, a, d[r])
    t[r] += ops.unkron_b(t[g], a, _b)
    t[r] += ops.unkron_b(g, t[a], _b)


@rule(ops.uneinsum_any, shape=VARIES, shares=True)
def uneinsum_any(r, g, _subscripts, operands, _index):
    d[g] += np.einsum(_subscripts, *ops.replaced(operands, _index, d[r]))
    d[operands] += ops.uneinsum_others(d[r], g, _subscripts, operands, _index)
    t[r] += ops.uneinsum_any(t[g], _subscripts, operands, _index)
    t[r] += ops.uneinsum_tangent(g, _subscripts, operands, t[operands], _index)


@rule(ops.uninner_a, shape=VARIES, fresh=True)
def uninner_a(r, g, _a, b):
    d[g] += np.inner(d[r], b)
    d[b] += ops.uninner_b(g, d[r], b)
    t[r] += ops.uninner_a(t[g], _a, b)
    t[r] += ops.uninner_a(g, _a, t[b])


@rule(ops.uninner_b, shape=VARIES, fresh=True)
def uninner_b(r, g, a, _b):
    d[g] += np.inner(a, d[r])
    d[a] += ops.uninner_a(g, a, d[r])
    t[r] += ops.uninner_b(t[g], a, _b)
    t[r] += ops.uninner_b(g, t[a], _b)


@rule(ops.unvecdot, shape=VARIES, fresh=True)
def unvecdot(r, g, other, _mine, _axis=-1):
    d[g] += ops.unbroadcast(np.vecdot(d[r], other, axis=_axis), g)
    d[other] += ops.unvecdot(g, d[r], other, _axis)
    t[r] += ops.unvecdot(t[g], other, _mine, _axis)
    t[r] += ops.unvecdot(g, t[other], _mine, _axis)
