"""Higher order (issue 9): ``grad(grad(f))`` and deeper, ``grad`` of functions that call
a gradient, ``hvp`` and ``hessian``, against closed forms and finite differences of the
first gradient, on a first and a later call; the rules of the runtime helpers."""

import numpy as np
import pytest

import tests.higher_order_funcs as hf
from tests.fd import numeric_grad, numeric_jvp
from transpile import TranspileError, grad, hessian, hvp, jacobian, jvp, source, value_and_grad
from transpile.rules import declarations, runtime_ops
from transpile_runtime import complex_ops, ops

RTOL = 1e-6

SCALAR_CASES = [
    (hf.sine, hf.sine_dd, (0.7,)),
    (hf.poly, hf.poly_dd, (-1.3,)),
    (hf.exp_log, hf.exp_log_dd, (0.4,)),
    (hf.branch, hf.branch_dd, (0.8, 1.7)),
    (hf.branch, hf.branch_dd, (-0.6, 1.7)),
    (hf.with_helper, hf.with_helper_dd, (0.35,)),
    (hf.stopped, hf.stopped_dd, (0.9,)),
]


def _fd_of_gradient(f, args):
    first = grad(f)
    return numeric_grad(lambda *a: first(*a), args, (0,))[0]


@pytest.mark.parametrize(
    "f, closed, args", SCALAR_CASES, ids=[f"{c[0].__name__}{c[2]}" for c in SCALAR_CASES]
)
def test_grad_of_grad_matches_closed_form(f, closed, args):
    second = grad(grad(f))
    for call in range(3):  # the first call records shapes; later ones may run a variant
        shifted = (args[0] + 0.01 * call,) + args[1:]
        got = second(*shifted)
        assert np.allclose(got, closed(*shifted), rtol=RTOL, atol=1e-9), call
    if f is not hf.stopped:  # finite differences see stop_gradient as the identity
        assert np.allclose(second(*args), _fd_of_gradient(f, args), rtol=1e-6, atol=1e-8)


def test_stop_gradient_is_constant_at_every_order():
    a = 0.9
    assert np.isclose(grad(hf.stopped)(a), np.cos(a) * a * a)
    assert np.isclose(grad(grad(hf.stopped))(a), -np.sin(a) * a * a)
    assert np.isclose(grad(grad(grad(hf.stopped)))(a), -np.cos(a) * a * a)


def test_deeper_nesting():
    x = 0.6
    third, fourth = grad(grad(grad(hf.sine))), grad(grad(grad(grad(hf.sine))))
    assert np.isclose(third(x), -np.cos(x)) and np.isclose(third(x), -np.cos(x))
    assert np.isclose(fourth(x), np.sin(x)) and np.isclose(fourth(x + 0.1), np.sin(x + 0.1))
    assert np.isclose(grad(grad(grad(hf.poly)))(x), 72.0 * x - 12.0)


def test_grad_of_grad_with_respect_to_another_argument():
    x, a = 0.8, 1.7
    mixed = grad(grad(hf.branch), wrt=1)  # d/da of d/dx [exp(x) a]
    assert np.isclose(mixed(x, a), np.exp(x)) and np.isclose(mixed(x, a), np.exp(x))


def test_value_and_grad_of_a_gradient():
    value, second = value_and_grad(grad(hf.poly))(0.5)
    assert np.isclose(value, grad(hf.poly)(0.5)) and np.isclose(second, hf.poly_dd(0.5))


def test_source_of_grad_of_grad_reads_as_code():
    text = source(grad(grad(hf.poly)))
    assert text.startswith("def ddpoly(x):") and "# grad of:" in text
    compile(text, "<test>", "exec")
    assert "slow_call" not in text and "_route" not in text


def test_grad_of_a_function_calling_a_gradient():
    x = np.array([0.3, -1.2, 2.0])
    g = grad(hf.force_norm)
    expected = numeric_grad(hf.force_norm, (x,), (0,))[0]
    for _ in range(2):
        assert np.allclose(g(x), expected, rtol=RTOL, atol=1e-8)
    # closed form: f = cos x - x sin x, f' = -2 sin x - x cos x
    f = np.cos(x) - x * np.sin(x)
    assert np.allclose(g(x), f * (-2.0 * np.sin(x) - x * np.cos(x)))


def test_indexed_reads_differentiate_twice():
    x = np.array([0.4, -0.7, 1.3])
    for _ in range(2):
        assert np.allclose(hessian(hf.indexed)(x), hf.indexed_hessian(x), rtol=RTOL)


# --------------------------------------------------------------------------
# hvp and hessian


def _rng(seed):
    return np.random.default_rng(seed)


def test_hvp_of_a_quadratic_is_A_v():
    rng = _rng(1)
    A = rng.normal(size=(4, 4))
    A = A + A.T
    x, v = rng.normal(size=4), rng.normal(size=4)
    product = hvp(hf.quadratic)
    for _ in range(3):
        assert np.allclose(product(x, A, v), A @ v, rtol=1e-10)
    B = rng.normal(size=(4, 4))  # not symmetric: the Hessian is (B + B^T) / 2
    assert np.allclose(product(x, B, v), 0.5 * (B + B.T) @ v)


def test_hvp_of_logistic_regression():
    rng = _rng(2)
    X, w, v = rng.normal(size=(20, 3)), rng.normal(size=3), rng.normal(size=3)
    y = (rng.random(20) < 0.5).astype(float)
    product = hvp(hf.logistic)
    for _ in range(2):
        got = product(w, X, y, v)
        assert np.allclose(got, hf.logistic_hvp(w, X, y, v), rtol=1e-9)
    first = grad(hf.logistic)
    assert np.allclose(got, numeric_jvp(first, (w, X, y), (0,), (v,)), rtol=1e-6)


def test_hvp_of_softmax_cross_entropy():
    rng = _rng(3)
    z, v = rng.normal(size=5), rng.normal(size=5)
    y = np.eye(5)[2]
    product = hvp(hf.softmax_xent)
    for _ in range(2):
        assert np.allclose(product(z, y, v), hf.softmax_xent_hvp(z, y, v), rtol=1e-9)
    W, X = rng.normal(size=(3, 4)), rng.normal(size=(6, 3))
    Y = np.eye(4)[rng.integers(0, 4, size=6)]
    V = rng.normal(size=(3, 4))
    got = hvp(hf.softmax_regression)(W, X, Y, V)
    expected = numeric_jvp(grad(hf.softmax_regression), (W, X, Y), (0,), (V,))
    assert got.shape == W.shape and np.allclose(got, expected, rtol=1e-6, atol=1e-9)


def test_hvp_against_finite_differences_of_the_gradient():
    rng = _rng(4)
    W1, b1, w2, x = (rng.normal(size=s) for s in ((3, 4), 4, 4, (5, 3)))
    for wrt, v in ((0, rng.normal(size=(3, 4))), ("w2", rng.normal(size=4))):
        index = 0 if wrt == 0 else 2
        got = hvp(hf.mlp, wrt=wrt)(W1, b1, w2, x, v)
        expected = numeric_jvp(grad(hf.mlp, wrt=wrt), (W1, b1, w2, x), (index,), (v,))
        assert np.allclose(got, expected, rtol=1e-6, atol=1e-9)


def test_hvp_with_a_tuple_wrt():
    rng = _rng(5)
    x, y = rng.normal(size=3), rng.normal(size=2) + 2.0
    v = (rng.normal(size=3), rng.normal(size=2))
    got = hvp(hf.two_args, wrt=(0, 1))(x, y, v)
    first = grad(hf.two_args, wrt=(0, 1))
    assert isinstance(got, tuple) and len(got) == 2
    for k in range(2):
        expected = numeric_jvp(lambda *a, k=k: first(*a)[k], (x, y), (0, 1), v)
        assert np.allclose(got[k], expected, rtol=1e-6)


def test_hessian_is_symmetric_and_stacks_hvps():
    rng = _rng(6)
    x = rng.normal(size=(2, 3))
    H = hessian(hf.matrix_poly)(x)
    assert H.shape == (2, 3, 2, 3)
    flat = H.reshape(6, 6)
    assert np.allclose(flat, flat.T)
    product = hvp(hf.matrix_poly)
    for k in range(6):
        e = np.zeros(6)
        e[k] = 1.0
        assert np.allclose(flat @ e, product(x, e.reshape(2, 3)).ravel())
    x = rng.normal(size=4)
    expected = np.diag(6.0 * x)
    expected[0, 2] = expected[2, 0] = 1.0
    assert np.allclose(hessian(hf.vector_poly)(x), expected)
    W, X = rng.normal(size=(3, 4)), rng.normal(size=(6, 3))
    Y = np.eye(4)[rng.integers(0, 4, size=6)]
    H = hessian(hf.softmax_regression)(W, X, Y).reshape(12, 12)
    assert np.allclose(H, H.T, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(H) > -1e-10)  # convex in W


def test_hessian_of_a_number_and_of_a_tuple_wrt():
    assert np.isclose(hessian(hf.poly)(0.3), hf.poly_dd(0.3))
    rng = _rng(7)
    x, y = rng.normal(size=3), rng.normal(size=2)
    blocks = hessian(hf.two_args, wrt=(0, 1))(x, y)
    assert [[b.shape for b in row] for row in blocks] == [[(3, 3), (3, 2)], [(2, 3), (2, 2)]]
    full = np.block([[blocks[0][0], blocks[0][1]], [blocks[1][0], blocks[1][1]]])
    assert np.allclose(full, full.T)
    v = rng.normal(size=5)
    product = hvp(hf.two_args, wrt=(0, 1))(x, y, (v[:3], v[3:]))
    assert np.allclose(full @ v, np.concatenate(product))


def test_source_of_hvp_shows_the_tangent_of_the_gradient():
    text = source(hvp(hf.logistic))  # forward over reverse: the gradient's code, with tangents
    assert "def dlogistic_jvp(w, X, y, w_dot):" in text and "# tangent of:" in text
    text = source(hvp(hf.logistic, mode="reverse"))  # the gradient of <grad f, v>
    assert "def dlogistic_grad_dot(w, X, y, v):" in text
    assert "def dlogistic_fwd(" in text and "def dlogistic_bwd(" in text


@pytest.mark.parametrize("f, args", [(hf.logistic, None), (hf.power_loop, None)])
def test_hvp_modes_agree(f, args):
    rng = _rng(23)
    if f is hf.logistic:
        X, y = rng.normal(size=(20, 3)), (rng.random(20) < 0.5).astype(float)
        args = (rng.normal(size=3), X, y)
    else:
        args = (rng.normal(size=4),)
    v = rng.normal(size=np.shape(args[0]))
    forward, reverse = hvp(f)(*args, v), hvp(f, mode="reverse")(*args, v)
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="forward over reverse"):
        hvp(f, has_grad=True, mode="reverse")


def test_hvp_is_cached():
    assert hvp(hf.logistic) is hvp(hf.logistic)
    assert hvp(hf.logistic, wrt=0) is not hvp(hf.logistic, wrt=(0,))


# --------------------------------------------------------------------------
# The rules of the runtime helpers, each against finite differences

_R = _rng(8)
_M34, _M43, _V3, _V4 = (_R.normal(size=s) for s in ((3, 4), (4, 3), 3, 4))
RULE_ROWS = [
    # (function, args, wrt, helpers it covers)
    (hf.h_unbroadcast, (_R.normal(size=(5, 3, 4)), _R.normal(size=(3, 1))), 0, [ops.unbroadcast]),
    (hf.h_unbroadcast, (_R.normal(size=(2, 3)), 0.5), 0, []),
    (hf.h_unreduce, (_V3, _M34), 0, [ops.unreduce]),
    (hf.h_unreduce_all, (0.7, _M34), 0, []),
    (hf.h_unmean, (_R.normal(size=(1, 4)), _M34), 0, [ops.unmean]),
    (hf.h_matmul_left, (_M34 @ _M43, _M34, _M43), (0, 2), [ops.matmul_left]),
    (hf.h_matmul_left, (_M34 @ _V4, _M34, _V4), (0, 2), []),
    (hf.h_matmul_left, (_V3 @ _M34, _V3, _M34), (0, 2), []),
    (hf.h_matmul_right, (_M34 @ _M43, _M34, _M43), (0, 1), [ops.matmul_right]),
    (hf.h_matmul_right, (_V3 @ _M34, _V3, _M34), (0, 1), []),
    (hf.h_matmul_right, (_M34 @ _V4, _M34, _V4), (0, 1), []),
    (hf.h_owned, (_V3, _V3 + 1.0), (0, 1), [ops.owned]),
    (hf.h_real_only, (_V3,), 0, [ops.real_only]),
    (hf.h_cotangent, (_V3, _V3), 0, [ops.cotangent]),
    (hf.h_complex_real_only, (_V3,), 0, [complex_ops.real_only]),
    (hf.h_real_like, (_V3, _V3), 0, [complex_ops.real_like]),
    (hf.h_contribution, (_V3, _V3), 0, [ops.contribution]),
    (hf.h_like, (_V3,), 0, [ops.like]),
    (hf.h_copy, (_V3,), 0, [ops.copy]),
    (hf.h_cast_like, (_V3, _V3), 0, [ops.cast_like]),
    (hf.h_add, (_V3, _V3 * 2.0), (0, 1), [ops.add]),
    (hf.h_select, (_V3 > 0, _V3, _V3 * 3.0), (1, 2), [ops.select]),
    (hf.h_untake, (_V3, _V4, np.array([0, 3, 0])), 0, [ops.untake]),
    (hf.h_pow_slope, (np.abs(_V3) + 0.5, 2.5), 0, [ops.pow_slope]),
    (hf.h_pow_log, (_V3, np.abs(_V3) + 0.5), (0, 1), [ops.pow_log]),
    (hf.h_hypot_slope, (_V3, np.abs(_V3) + 0.5), (0, 1), [ops.hypot_slope]),
    (hf.h_unreduce_extreme, (_V4, _M34), 0, [ops.unreduce_extreme]),
    (hf.h_unreduce_prod, (_V3, _M34), 0, [ops.unreduce_prod]),
    (hf.h_untranspose, (_R.normal(size=(2, 3, 4)),), 0, [ops.untranspose]),
    (hf.h_retranspose, (_R.normal(size=(2, 3, 4)),), 0, [ops.retranspose]),
    (hf.h_scatter_added, (_V4, _V3), (0, 1), [ops.scatter_added]),
    (hf.h_gather, (_V4,), 0, [ops.gather]),
    (hf.h_inner, (_V3, _V3 * 2.0), (0, 1), [ops.inner]),
    (hf.h_scaled, (_V3, 0.7), (0, 1), [ops.scaled]),
    (hf.h_iterated, (_M34,), 0, [ops.iterated]),
    (hf.h_uniterated, (_V3, _V3 * 2.0), 0, [ops.uniterated, ops.iterated_tangent]),
    (hf.h_keys, (_V3,), 0, [ops.keys]),
    (
        hf.h_constants,
        (_R.random(3) * 0.4 + 0.05,),
        0,
        [ops.seed, ops.zeros_like, ops.reduced_size, ops.winner, ops.inside],
    ),
]


@pytest.mark.parametrize("f, args, wrt, covers", RULE_ROWS, ids=[r[0].__name__ for r in RULE_ROWS])
def test_runtime_helper_rule(f, args, wrt, covers):
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = numeric_grad(f, args, indices)
    gradient = grad(f, wrt=wrt)
    for _ in range(2):
        got = gradient(*args)
        got = got if isinstance(wrt, tuple) else (got,)
        for a, b in zip(got, expected):
            assert np.allclose(a, b, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args, wrt, covers", RULE_ROWS, ids=[r[0].__name__ for r in RULE_ROWS])
def test_runtime_helper_forward_rule(f, args, wrt, covers):
    # forward over reverse (jvp of a gradient) reads the helpers' forward lines
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    rng = np.random.default_rng(len(RULE_ROWS))
    tangents = tuple(rng.normal(size=np.shape(args[i])) for i in indices)
    if not np.shape(args[indices[0]]):
        tangents = tuple(float(t) for t in tangents)
    expected = numeric_jvp(f, args, indices, tangents)
    forward = jvp(f, wrt=wrt)
    for _ in range(2):
        _, got = forward(*args, tangents if isinstance(wrt, tuple) else tangents[0])
        assert np.allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_every_runtime_helper_rule_has_a_row():
    covered = [h for *_, covers in RULE_ROWS for h in covers]
    missing = [
        obj.__name__
        for decl, _ in declarations(runtime_ops)  # runtime_adjoints: test_higher_adjoints
        for obj in decl.objects
        if not any(obj is c for c in covered)
        and obj is not ops.shape_of
        and obj is not ops.broadcast_like
    ]
    assert not missing, f"runtime helper rules without a row: {missing}"


def test_a_differentiated_exponent_of_pow_slope_is_refused():
    with pytest.raises(TranspileError, match="does not differentiate its argument 'y'"):
        grad(hf.h_pow_slope, wrt=1)(np.abs(_V3) + 0.5, 2.5)


def test_hvp_with_the_gradient_from_one_pass():
    rng = _rng(11)
    A = rng.normal(size=(4, 4))
    x, v = rng.normal(size=4), rng.normal(size=4)
    both = hvp(hf.quadratic, has_grad=True)
    for _ in range(2):  # 0.5 x^T A x: gradient (A + A^T) x / 2, Hessian (A + A^T) / 2
        g, hv = both(x, A, v)
        assert np.allclose(g, 0.5 * (A + A.T) @ x, rtol=1e-12)
        assert np.allclose(hv, 0.5 * (A + A.T) @ v, rtol=1e-12)
    X, w = rng.normal(size=(20, 3)), rng.normal(size=3)
    y = (rng.random(20) < 0.5).astype(float)
    v3 = rng.normal(size=3)
    g, hv = hvp(hf.logistic, has_grad=True)(w, X, y, v3)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    assert np.allclose(g, X.T @ (p - y) / 20, rtol=1e-10)
    assert np.allclose(hv, X.T @ (p * (1 - p) * (X @ v3)) / 20, rtol=1e-10)
    pair = hvp(hf.power_loop, has_grad=True)(x, v)  # through a loop's tape
    assert np.allclose(pair[0], 4 * x**3) and np.allclose(pair[1], 12 * x**2 * v)


@pytest.mark.parametrize(
    "f, shape",
    [
        (hf.with_max, (3, 4)),
        (hf.with_transpose, (3, 2)),
        (hf.with_fancy_index, (4,)),
        (hf.with_negative_index, (3,)),
        (hf.calls_loop_helper, (3,)),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_hvp_through_max_transpose_indexing_and_a_looping_helper(f, shape):
    rng = _rng(13)
    product, first = hvp(f), grad(f)
    for _ in range(2):
        x, v = rng.normal(size=shape), rng.normal(size=shape)
        expected = numeric_jvp(lambda a: first(a), (x,), (0,), (v,))
        np.testing.assert_allclose(product(x, v), expected, rtol=1e-6, atol=1e-8)


def test_hvp_of_prod_in_its_argument_is_refused_by_name():
    with pytest.raises(TranspileError, match="does not differentiate its argument 'x'"):
        hvp(hf.h_unreduce_prod, wrt=1)(_V3, _M34, _M34)


def test_hvp_with_dict_and_list_parameters():
    # the inner product <grad f, v> runs over the structure (ops.inner)
    rng = _rng(17)
    x = rng.normal(size=(4, 3))
    for _ in range(2):
        params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
        v = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
        first = grad(hf.dict_layer)

        def flat(p):
            g = first(p, x)
            return np.concatenate([g["W"].ravel(), g["b"]])

        expected = numeric_jvp(flat, (params,), (0,), (v,))
        got = hvp(hf.dict_layer)(params, x, v)
        assert got.keys() == {"W", "b"}
        np.testing.assert_allclose(
            np.concatenate([got["W"].ravel(), got["b"]]), expected, rtol=1e-6, atol=1e-8
        )
    x = rng.normal(size=3)
    ws, v = [rng.normal(size=3), rng.normal(size=3)], [rng.normal(size=3), rng.normal(size=3)]
    first = grad(hf.list_weights)
    expected = numeric_jvp(lambda w: np.concatenate(first(w, x)), (ws,), (0,), (v,))
    for _ in range(2):
        got = hvp(hf.list_weights)(ws, x, v)
        assert isinstance(got, list) and len(got) == 2
        np.testing.assert_allclose(np.concatenate(got), expected, rtol=1e-6, atol=1e-8)


def dict_predict(params, x):
    return np.tanh(x @ params["W"] + params["b"])


def dict_output(w):
    return {"s": np.sin(w), "p": w[0] * w[1], "pair": (w**2, np.sum(w))}


def test_jacobian_and_hessian_of_structured_arguments_are_structures_of_blocks():
    rng = _rng(19)
    params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    x = rng.normal(size=(4, 3))
    for mode in ("forward", "reverse"):
        J = jacobian(dict_predict, mode=mode)(params, x)
        assert J.keys() == {"W", "b"}
        assert J["W"].shape == (4, 2, 3, 2) and J["b"].shape == (4, 2, 2)
        for key in ("W", "b"):  # each block, column by column, against differences
            for k in range(params[key].size):
                e = {n: np.zeros_like(a) for n, a in params.items()}
                e[key].flat[k] = 1.0
                column = numeric_jvp(dict_predict, (params, x), (0,), (e,))
                got = J[key].reshape((4, 2, -1))[..., k]
                np.testing.assert_allclose(got, column, rtol=1e-6, atol=1e-8)
    H = hessian(hf.dict_layer)(params, x)
    assert H["W"]["b"].shape == (3, 2, 2) and H["b"]["W"].shape == (2, 3, 2)
    np.testing.assert_allclose(H["W"]["b"], np.moveaxis(H["b"]["W"], 0, -1), rtol=1e-10)
    first = grad(hf.dict_layer)
    e = {"W": np.zeros((3, 2)), "b": np.array([0.0, 1.0])}
    column = numeric_jvp(lambda p: first(p, x)["W"], (params,), (0,), (e,))
    np.testing.assert_allclose(H["W"]["b"][..., 1], column, rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_structured_output():
    w = np.array([0.3, -0.7, 1.1])
    for mode in ("forward", "reverse"):
        J = jacobian(dict_output, mode=mode)(w)
        np.testing.assert_allclose(J["s"], np.diag(np.cos(w)), rtol=1e-12)
        np.testing.assert_allclose(J["p"], [w[1], w[0], 0.0], rtol=1e-12)
        np.testing.assert_allclose(J["pair"][0], np.diag(2 * w), rtol=1e-12)
        np.testing.assert_allclose(J["pair"][1], np.ones(3), rtol=1e-12)
