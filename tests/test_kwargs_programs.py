"""Programs with keyword arguments passed on, objects that count their calls and
functions as values (tests/kwargs_programs.py), each differentiated against central
differences on a first and a later call, in reverse and, where it applies, forward
mode; and what stays refused, by name."""

import re

import fd
import kwargs_programs as P
import numpy as np
import pytest

from transpile import TranspileError, grad, hvp, jvp, value_and_grad, vjp


def rng():
    return np.random.default_rng(21)


def check(f, args, wrt, rtol=1e-6, atol=1e-8, **kwargs):
    """grad(f, wrt) on a first and a later call against central differences."""
    expected = fd.numeric_grad(lambda *a: f(*a, **kwargs), args, wrt)
    g = grad(f, wrt=wrt if len(wrt) > 1 else wrt[0])
    for _ in range(2):
        got = g(*args, **kwargs)
        got = got if len(wrt) > 1 else (got,)
        for a, b in zip(got, expected):
            fd.assert_close(a, b, rtol, atol)
    return expected


def check_tangent(f, args, index, expected_gradient, rtol=1e-6):
    """jvp(f, index) along a random direction against <gradient, direction>."""
    direction = rng().normal(size=np.shape(args[index]))
    for _ in range(2):
        _, tangent = jvp(f, wrt=index)(*args, direction)
        np.testing.assert_allclose(tangent, np.sum(expected_gradient * direction), rtol=rtol)


# -- a stax-style network: **kwargs passed through closures the combinator returns ---


def stax_data():
    r = rng()
    _, params = P.init_net(r, 3)
    return params, r.normal(size=(5, 3)), r.normal(size=5)


@pytest.mark.parametrize("loss", [P.stax_loss, P.stax_loss_without_keywords])
def test_stax_network_with_kwargs(loss):
    params, inputs, targets = stax_data()
    check(loss, [params, inputs, targets], (0, 1))


def test_stax_network_value_and_vjp():
    params, inputs, targets = stax_data()
    value, gradient = value_and_grad(P.stax_loss)(params, inputs, targets)
    assert value == pytest.approx(P.stax_loss(params, inputs, targets), rel=1e-12)
    again = vjp(P.stax_loss)(params, inputs, targets, 1.0)
    fd.assert_close(again, gradient, 1e-12, 1e-14)


def test_stax_network_hvp_in_the_inputs():
    params, inputs, targets = stax_data()
    v = rng().normal(size=inputs.shape)
    gradient = grad(P.stax_loss, wrt=1)
    h = 1e-5
    expected = (
        gradient(params, inputs + h * v, targets) - gradient(params, inputs - h * v, targets)
    ) / (2 * h)
    for _ in range(2):
        got = hvp(P.stax_loss, wrt=1)(params, inputs, targets, v)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-8)


# -- a transformer block: **c_fc, **ln_1 (with eps defaulted), keyword-only n_head ---


def gpt_data():
    r = rng()
    d = 4

    def lin(n_in, n_out):
        return {"w": 0.5 * r.normal(size=(n_in, n_out)), "b": 0.1 * r.normal(size=n_out)}

    params = {
        "mlp": {"c_fc": lin(d, 2 * d), "c_proj": lin(2 * d, d)},
        "attn": {"c_attn": lin(d, 3 * d), "c_proj": lin(d, d)},
        "ln_1": {"g": 1.0 + 0.1 * r.normal(size=d), "b": 0.1 * r.normal(size=d)},
        "ln_2": {"g": 1.0 + 0.1 * r.normal(size=d), "b": 0.1 * r.normal(size=d)},
    }
    return r.normal(size=(3, d)), params


def test_transformer_block_with_double_star_calls():
    x, params = gpt_data()
    expected = check(P.gpt_loss, [x, params], (0, 1), rtol=1e-5, atol=1e-7)
    check_tangent(P.gpt_loss, [x, params], 0, expected[0], rtol=1e-5)


def test_transformer_blocks_in_a_list_each_passed_with_double_star():
    x, first = gpt_data()
    _, second = gpt_data()
    ln_f = {"g": np.ones(4), "b": np.zeros(4)}
    check(P.gpt2, [x, [first, second], ln_f, 2], (0, 1, 2), rtol=1e-5, atol=1e-7)


def test_a_key_given_for_a_defaulted_parameter_is_used():
    # layer_norm(x, **ln) with "eps" in ln: the key, not the default, as Python binds it
    x, params = gpt_data()
    params["ln_1"]["eps"] = 0.5
    check(P.gpt_loss, [x, params], (0,), rtol=1e-5, atol=1e-7)


# -- a model whose loss method is given to grad, counting its calls ------------------


def glm():
    r = rng()
    X = 0.3 * r.normal(size=(6, 3))
    y = r.poisson(1.0, size=6).astype(float)
    return P.GLM(X, y), r.normal(size=3)


@pytest.mark.parametrize("make", [lambda m: m.loss, lambda m: lambda w: m.loss(w)])
def test_a_loss_method_counting_its_calls(make):
    model, w = glm()
    expected = fd.numeric_grad(make(model), [w], (0,))[0]
    model.nfev = 0
    g = grad(make(model))
    for calls in (1, 2):
        fd.assert_close(g(w), expected, 1e-6, 1e-8)
        assert model.nfev == calls  # the counter runs as written, once per gradient
    assert model.last_seen == (3,)
    assert model.history[-2:] == [1, 2]
    _, tangent = jvp(make(model))(w, np.ones(3))
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)
    assert model.nfev == 3


def test_a_counter_of_an_object_passed_in_and_differentiated():
    # the object is the differentiated argument: its float fields get gradients, the
    # int counter is written through to the caller's object and has none
    model, w = glm()
    g = grad(lambda m, v: m.loss(v))
    for calls in (1, 2):
        got = g(model, w)
        assert model.nfev == calls
        assert model.history == list(range(1, calls + 1))
        expected_l2 = np.sum(w * w)
        assert got.l2 == pytest.approx(expected_l2, rel=1e-12)
        assert got.nfev == 0.0


def test_super_call_in_an_overriding_method():
    model, w = glm()
    scaled = P.ScaledGLM(model.X, model.y)
    check(scaled.loss, [w], (0,))
    scaled.nfev = 0
    grad(scaled.loss)(w)
    assert scaled.nfev == 1  # GLM.loss counted, through super()


def test_a_differentiated_value_written_to_an_attribute_is_refused():
    x = np.array([0.1, 0.2])
    for make in (grad, jvp):
        with pytest.raises(TranspileError, match=r"differentiated value into the attribute \.h"):
            make(P.cached_forward)(x) if make is grad else make(P.cached_forward)(x, x)


# -- an integrator taking a lambda step -----------------------------------------------


def test_integrator_with_a_lambda_step():
    q0, p0 = np.array([0.3, -0.4]), np.array([0.1, 0.2])
    expected = check(P.pendulum_energy, [q0, p0, 1.5], (0, 1, 2))
    check_tangent(P.pendulum_energy, [q0, p0, 1.5], 0, expected[0])


# -- functions and objects held in lists, an instance made and called inline --------


def test_a_list_of_functions_iterated():
    v = np.array([0.2, -0.1, 0.4])
    expected = check(P.composed, [v, 0.7], (0, 1))
    check_tangent(P.composed, [v, 0.7], 0, expected[0])


def test_a_changed_list_of_functions_is_followed():
    v = np.array([0.2, -0.1, 0.4])
    g = grad(P.composed)
    g(v, 0.7)
    saved = list(P.ACTIVATIONS)
    try:
        P.ACTIVATIONS[1] = np.cos
        P.ACTIVATIONS.append(np.tanh)
        expected = fd.numeric_grad(P.composed, [v, 0.7], (0,))[0]
        fd.assert_close(g(v, 0.7), expected, 1e-6, 1e-8)
    finally:
        P.ACTIVATIONS[:] = saved


def test_methods_of_objects_in_a_list_built_elsewhere():
    r = rng()
    x, params = r.normal(size=(2, 3)), r.normal(size=(3, 3))
    check(P.through_layers, [x, params], (0, 1))
    saved = list(P.LAYERS)
    try:
        P.LAYERS.append(P.Layer(2.0))  # a third layer: the gradient is made again
        check(P.through_layers, [x, params], (0, 1))
    finally:
        P.LAYERS[:] = saved


def test_an_instance_made_and_called_in_one_expression():
    r = rng()
    params, inputs, targets = r.normal(size=2), r.normal(size=(4, 2)), r.normal(size=4)
    check(P.least_squares, [params, inputs, targets], (0, 1))


# -- keyword-only parameters and **kwargs in the function given to grad --------------


def test_keyword_only_parameters_given_to_grad():
    r = rng()
    w, X, y = r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)
    check(P.robust_loss, [w, X, y], (0, 1), delta=0.7, l2=0.1)
    check(P.robust_loss, [w, X, y], (0,))  # the defaults
    # a keyword-only parameter differentiated by name
    g = grad(P.robust_loss, wrt="l2")
    for _ in range(2):
        assert g(w, X, y, l2=0.3) == pytest.approx(np.sum(w * w), rel=1e-12)


def test_kwargs_given_to_grad_a_gradient_per_set_of_keywords():
    w = np.array([0.3, -0.6])
    for weights in ({"a": 2.0}, {"a": 2.0, "b": -1.0}, {}):
        expected = fd.numeric_grad(lambda v, weights=weights: P.weighted(v, **weights), [w], (0,))[
            0
        ]
        g = grad(P.weighted)
        for _ in range(2):
            fd.assert_close(g(w, **weights), expected, 1e-6, 1e-8)
    assert grad(P.weighted, wrt="b")(w, a=2.0, b=-1.0) == pytest.approx(np.sum(np.sin(w) ** 2))


def test_forward_mode_of_a_function_taking_keywords_is_refused_by_name():
    w = np.array([0.3, -0.6])
    with pytest.raises(TypeError, match=r"jvp needs a function with plain parameters.*\*\*weights"):
        jvp(P.weighted)(w, w, a=1.0)
    with pytest.raises(TypeError, match="keyword-only"):
        hvp(P.weighted)(w, w, a=1.0)


# -- flatten/unflatten utilities ----------------------------------------------------


@pytest.mark.parametrize(
    "f, flat", [(P.flat_objective, P.FLAT), (P.flat_dict_objective, P.FLAT_DICT)]
)
def test_a_closure_unflattening_a_flat_vector(f, flat):
    expected = check(f, [flat], (0,))
    check_tangent(f, [flat], 0, expected[0])


# -- what stays refused, by name -----------------------------------------------------


def _passes_unknown_keys(x, options):
    return np.sum(_takes_kwargs(x, **options))


def _takes_kwargs(z, **options):
    return z * options["scale"]


def _defaults_not_constant(x, options):
    return np.sum(_scaled_by(x, **options))


TWO = 2.0


def _scaled_by(z, scale=TWO):
    return z * scale


@pytest.mark.parametrize(
    "f, what",
    [(_passes_unknown_keys, "'**options'"), (_defaults_not_constant, "'scale'")],
    ids=["callee-kwargs", "default-not-constant"],
)
def test_double_star_of_unknown_keys_is_refused_by_name(f, what):
    with pytest.raises(TranspileError, match="whether it holds " + re.escape(what)) as e:
        grad(f)(np.array([0.1, 0.2]), {"scale": 2.0})
    assert "test_kwargs_programs.py" in str(e.value)


@pytest.mark.parametrize(
    "f, args",
    [
        (P.make_composed(8), [np.array([0.2, -0.1, 0.4])]),
        (P.composed_locally, [np.array([0.2, -0.1, 0.4]), 0.8]),
    ],
    ids=["closure-list", "local-tuple-enumerated"],
)
def test_functions_held_in_a_closure_or_local_sequence(f, args):
    expected = check(f, args, tuple(range(len(args))))
    check_tangent(f, args, 0, expected[0])


def _varargs_and_keywords(x, *ws, scale=1.0):
    return scale * (np.sum(x * ws[0]) + np.sum(np.sin(x) * ws[-1]))


def test_vjp_of_varargs_and_keywords_takes_dout_last():
    # the dout after the positional arguments is not one of *ws; keywords after it
    x, a, b = np.array([0.1, 0.2]), np.array([1.0, 2.0]), np.array([3.0, -1.0])
    f = lambda *args: _varargs_and_keywords(*args, scale=1.5)
    expected = fd.numeric_grad(f, [x, a, b], (0, 2))
    for _ in range(2):
        got = vjp(_varargs_and_keywords, wrt=(0, 2))(x, a, b, 2.0, scale=1.5)
        for g, e in zip(got, expected):
            fd.assert_close(g, 2.0 * e, 1e-6, 1e-8)
