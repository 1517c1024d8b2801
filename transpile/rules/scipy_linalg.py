"""``scipy.linalg``: inverses, determinants, solves (general, structured, triangular,
Cholesky and LU), the Cholesky and LU factorizations, ``expm``, ``eigh`` and ``pinv``.
Loaded only where scipy is installed (``rules.optional_families``).

Where a solver reads only part of its matrix (``assume_a="sym"`` or ``"pos"``, one
triangle, chosen by ``lower``; ``solve_triangular``; the factor's triangle of
``cho_factor``'s result) the adjoint lies on the part read, so that it is the derivative
of what runs. ``cho_factor`` and ``lu_factor`` return a pair whose second entry
(``lower``, the pivots) is not differentiated; ``cho_solve`` and ``lu_solve`` take that
pair. A call with an option the rule does not list (``eigh`` with ``b``, ``subset_by_index``
or ``type``; ``pinv`` with ``return_rank``; ``solve`` with ``assume_a="banded"``) has no
rule, and a differentiated one is refused. ``overwrite_a=True`` (or ``_b``) in a
differentiated call raises when the gradient runs: it destroys what the adjoint reads.

Every rule has its forward lines. The helpers have no rules of their own yet, so
second derivatives through these functions are refused, naming the helper.
"""

from scipy import linalg

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, FIRST_DATA, TWO_DATA, rule
from transpile_runtime import forward_ops, ops, scipy_ops


@rule(linalg.inv, shape=FIRST_DATA)
def inv(y, a, _overwrite_a=False, _check_finite=True, *, _assume_a=None, _lower=False):
    d[a] += scipy_ops.uninv(d[y], y, a, _assume_a, _lower, _overwrite_a)
    t[y] += scipy_ops.inv_tangent(t[a], y, _assume_a, _lower)


@rule(linalg.det, shape=FIRST_DATA)
def det(y, a, _overwrite_a=False, _check_finite=True):
    d[a] += ops.undet(d[y], y, a)
    t[y] += (ops.undet(1.0, y, a) * t[a]).sum(axis=(-2, -1))


@rule(linalg.solve, shape=TWO_DATA)
def solve(
    x,
    a,
    b,
    _lower=False,
    _overwrite_a=False,
    _overwrite_b=False,
    _check_finite=True,
    _assume_a=None,
    _transposed=False,
):
    d[b] += scipy_ops.unsolve_b(d[x], a, _lower, _assume_a, _transposed)
    d[a] += scipy_ops.unsolve_a(d[x], a, x, _lower, _assume_a, _transposed, _overwrite_a)
    t[x] += scipy_ops.solve_tangent(t[a], t[b], a, x, _lower, _assume_a, _transposed)


@rule(linalg.solve_triangular, shape=TWO_DATA)
def solve_triangular(
    x, a, b, _trans=0, _lower=False, _unit_diagonal=False, _overwrite_b=False, _check_finite=True
):
    d[b] += scipy_ops.unsolve_triangular_b(d[x], a, _trans, _lower, _unit_diagonal)
    d[a] += scipy_ops.unsolve_triangular_a(d[x], a, x, _trans, _lower, _unit_diagonal)
    t[x] += scipy_ops.solve_triangular_tangent(t[a], t[b], a, x, _trans, _lower, _unit_diagonal)


@rule(linalg.cholesky, shape=FIRST_DATA)
def cholesky(y, a, _lower=False, _overwrite_a=False, _check_finite=True):
    d[a] += ops.uncholesky(d[y], y, not _lower)
    t[y] += forward_ops.cholesky(y, t[a], not _lower)


@rule(linalg.cho_factor, shape=FIRST_DATA, sequence_result=True)
def cho_factor(y, a, _lower=False, _overwrite_a=False, _check_finite=True):
    d[a] += scipy_ops.uncho_factor(d[y], y, _overwrite_a)
    t[y] += scipy_ops.cho_factor_tangent(y, t[a])


@rule(linalg.cho_solve, shape=TWO_DATA)
def cho_solve(x, c_and_lower, b, _overwrite_b=False, _check_finite=True):
    d[b] += scipy_ops.uncho_solve_b(d[x], c_and_lower)
    d[c_and_lower] += scipy_ops.uncho_solve_factor(d[x], c_and_lower, x)
    t[x] += scipy_ops.cho_solve_tangent(t[c_and_lower], t[b], c_and_lower, x)


@rule(linalg.lu_factor, shape=FIRST_DATA, sequence_result=True)
def lu_factor(y, a, _overwrite_a=False, _check_finite=True):
    d[a] += scipy_ops.unlu_factor(d[y], y, _overwrite_a)
    t[y] += scipy_ops.lu_factor_tangent(y, t[a])


@rule(linalg.lu_solve, shape=TWO_DATA)
def lu_solve(x, lu_and_piv, b, _trans=0, _overwrite_b=False, _check_finite=True):
    d[b] += scipy_ops.unlu_solve_b(d[x], lu_and_piv, _trans)
    d[lu_and_piv] += scipy_ops.unlu_solve_factor(d[x], lu_and_piv, x, _trans)
    t[x] += scipy_ops.lu_solve_tangent(t[lu_and_piv], t[b], lu_and_piv, x, _trans)


@rule(linalg.expm, shape=ALL_DATA)
def expm(y, a):
    d[a] += scipy_ops.unexpm(d[y], a)
    t[y] += scipy_ops.expm_frechet(a, t[a])


@rule(linalg.eigh, shape=FIRST_DATA, sequence_result=True)
def eigh(y, a, *, _lower=True, _eigvals_only=False, _overwrite_a=False, _check_finite=True):
    d[a] += scipy_ops.uneigh(d[y], y, a, _lower, _eigvals_only, _overwrite_a)
    t[y] += scipy_ops.eigh_tangent(y, a, t[a], _lower, _eigvals_only)


@rule(linalg.pinv, shape=FIRST_DATA)
def pinv(y, a, *, _atol=None, _rtol=None, _check_finite=True):
    d[a] += ops.unpinv(d[y], y, a, False)
    t[y] += forward_ops.pinv(y, a, t[a], False)
