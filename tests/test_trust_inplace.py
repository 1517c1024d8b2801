"""Augmented assignment: refused where numpy's in-place update would be seen, kept elsewhere.

The transpiler treats ``z -= 1.0`` as ``z = z - 1.0``, a new value. numpy updates
``z``'s array in place, so another name sharing that array (``z = y``, a view, a list
holding it, the caller's array in a helper) changes too. Each program here that would
differ gets a ``TranspileError`` at the line of the augmented assignment (marked
``# ERR``); each safe pattern keeps working and gets the gradient that central finite
differences give, on a first and a second call.
"""

import inspect

import fd
import numpy as np
import numpy as onp
import pytest

from transpile import TranspileError, grad, stop_gradient
from transpile.front import inplace, parse

MARKER = "# ERR"


def marked_line(func):
    lines, first = inspect.getsourcelines(func)
    hits = [i for i, line in enumerate(lines) if line.rstrip().endswith(MARKER)]
    assert len(hits) == 1, f"{func.__name__} must mark exactly one line with {MARKER!r}"
    return inspect.getsourcefile(func), first + hits[0], lines[hits[0]].strip()


def assert_located(err, func):
    filename, lineno, text = marked_line(func)
    message = str(err)
    assert f"{filename}:{lineno}" in message, f"expected {filename}:{lineno} in\n{message}"
    assert (err.filename, err.lineno) == (filename, lineno)
    assert text in message, f"expected the line {text!r} quoted in\n{message}"
    assert err.hint and "hint:" in message


X = np.array([1.0, 2.0])

# --------------------------------------------------------------------------
# Refused: another name sees the update


def alias_then_update(x):
    y = x * 2.0
    z = y  # one array, two names
    z -= 1.0  # ERR
    return np.sum(y * z)


def test_alias_example_from_the_report_is_refused():
    # what numpy computes: y changes with z
    assert alias_then_update(X.copy()) == pytest.approx(10.0)
    with pytest.raises(TranspileError) as info:
        grad(alias_then_update)
    err = info.value
    assert_located(err, alias_then_update)
    assert "`z`" in err.what and "`y`" in err.what, err.what
    assert "z = z - 1.0" in err.hint and "z = y.copy()" in err.hint, err.hint


def updates_view(x):
    m = np.outer(x, x) * 1.0
    r = m[0]  # a row: a view of m
    m *= 2.0  # ERR
    return np.sum(r) + np.sum(m)


def updates_through_view(x):
    y = x * 1.0
    r = y.T
    r += 1.0  # ERR
    return np.sum(y * x)


def updates_reshaped_alias(x):
    y = x * 1.0
    z = onp.reshape(y, (2, 1))  # aliased import: resolved by object
    z /= 2.0  # ERR
    return np.sum(y * y)


def updates_asarray(x):
    y = x * 1.0
    z = np.asarray(y)
    z **= 2  # ERR
    return np.sum(y + z)


def updates_rows_while_reading(x):
    m = np.outer(x, x) * 1.0
    for r in m:
        r *= 0.5  # ERR
    return np.sum(m)


def updates_alias_read_earlier_in_loop(x):
    y = x * 1.0
    s = 0.0
    for i in range(3):
        s = s + np.sum(y * x)  # sees the update of the previous iteration
        z = y
        z += 1.0  # ERR
    return s


def updates_array_held_by_list(x):
    hs = []
    h = x * 1.0
    for i in range(3):
        h *= 2.0  # ERR
        hs.append(h)
    return np.sum(np.stack(hs))


def updates_unpacked_alias(x, c):
    y = x * 1.0
    a, d = y, c
    a *= 3.0  # ERR
    return np.sum(y * d)


def updates_stop_gradient_alias(x):
    y = x * 1.0
    z = stop_gradient(y)  # the identity at run time: the same array
    z += 1.0  # ERR
    return np.sum(x * y)


def updates_matmul_alias(x):
    m = np.outer(x, x) + 1.0
    k = m
    k @= np.eye(2) * 2.0  # ERR
    return np.sum(m * x)


def updates_conditional_alias(x):
    y = x * 1.0
    z = y if np.sum(x) > 0 else x * 3.0
    z //= 1.0  # ERR
    return np.sum(y * x)


W = np.array([0.5, -1.5])


def updates_module_array(x):
    b = W
    b += x  # ERR
    return np.sum(b * b)


def identity_helper(a):
    return a


def updates_result_of_identity_helper(x):
    y = x * 1.0
    h = identity_helper(y)
    h += 1.0  # ERR
    return np.sum(h * y)


def updates_list_slot(x):
    z = x * 2.0
    w = [z, x]
    w[0] += 1.0  # ERR
    return np.sum(z * x)


def updates_in_a_local_function(x):
    y = x * 1.0

    def bump(v):
        v += 1.0  # ERR
        return v

    z = bump(y)
    return np.sum(y * z)


def updates_after_rebinding(x):
    z = x * 2.0
    z = z * 3.0
    y = z
    z -= 1.0  # ERR
    return np.sum(y * z)


REFUSED = [
    (updates_view, (X,)),
    (updates_through_view, (X,)),
    (updates_reshaped_alias, (X,)),
    (updates_asarray, (X,)),
    (updates_rows_while_reading, (X,)),
    (updates_alias_read_earlier_in_loop, (X,)),
    (updates_array_held_by_list, (X,)),
    (updates_unpacked_alias, (X, X)),
    (updates_stop_gradient_alias, (X,)),
    (updates_matmul_alias, (X,)),
    (updates_conditional_alias, (X,)),
    (updates_module_array, (X,)),
    (updates_result_of_identity_helper, (X,)),
    (updates_list_slot, (X,)),
    (updates_in_a_local_function, (X,)),
    (updates_after_rebinding, (X,)),
]


@pytest.mark.parametrize("func, args", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_update_seen_through_another_name_is_refused(func, args):
    # each of these would otherwise give a gradient that numpy's function does not have
    with pytest.raises(TranspileError) as info:
        grad(func)
    assert_located(info.value, func)
    assert "in place" in info.value.what
    assert "make a new array" in info.value.hint


def test_an_update_of_a_list_slot_is_quoted_as_written():
    # numpy: w[0] += 1.0 updates z's array, so f = sum((2x + 1) * x) = 1*3 + 2*5
    assert updates_list_slot(X.copy()) == pytest.approx(13.0)
    with pytest.raises(TranspileError) as info:
        grad(updates_list_slot)
    assert_located(info.value, updates_list_slot)
    assert "`w[0] += 1.0` updates the array of `w[0]`" in info.value.what, info.value.what
    assert "`w[0] = w[0] + 1.0`" in info.value.hint, info.value.hint


def test_an_update_inside_a_local_function_is_seen_where_it_is_called():
    # numpy: bump(y) adds 1 to y's array, so f = sum((x + 1) ** 2) = 4 + 9; read as a
    # new value of v it would be sum(x * (x + 1)) = 2 + 6, whose gradient (2x + 1) is
    # not f's (2x + 2): refused, where it is called on A-normal form
    assert updates_in_a_local_function(X.copy()) == pytest.approx(13.0)
    with pytest.raises(TranspileError) as info:
        grad(updates_in_a_local_function)
    assert_located(info.value, updates_in_a_local_function)
    assert "`v += 1.0`" in info.value.what and "`y`" in info.value.what, info.value.what


def test_messages_name_what_the_user_wrote_not_the_versions_of_a_name():
    with pytest.raises(TranspileError) as info:
        grad(updates_after_rebinding)
    err = info.value
    assert_located(err, updates_after_rebinding)
    assert "`z -= 1.0` updates the array of `z`" in err.what, err.what
    said = err.what + err.hint
    assert "z2" not in said and "z3" not in said and "_t" not in said, said
    assert "`y = z.copy()`" in err.hint, err.hint


# --------------------------------------------------------------------------
# Refused: a helper updates the caller's array


def helper_updates_parameter(a):
    a *= 2.0  # ERR
    return a


def calls_updating_helper(x):
    y = x * 1.0
    z = helper_updates_parameter(y)
    return np.sum(y * z)


def rebinds_after_updating_helper(x):
    y = x * 1.0
    y = helper_updates_parameter(y)
    return np.sum(y * x)


def helper_updates_parameter_alias(a, b):
    c = b
    c += a  # ERR
    return a * c


def calls_helper_updating_alias(x):
    y = x * 1.0
    return np.sum(helper_updates_parameter_alias(x, y) * y)


def test_helper_example_from_the_report_is_refused():
    assert np.sum(calls_updating_helper(X.copy())) == pytest.approx(20.0)  # numpy
    with pytest.raises(TranspileError) as info:
        grad(calls_updating_helper)
    err = info.value
    assert_located(err, helper_updates_parameter)
    assert "helper_updates_parameter()" in err.what and "`a`" in err.what, err.what
    assert "a = a * 2.0" in err.hint, err.hint


def test_helper_updating_an_alias_of_a_parameter_is_refused():
    with pytest.raises(TranspileError) as info:
        grad(calls_helper_updating_alias)
    assert_located(info.value, helper_updates_parameter_alias)
    assert "`b`" in info.value.what and "`c`" in info.value.what


def test_a_parameter_update_is_refused_only_in_a_helper():
    parsed = parse.run(helper_updates_parameter)
    assert inplace.check(parsed, is_helper=False) == set()  # top level: the value is f's own
    with pytest.raises(TranspileError) as info:
        inplace.check(parse.run(helper_updates_parameter), is_helper=True)
    assert_located(info.value, helper_updates_parameter)
    # a caller whose array it is, and which reads it no more, follows the update
    followed = inplace.check(parse.run(rebinds_after_updating_helper), is_helper=False)
    assert followed == {helper_updates_parameter}


# --------------------------------------------------------------------------
# Kept: nothing else sees the update


def accumulates_into_fresh_array(x):
    acc = np.zeros(2)
    acc += x
    acc *= x
    return np.sum(acc * acc)


def accumulates_number(x):
    total = 0.0
    for i in range(3):
        total += np.sum(x * (i + 1.0))
        total *= 0.5
    return total


def updates_own_copy(x, b):
    h = x * 1.0
    h += b
    h /= 2.0
    return np.sum(h * h)


def updates_top_level_parameter(x):
    x *= 2.0
    x -= 0.5
    return np.sum(x * x)


def aliases_numbers(x):
    s = 1.5
    t = s
    t += 2.0
    n = len(x)
    m = n
    m += 1
    return np.sum(x) * s * t * m


def rebinds_in_loop(x, w):
    h = x
    for t in range(3):
        h = h * w
    return np.sum(h)


def rebinds_before_update(x):
    y = x
    y = y * 2.0  # a new array: y no longer shares x's
    y += 1.0
    return np.sum(x * y)


def updates_copy(x):
    y = x * 2.0
    z = y.copy()
    z -= 1.0
    w = np.array(y)
    w *= 3.0
    return np.sum(y * z * w)


def updates_fresh_array_each_iteration(x, b):
    s = 0.0
    for i in range(3):
        h = x * 2.0
        s = s + np.sum(h)
        h += b
        s = s + np.sum(h * h)
    return s


def recurrence_with_update(x, w, b):
    h = x
    out = 0.0
    for i in range(3):
        hn = h * w
        hn += b  # last iteration's array is h now, a different one
        out = out + np.sum(h * h)
        h = hn
    return out + np.sum(h)


def updates_slots(x):
    out = np.zeros_like(x)
    for i in range(2):
        out[i] += x[i] * (i + 2.0)
    return np.sum(out * x)


def fresh_helper(a, w):
    return a * w


def updates_result_of_fresh_helper(x, w):
    h = fresh_helper(x, w)
    h += 1.0
    return np.sum(h * x)


def helper_updates_own_array(a):
    t = a * 1.0
    t += 1.0
    return t


def calls_helper_updating_own_array(x):
    y = helper_updates_own_array(x)
    return np.sum(y * x)


def updates_parameter_after_using_it(x, b):
    h = x + b  # a new array: x's update does not reach it
    x *= 2.0
    return np.sum(h * x)


def collects_updated_fresh_arrays(x, b):
    hs = []
    for i in range(3):
        h = x * (i + 1.0)  # a new array each iteration
        h += b
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def accumulates_in_while(x):
    acc = np.zeros(2)
    i = 0
    while i < 3:
        acc += x * (i + 1.0)
        i += 1
    return np.sum(acc * acc)


B = np.array([0.3, -0.4])

ALLOWED = [
    (accumulates_into_fresh_array, (X,), 0),
    (accumulates_number, (X,), 0),
    (updates_own_copy, (X, B), (0, 1)),
    (updates_top_level_parameter, (X,), 0),
    (aliases_numbers, (X,), 0),
    (rebinds_in_loop, (X, B), (0, 1)),
    (rebinds_before_update, (X,), 0),
    (updates_copy, (X,), 0),
    (updates_fresh_array_each_iteration, (X, B), (0, 1)),
    (recurrence_with_update, (X, B, B + 1.0), (0, 1, 2)),
    (updates_slots, (X,), 0),
    (updates_result_of_fresh_helper, (X, B), (0, 1)),
    (calls_helper_updating_own_array, (X,), 0),
    (updates_parameter_after_using_it, (X, B), (0, 1)),
    (collects_updated_fresh_arrays, (X, B), (0, 1)),
    (accumulates_in_while, (X,), 0),
]


@pytest.mark.parametrize("func, args, wrt", ALLOWED, ids=[f.__name__ for f, _, _ in ALLOWED])
def test_safe_update_keeps_working(func, args, wrt):
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = fd.numeric_grad(func, args, indices)
    g = grad(func, wrt=wrt)
    for _call in range(2):
        given = [a.copy() for a in args]
        got = g(*given)
        fd.assert_close(got if isinstance(wrt, tuple) else (got,), expected, rtol=1e-6)
        fd.assert_same(given, list(args))  # the gradient never updates the caller's arrays
