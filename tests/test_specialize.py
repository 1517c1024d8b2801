"""Shape-specialized variants of straight-line gradients.

The corpus and rule tables already call every gradient twice (generic path, then
specialized path) and check both against finite differences. These tests cover
what is specific to specialization: what the variant's code looks like, routing
between signatures, keyword and default arguments, integer parameters that set
shapes, arrays that must not be shared with the caller, and tracebacks.
"""

import linecache
import traceback

import fd
import numpy as np
import pytest

from transpile import grad, source, value_and_grad, vjp


def logistic_loss(w, b, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logistic_grad(w, b, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    r = (p - y) / x.shape[0]
    return x.T @ r, np.sum(r)


def logistic_args(rng, n, d, dtype=np.float64):
    w = rng.standard_normal(d).astype(dtype)
    x = rng.standard_normal((n, d)).astype(dtype)
    y = (rng.random(n) < 0.5).astype(dtype)
    return w, 0.3, x, y


def test_specialized_source_has_no_shape_helpers():
    args = logistic_args(np.random.default_rng(0), 16, 3)
    g = grad(logistic_loss, wrt=("w", "b"))
    generic = source(g)
    special = source(g, *args)
    assert "ops.unbroadcast" in generic and "ops.unmean" in generic
    for helper in ("ops.unbroadcast", "ops.unmean", "ops.broadcast_like", "ops.matmul_right"):
        assert helper not in special, special
    assert "x.T @" in special
    # the 1/16 of the mean is applied once, to the small results, not to a filled array
    assert special.count("0.0625") == 2, special
    assert "ops.filled" not in special


def test_routing_between_signatures():
    g = grad(logistic_loss, wrt=("w", "b"))
    rng = np.random.default_rng(1)
    shapes = [(8, 3), (5, 2), (8, 3), (5, 2), (8, 3)]
    known = set(g.__transpile_dispatch__.variants)  # grad is cached across tests
    for n, d in shapes:
        args = logistic_args(rng, n, d)
        got = g(*args)
        fd.assert_close(got, logistic_grad(*args), rtol=1e-12, atol=1e-14)
    assert len(set(g.__transpile_dispatch__.variants) - known) == 2


def test_float32_variant_is_separate_and_float32():
    g = grad(logistic_loss, wrt=("w", "b"))
    rng = np.random.default_rng(2)
    args64 = logistic_args(rng, 8, 3)
    args32 = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args64)
    for args in (args64, args32, args32, args64):
        dw, db = g(*args)
        assert dw.dtype == args[0].dtype
        want = logistic_grad(*(np.asarray(a, np.float64) for a in args))
        rtol = 1e-4 if dw.dtype == np.float32 else 1e-12
        fd.assert_close((np.float64(dw), np.float64(db)), want, rtol=rtol, atol=rtol)


def test_keyword_and_default_arguments():
    def scaled(x, w, scale=2.0):
        return np.sum(np.tanh(x @ w) * scale)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    g = grad(scaled, wrt="w")
    want = x.T @ (2.0 * (1.0 - np.tanh(x @ w) ** 2))
    for _ in range(2):
        np.testing.assert_allclose(g(x, w), want, rtol=1e-12)
        np.testing.assert_allclose(g(x, w=w), want, rtol=1e-12)
        np.testing.assert_allclose(g(w=w, x=x, scale=3.0), want * 1.5, rtol=1e-12)


def test_integer_parameters_that_set_shapes_are_part_of_the_signature():
    def head(x, n):
        return np.sum(np.sin(x[:n]) * x[:n])

    x = np.linspace(-1.0, 1.0, 7)
    g = grad(head)

    def want(n):
        out = np.zeros_like(x)
        out[:n] = np.cos(x[:n]) * x[:n] + np.sin(x[:n])
        return out

    for n in (3, 5, 3, 5, np.int64(4), 6):
        np.testing.assert_allclose(g(x, n), want(int(n)), rtol=1e-12)


def test_value_and_grad_and_vjp_variants():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def f(a, b):
        return np.mean((a * b + 1.0) ** 2)

    vg = value_and_grad(f, wrt=(0, 1))
    for _ in range(3):
        value, (da, db) = vg(a, b)
        assert value == pytest.approx(f(a, b), rel=1e-14)
        r = 2.0 * (a * b + 1.0) / a.size
        fd.assert_close((da, db), (r * b, np.sum(r * a, axis=0)), rtol=1e-12, atol=1e-14)

    def g(a, b):
        return np.tanh(a + b)

    dout = rng.standard_normal((3, 4))
    back = vjp(g, wrt=1)
    for _ in range(3):
        want = np.sum(dout * (1.0 - np.tanh(a + b) ** 2), axis=0)
        np.testing.assert_allclose(back(a, b, dout), want, rtol=1e-12)


def products(x, y):
    return -np.sum(-(x * y))


def mean_product(x, y):
    return np.mean(y * x) * 1.0


def scaled_copy(x, y):
    return np.sum(0.5 * (2.0 * x)) + np.sum(y)


@pytest.mark.parametrize("func", [products, mean_product, scaled_copy])
def test_gradients_never_share_memory_with_arguments(func):
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    x0, y0 = x.copy(), y.copy()
    g = grad(func, wrt=(0, 1))
    for _ in range(3):
        grads = g(x, y)
        expected = fd.numeric_grad(func, (x, y), (0, 1))
        fd.assert_close(grads, expected, rtol=1e-7, atol=1e-9)
        for d in grads:
            for a in (x, y):
                assert not np.shares_memory(d, a)
            d += 100.0  # the caller owns the gradient arrays
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)


def singular_inverse(a):
    return np.sum(np.linalg.inv(a) * 2.0)


def test_traceback_of_a_specialized_call_shows_generated_lines():
    g = grad(singular_inverse)
    g(np.eye(2) * 2.0)
    g(np.eye(2) * 3.0)  # the second call with this signature runs the variant
    try:
        g(np.zeros((2, 2)))
    except np.linalg.LinAlgError as error:
        text = traceback.format_exc()
        frames = traceback.extract_tb(error.__traceback__)
    else:
        pytest.fail("a singular matrix should raise")
    generated = [f for f in frames if f.filename.startswith("<transpile ")]
    assert generated, text
    innermost = generated[-1]
    assert "for (" in innermost.filename, innermost.filename  # a variant, named by shapes
    assert linecache.getline(innermost.filename, innermost.lineno).strip() in text


def test_functions_with_control_flow_stay_generic():
    def clipped(x):
        if np.sum(x) > 0:
            return np.sum(x**2)
        return np.sum(x)

    g = grad(clipped)
    x = np.array([1.0, 2.0])
    assert source(g, x) == source(g)
    np.testing.assert_allclose(g(x), 2.0 * x)


def layer(x, W, b, y):
    h = np.tanh(x @ W + b)
    e = h * 2.0
    return np.mean((e - y) ** 2) + np.sum(x * 0.5)


def kept_in_a_list(x, W):
    a = x @ W
    parts = [a, a * 2.0]
    b = a + 1.0  # a is read again below, through the list: its buffer must stay
    return np.sum(np.stack(parts) * 3.0) + np.sum(b)


@pytest.mark.parametrize("func", [layer, kept_in_a_list])
def test_buffers_reused_only_when_nothing_else_reads_them(func, monkeypatch):
    from transpile.cleanup import buffers

    monkeypatch.setattr(buffers, "REUSE_SIZE", 1)  # every size counts as large here
    rng = np.random.default_rng(6)
    x, W = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    extra = (rng.standard_normal(4), rng.standard_normal((5, 4))) if func is layer else ()
    args = (x, W, *extra)
    wrt = (0, 1, 2) if func is layer else (0, 1)
    g = grad(func, wrt=wrt)
    pristine = [a.copy() for a in args]
    special = source(g, *args)
    if func is layer:
        assert "out=" in special, special
        assert "out=x" not in special and "out=W" not in special  # never an argument
    for _ in range(2):
        got = g(*args)
        fd.assert_close(got, fd.numeric_grad(func, args, wrt), rtol=1e-7, atol=1e-9)
    for a, b in zip(args, pristine):
        np.testing.assert_array_equal(a, b)


def where_positive_count(x):
    idx = np.where(x > 0)
    n = len(idx[0])  # a length that depends on the values, not the shapes
    return np.sum(x[:n] ** 2)


def test_value_dependent_shapes_stay_generic():
    g = grad(where_positive_count)
    for x in (np.array([1.0, 2.0, -1.0, 3.0]), np.array([1.0, -2.0, -1.0, 3.0])):
        n = int(np.sum(x > 0))
        want = np.zeros_like(x)
        want[:n] = 2.0 * x[:n]
        for _ in range(2):
            np.testing.assert_allclose(g(x), want, rtol=1e-14)
    assert not g.__transpile_dispatch__.specializable and not g.__transpile_dispatch__.variants


def layer_norm(x, g, b):
    mu = np.mean(x, axis=-1, keepdims=True)
    v = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return np.sum(np.tanh(g * (x - mu) / np.sqrt(v + 1e-5) + b) ** 2)


def attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    s = s - np.max(s, axis=1, keepdims=True)
    a = np.exp(s) / np.sum(np.exp(s), axis=1, keepdims=True)
    return np.sum((a @ v) ** 2)


def mixture_log_likelihood(mu, log_s, x):
    d = (x[:, None] - mu[None, :]) / np.exp(log_s)[None, :]
    lp = -0.5 * d**2 - log_s[None, :]
    m = np.max(lp, axis=1, keepdims=True)
    return np.mean(np.log(np.sum(np.exp(lp - m), axis=1)) + m[:, 0])


def product_of_head(a, b):
    return np.sum(a**3 * b - a / (1.0 + b**2)) + np.prod(a[:2]) * np.mean(b)


def kernel_sum(x, z, ell):
    d2 = np.sum(x**2, axis=1)[:, None] + np.sum(z**2, axis=1)[None, :] - 2.0 * x @ z.T
    return np.sum(np.exp(-0.5 * d2 / ell**2))


MODELS = [
    (layer_norm, lambda r: (r.normal(size=(3, 5)), r.normal(size=5), r.normal(size=5))),
    (attention, lambda r: (r.normal(size=(4, 3)), r.normal(size=(5, 3)), r.normal(size=(5, 2)))),
    (
        mixture_log_likelihood,
        lambda r: (r.normal(size=3), 0.2 * r.normal(size=3), r.normal(size=7)),
    ),
    (product_of_head, lambda r: (r.normal(size=4), r.normal(size=4))),
    (kernel_sum, lambda r: (r.normal(size=(3, 2)), r.normal(size=(4, 2)), 0.8)),
]


@pytest.mark.parametrize("func, make", MODELS, ids=[f.__name__ for f, _ in MODELS])
def test_models_specialize_and_match_finite_differences(func, make):
    from variants import call_twice

    args = make(np.random.default_rng(7))
    wrt = tuple(range(len(args)))
    g = grad(func, wrt=wrt)
    assert source(g, *args) != source(g)  # a variant exists for these shapes
    got = call_twice(g, *args)
    fd.assert_close(got, fd.numeric_grad(func, args, wrt), rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------------
# loops over static ranges


def rnn_loss(Wx, Wh, b, x, h0):
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
    return np.sum(h**2)


def heat_loss(u, k, steps):
    for _ in range(steps):
        lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4.0 * u
        u = u + k * lap - 0.1 * u**3
    return np.mean(u**2)


def scalar_loop(x, a):
    for _ in range(20):
        x = x * a + np.sin(x) * 0.1
    return x


def rnn_args(rng, steps=4, batch=3, d=2, hidden=5, h0_shape=None):
    return (
        rng.standard_normal((d, hidden)) * 0.5,
        rng.standard_normal((hidden, hidden)) * 0.3,
        rng.standard_normal(hidden) * 0.1,
        rng.standard_normal((steps, batch, d)),
        np.zeros(h0_shape or (batch, hidden)),
    )


def heat_args(rng, n=5, steps=4):
    return rng.standard_normal((n, n)), 0.15, steps


LOOPS = [
    (rnn_loss, (0, 1, 2), rnn_args),
    (heat_loss, (0, 1), heat_args),
    (scalar_loop, (0, 1), lambda rng: (float(rng.uniform(0.5, 1.5)), 0.85)),
    # h0 of shape (5,) broadcasts in the first step only: its sites differ between
    # iterations and stay generic
    (rnn_loss, (0, 1, 2), lambda rng: rnn_args(rng, h0_shape=(5,))),
]


@pytest.mark.parametrize("func, wrt, make", LOOPS, ids=["rnn", "heat", "scalar", "rnn_h0"])
def test_loop_variants_match_finite_differences_on_every_call(func, wrt, make):
    g = grad(func, wrt=wrt)
    rng = np.random.default_rng(3)
    for args in (make(rng), make(rng)):  # a second signature-equal input
        want = fd.numeric_grad(func, args, wrt)
        for _ in range(3):  # the generic code (the probe), then the variant
            fd.assert_close(g(*args), want, rtol=1e-6, atol=1e-9)


def test_loop_variant_has_no_shape_helpers_and_records_no_shapes():
    args = rnn_args(np.random.default_rng(0))
    g = grad(rnn_loss, wrt=(0, 1, 2))
    generic, special = source(g), source(g, *args)
    assert "ops.unbroadcast" in generic and "shape_of" in generic
    for helper in ("ops.unbroadcast", "ops.matmul_left", "ops.matmul_right", "shape_of"):
        assert helper not in special, special
    pushes = [line.strip() for line in special.splitlines() if "tape.push(" in line]
    pops = [line.strip() for line in special.splitlines() if "tape.pop()" in line]
    assert len(pushes) == len(pops) == 2, special  # x[t] and h: what the adjoint reads


def test_loop_sites_whose_shapes_change_between_iterations_stay_generic():
    args = rnn_args(np.random.default_rng(0), h0_shape=(5,))
    special = source(grad(rnn_loss, wrt=(0, 1, 2)), *args)
    assert "ops.matmul_left" in special or "ops.unbroadcast" in special, special


def test_loop_trip_count_is_part_of_the_signature():
    g = grad(heat_loss, wrt=(0, 1))
    rng = np.random.default_rng(4)
    u = rng.standard_normal((4, 4))
    for steps in (3, 5, 3, 0, 5):
        args = (u, 0.1, steps)
        fd.assert_close(g(*args), fd.numeric_grad(heat_loss, args, (0, 1)), rtol=1e-6, atol=1e-9)
        g(*args)


def test_loop_variant_does_not_modify_arguments_and_returns_fresh_arrays():
    args = rnn_args(np.random.default_rng(5))
    kept = [a.copy() for a in args]
    g = grad(rnn_loss, wrt=(0, 1, 2))
    results = [g(*args) for _ in range(3)]
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)
    for got in results:
        for r in got:
            assert r.flags.writeable and not any(np.shares_memory(r, a) for a in args)
    assert not any(np.shares_memory(a, b) for a in results[1] for b in results[2])


def test_binary_cross_entropy_adjoint_is_y_minus_p():
    # y * (1 - p) - (1 - y) * p, from the log-sigmoid composites, is y - p: one array
    # instead of three temporaries of the batch's size (algebra.complements)
    args = logistic_args(np.random.default_rng(8), 256, 4)
    g = grad(logistic_loss, wrt=("w", "b"))
    for _ in range(2):
        got = g(*args)
        fd.assert_close(got, logistic_grad(*args), rtol=1e-12, atol=1e-14)
    special = source(g, *args)
    code = [line for line in special.splitlines() if "#" not in line]
    assert any(line.endswith(" = y - p") for line in code), special
    assert not any("1.0 - y" in line for line in code), special


def test_complements_rewrite_only_the_exact_form():
    import gast

    from transpile.backend import algebra

    body = gast.parse(
        "u = 1.0 - y\n"
        "d = y * (1.0 - p) - u * p\n"
        "e = (1 - p) * y - p * (1 - y)\n"
        "f = y * (1.0 - p) - (1.0 - y) * q\n"  # another name: left alone
        "g = y * (2.0 - p) - (1.0 - y) * p\n"  # not 1: left alone
    ).body
    out = [gast.unparse(s).strip() for s in algebra.complements(body)]
    assert out == [
        "u = 1.0 - y",
        "d = y - p",
        "e = y - p",
        "f = y * (1.0 - p) - (1.0 - y) * q",
        "g = y * (2.0 - p) - (1.0 - y) * p",
    ]
