"""A view read after a write into its array, taken again where it is read (the stage
``retake``): each gradient against central finite differences in float64, on a first
and a later call, and the cases it leaves to ``aliasing`` still refused."""

import fd
import numpy as np
import pytest
import retake_funcs as R
from variants import assert_grad_matches_fd, call_twice

from transpile import TranspileError, grad, hessian, hvp, jvp, source, vjp


def vec(n, seed=0):
    return np.random.default_rng(seed).uniform(-0.8, 0.8, n)


GRADIENTS = [
    (R.ravel_read_after_write, lambda: (vec(3), 0.7), (0, 1)),
    (R.transpose_read_after_write, lambda: (vec(3),), 0),
    (R.reshaped_rows_in_a_loop, lambda: (vec(3, 1),), 0),
    (R.sliced_and_swapped, lambda: (vec(3, 2), vec(3, 3)), (0, 1)),
    (R.item_of_matrix_read_after_write, lambda: (vec(3, 8),), 0),
    (R.item_read_after_write, lambda: (vec(3, 13),), 0),
    (R.updated_items_then_swapped, lambda: (vec(3, 9), 0.4), (0, 1)),
    (R.row_read_after_a_write_to_another_row, lambda: (vec(3, 14),), 0),
    (R.row_read_after_a_write_to_another_row, lambda: (vec(6, 15).reshape(3, 2),), 0),
    (R.copy_written_from_its_first_item, lambda: (vec(3, 16), 0.6), (0, 1)),
]


@pytest.mark.parametrize("func, args, wrt", GRADIENTS, ids=lambda c: getattr(c, "__name__", ""))
def test_gradient_of_a_view_read_after_a_write(func, args, wrt):
    assert_grad_matches_fd(func, args(), wrt)


def test_the_view_is_taken_again_where_it_is_read():
    text = source(grad(R.ravel_read_after_write))
    assert "flat2 = np.ravel(out)" in text
    assert text.index("out[1, :] =") < text.index("flat2 = np.ravel(out)")


def test_vjp_and_jvp_of_a_vector_read_through_a_late_view():
    x = vec(3, 4)
    pristine = x.copy()
    jac = fd.numeric_grad(lambda x: R.vector_of_views(x)[0], (x,), (0,))[0]
    for k in range(3):  # rows of the Jacobian, by vjps with basis cotangents
        row = fd.numeric_grad(lambda x: R.vector_of_views(x)[k], (x,), (0,))[0]
        e = np.eye(3)[k]
        got = call_twice(vjp(R.vector_of_views), x, e)
        fd.assert_close(got, row, rtol=1e-6, atol=1e-9)
    v = vec(3, 5)
    out, tangent = call_twice(jvp(R.vector_of_views), x, v)
    expected = fd.numeric_jvp(R.vector_of_views, (x,), (0,), (v,))
    fd.assert_close(out, R.vector_of_views(x), rtol=1e-12, atol=1e-12)
    fd.assert_close(tangent, expected, rtol=1e-6, atol=1e-9)
    assert jac.shape == (3,)
    fd.assert_same(x, pristine)


def test_hvp_through_a_view_read_after_a_write():
    x, v = vec(3, 6), vec(3, 7)
    got = call_twice(hvp(R.transpose_read_after_write), x, v)
    expected = fd.numeric_jvp(grad(R.transpose_read_after_write), (x,), (0,), (v,))
    fd.assert_close(got, expected, rtol=1e-5, atol=1e-7)


def test_grad_of_grad_through_an_updated_item_and_a_late_view():
    f = R.updated_items_then_swapped
    x, s = vec(3, 10), 0.3
    got = call_twice(grad(grad(f, wrt=1), wrt=1), x, s)
    expected = fd.numeric_grad(grad(f, wrt=1), (x, s), (1,))[0]
    fd.assert_close(got, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_hvp_through_an_updated_item_and_a_late_view(mode):
    f = R.updated_items_then_swapped
    x, s, v = vec(3, 11), 0.3, vec(3, 12)
    got = call_twice(hvp(f, mode=mode), x, s, v)
    expected = fd.numeric_jvp(grad(f), (x, s), (0,), (v,))
    fd.assert_close(got, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("wrt", [0, 1])
def test_hessian_where_a_slot_is_read_after_a_write_into_another(wrt):
    f = R.copy_written_from_its_first_item
    x, s = vec(3, 17), 0.6
    got = call_twice(hessian(f, wrt=wrt), x, s)
    if wrt == 0:  # row k: the gradient of the gradient's entry k
        rows = [fd.numeric_grad(lambda *a, k=k: grad(f)(*a)[k], (x, s), (0,))[0] for k in range(3)]
        expected = np.array(rows)
    else:
        expected = fd.numeric_grad(grad(f, wrt=1), (x, s), (1,))[0]
    fd.assert_close(got, expected, rtol=1e-5, atol=1e-7)
    for mode in ("forward", "reverse"):
        v = vec(3, 18) if wrt == 0 else 0.7
        product = call_twice(hvp(f, wrt=wrt, mode=mode), x, s, v)
        fd.assert_close(product, expected @ v if wrt == 0 else expected * v, rtol=1e-5, atol=1e-7)


def test_float32_in_gives_float32_out():
    x = vec(3).astype(np.float32)
    g = call_twice(grad(R.transpose_read_after_write), x)
    assert g.dtype == np.float32
    expected = fd.numeric_grad(R.transpose_read_after_write, (x,), (0,))[0]
    fd.assert_close(g, expected, rtol=3e-3, atol=1e-3)


@pytest.mark.parametrize(
    "func, message",
    [
        (R.row_of_unknown_rank_read_after_write, "'row' is a view of 'out', read after a"),
        (R.view_of_a_copy_read_after_write, "'head' is a view of 'out', read after a write"),
        (R.view_written_into_then_read, "'out' is read after a write into 'col', a view of it"),
        (R.row_read_after_a_negative_index_write, "'first' is a view of 'out', read after a"),
        (R.row_read_after_a_column_write, "'first' is a view of 'out', read after a"),
    ],
)
def test_a_view_that_may_not_be_the_same_memory_again_stays_refused(func, message):
    with pytest.raises(TranspileError, match=message):
        grad(func)(vec(3))
