"""Objects kept in lists, tuples and dicts, and objects made inside the function
(``tests/model_funcs.py``).

Every gradient is checked against central finite differences (``tests/fd.py``) on a
first and a later call. ``fd`` differentiates numbers, arrays and containers, not
objects: a gradient with respect to a model is checked against the finite
differences of a dict-based equivalent, a function that builds the model from lists
and dicts of its fields and calls the same code.
"""

import copy

import fd
import model_funcs as M
import numpy as np
import pytest

from transpile import TranspileError, check_grad, grad, numeric_grad, source, value_and_grad


def rng():
    return np.random.default_rng(5)


def data(dtype=np.float64, n_in=3, n_out=2):
    r = rng()
    return r.normal(size=(6, n_in)).astype(dtype), r.normal(size=(6, n_out)).astype(dtype)


def fields_of(obj):
    """The numeric fields of a layer (what its gradient holds), as a dict."""
    return {k: v for k, v in vars(obj).items() if k in ("W", "b")}


def layers_as_dicts(layers):
    return [fields_of(layer) for layer in layers]


def layers_from_dicts(dicts):
    return [M.Dense(d["W"], d["b"]) if d else M.Tanh() for d in dicts]


def mlp_from_dicts(dicts):
    model = M.MLP.__new__(M.MLP)
    model.layers, model.name = layers_from_dicts(dicts), "mlp"
    return model


def check_model_gradient(result, model, expected):
    """``result`` is a new model of ``model``'s structure whose layers hold gradients
    agreeing with ``expected`` (a list of dicts)."""
    assert type(result) is M.MLP and result is not model and result.name == "mlp"
    assert [type(a) for a in result.layers] == [type(a) for a in model.layers]
    assert all(a is not b for a, b in zip(result.layers, model.layers))
    fd.assert_close(layers_as_dicts(result.layers), expected, rtol=1e-6)


# --------------------------------------------------------------------------
# A PyTorch-style model: layers of mixed classes in a list


@pytest.mark.parametrize("sizes", [[3, 4, 2], [3, 5, 4, 2]])
def test_an_mlp_of_dense_and_tanh_layers(sizes):
    model, (x, y) = M.MLP(sizes, rng()), data()
    via_dicts = lambda d, x, y: M.mlp_loss(mlp_from_dicts(d), x, y)
    (expected,) = fd.numeric_grad(via_dicts, [layers_as_dicts(model.layers), x, y], [0])
    g = grad(M.mlp_loss)
    for _ in range(2):
        check_model_gradient(g(model, x, y), model, expected)


def test_a_model_of_another_depth_is_transpiled_for_its_own_layers():
    (x, y), g = data(), grad(M.mlp_loss)
    for sizes in ([3, 4, 2], [3, 4, 4, 2], [3, 4, 2]):
        model = M.MLP(sizes, rng())
        via_dicts = lambda d, x, y: M.mlp_loss(mlp_from_dicts(d), x, y)
        (expected,) = fd.numeric_grad(via_dicts, [layers_as_dicts(model.layers), x, y], [0])
        check_model_gradient(g(model, x, y), model, expected)


def test_an_l2_penalty_over_model_parameters():
    model, (x, y) = M.MLP([3, 4, 2], rng()), data()
    via_dicts = lambda d, x, y: M.l2_loss(mlp_from_dicts(d), x, y, 0.01)
    expected = fd.numeric_grad(via_dicts, [layers_as_dicts(model.layers), x, y], [0, 1])
    g = value_and_grad(M.l2_loss, wrt=(0, 1))
    for _ in range(2):
        value, (dmodel, dx) = g(model, x, y, 0.01)
        assert value == pytest.approx(M.l2_loss(model, x, y, 0.01))
        check_model_gradient(dmodel, model, expected[0])
        fd.assert_close(dx, expected[1], rtol=1e-6)


def test_the_loop_over_the_layers_is_unrolled_in_the_source():
    model, (x, y) = M.MLP([3, 4, 2], rng()), data()
    text = str(source(grad(M.mlp_loss), model, x, y))
    assert "layers = self['layers']" in text
    assert "layer0 = layers[0]" in text and "layer2 = layers[2]" in text


def test_a_list_of_layers_passed_in():
    layers, (x, _) = M.MLP([3, 4, 4], rng()).layers, data()
    via_dicts = lambda d, x: M.layers_loss(layers_from_dicts(d), x)
    (expected,) = fd.numeric_grad(via_dicts, [layers_as_dicts(layers), x], [0])
    g = grad(M.layers_loss)
    for _ in range(2):
        result = g(layers, x)
        assert type(result) is list and [type(a) for a in result] == [type(a) for a in layers]
        fd.assert_close(layers_as_dicts(result), expected, rtol=1e-6)


def test_the_callers_model_is_not_modified():
    model, (x, y) = M.MLP([3, 4, 2], rng()), data()
    before = copy.deepcopy(model)
    result = grad(M.l2_loss)(model, x, y, 0.1)
    assert len(model.layers) == len(before.layers)
    for layer, old in zip(model.layers, before.layers):
        assert vars(layer).keys() == vars(old).keys()
        for k, v in vars(old).items():
            assert np.array_equal(vars(layer)[k], v)
    for layer, d in zip(model.layers, result.layers):
        for k in fields_of(layer):
            assert not np.shares_memory(vars(layer)[k], vars(d)[k])


def test_float32_in_gives_float32_out():
    model, (x, y) = M.MLP([3, 4, 2], rng(), dtype=np.float32), data(np.float32)
    result = grad(M.l2_loss)(model, x, y, 0.1)
    dtypes = {v.dtype for d in layers_as_dicts(result.layers) for v in d.values()}
    assert dtypes == {np.dtype(np.float32)}


# --------------------------------------------------------------------------
# Elements by index, enumerate, reversed, dicts and nested lists of objects


def dense(r, n_in, n_out):
    return M.Dense(r.normal(size=(n_in, n_out)), r.normal(size=n_out))


def test_elements_by_constant_and_computed_index():
    r = rng()
    model = M.Residual(tuple(dense(r, 3 if i == 0 else 4, 4) for i in range(3)), dense(r, 4, 2))
    x, _ = data()

    def via_dicts(blocks, head, x):
        made = M.Residual(tuple(M.Dense(d["W"], d["b"]) for d in blocks), M.Dense(**head))
        return M.residual_loss(made, x)

    args = [[fields_of(b) for b in model.blocks], fields_of(model.head), x]
    expected = fd.numeric_grad(via_dicts, args, [0, 1])
    g = grad(M.residual_loss)
    for _ in range(2):
        result = g(model, x)
        assert type(result.blocks) is tuple
        fd.assert_close([fields_of(b) for b in result.blocks], expected[0], rtol=1e-6)
        fd.assert_close(fields_of(result.head), expected[1], rtol=1e-6)


def test_enumerate_reversed_and_a_dict_of_objects():
    r = rng()
    model = M.Scaled(
        [dense(r, 3, 3), dense(r, 3, 3)], {"gate": dense(r, 3, 3), "out": dense(r, 3, 2)}
    )
    x, _ = data()

    def via_dicts(layers, parts, x):
        made = {k: M.Dense(**d) for k, d in parts.items()}
        return M.scaled_loss(M.Scaled([M.Dense(**d) for d in layers], made), x)

    args = [
        [fields_of(a) for a in model.layers],
        {k: fields_of(v) for k, v in model.parts.items()},
        x,
    ]
    expected = fd.numeric_grad(via_dicts, args, [0, 1])
    g = grad(M.scaled_loss)
    for _ in range(2):
        result = g(model, x)
        fd.assert_close([fields_of(a) for a in result.layers], expected[0], rtol=1e-6)
        parts = {k: fields_of(v) for k, v in result.parts.items()}
        fd.assert_close(parts, expected[1], rtol=1e-6)


def test_nested_lists_of_layers():
    r = rng()
    model = M.Stack([[dense(r, 3, 4), M.Tanh()], [dense(r, 4, 2)]])
    x, _ = data()

    def via_dicts(blocks, x):
        return M.stack_loss(M.Stack([layers_from_dicts(b) for b in blocks]), x)

    (expected,) = fd.numeric_grad(via_dicts, [[layers_as_dicts(b) for b in model.blocks], x], [0])
    g = grad(M.stack_loss)
    for _ in range(2):
        result = g(model, x)
        fd.assert_close([layers_as_dicts(b) for b in result.blocks], expected, rtol=1e-6)


# --------------------------------------------------------------------------
# Still refused, with a message that says what to write


def test_break_in_a_loop_over_objects_is_refused():
    model, (x, _) = M.MLP([3, 4, 2], rng()), data()
    with pytest.raises(TranspileError, match="unrolled per element, and may not break"):
        grad(M.breaks_in_loop)(model, x)


def test_assigning_the_loop_variable_is_refused():
    model, (x, _) = M.MLP([3, 4, 2], rng()), data()
    with pytest.raises(TranspileError, match="its loop variable 'layer' may not be assigned"):
        grad(M.assigns_loop_variable)(model, x)


def test_a_global_list_of_objects_is_refused_with_a_remedy():
    x, _ = data()
    with pytest.raises(TranspileError, match="read from a global or closure variable") as e:
        grad(M.global_model_loss)(x)
    assert "pass the object holding the list as an argument" in str(e.value)


# --------------------------------------------------------------------------
# Objects made inside the differentiated function


def test_an_object_made_in_the_function():
    r = rng()
    W, b, (x, _) = r.normal(size=(3, 4)), r.normal(size=4), data()
    expected = fd.numeric_grad(M.made_layer, [W, b, x], [0, 1, 2])
    g = grad(M.made_layer, wrt=(0, 1, 2))
    for _ in range(2):
        fd.assert_close(g(W, b, x), expected, rtol=1e-6)
    assert "layer = {'W': W, 'b': b, 'kind': 'affine'}" in str(source(g))


def test_objects_made_in_a_loop_with_a_function_argument():
    r = rng()
    Ws, (x, _) = [r.normal(size=(3, 3)) for _ in range(3)], data()
    (expected,) = fd.numeric_grad(M.made_in_a_loop, [Ws, x], [0])
    g = grad(M.made_in_a_loop)
    for _ in range(2):
        fd.assert_close(g(Ws, x), expected, rtol=1e-6)


def test_a_dataclass_made_in_the_function():
    r = rng()
    shift, (x, _) = r.normal(size=3), data()
    expected = fd.numeric_grad(M.made_dataclass, [1.5, shift, x], [0, 1, 2])
    g = grad(M.made_dataclass, wrt=(0, 1, 2))
    for _ in range(2):
        fd.assert_close(g(1.5, shift, x), expected, rtol=1e-6)


def test_an_object_made_in_the_function_and_passed_to_another():
    r = rng()
    W, b, (x, _) = r.normal(size=(3, 2)), r.normal(size=2), data()
    expected = fd.numeric_grad(M.made_and_passed, [W, b, x], [0, 1])
    g = grad(M.made_and_passed, wrt=(0, 1))
    for _ in range(2):
        fd.assert_close(g(W, b, x), expected, rtol=1e-6)


def test_an_init_that_computes_is_refused_naming_the_class():
    r = rng()
    with pytest.raises(TranspileError, match="object of class Normalizing is made") as e:
        grad(M.made_normalizing)(r.normal(size=(3, 2)), data()[0])
    assert "pass it as an argument" in str(e.value)


# --------------------------------------------------------------------------
# check_grad and numeric_grad with objects


def test_numeric_grad_of_an_object_is_an_object_of_field_gradients():
    model, (x, y) = M.MLP([3, 4, 2], rng()), data()
    result = numeric_grad(M.mlp_loss, model, x, y)
    assert type(result) is M.MLP and result.name == "mlp"
    via_dicts = lambda d, x, y: M.mlp_loss(mlp_from_dicts(d), x, y)
    (expected,) = fd.numeric_grad(via_dicts, [layers_as_dicts(model.layers), x, y], [0])
    fd.assert_close(layers_as_dicts(result.layers), expected, rtol=1e-5)
    assert np.array_equal(model.layers[0].W, M.MLP([3, 4, 2], rng()).layers[0].W)


def test_check_grad_compares_an_object_field_by_field():
    model, (x, y) = M.MLP([3, 4, 2], rng()), data()
    report = check_grad(M.l2_loss, model, x, y, 0.01)
    assert report.passed, str(report)
    paths = [row.path for row in report.rows]
    assert paths == [
        "model.layers[0].W",
        "model.layers[0].b",
        "model.layers[2].W",
        "model.layers[2].b",
    ]
    both = check_grad(M.l2_loss, model, x, y, 0.01, wrt=(0, 1))
    assert both.passed and "x" in [row.path for row in both.rows]


def test_check_grad_of_a_dataclass_and_a_wrong_gradient_fails():
    from transpile_runtime import gradcheck

    p = M.Gain(1.5, rng().normal(size=3))
    x, _ = data()

    def loss(p, x):
        return np.sum(p.apply(x) ** 2)

    assert check_grad(loss, p, x).passed

    def wrong(p, x):
        return M.Gain(0.0, np.zeros(3))

    report = gradcheck.check_grad(loss, p, x, grad_fn=wrong)
    assert not report.passed and [row.path for row in report.rows] == ["p.g", "p.shift"]


class _Dense:
    def __init__(self, W):
        self.W = W


class _Labelled:
    def __init__(self, W):
        self.stuff = ["name", _Dense(W)]


def _labelled_loss(model, x):
    return np.sum(model.stuff[1].W * x)


def test_an_object_hidden_among_other_values_is_refused_not_a_silent_constant():
    """model.stuff mixes a string and an object: the object's W would be read as a
    constant and handed back as its own gradient."""
    model, x = _Labelled(np.array([1.0, 2.0])), np.array([3.0, 4.0])
    with pytest.raises(TypeError, match="_Labelled.stuff mixes"):
        grad(_labelled_loss)(model, x)
