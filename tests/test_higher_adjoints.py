"""Second derivatives through the runtime adjoints of numpy functions (issue 19): each
rule of ``rules/runtime_adjoints.py`` and ``rules/runtime_linalg.py`` against central
differences, reverse and forward lines, and functions whose gradients call them
differentiated twice by every entry point (``hvp`` in its three forms, ``hessian``, ``jacobian`` of the gradient in both
modes), against central differences of the gradient, on a first and a later call."""

import numpy as np
import pytest

import tests.adjoint_rule_funcs as af
from tests.fd import assert_close, numeric_grad, numeric_jvp
from transpile import TranspileError, grad, hessian, hvp, jacobian, jvp
from transpile.rules import declarations, runtime_adjoints, runtime_linalg
from transpile_runtime import forward_ops, ops

_R = np.random.default_rng(19)


def _n(*shape):
    return _R.normal(size=shape)


def _spd():
    return af._A3 + 0.1 * _n(3, 3)


def _factor():
    """A Cholesky factor (lower) of a well-conditioned matrix."""
    a = _spd()
    return np.linalg.cholesky(a @ a.T)


RULE_ROWS = [
    # (function, args, wrt, helpers it covers)
    (af.h_mT, (_n(4, 3),), 0, [ops.mT]),
    (af.h_unsort, (_n(3),), 0, [ops.unsort]),
    (af.h_unsort_2d, (_n(3, 4),), 0, []),
    (af.h_unsort_flat, (_n(12),), 0, []),
    (af.h_uncumsum, (_n(3, 4),), 0, [ops.uncumsum]),
    (af.h_uncumsum_flat, (_n(12),), 0, []),
    (af.h_unconcatenate, (_n(5, 4),), 0, [ops.unconcatenate]),
    (af.h_unstack, (_n(3, 2),), 0, [ops.unstack]),
    (af.h_unvstack, (_n(3, 3),), 0, [ops.unvstack]),
    (af.h_untrace, (0.7,), 0, [ops.untrace]),
    (af.h_undiag, (_n(4, 4),), 0, [ops.undiag]),
    (af.h_undiag_matrix, (_n(3),), 0, []),
    (af.h_unroll, (_n(3, 4),), 0, [ops.unroll]),
    (af.h_untile, (_n(2, 6),), 0, [ops.untile]),
    (af.h_unrepeat_array, (_n(3, 8),), 0, [ops.unrepeat_array]),
    (af.h_unpad, (_n(7),), 0, [ops.unpad]),
    (af.h_untake_along_axis, (_n(3),), 0, [ops.untake_along_axis]),
    (af.h_unvar, (_n(3), _n(3, 4)), (0, 1), [ops.unvar]),
    (af.h_solve_rhs_adjoint, (_n(3), _spd()), (0, 1), [ops.solve_rhs_adjoint]),
    (af.h_solve_matrix_adjoint, (_n(3), _spd(), _n(3)), (0, 1, 2), [ops.solve_matrix_adjoint]),
    (af.h_solve_matrix_adjoint_2d, (_n(3, 2), _spd(), _n(3, 2)), (0, 1, 2), []),
    (af.h_undet, (0.8, _spd()), (0, 1), [ops.undet]),
    (af.h_unslogdet, (0.8, _spd()), (0, 1), [ops.unslogdet]),
    (af.h_dot_left, (_n(3, 2), _n(4, 2)), (0, 1), [ops.dot_left]),
    (af.h_dot_right, (_n(2, 4), _n(2, 3)), (0, 1), [ops.dot_right]),
    (af.h_untensordot_a, (_n(3, 2), _n(4, 2)), (0, 1), [ops.untensordot_a]),
    (af.h_untensordot_b, (_n(2, 4), _n(2, 3)), (0, 1), [ops.untensordot_b]),
    (af.h_unkron_a, (_n(6), _n(2)), (0, 1), [ops.unkron_a]),
    (af.h_unkron_b, (_n(6), _n(2)), (0, 1), [ops.unkron_b]),
    (af.h_uneinsum_any, (_n(3, 4), _n(3, 3), _n(3, 4)), (0, 1, 2), [ops.uneinsum_any]),
    (af.h_uneinsum_diagonal, (0.6, _n(3)), (0, 1), []),
    (af.h_unnorm_ord, (0.8, 1.7, _n(3)), (0, 1, 2), [ops.unnorm_ord]),
    (af.h_unnorm_p, (0.8, 1.7, _n(3)), (0, 1, 2), []),
    (af.h_unnorm_axis, (_n(3), np.abs(_n(3)) + 1.0, _n(3, 4)), (0, 1, 2), []),
    (af.h_uninner_a, (_n(3, 2), _n(2, 4)), (0, 1), [ops.uninner_a]),
    (af.h_uninner_b, (_n(2, 3), _n(2, 4)), (0, 1), [ops.uninner_b]),
    (af.h_unvecdot, (_n(3), _n(3, 4)), (0, 1), [ops.unvecdot]),
    (af.h_unnan_extreme, (_n(4),), 0, [ops.unnan_extreme]),
    (af.h_unptp, (_n(3),), 0, [ops.unptp]),
    (af.h_unmedian, (_n(3),), 0, [ops.unmedian]),
    (af.h_unnanmean, (_n(4),), 0, [ops.unnanmean]),
    (af.h_spread, (_n(3, 4),), 0, [ops.spread]),
    (af.h_head, (_n(3), _n(3)), (0, 1), [ops.head]),
    (af.h_tail, (_n(3), _n(3)), (0, 1), [ops.tail]),
    (af.h_unrepeat, (_n(3), _n(3)), (0, 1), [ops.unrepeat]),
    (af.h_unjoin, (_n(2, 4),), 0, [ops.unjoin]),
    (af.h_unatleast, (_n(1, 3),), 0, [ops.unatleast]),
    (af.h_undiff, (_n(3),), 0, [ops.undiff]),
    (af.h_undiff_prepend, (_n(3),), 0, []),
    (af.h_unappend, (_n(6),), 0, [ops.unappend]),
    (af.h_undiagonal, (_n(3),), 0, [ops.undiagonal]),
    (af.h_uncast, (_n(3),), 0, [ops.uncast]),
    (af.h_unarray_cast, (_n(2, 3),), 0, [ops.unarray_cast]),
    (af.h_uncumprod, (_n(3, 4), _n(3, 4)), (0, 1), [ops.uncumprod]),
    (af.h_uncumprod_zero, (_n(4), _n(4)), (0, 1), []),
    (af.h_unaverage, (_n(3),), 0, [ops.unaverage]),
    (af.h_unaverage_returned, (0.7,), 0, []),
    (af.h_uncholesky, (_n(3, 3), np.linalg.cholesky(_spd() @ _spd().T)), (0, 1), [ops.uncholesky]),
    (af.h_uncholesky_upper, (_n(3, 3), np.linalg.cholesky(_spd() @ _spd().T).T), (0, 1), []),
    (af.h_slogdet_tangent, (_n(3, 3), _spd(), (1.0, 0.0)), (0, 1), [forward_ops.slogdet]),
    (af.h_cholesky_tangent, (_n(3, 3), _factor()), (0, 1), [forward_ops.cholesky]),
    (af.h_cholesky_tangent_upper, (_n(3, 3), _factor().T), (0, 1), []),
    (af.h_tangent_like, (_n(4),), 0, [ops.tangent_like]),
    (af.h_fwinner, (np.array([0.2, 0.9, -0.4]),), 0, [ops.fwinner]),
]


def _indices(wrt):
    return wrt if isinstance(wrt, tuple) else (wrt,)


@pytest.mark.parametrize("f, args, wrt, covers", RULE_ROWS, ids=[r[0].__name__ for r in RULE_ROWS])
def test_adjoint_rule_reverse_lines(f, args, wrt, covers):
    expected = numeric_grad(f, args, _indices(wrt))
    gradient = grad(f, wrt=wrt)
    for call in ("first call", "later call"):
        got = gradient(*args)
        got = got if isinstance(wrt, tuple) else (got,)
        for a, b in zip(got, expected):
            assert_close(a, b, rtol=1e-6, atol=1e-8, path=call)


@pytest.mark.parametrize("f, args, wrt, covers", RULE_ROWS, ids=[r[0].__name__ for r in RULE_ROWS])
def test_adjoint_rule_forward_lines(f, args, wrt, covers):
    indices = _indices(wrt)
    rng = np.random.default_rng(len(RULE_ROWS))
    tangents = tuple(
        rng.normal(size=np.shape(args[i])) if np.ndim(args[i]) else float(rng.normal())
        for i in indices
    )
    expected = numeric_jvp(f, args, indices, tangents)
    forward = jvp(f, wrt=wrt)
    for call in ("first call", "later call"):
        _, got = forward(*args, tangents if isinstance(wrt, tuple) else tangents[0])
        assert_close(got, expected, rtol=1e-6, atol=1e-8, path=call)


def test_every_adjoint_rule_has_a_row():
    covered = [h for *_, covers in RULE_ROWS for h in covers]
    missing = [
        obj.__name__
        for family in (runtime_adjoints, runtime_linalg)
        for decl, _ in declarations(family)
        for obj in decl.objects
        if not any(obj is c for c in covered)
    ]
    assert not missing, f"runtime adjoint rules without a row: {missing}"


# --------------------------------------------------------------------------
# Functions whose gradients call them, differentiated twice

TWICE = [
    af.sort,
    af.cumsum,
    af.cumprod,
    af.average,
    af.cholesky,
    af.concatenate,
    af.stack,
    af.split,
    af.solve,
    af.solve_matrix,
    af.inv,
    af.matrix_transposed,
    af.det,
    af.slogdet,
    af.var,
    af.std,
    af.einsum,
    af.einsum_matrix,
    af.diag,
    af.trace,
    af.norm,
    af.norm_axis,
    af.tile,
    af.repeat,
    af.roll,
    af.tensordot,
    af.dot,
    af.kron,
    af.lists,
    af.array_of,
    af.joins,
    af.diffs,
    af.extremes,
    af.casts,
    af.diagonal,
    af.take_along,
    af.loop_broadcast,
    af.mask_write,
    af.row_write,
]

_X = np.array([0.6, -0.4, 0.9])
ENTRIES = {
    "hvp": lambda f, v: hvp(f)(_X.copy(), v),
    "hvp_has_grad": lambda f, v: hvp(f, has_grad=True)(_X.copy(), v)[1],
    "hvp_reverse": lambda f, v: hvp(f, mode="reverse")(_X.copy(), v),
    "hessian": lambda f, v: hessian(f)(_X.copy()) @ v,
    "jacobian_forward": lambda f, v: jacobian(grad(f), mode="forward")(_X.copy()) @ v,
    "jacobian_reverse": lambda f, v: jacobian(grad(f), mode="reverse")(_X.copy()) @ v,
}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("f", TWICE, ids=lambda f: f.__name__)
def test_second_derivative_matches_differences_of_the_gradient(f, entry):
    first = grad(f)
    x_before = _X.copy()
    for call, v in (("first call", np.array([0.3, 0.8, -0.5])), ("later call", _n(3))):
        expected = numeric_jvp(lambda x: first(x), (_X,), (0,), (v,))
        assert_close(ENTRIES[entry](f, v), expected, rtol=1e-5, atol=1e-7, path=call)
    assert np.array_equal(_X, x_before)


def test_a_second_derivative_in_average_weights_is_refused_by_name():
    with pytest.raises(TranspileError, match="unaverage_weights"):
        hvp(af.average_in_weights)(_X.copy(), _X.copy())


def test_the_mT_attribute_has_a_gradient():
    # (x.mT had no rule: grad refused it, while np.matrix_transpose had one)
    expected = numeric_grad(af.matrix_transposed, (_X,), (0,))[0]
    assert_close(grad(af.matrix_transposed)(_X.copy()), expected, rtol=1e-7)


def test_a_norm_whose_second_derivative_is_not_supported_says_so():
    def nuclear(x):
        return np.linalg.norm(np.outer(x, x) + af._A3, ord="nuc")

    with pytest.raises(NotImplementedError, match="ord='nuc'"):
        hvp(nuclear)(_X.copy(), _X.copy())
    np.testing.assert_allclose(grad(nuclear)(_X.copy()), numeric_grad(nuclear, (_X,), (0,))[0])


@pytest.mark.parametrize(
    "f",
    [af.third_sort, af.third_solve, af.third_tensordot, af.third_concatenate],
    ids=lambda f: f.__name__,
)
def test_third_derivative_through_linear_adjoints(f):
    second, third = grad(grad(f)), grad(grad(grad(f)))
    for t in (0.7, -0.3):
        expected = numeric_grad(lambda s: second(s), (t,), (0,))[0]
        assert_close(third(t), expected, rtol=1e-6, atol=1e-8)


def test_a_third_derivative_through_det_is_refused_by_name():
    np.testing.assert_allclose(
        grad(grad(af.third_det))(0.7),
        numeric_grad(lambda s: grad(af.third_det)(s), (0.7,), (0,))[0],
        rtol=1e-6,
    )
    with pytest.raises(TranspileError, match="undet_slope"):
        grad(grad(grad(af.third_det)))(0.7)
