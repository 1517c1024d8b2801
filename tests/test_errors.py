"""Bad input gives a located, actionable TranspileError, and nothing else escapes.

Every function in ``tests/error_funcs.py`` marks the line the error must point
at with a ``# ERR`` comment. Each test checks that ``grad(f)`` raises
``transpile.TranspileError`` whose message names that file and line, quotes
the line, and carries a hint (the part after ``hint:``).
"""

import inspect
import math
import re

import error_funcs as E
import numpy as np
import pytest

import transpile
from transpile import TranspileError, grad

MARKER = "# ERR"


def marked_line(func):
    """``(filename, lineno, text)`` of the ``# ERR`` line in ``func``'s source."""
    lines, first = inspect.getsourcelines(func)
    hits = [i for i, line in enumerate(lines) if line.rstrip().endswith(MARKER)]
    assert len(hits) == 1, f"{func.__name__} must mark exactly one line with {MARKER!r}"
    i = hits[0]
    return inspect.getsourcefile(func), first + i, lines[i].strip()


def transpile_error(func, wrt=0):
    with pytest.raises(TranspileError) as info:
        grad(func, wrt=wrt)
    return info.value


def assert_located(err, func, hint_words=()):
    """``err`` names ``func``'s file and marked line, quotes the line, and gives a hint."""
    filename, lineno, text = marked_line(func)
    message = str(err)
    assert f"{filename}:{lineno}" in message, f"expected location {filename}:{lineno} in\n{message}"
    assert text in message, f"expected the source line {text!r} in\n{message}"
    assert err.filename == filename and err.lineno == lineno
    assert err.hint and "hint:" in message, f"no hint in\n{message}"
    for word in hint_words:
        assert word in err.hint.lower(), f"hint should mention {word!r}: {err.hint}"


# --------------------------------------------------------------------------
# Functions whose source cannot be read


def test_exec_made_function_has_no_source():
    ns = {}
    exec(compile("def made(x):\n    return x * 2.0\n", "<made by exec>", "exec"), ns)
    err = transpile_error(ns["made"])
    message = str(err)
    assert "<made by exec>:1" in message
    assert "made" in err.what and "source" in err.what
    assert err.hint and "hint:" in message


def test_builtin_has_no_source():
    err = transpile_error(np.sin)
    assert "sin" in err.what and "source" in err.what
    assert err.hint and "hint:" in str(err)


def test_math_builtin_has_no_source():
    err = transpile_error(math.erf)
    assert "erf" in err.what
    assert err.hint


def test_lambda_made_by_eval_has_no_source():
    square = eval("lambda x: np.sum(x * x)")
    err = transpile_error(square)
    assert "<lambda>" in err.what and "source" in err.what
    assert err.hint


# --------------------------------------------------------------------------
# Unsupported syntax in the differentiated function

UNSUPPORTED = [
    (E.uses_try, "try"),
    (E.uses_with, "with"),
    (E.uses_yield, "yield"),
    (E.uses_global, "global"),
    (E.make_uses_nonlocal(), "nonlocal"),
    (E.uses_del, "del"),
    (E.uses_nested_class, "class"),
    (E.recursive_local_def, "calls itself"),
    (E.local_function_as_value, "used as a value"),
    (E.local_function_rebound, "more than once"),
]


@pytest.mark.parametrize("func, construct", UNSUPPORTED, ids=lambda v: getattr(v, "__name__", v))
def test_unsupported_syntax(func, construct):
    err = transpile_error(func)
    assert_located(err, func)
    assert construct in err.what, f"the message should name the construct: {err.what}"


MORE_UNSUPPORTED = [
    (E.uses_walrus, ":="),
    (E.uses_loop_else, "else"),
    (E.uses_starred, "starred"),
    (E.uses_set_display, "a set display"),
    (E.uses_method_without_rule, "partition"),
]


@pytest.mark.parametrize(
    "func, construct", MORE_UNSUPPORTED, ids=lambda v: getattr(v, "__name__", v)
)
def test_more_unsupported_constructs(func, construct):
    err = transpile_error(func)
    assert_located(err, func)
    assert construct in err.what, f"the message should name the construct: {err.what}"


def test_async_def():
    err = transpile_error(E.uses_async)
    assert_located(err, E.uses_async)


def test_async_def_hint_names_async():
    err = transpile_error(E.uses_async)
    assert "async" in (err.what + err.hint).lower() and "synchronous" in err.hint


def test_local_function_messages_name_the_users_function():
    for func, name in [(E.recursive_local_def, "power"), (E.local_function_rebound, "square")]:
        err = transpile_error(func)
        assert f"`{name}`" in err.what and err.hint
        assert not re.search(r"\b_t\d+\b", str(err)), "internal temporary names leak"


# --------------------------------------------------------------------------
# Active calls without a rule or source


def test_no_rule_numpy_function():
    err = transpile_error(E.uses_i0)
    assert_located(err, E.uses_i0, hint_words=("stop_gradient",))
    assert "i0" in err.what


def test_no_rule_math_builtin():
    err = transpile_error(E.uses_erf)
    assert_located(err, E.uses_erf, hint_words=("stop_gradient",))
    assert "erf" in err.what


def test_no_rule_on_a_constant_is_fine():
    """A call with no rule on a value that is not differentiated needs no rule."""
    rng = np.random.default_rng(0)
    x, A = rng.standard_normal(3), rng.standard_normal((3, 3))
    g = grad(E.i0_of_constant, wrt=0)(x, A)
    np.testing.assert_allclose(g, np.full(3, np.sum(np.i0(A))), rtol=1e-12)
    with pytest.raises(TranspileError):
        grad(E.i0_of_constant, wrt=1)


def test_call_to_function_without_source_names_call_site():
    err = transpile_error(E.calls_exec_made)
    assert_located(err, E.calls_exec_made)


def test_call_to_function_without_source_is_transpile_error():
    err = transpile_error(E.calls_exec_made)
    assert "made_by_exec" in str(err)
    assert err.hint


# --------------------------------------------------------------------------
# Recursion


def test_direct_recursion_is_differentiated():
    x = np.array([0.5, -1.0])
    g = grad(E.recursive)
    for n in (0, 3, 3):
        np.testing.assert_allclose(g(x, n), np.full(2, 2.0**n))


def test_mutual_recursion_is_differentiated():
    x = np.array([0.5, -1.0])
    g = grad(E.ping)
    for n, factor in ((0, 1.0), (1, 2.0), (4, 36.0), (4, 36.0)):
        np.testing.assert_allclose(g(x, n), np.full(2, factor))


def test_recursion_without_a_base_case_fails_as_python_does():
    g = grad(E.endless)  # not a transpile-time error: the function is never called
    with pytest.raises(RecursionError):
        E.endless(np.ones(2))
    with pytest.raises(RecursionError):
        g(np.ones(2))


def test_recursive_local_function_is_still_refused():
    err = transpile_error(E.recursive_local_def)
    assert "module level" in err.hint


# --------------------------------------------------------------------------
# Writes into arguments


def test_write_into_argument():
    err = transpile_error(E.writes_argument)
    assert_located(err, E.writes_argument, hint_words=("copy",))


def test_write_into_view_of_argument():
    err = transpile_error(E.writes_argument_view)
    assert_located(err, E.writes_argument_view, hint_words=("copy",))


# --------------------------------------------------------------------------
# Errors inside callees are located in the callee


def test_unsupported_syntax_in_callee():
    err = transpile_error(E.calls_helper_with_try)
    assert_located(err, E.helper_with_try)
    assert "try" in err.what


def test_no_rule_in_callee():
    err = transpile_error(E.calls_helper_with_i0)
    assert_located(err, E.helper_with_i0, hint_words=("stop_gradient",))


def test_error_is_exported():
    assert transpile.TranspileError is TranspileError
    assert issubclass(TranspileError, Exception)


def test_match_statement():
    from error_funcs_match import uses_match

    err = transpile_error(uses_match)
    assert_located(err, uses_match)
    assert "match" in err.what


def test_random_draw_with_differentiated_parameters():
    err = transpile_error(E.random_with_active_mean)
    assert_located(err, E.random_with_active_mean, hint_words=("reparameterize",))


def test_reparameterized_random_draw_is_differentiated():
    mu, sigma = 0.5, 2.0
    np.random.seed(3)
    got = grad(E.reparameterized, wrt=(0, 1))(mu, sigma)
    np.random.seed(3)
    eps = np.random.normal(size=3)
    z = mu + sigma * eps
    np.testing.assert_allclose(got, (np.sum(2 * z), np.sum(2 * z * eps)), rtol=1e-12)


def test_or_of_differentiated_values():
    err = transpile_error(E.or_of_values)
    assert_located(err, E.or_of_values)


def test_and_of_conditions_is_fine():
    got = grad(E.and_of_conditions)(np.array([0.5, 2.0]))
    np.testing.assert_allclose(got, [2.0 * 0.5, 2.0 * 2.0])


@pytest.mark.parametrize("func", [E.view_read_after_write, E.view_read_in_later_iteration])
def test_view_read_after_a_write_into_its_array(func):
    err = transpile_error(func)
    assert_located(err, func, hint_words=("copy",))
    assert "view" in err.what


def test_view_read_before_the_write_is_fine():
    """out[i] = out[i - 1] * 2 reads its view before the write: a real recurrence."""
    x = np.array([0.5, -0.3, 0.8])
    got = grad(E.recurrence_through_rows)(x)
    # out[0] = x, out[i] = 1.5 * out[i - 1]: sum(out) = x * (1 + 1.5 + 2.25) summed
    np.testing.assert_allclose(got, np.full(3, 1 + 1.5 + 2.25), rtol=1e-12)


def test_augmented_assignment_to_a_shared_array():
    """numpy updates the array in place, so `y` changes with `z`: refused, not a wrong number."""
    err = transpile_error(E.augmented_assignment_through_alias)
    assert_located(err, E.augmented_assignment_through_alias, hint_words=("z = z - 1.0", "copy"))
    assert "`y`" in err.what and "in place" in err.what


def test_helper_updating_the_callers_array():
    err = transpile_error(E.calls_helper_updating_its_argument)
    assert_located(err, E.helper_updating_its_argument, hint_words=("a = a * 2.0",))
    assert "caller" in err.what


def test_a_function_argument_without_rule_is_named_without_stop_gradient_advice():
    with pytest.raises(TranspileError) as info:
        grad(E.applies_passed_function)(np.ones(2))  # made at grad() or at the first call
    err = info.value
    assert_located(err, E.applies_passed_function)
    assert "`act` holds i0" in err.what
    assert "stop_gradient" not in str(err) and "defvjp" in err.hint


def test_a_keyword_passed_to_kwargs_that_clashes_with_a_local_is_named():
    err = transpile_error(E.calls_helper_with_kwargs)
    assert_located(err, E.helper_with_kwargs)
    assert "'scale'" in err.what and "**options" in err.what and err.hint
