"""Methods and small classes holding parameters (``tests/method_funcs.py``).

Every gradient is checked against central finite differences (``tests/fd.py``) on a
first and a later call. ``fd`` differentiates numbers, arrays and containers, not
objects: a gradient with respect to an object is checked against the finite
differences of a dict-based equivalent, a function that builds the object from a
dict of its fields and calls the same code.
"""

import copy
import dataclasses

import fd
import method_funcs as M
import numpy as np
import pytest

from transpile import grad, source, value_and_grad


def rng():
    return np.random.default_rng(11)


def data(dtype=np.float64):
    r = rng()
    return r.normal(size=(5, 3)).astype(dtype), r.normal(size=(5, 2)).astype(dtype)


def check_twice(g, args, expected, rtol=1e-6):
    """The gradient agrees with ``expected`` on its first and on a later call."""
    for _ in range(2):
        fd.assert_close(g(*args), expected, rtol=rtol)


def fields(obj, names):
    return {k: getattr(obj, k) for k in names}


def assert_fields_close(result, expected, names, rtol=1e-6):
    """``result`` (an object) has gradient fields agreeing with the dict ``expected``."""
    fd.assert_close(fields(result, names), expected, rtol=rtol)


def fd_wrt_fields(make, names, obj, *rest):
    """The finite-difference gradient with respect to ``obj``'s fields ``names``, through
    ``make(dict_of_fields)``, which builds an object like ``obj``."""
    (g,) = fd.numeric_grad(lambda d, *a: make(d, *a), [fields(obj, names), *rest], [0])
    return g


# --------------------------------------------------------------------------
# Objects read as global or closure variables


def test_method_of_a_global_model():
    x, y = data()
    (expected,) = fd.numeric_grad(M.global_method, [x, y], [0])
    check_twice(grad(M.global_method), (x, y), expected)
    text = str(source(grad(M.global_method)))
    assert "def predict_fwd(self, x):" in text and "predict_fwd(MODEL, x)" in text


def test_a_method_calling_another_method_of_self():
    x, y = data()
    (expected,) = fd.numeric_grad(M.global_method_of_method, [x, y], [0])
    check_twice(grad(M.global_method_of_method), (x, y), expected)


def test_a_method_taking_another_user_object():
    x, _ = data()
    (expected,) = fd.numeric_grad(M.method_taking_object, [x], [0])
    check_twice(grad(M.method_taking_object), (x,), expected)


def test_a_global_object_called_through_its___call__():
    x, _ = data()
    (expected,) = fd.numeric_grad(M.call_global_layer, [x], [0])
    check_twice(grad(M.call_global_layer), (x,), expected)


def test_a_closure_model():
    model = M.Linear(rng().normal(size=(3, 2)), np.zeros(2), scale=0.5)

    def loss(x):
        return np.sum(model.predict(x) ** 2)

    x, _ = data()
    (expected,) = fd.numeric_grad(loss, [x], [0])
    check_twice(grad(loss), (x,), expected)


def test_a_global_rebound_to_another_class_is_transpiled_again(monkeypatch):
    x, y = data()
    g = grad(M.global_method)
    g(x, y)

    class Other(M.Linear):
        def predict(self, x):
            return x @ self.W

    monkeypatch.setattr(M, "MODEL", Other(M.MODEL.W, M.MODEL.b))
    (expected,) = fd.numeric_grad(M.global_method, [x, y], [0])
    check_twice(g, (x, y), expected)


# --------------------------------------------------------------------------
# Objects passed as arguments, and gradients with respect to them


def make_mlp(d):
    return M.MLP(d["W1"], d["b1"], d["W2"])


def mlp():
    r = rng()
    return M.MLP(r.normal(size=(3, 4)), r.normal(size=4), r.normal(size=(4, 2)))


def test_a_class_based_mlp_model_forward():
    model, (x, y) = mlp(), data()
    names = ("W1", "b1", "W2")
    expected = fd_wrt_fields(lambda d, x, y: M.mlp_loss(make_mlp(d), x, y), names, model, x, y)
    g = grad(M.mlp_loss)
    for _ in range(2):
        result = g(model, x, y)
        assert type(result) is M.MLP and result is not model
        assert result.name == "mlp"  # what is not a number stays the argument's
        assert_fields_close(result, expected, names)
    (dx,) = fd.numeric_grad(M.mlp_loss, [model, x, y], [1])
    check_twice(grad(M.mlp_loss, wrt="x"), (model, x, y), dx)


def test_gradients_with_respect_to_the_model_and_the_input():
    model, (x, y) = mlp(), data()
    value, (dmodel, dx) = value_and_grad(M.mlp_loss, wrt=(0, 1))(model, x, y)
    assert value == pytest.approx(M.mlp_loss(model, x, y))
    (expected_dx,) = fd.numeric_grad(M.mlp_loss, [model, x, y], [1])
    fd.assert_close(dx, expected_dx, rtol=1e-6)
    assert isinstance(dmodel, M.MLP)


def test_a_method_calling_a_method_with_the_object_differentiated():
    r = rng()
    model, (x, y) = M.Linear(r.normal(size=(3, 2)), r.normal(size=2), 1.5), data()
    names = ("W", "b", "scale")

    def via_dict(d, x, y):
        return M.linear_loss(M.Linear(d["W"], d["b"], d["scale"]), x, y)

    expected = fd_wrt_fields(via_dict, names, model, x, y)
    g = grad(M.linear_loss)
    for _ in range(2):
        assert_fields_close(g(model, x, y), expected, names)


def test_a_layer_passed_and_called_through___call__():
    layer, (x, _) = M.Dense(rng().normal(size=(3, 4))), data()
    expected = fd_wrt_fields(lambda d, x: M.call_layer(M.Dense(d["W"]), x), ("W",), layer, x)
    g = grad(M.call_layer)
    for _ in range(2):
        result = g(layer, x)
        assert result.act is np.tanh
        assert_fields_close(result, expected, ("W",))


def test_a_method_taking_an_object_argument_both_differentiated():
    r = rng()
    scaler, model, (x, _) = M.Scaler(1.5), M.Linear(r.normal(size=(3, 2)), 0.3), data()

    def via_dicts(s, m, x):
        return M.method_with_object_argument(
            M.Scaler(s["c"]), M.Linear(m["W"], m["b"], m["scale"]), x
        )

    s_fields, m_fields = {"c": 1.5}, fields(model, ("W", "b", "scale"))
    expected = fd.numeric_grad(via_dicts, [s_fields, m_fields, x], [0, 1])
    g = grad(M.method_with_object_argument, wrt=(0, 1))
    for _ in range(2):
        dscaler, dmodel = g(scaler, model, x)
        fd.assert_close(fields(dscaler, ("c",)), expected[0], rtol=1e-6)
        fd.assert_close(fields(dmodel, ("W", "b", "scale")), expected[1], rtol=1e-6)


def test_gradient_with_respect_to_a_dataclass_is_an_instance_of_it():
    p, (x, _) = M.Params(rng().normal(size=(3, 2)), 0.5), data()
    via_dict = lambda d, x: M.params_loss(M.Params(**d), x)
    expected = fd_wrt_fields(via_dict, ("W", "b"), p, x)
    g = grad(M.params_loss)
    for _ in range(2):
        result = g(p, x)
        assert isinstance(result, M.Params) and dataclasses.is_dataclass(result)
        fd.assert_close(dataclasses.asdict(result), expected, rtol=1e-6)


def test_the_callers_objects_are_not_modified():
    model, (x, y) = mlp(), data()
    before = copy.deepcopy(model.__dict__)
    result = grad(M.mlp_loss)(model, x, y)
    assert model.__dict__.keys() == before.keys()
    for k, v in before.items():
        assert (
            np.array_equal(model.__dict__[k], v)
            if isinstance(v, np.ndarray)
            else v == model.__dict__[k]
        )
    assert all(
        not np.shares_memory(result.__dict__[k], model.__dict__[k]) for k in ("W1", "b1", "W2")
    )


def test_float32_in_gives_float32_out():
    r = rng()
    model = M.MLP(*(r.normal(size=s).astype(np.float32) for s in ((3, 4), (4,), (4, 2))))
    x, y = data(np.float32)
    result = grad(M.mlp_loss)(model, x, y)
    assert {result.__dict__[k].dtype for k in ("W1", "b1", "W2")} == {np.dtype(np.float32)}


def test_source_of_a_gradient_with_respect_to_an_object():
    model, (x, y) = mlp(), data()
    text = str(source(grad(M.mlp_loss), model, x, y))
    assert "self['W1']" in text and "ops.add_at(dself, 'W1'" in text


# --------------------------------------------------------------------------
# Still refused


def test_an_attribute_written_with_a_constant_runs_as_written():
    # self.W = self.W * 2.0 on a global object: each call doubles W once, as Python
    # does, and the gradient of sum(x @ W) is read at the doubled W
    x, _ = data()
    start = M.WRITER.W.copy()
    try:
        g = grad(M.writes_attribute_of_global)
        for k in (1, 2):
            got = g(x)
            np.testing.assert_array_equal(M.WRITER.W, start * 2.0**k)
            expected = np.ones_like(x) * M.WRITER.W.sum(axis=1)
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    finally:
        M.WRITER.W = start
