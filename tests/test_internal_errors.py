"""Programs that crashed inside the library (issue 19, item 9 and 10): each now gives
the right gradient, checked against central differences or a closed form, or the
error the function itself raises, or a ``TranspileError`` saying what to do."""

import importlib.util
import sys
import textwrap

import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import TranspileError, grad, hessian, hvp, jvp, value_and_grad, vjp

X = np.array([0.3, -0.5, 0.7])


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


# -- objects made in the function ----------------------------------------------------


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def apply(self, x):
        return np.tanh(self.w * x + self.b)

    def twice(self, x):
        return self.apply(self.apply(x))


def method_result_off_the_path(x):
    layer = Layer(x, 0.5)
    unused = layer.apply(np.ones(3))  # not differentiated: runs on an instance
    return np.sum(x * 2.0) + 0.0 * np.sum(np.asarray(unused) > 2.0)


def method_calling_a_method_off_the_path(x):
    layer = Layer(1.5, 0.5)
    scale = layer.twice(0.25)  # a method calling another one, with no gradient
    return np.sum(np.sin(x)) * 2.0 + scale * 0.0 + np.sum(layer.twice(x))


def method_calling_a_method_on_the_path(x):
    layer = Layer(x, 0.5)
    return np.sum(layer.twice(x))


@pytest.mark.parametrize(
    "f",
    [
        method_result_off_the_path,
        method_calling_a_method_off_the_path,
        method_calling_a_method_on_the_path,
    ],
)
def test_object_made_in_the_function(f):
    g = call_twice(grad(f), X)
    fd.assert_close(g, fd.numeric_grad(f, (X,), (0,))[0], rtol=1e-6, atol=1e-9)


# -- a module edited on disk ----------------------------------------------------------


@pytest.mark.parametrize(
    "new_text",
    ["import numpy as np\n", "import numpy as np\n\n\n\n\n\n# a comment where f was\n"],
    ids=["shorter", "no-def-there"],
)
def test_module_edited_and_not_reloaded(tmp_path, new_text):
    module, path = _module(
        tmp_path,
        f"edited_{len(new_text)}",
        """\
        import numpy as np


        def f(x):
            return np.sum(np.sin(x))
        """,
    )
    path.write_text(new_text)
    with pytest.raises(TranspileError, match="re-import the module"):
        grad(module.f)(X)


# -- a long expression -----------------------------------------------------------------


def test_a_thousand_terms_in_one_expression(tmp_path):
    terms = " + ".join(f"x[{i % 3}] * {i + 1}.0" for i in range(1000))
    module, _ = _module(tmp_path, "long_sum", f"def f(x):\n    return {terms}\n")
    expected = np.array([sum(i + 1.0 for i in range(1000) if i % 3 == k) for k in range(3)])
    limit = sys.getrecursionlimit()
    np.testing.assert_allclose(call_twice(grad(module.f), X), expected, rtol=1e-12)
    assert sys.getrecursionlimit() == limit  # the compiler's room is given back


# -- defaults ----------------------------------------------------------------------------


def make_scaled(i):
    def scaled(x, k=float(i) * 2.0):
        return np.sum(np.sin(x) * k)

    return scaled


def make_with_helper(i):
    def helper(x, k=float(i) + 1.0):
        return x * k

    def outer(x):
        return np.sum(helper(x) ** 2)

    return outer


def test_default_computed_from_the_enclosing_function():
    g = call_twice(grad(make_scaled(3)), X)
    np.testing.assert_allclose(g, 6.0 * np.cos(X), rtol=1e-12)
    value, _ = value_and_grad(make_scaled(2))(X)
    assert value == pytest.approx(4.0 * np.sum(np.sin(X)))


def test_default_of_a_called_helper_from_the_enclosing_function():
    np.testing.assert_allclose(call_twice(grad(make_with_helper(3)), X), 2 * 16.0 * X)


def test_default_is_the_value_at_the_def(tmp_path):
    module, _ = _module(
        tmp_path,
        "rebound_default",
        """\
        import numpy as np

        SCALE = 3.0


        def f(x, s=SCALE, w=np.array([1.0, 2.0, 3.0])):
            return np.sum(x * s * w)


        def h(x, scale=SCALE):
            return x * scale


        def calls_h(x):
            return np.sum(h(x) ** 2)


        SCALE = 20.0
        """,
    )
    np.testing.assert_allclose(call_twice(grad(module.f), X), 3.0 * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(call_twice(grad(module.calls_h), X), 2 * 9.0 * X)
    assert jvp(module.calls_h)(X, np.ones(3))[1] == pytest.approx(2 * 9.0 * np.sum(X))


# -- arguments the function itself refuses ----------------------------------------------


def half(x):
    return np.sum(x * 0.5)


def doubled(x):
    return np.sum(x * 2)


def test_a_list_where_the_function_raises():
    with pytest.raises(TypeError):
        half([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="can't multiply sequence"):
        grad(half)([1.0, 2.0, 3.0])


def test_a_repeated_list():
    # [1, 2, 3] * 2 has six items: each argument item is counted twice
    assert doubled([1.0, 2.0, 3.0]) == 12.0
    assert grad(doubled)([1.0, 2.0, 3.0]) == [2.0, 2.0, 2.0]


def weighted(w, x):
    return np.sum(np.sin(w) * x)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: grad(weighted)(m, X),
        lambda m: grad(weighted)(X, m),
        lambda m: vjp(weighted)(X, m, 1.0),
        lambda m: value_and_grad(weighted, wrt=1)(X, m),
        lambda m: jvp(weighted)(m, X, X),
        lambda m: jvp(weighted)(X, m, X),
        lambda m: hvp(weighted)(m, X, X),
        lambda m: hessian(weighted)(m, X),
    ],
    ids=[
        "grad-wrt",
        "grad-other",
        "vjp",
        "value_and_grad",
        "jvp-wrt",
        "jvp-other",
        "hvp",
        "hessian",
    ],
)
def test_a_masked_array_is_refused(call):
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(TypeError, match="masked array"):
        call(masked)
