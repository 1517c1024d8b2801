"""Memory shared between names: never a wrong number, never the caller's array changed.

* A view (``np.asarray``, the same array under a second name, a view of a view, one
  made on one branch or by a helper, one kept in a dict) made before a write into its
  array and read after it is refused at the read, by every entry point; a view made
  after the write, a copy made before it, and a view of an allocation (``.T``,
  ``reshape``, ``ravel``, ``swapaxes``, ``np.transpose``, ``x[...]``, a slice: taken
  again where it is read) are differentiated, checked against central finite
  differences.
* No entry point writes into the ``dout``, ``v`` or tangent it is handed, nor into the
  arguments, on a first and a later call.
* ``out=`` into an argument (or a view of one) is refused; ``out=`` that a
  differentiated value reaches is refused (the rules do not see what lands in ``out``).
"""

import copy
import inspect

import fd
import numpy as np
import pytest

from transpile import TranspileError, grad, hessian, hvp, jvp, value_and_grad, vjp

X = 1.5


def _line(func, text):
    lines, first = inspect.getsourcelines(func)
    hits = [first + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (func.__name__, text)
    return hits[0]


def _entry_points(f, x):
    """Each entry point called on ``f`` at ``x`` (a float), as ``(name, thunk)``."""
    return [
        ("grad", lambda: grad(f)(x)),
        ("value_and_grad", lambda: value_and_grad(f)(x)),
        ("vjp", lambda: vjp(f)(x, 1.0)),
        ("jvp", lambda: jvp(f)(x, 1.0)),
        ("hvp", lambda: hvp(f)(x, 1.0)),
        ("hvp reverse", lambda: hvp(f, mode="reverse")(x, 1.0)),
    ]


# --------------------------------------------------------------------------
# views made before a write into their array, read after it: refused (those in
# RETAKEN are taken again where read, and differentiated)


def view_T(x):
    out = np.zeros((2, 2))
    r = out.T
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_reshape(x):
    out = np.zeros((2, 2))
    r = out.reshape(4)
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_ravel(x):
    out = np.zeros((2, 2))
    r = np.ravel(out)
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_swapaxes(x):
    out = np.zeros((2, 2))
    r = np.swapaxes(out, 0, 1)
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_transpose(x):
    out = np.zeros((2, 2))
    r = np.transpose(out)
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_ellipsis(x):
    out = np.zeros((2, 2))
    r = out[...]
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_asarray(x):
    out = np.zeros((2, 2))
    r = np.asarray(out)
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_slice(x):
    out = np.zeros((2, 2))
    r = out[0:2]
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_second_name(x):
    out = np.zeros((2, 2))
    r = out
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_of_a_view(x):
    out = np.zeros((2, 2))
    t = out.T
    r = t.reshape(4)
    out[0, 1] = x
    return np.sum(r * x)  # read


def view_renamed_after_the_write(x):
    out = np.zeros((2, 2))
    t = out.T
    out[0, 1] = x
    r = t  # still the view made before the write
    return np.sum(r * x)  # read


def view_in_a_loop(x):
    out = np.zeros(3)
    r = out.reshape(3, 1)
    s = 0.0
    for i in range(3):
        s = s + np.sum(r) * x  # read
        out[i] = x
    return s


def view_in_a_dict(x):
    out = np.zeros(3)
    d = {"a": out}
    out[0] = x
    return np.sum(d["a"]) * x  # read


def view_on_one_branch(x):
    out = np.zeros(3)
    r = out.T if x > 0.0 else out * 1.0  # a view on one path only
    out[0] = x
    return np.sum(r) * x  # read


def view_from_a_helper(x):
    out = np.zeros(3)
    r = same(out)  # what a helper returns may be its argument
    out[0] = x
    return np.sum(r) * x  # read


def same(v):
    return v


STALE = [
    view_in_a_dict,
    view_on_one_branch,
    view_from_a_helper,
    view_asarray,
    view_second_name,
    view_of_a_view,
    view_renamed_after_the_write,
]
# taken again where read (``retake``): a view of an allocation, certainly the same memory
RETAKEN = [
    (view_T, 2.0),  # (function, its second derivative)
    (view_reshape, 2.0),
    (view_ravel, 2.0),
    (view_swapaxes, 2.0),
    (view_transpose, 2.0),
    (view_ellipsis, 2.0),
    (view_slice, 2.0),
    (view_in_a_loop, 6.0),  # 3 x ** 2
]


@pytest.mark.parametrize("f", STALE, ids=lambda f: f.__name__)
def test_a_view_read_after_a_write_into_its_array_is_refused_by_every_entry_point(f):
    for entry, call in _entry_points(f, X):
        with pytest.raises(TranspileError, match="is a view of 'out', read after a write") as info:
            call()
        assert info.value.lineno == _line(f, "# read"), entry
        assert info.value.filename == inspect.getsourcefile(f)
        assert ".copy()" in info.value.hint


def test_the_hint_quotes_the_view_as_written():
    with pytest.raises(TranspileError) as info:
        grad(view_asarray)(X)
    assert "r = np.asarray(out).copy()" in info.value.hint


# --------------------------------------------------------------------------
# a view made after the write, a copy or arithmetic made before it: differentiated


def view_after_the_write(x):
    out = np.zeros((2, 2))
    out[0, 1] = x
    r = out.T
    return np.sum(r * x)  # x ** 2


def reshape_after_the_write(x):
    out = np.zeros((2, 2))
    out[0, 1] = x
    r = np.ravel(out).reshape(2, 2)
    return np.sum(r * x)  # x ** 2


def copy_before_the_write(x):
    out = np.ones((2, 2))
    r = out.copy()
    out[0, 1] = x
    return np.sum(r * x) + np.sum(out * out)  # 4 x + 3 + x ** 2


def times_one_before_the_write(x):
    out = np.ones((2, 2))
    r = out * 1.0  # a new array: not folded into a second name for out
    out[0, 1] = x
    return np.sum(r * x)  # 4 x


DIFFERENTIATED = [
    (view_after_the_write, 2.0),  # (function, its second derivative)
    (reshape_after_the_write, 2.0),
    (copy_before_the_write, 2.0),
    (times_one_before_the_write, 0.0),
    *RETAKEN,
]


@pytest.mark.parametrize("f, second", DIFFERENTIATED, ids=lambda f: getattr(f, "__name__", ""))
def test_views_after_the_write_copies_before_it_and_views_taken_again_are_differentiated(f, second):
    (expected,) = fd.numeric_grad(f, [X], [0])
    value = f(X)
    for _ in range(2):  # the first call and a later one
        assert grad(f)(X) == pytest.approx(expected, rel=1e-7)
        v, g = value_and_grad(f)(X)
        assert (v, g) == pytest.approx((value, expected), rel=1e-7)
        assert vjp(f)(X, 2.0) == pytest.approx(2.0 * expected, rel=1e-7)
        assert jvp(f)(X, 2.0) == pytest.approx((value, 2.0 * expected), rel=1e-7)
        assert hvp(f)(X, 1.0) == pytest.approx(second, abs=1e-9)
        assert hvp(f, mode="reverse")(X, 1.0) == pytest.approx(second, abs=1e-9)


# --------------------------------------------------------------------------
# dout, v and tangents are the caller's: never written into


def filled_by_slot(x):
    Z = np.zeros(3)
    for i in range(3):
        Z[i] = np.sum(x[i : i + 2])
    return Z


def masked_gather(x):
    q = np.tanh(x)
    t = np.sum(q[x > 0.0])
    return q * 1.0 + np.tanh(t)


def through_a_helper(x):
    return filled_by_slot(x)  # the helper's adjoint is handed this function's dout


def scaled(x):
    Z = filled_by_slot(x) * 1.0
    Z[0] = Z[0] * x[3]
    return Z


VECTOR_VALUED = [filled_by_slot, masked_gather, through_a_helper, scaled]


def _vector_arguments(f):
    x = np.array([0.5, -0.3, 0.2, 0.7])[: 3 if f is masked_gather else 4]
    return x, np.array([1.0, -2.0, 0.5])


@pytest.mark.parametrize("f", VECTOR_VALUED, ids=lambda f: f.__name__)
def test_vjp_and_jvp_never_write_into_dout_the_tangent_or_the_arguments(f):
    x, dout = _vector_arguments(f)
    tangent = np.linspace(0.3, -0.4, x.size)
    x0, dout0, tangent0 = x.copy(), dout.copy(), tangent.copy()
    (expected_vjp,) = fd.numeric_grad(lambda x: np.sum(f(x) * dout0), [x0], [0])
    expected_jvp = fd.numeric_jvp(f, [x0], [0], [tangent0])
    back, forward = vjp(f), jvp(f)
    for _ in range(3):  # the first call, the probe, the shape variant
        fd.assert_close(back(x, dout), expected_vjp, rtol=1e-7)
        value, tangent_out = forward(x, tangent)
        fd.assert_close(tangent_out, expected_jvp, rtol=1e-7)
        fd.assert_close(value, f(x0), rtol=1e-12)
        np.testing.assert_array_equal(dout, dout0)
        np.testing.assert_array_equal(tangent, tangent0)
        np.testing.assert_array_equal(x, x0)


def weighted_square(x):
    Z = filled_by_slot(x)
    q = np.tanh(x)
    t = np.sum(q[x > 0.0])
    return np.sum(Z * Z) + np.sum(q * 1.0) * t


def test_hvp_and_hessian_never_write_into_v_or_the_arguments():
    x = np.array([0.5, -0.3, 0.2, 0.7])
    v = np.array([1.0, -2.0, 0.5, 0.25])
    x0, v0 = x.copy(), v.copy()
    g = grad(weighted_square)
    fd.assert_close(g(x0.copy()), fd.numeric_grad(weighted_square, [x0], [0])[0], rtol=1e-7)
    expected = fd.numeric_jvp(g, [x0], [0], [v0])  # the gradient checked just above
    for _ in range(3):
        fd.assert_close(hvp(weighted_square)(x, v), expected, rtol=1e-6)
        fd.assert_close(hvp(weighted_square, mode="reverse")(x, v), expected, rtol=1e-6)
        fd.assert_close(hessian(weighted_square)(x) @ v0, expected, rtol=1e-6)
        np.testing.assert_array_equal(v, v0)
        np.testing.assert_array_equal(x, x0)


# --------------------------------------------------------------------------
# out=


def out_into_the_argument(x):
    np.multiply(x, 2.0, out=x)  # write
    return np.sum(x * x)


def out_into_a_view_of_the_argument(x):
    v = x.T
    y = np.multiply(v, 2.0, out=v)  # write
    return np.sum(y)


def out_into_an_undifferentiated_argument(x, c):
    np.add(c, 1.0, out=c)  # write
    return np.sum(x * c)


def out_of_a_differentiated_value(x):
    b = np.zeros(3)
    np.multiply(x, 2.0, out=b)  # write
    return np.sum(b * x)


@pytest.mark.parametrize(
    "f",
    [out_into_the_argument, out_into_a_view_of_the_argument, out_of_a_differentiated_value],
    ids=lambda f: f.__name__,
)
def test_out_into_an_argument_or_of_a_differentiated_value_is_refused(f):
    x = np.array([1.0, 2.0, 3.0])
    x0 = x.copy()
    entries = [
        lambda: grad(f)(x),
        lambda: vjp(f)(x, 1.0),
        lambda: jvp(f)(x, np.ones(3)),
        lambda: hvp(f)(x, np.ones(3)),
        lambda: hvp(f, mode="reverse")(x, np.ones(3)),
    ]
    for call in entries:
        with pytest.raises(TranspileError, match="out=") as info:
            call()
        assert info.value.lineno == _line(f, "# write")
        np.testing.assert_array_equal(x, x0)


def test_out_into_an_argument_that_is_not_differentiated_is_refused():
    x, c = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with pytest.raises(TranspileError, match="argument") as info:
        grad(out_into_an_undifferentiated_argument)(x, c)
    assert info.value.lineno == _line(out_into_an_undifferentiated_argument, "# write")
    np.testing.assert_array_equal(c, [3.0, 4.0])


def out_of_constants_into_a_fresh_array(x):
    b = np.zeros(3)
    np.multiply(np.arange(3.0), 2.0, out=b)
    return np.sum(b * x)


def test_out_of_constants_into_an_array_the_function_made_is_differentiated():
    x = np.array([1.0, 2.0, 3.0])
    (expected,) = fd.numeric_grad(out_of_constants_into_a_fresh_array, [x], [0])
    np.testing.assert_allclose(expected, [0.0, 2.0, 4.0], atol=1e-9)  # the closed form
    for _ in range(2):
        fd.assert_close(grad(out_of_constants_into_a_fresh_array)(copy.copy(x)), expected)


# --------------------------------------------------------------------------
# a view made after each write in a loop: the tape restores what the view shows


def loop_view_T(x):
    out = np.zeros(3)
    s = 0.0
    for i in range(3):
        out[i] = x * (i + 1.0)
        r = out.T
        s = s + np.sum(np.cumsum(r) * r)
    return s


def loop_view_reshape(x):
    out = np.zeros((3, 1))
    s = 0.0
    for i in range(3):
        out[i] = x * (i + 1.0)
        r = out.reshape(3)
        s = s + np.sum(np.cumsum(r) * r)
    return s


def loop_view_ravel(x):
    out = np.zeros(3)
    s = 0.0
    for i in range(3):
        out[i] = x * (i + 1.0)
        r = np.ravel(out)
        s = s + np.sum(np.cumsum(r) * r)
    return s


def loop_second_name(x):
    out = np.zeros(3)
    s = 0.0
    for i in range(3):
        out[i] = x * (i + 1.0)
        r = out
        s = s + np.sum(np.cumsum(r) * r)
    return s


@pytest.mark.parametrize(
    "f",
    [loop_view_T, loop_view_reshape, loop_view_ravel, loop_second_name],
    ids=lambda f: f.__name__,
)
def test_a_view_read_in_the_adjoint_of_a_loop_sees_the_slots_restored(f):
    (expected,) = fd.numeric_grad(f, [X], [0])
    assert expected == pytest.approx(99.0)  # closed form: 2 * 74.25 / 1.5, f quadratic
    for _ in range(2):
        assert grad(f)(X) == pytest.approx(expected, rel=1e-9)
        assert jvp(f)(X, 1.0)[1] == pytest.approx(expected, rel=1e-9)
        assert hvp(f)(X, 1.0) == pytest.approx(66.0, rel=1e-9)  # 2 f / x ** 2
        assert hvp(f, mode="reverse")(X, 1.0) == pytest.approx(66.0, rel=1e-9)


# --------------------------------------------------------------------------
# forward mode: a new value's tangent is new memory where the function writes in place


def plus_zero_then_write(x):
    y = x + 0.0  # y_dot would be x_dot itself
    y[0] = 0.0
    return y * 2.0


def test_jvp_never_writes_into_the_tangent_through_a_new_value():
    x, tangent = np.array([1.0, 2.0]), np.array([1.0, -1.0])
    expected = fd.numeric_jvp(plus_zero_then_write, [x], [0], [tangent.copy()])
    np.testing.assert_allclose(expected, [0.0, -2.0], atol=1e-9)  # the closed form
    for _ in range(2):
        value, out = jvp(plus_zero_then_write)(x, tangent)
        fd.assert_close(out, expected)
        np.testing.assert_array_equal(tangent, [1.0, -1.0])


def written_slot_by_slot(x):
    out = np.zeros((2, 3))
    out[0, 1] = x[0]
    out[1] = x * x
    return np.sum(out * out)


def written_into_a_reshaped_allocation(x):
    out = np.zeros(6).reshape(2, 3)  # the allocation itself, or a view of it
    out[0, 1] = x[0]
    out[1] = x * x
    return np.sum(out * out)


def written_into_a_copy(x):
    b = x * 2.0
    c = b.copy()
    c[0] = x[1]
    return np.sum(c * b)


def masked_write_into_a_ufunc_result(v):
    r = np.sqrt(v * v + 1.0)
    r[r > 1.5] = 1.0 / r[r > 1.5]
    return np.sum(r * v * v)


SECOND_ORDER = [
    written_slot_by_slot,
    written_into_a_reshaped_allocation,
    written_into_a_copy,
    masked_write_into_a_ufunc_result,
]


@pytest.mark.parametrize("f", SECOND_ORDER, ids=lambda f: f.__name__)
def test_writes_into_arrays_the_function_made_are_differentiated_to_second_order(f):
    x = np.array([0.5, -1.2, 2.0])
    v = np.array([1.0, 0.3, -0.2])
    (expected_grad,) = fd.numeric_grad(f, [x], [0])
    expected_hvp = fd.numeric_jvp(grad(f), [x], [0], [v])  # the gradient checked below
    for _ in range(2):
        fd.assert_close(grad(f)(x), expected_grad, rtol=1e-7)
        fd.assert_close(jvp(f)(x, v)[1], float(expected_grad @ v), rtol=1e-7)
        fd.assert_close(hvp(f)(x, v), expected_hvp, rtol=1e-6)
        fd.assert_close(hvp(f, mode="reverse")(x, v), expected_hvp, rtol=1e-6)
        fd.assert_close(hessian(f)(x) @ v, expected_hvp, rtol=1e-6)


def read_after_a_write_through_a_view(x):
    a = np.zeros(6)
    b = a.reshape(2, 3)
    b[0, 1] = x
    return np.sum(a * x)  # read


def test_an_array_read_after_a_write_through_a_view_of_it_is_refused():
    for call in (
        lambda: grad(read_after_a_write_through_a_view)(X),
        lambda: jvp(read_after_a_write_through_a_view)(X, 1.0),
    ):
        with pytest.raises(TranspileError, match="'a' is read after a write into 'b'") as info:
            call()
        assert info.value.lineno == _line(read_after_a_write_through_a_view, "# read")


# --------------------------------------------------------------------------
# a helper called for its effect alone


def project(vx, vy):
    vx -= 0.5 * vy


def calls_project(x):
    a = x * 2.0
    b = x * x
    project(a, b)  # call
    return np.sum(a * b)


def zero_first(v):
    w = v.T
    w[0] = 0.0


def calls_zero_first(x):
    a = x * 2.0
    zero_first(a)  # call
    return np.sum(a * a)


def log_sum(v):
    return float(np.sum(v)) > 1e300  # reads only


def calls_log_sum(x):
    a = x * 2.0
    log_sum(a)
    return np.sum(a * a)


def test_a_helper_that_may_update_its_arguments_called_for_its_effect_is_refused():
    x = np.array([0.5, -1.2, 2.0])
    f = calls_zero_first
    for call in (lambda: grad(f)(x), lambda: jvp(f)(x, np.ones(3))):
        with pytest.raises(TranspileError, match="called for its effect alone") as info:
            call()
        assert info.value.lineno == _line(f, "# call")


def test_a_helper_updating_its_argument_in_place_whose_array_is_read_again_is_refused():
    x = np.array([0.5, -1.2, 2.0])
    for call in (lambda: grad(calls_project)(x), lambda: jvp(calls_project)(x, np.ones(3))):
        with pytest.raises(TranspileError, match="and `a` shares that array and is read") as info:
            call()
        assert info.value.lineno == _line(project, "vx -= 0.5 * vy")


def test_a_helper_that_only_reads_called_for_its_effect_is_left_alone():
    x = np.array([0.5, -1.2, 2.0])
    (expected,) = fd.numeric_grad(calls_log_sum, [x], [0])
    for _ in range(2):
        fd.assert_close(grad(calls_log_sum)(x), expected, rtol=1e-7)
