"""``has_aux=True`` and ``argnums=``, as JAX spells them: the function returns
``(value, aux)``; ``grad`` returns ``(gradient, aux)``, ``value_and_grad``
``((value, aux), gradient)``. Gradients against central differences of the value, aux
against the function's own, on a first and a later call."""

import aux_funcs as af
import fd
import numpy as np
import pytest

from transpile import grad, source, value_and_grad

RNG = np.random.default_rng(11)
W, X, Y = RNG.standard_normal(3), RNG.standard_normal((6, 3)), RNG.standard_normal(6)


def _value(f):
    return lambda *args: f(*args)[0]


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12)


CASES = [
    (af.mse_with_predictions, (W, X, Y), 0),
    (af.mse_with_predictions, (W, X, Y), (0, 1)),
    (af.branchy, (W, 0.7), 0),
    (af.branchy, (W, -0.7), (0, 1)),
    (af.through_helper, (W,), 0),
    (af.in_a_loop, (W, 4), 0),
]


@pytest.mark.parametrize("func,args,wrt", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_grad_returns_the_gradient_of_the_value_and_the_aux(func, args, wrt):
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = fd.numeric_grad(_value(func), list(args), indices)
    g = grad(func, has_aux=True, argnums=wrt)
    for call in ("first call", "later call"):
        gradient, aux = g(*args)
        gradient = gradient if isinstance(wrt, tuple) else (gradient,)
        fd.assert_close(tuple(gradient), expected, rtol=1e-6, atol=1e-8, path=call)
        _same(aux, func(*args)[1])


@pytest.mark.parametrize("func,args,wrt", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_value_and_grad_returns_the_pair_and_the_gradient(func, args, wrt):
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = fd.numeric_grad(_value(func), list(args), indices)
    h = value_and_grad(func, wrt=wrt, has_aux=True)
    for _ in range(2):
        (value, aux), gradient = h(*args)
        gradient = gradient if isinstance(wrt, tuple) else (gradient,)
        fd.assert_close(tuple(gradient), expected, rtol=1e-6, atol=1e-8)
        want = func(*args)
        np.testing.assert_allclose(value, want[0], rtol=1e-12)
        _same(aux, want[1])


def test_aux_written_out_gets_no_adjoint():
    text = source(grad(af.mse_with_predictions, has_aux=True))
    assert "accuracy" in text  # computed, as the function computes it
    # only the loss's two lines have adjoints; the aux and the return have none
    grads_of = [line.strip() for line in text.splitlines() if "# grad of:" in line]
    assert grads_of == [
        "# grad of: loss = np.mean((pred - y) ** 2)",
        "# grad of: pred = np.tanh(x @ w)",
    ]


def test_an_argument_returned_as_aux_is_a_fresh_array():
    w = W.copy()
    gradient, aux = grad(af.returns_its_argument, has_aux=True)(w)
    np.testing.assert_allclose(gradient, 2 * W)
    assert not np.shares_memory(aux, w)
    np.testing.assert_array_equal(w, W)


def test_float32_is_kept():
    w = W.astype(np.float32)
    gradient, aux = grad(af.returns_its_argument, has_aux=True)(w)
    assert gradient.dtype == np.float32 and aux.dtype == np.float32


def test_a_function_without_a_pair_is_refused():
    with pytest.raises(TypeError, match="pair"):
        grad(af.not_a_pair, has_aux=True)(W)


def test_a_tuple_valued_loss_without_has_aux_says_what_to_write():
    with pytest.raises(ValueError, match="has_aux=True"):
        grad(af.tuple_loss)(W)


def test_argnums_is_wrt():
    for argnums in (0, 1, (0, 2)):
        a = grad(lambda w, x, y: np.sum((x @ w - y) ** 2), argnums=argnums)(W, X, Y)
        b = grad(lambda w, x, y: np.sum((x @ w - y) ** 2), wrt=argnums)(W, X, Y)
        for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_allclose(p, q)
    with pytest.raises(TypeError, match="not both"):
        grad(af.not_a_pair, wrt=1, argnums=0)


def test_vjp_refuses_has_aux():
    from transpile import vjp

    with pytest.raises(TypeError, match="has_aux"):
        vjp(af.mse_with_predictions, has_aux=True)


def test_first_calls_racing_in_threads():
    import functools
    import threading

    made = [
        grad(af.mse_with_predictions, has_aux=True),
        grad(functools.partial(af.mse_with_predictions, x=X, y=Y), has_aux=True),
    ]
    expected = fd.numeric_grad(_value(af.mse_with_predictions), [W, X, Y], (0,))[0]
    results, errors = [], []

    def call(g):
        try:
            out = g(W)[0] if g is made[1] else g(W, X, Y)[0]
            results.append(out)
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=call, args=(made[k % 2],)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 8
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
