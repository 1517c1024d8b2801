"""Corpus of functions with control flow, array writes, lists and parameter structures.

Same format as ``tests/corpus_straight.py`` (``Case`` entries in ``CASES``).
Branch conditions and trip counts that depend on the data are built to sit
well away from their thresholds, so the function is smooth around the inputs
and finite differences apply. Functions with several branches get one case per
branch (test ids ``<function>_<branch>``).
"""

import numpy as np
from corpus_straight import Case, away, helper_layer, normal, positive

# --------------------------------------------------------------------------
# Helpers called from the corpus


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def dense(h, w, b, scale=1.0):
    return np.tanh(h @ w + b) * scale


def sin_cos(x):
    return np.sin(x), np.cos(x)


def repeated_square(x, n):
    y = x
    for _ in range(n):
        y = y * y
    return y


def branchy(x):
    if np.sum(x) > 0:
        return np.exp(x)
    return x * x


# --------------------------------------------------------------------------
# Branches


def if_scalar(x):
    if x > 0:
        y = x * x
    else:
        y = -x * 3.0
    return y


def if_array_sum(x):
    if np.sum(x) > 0:
        y = np.exp(x)
    else:
        y = x**2
    return np.sum(y)


def if_elif_else(x):
    if x > 1.0:
        y = np.log(x)
    elif x > 0.0:
        y = x**3
    else:
        y = np.sin(x)
    return y * x


def if_without_else(x):
    y = x * 2.0
    if np.max(x) > 0.5:
        y = y * x
    return np.sum(y)


def if_nested(x, y):
    if np.sum(x) > 0:
        if np.sum(y) > 0:
            z = x * y
        else:
            z = x - y
    else:
        z = x + y * y
    return np.sum(z**2)


def if_reads_old_value(x):
    y = np.sin(x)
    if np.mean(x) > 0:
        y = y * x + y
    return np.sum(y * y)


def if_bool_operators(x):
    if x > 0 and x < 2.0:
        y = x * np.exp(x)
    elif x >= 2.0 or x < -5.0:
        y = x
    else:
        y = x**2
    return y


def if_integer_argument(x, n):
    if n > 2:
        y = x**n
    else:
        y = x * n
    return np.sum(y)


def if_expression(x):
    y = x * 2.0 if x > 0 else x * x
    return y * x


def if_branch_calls(x):
    if np.sum(x) > 0:
        y = sigmoid(x)
    else:
        y = dense(x, np.eye(x.shape[0]), 0.5)
    return np.sum(y**2)


BRANCHES = [
    Case(if_scalar, lambda r: (1.3,), name="if_scalar_positive"),
    Case(if_scalar, lambda r: (-0.7,), name="if_scalar_negative"),
    Case(if_array_sum, lambda r: (positive(r, 5),), name="if_array_sum_true"),
    Case(if_array_sum, lambda r: (-positive(r, 5),), name="if_array_sum_false"),
    Case(if_elif_else, lambda r: (2.0,), name="if_elif_else_if"),
    Case(if_elif_else, lambda r: (0.5,), name="if_elif_else_elif"),
    Case(if_elif_else, lambda r: (-0.6,), name="if_elif_else_else"),
    Case(if_without_else, lambda r: (np.array([0.1, 0.9, -0.3]),), name="if_without_else_taken"),
    Case(if_without_else, lambda r: (np.array([0.1, 0.2, -0.3]),), name="if_without_else_skipped"),
    Case(if_nested, lambda r: (positive(r, 4), positive(r, 4)), wrt=(0, 1), name="if_nested_both"),
    Case(
        if_nested,
        lambda r: (positive(r, 4), -positive(r, 4)),
        wrt=(0, 1),
        name="if_nested_inner_else",
    ),
    Case(
        if_nested,
        lambda r: (-positive(r, 4), positive(r, 4)),
        wrt=(0, 1),
        name="if_nested_outer_else",
    ),
    Case(if_reads_old_value, lambda r: (positive(r, 5),), name="if_reads_old_value_taken"),
    Case(if_reads_old_value, lambda r: (-positive(r, 5),), name="if_reads_old_value_skipped"),
    Case(if_bool_operators, lambda r: (1.2,), name="if_bool_operators_and"),
    Case(if_bool_operators, lambda r: (3.0,), name="if_bool_operators_or"),
    Case(if_bool_operators, lambda r: (-1.5,), name="if_bool_operators_else"),
    Case(if_integer_argument, lambda r: (normal(r, 4), 3), name="if_integer_argument_3"),
    Case(if_integer_argument, lambda r: (normal(r, 4), 2), name="if_integer_argument_2"),
    Case(if_expression, lambda r: (0.8,), name="if_expression_positive"),
    Case(if_expression, lambda r: (-0.8,), name="if_expression_negative"),
    Case(if_branch_calls, lambda r: (positive(r, 3),), name="if_branch_calls_true"),
    Case(if_branch_calls, lambda r: (-positive(r, 3),), name="if_branch_calls_false"),
]


# --------------------------------------------------------------------------
# for loops


def for_range_one_arg(x):
    y = x
    for _ in range(3):
        y = np.sin(y) * x
    return np.sum(y)


def for_range_two_args(x):
    y = x
    for i in range(1, 4):
        y = y + x**i / i
    return np.sum(y)


def for_range_step(x):
    y = 1.0
    for i in range(0, 6, 2):
        y = y * x[i] + x[i + 1]
    return y


def for_range_computed_bound(x):
    n = x.shape[0]
    s = 0.0
    for i in range(n - 1):
        s = s + x[i] * x[i + 1]
    return s


def for_range_len(x):
    s = 0.0
    for i in range(len(x)):
        s = s + np.sin(x[i]) * i
    return s


def for_rows(x, w):
    s = 0.0
    for row in x:
        s = s + np.tanh(row @ w)
    return s


def for_list_of_weights(ws, x):
    h = x
    for w in ws:
        h = np.tanh(h @ w)
    return np.sum(h**2)


def for_tuple_literal(x, y):
    s = 0.0
    for c in (x, y, x * y):
        s = s + np.sum(c**2)
    return s


def for_enumerate(x):
    s = 0.0
    for i, row in enumerate(x):
        s = s + (i + 1) * np.sum(row**2)
    return s


def for_zip(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + np.sum(a * b) ** 2
    return s


def for_accumulate_augmented(x):
    s = x * 0.0
    for i in range(4):
        s += x**2 * (i + 1)
        s *= 0.5
    return np.sum(s)


def for_self_copy(x, y):
    for i in range(3):
        x = x  # noqa: PLW0127 (a no-op: it must not reset the adjoint of x)
        y = y * 0.5 + np.sin(x)
    return np.sum(x * y)


def return_nested_in_branch(x, y):
    if np.sum(x) > 0:
        if np.sum(y) > 0:
            return np.sum(x * y)
        y = y * 2.0
    z = np.sin(x) * y
    return np.sum(z**2)


def return_nested_in_loop(x):
    for i in range(3):
        if np.max(x) > 1.0:
            if np.min(x) > 0.5:
                return np.sum(x)
            x = x * 0.5
        x = x * 1.5
    return np.sum(x * x)


def break_on_some_paths(x):
    s = 0.0
    for i in range(4):
        if np.sum(x) > 1.0:
            if i > 1:
                break
            s = s + 1.0
        s = s + np.sum(np.tanh(x * i))
        x = x * 1.3
    return s


def return_before_append(x, y):
    hs = [x * 1.0]
    for i in range(2):
        if np.max(x) > 0.4:
            return np.sum(x * y)
        hs.append(np.maximum(y, x))
    return np.sum(x * y) + np.sum(np.stack(hs) ** 2)


def for_nested(x):
    s = 0.0
    for i in range(3):
        for j in range(4):
            s = s + np.sin(x[i, j]) * (i + j + 1)
    return s


def for_nested_triangular(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            s = s + x[i] * x[j]
    return s


def for_break_on_index(x):
    y = x
    for i in range(10):
        if i == 3:
            break
        y = y * x + 1.0
    return np.sum(y)


def for_break_on_data(x):
    y = x
    for _ in range(20):
        y = y * 1.5 + x
        if np.sum(y) > 20.0:
            break
    return np.sum(y**2)


def for_continue(x):
    s = 0.0
    for i in range(6):
        if i % 2 == 0:
            continue
        s = s + x[i] ** 2
    return s


def for_continue_on_data(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + v**3
    return s


def for_helper_calls(x, w, b):
    h = x
    for _ in range(3):
        h = dense(h, w, b, scale=0.9)
    return np.sum(h**2)


def for_helper_with_loop(x):
    return np.sum(repeated_square(x, 3))


def for_imported_helper(x, w, b):
    h = x
    for _ in range(2):
        h = helper_layer(h, w, b)
    return np.sum(h**2)


def for_branch_inside(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i] ** 2
        else:
            s = s - np.sin(x[i])
    return s


def for_helper_with_branch(x):
    s = 0.0
    for row in x:
        s = s + np.sum(branchy(row))
    return s


LOOPS = [
    Case(for_range_one_arg, lambda r: (normal(r, 5),)),
    Case(for_range_two_args, lambda r: (normal(r, 5),)),
    Case(for_range_step, lambda r: (normal(r, 6),)),
    Case(for_range_computed_bound, lambda r: (normal(r, 6),)),
    Case(for_range_len, lambda r: (normal(r, 5),)),
    Case(for_rows, lambda r: (normal(r, 4, 3), normal(r, 3)), wrt=(0, 1)),
    Case(
        for_list_of_weights,
        lambda r: (
            [normal(r, 3, 4) * 0.5, normal(r, 4, 4) * 0.5, normal(r, 4, 2) * 0.5],
            normal(r, 2, 3),
        ),
        wrt=(0, 1),
    ),
    Case(for_tuple_literal, lambda r: (normal(r, 4), normal(r, 4)), wrt=(0, 1)),
    Case(for_enumerate, lambda r: (normal(r, 3, 4),)),
    Case(for_zip, lambda r: (normal(r, 3, 4), normal(r, 3, 4)), wrt=(0, 1)),
    Case(for_accumulate_augmented, lambda r: (normal(r, 5),)),
    Case(for_self_copy, lambda r: (normal(r, 3), normal(r, 3)), wrt=(0, 1)),
    Case(
        return_nested_in_branch,
        lambda r: (np.array([0.3, 0.4]), np.array([0.2, 0.5])),
        wrt=(0, 1),
        name="return_nested_in_branch_inner",
    ),
    Case(
        return_nested_in_branch,
        lambda r: (np.array([0.3, 0.4]), np.array([-0.2, -0.5])),
        wrt=(0, 1),
        name="return_nested_in_branch_fallthrough",
    ),
    Case(
        return_nested_in_branch,
        lambda r: (np.array([-0.3, -0.4]), np.array([0.2, 0.5])),
        wrt=(0, 1),
        name="return_nested_in_branch_outer_else",
    ),
    Case(
        return_nested_in_loop, lambda r: (np.array([0.6, 1.2]),), name="return_nested_in_loop_taken"
    ),
    Case(
        return_nested_in_loop, lambda r: (np.array([0.3, 1.2]),), name="return_nested_in_loop_not"
    ),
    Case(break_on_some_paths, lambda r: (np.array([0.3, 0.9]),), name="break_on_some_paths_taken"),
    Case(break_on_some_paths, lambda r: (np.array([0.1, 0.2]),), name="break_on_some_paths_not"),
    Case(
        return_before_append,
        lambda r: (np.array([0.3, 0.5]), np.array([0.2, -0.1])),
        wrt=(0, 1),
        name="return_before_append_taken",
    ),
    Case(
        return_before_append,
        lambda r: (np.array([0.1, 0.2]), np.array([0.2, -0.1])),
        wrt=(0, 1),
        name="return_before_append_not",
    ),
    Case(for_nested, lambda r: (normal(r, 3, 4),)),
    Case(for_nested_triangular, lambda r: (normal(r, 5),)),
    Case(for_break_on_index, lambda r: (normal(r, 4) * 0.5,)),
    Case(for_break_on_data, lambda r: (positive(r, 4, low=0.4, high=0.6),)),
    Case(for_continue, lambda r: (normal(r, 6),)),
    Case(for_continue_on_data, lambda r: (away(r, 6),)),
    Case(
        for_helper_calls,
        lambda r: (normal(r, 2, 3), normal(r, 3, 3) * 0.5, normal(r, 3)),
        wrt=(0, 1, 2),
    ),
    Case(for_helper_with_loop, lambda r: (positive(r, 4, low=0.7, high=1.2),)),
    Case(
        for_imported_helper,
        lambda r: (normal(r, 2, 3), normal(r, 3, 3) * 0.5, normal(r, 3)),
        wrt=(0, 1, 2),
    ),
    Case(for_branch_inside, lambda r: (away(r, 6),)),
    Case(for_helper_with_branch, lambda r: (np.array([[0.5, 0.7, -0.2], [-0.9, 0.1, -0.4]]),)),
]


# --------------------------------------------------------------------------
# while loops and early returns


def while_scalar(x):
    y = x
    while y < 10.0:
        y = y * 1.7 + x
    return y


def while_counter(x):
    s = x
    i = 0
    while i < 4:
        s = s * x + 1.0
        i += 1
    return np.sum(s)


def while_array_norm(x):
    y = x
    while np.sum(y**2) < 50.0:
        y = y * 1.5 + x
    return np.sum(y)


def return_in_branch(x):
    if np.sum(x) > 0:
        return np.sum(x**2)
    return np.sum(np.exp(x))


def return_in_loop(x):
    y = x
    for _ in range(5):
        y = y * 1.5 + x
        if np.max(y) > 4.0:
            return np.sum(y)
    return np.sum(y) * 2.0


def return_in_while(x):
    y = x
    while True:
        y = np.sqrt(y) + y
        if y > 20.0:
            return y * x


WHILE_RETURN = [
    Case(while_scalar, lambda r: (0.8,)),
    Case(while_counter, lambda r: (normal(r, 4) * 0.5,)),
    Case(while_array_norm, lambda r: (np.array([0.6, -0.4, 0.9]),)),
    Case(return_in_branch, lambda r: (positive(r, 4),), name="return_in_branch_taken"),
    Case(return_in_branch, lambda r: (-positive(r, 4),), name="return_in_branch_fallthrough"),
    Case(return_in_loop, lambda r: (np.array([0.5, 0.9, 0.2]),), name="return_in_loop_early"),
    Case(return_in_loop, lambda r: (np.array([0.05, 0.1, 0.02]),), name="return_in_loop_late"),
    Case(return_in_while, lambda r: (1.3,)),
]


# --------------------------------------------------------------------------
# Array writes


def write_zeros_like_rows(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * (i + 1.0)
    return np.sum(out**2)


def write_zeros_n(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sum(x[i] ** 2)
    return np.sum(np.sqrt(out))


def write_empty(x):
    out = np.empty((3,))
    for i in range(3):
        out[i] = x[i] * x[i + 1]
    return np.sum(np.exp(out))


def write_copy(x):
    y = x.copy()
    y[0] = y[0] * 2.0
    y[1:] = np.sin(y[1:])
    return np.sum(y**2)


def write_column_accumulate(x, w):
    out = np.zeros((x.shape[0], w.shape[1]))
    for j in range(w.shape[1]):
        out[:, j] += x @ w[:, j]
    return np.sum(np.tanh(out))


def write_mask_in_loop(x):
    out = np.zeros_like(x)
    for k in range(2):
        mask = x > k * 0.5
        out[mask] = out[mask] + x[mask] ** 2
    return np.sum(out * x)


def write_overwrite_slot(x):
    out = np.ones_like(x)
    out[1] = x[1]
    out[1] = out[1] * x[0]
    out[2] = out[1] + x[2]
    return np.sum(out * x)


def write_accumulate_repeated_index(x):
    out = np.zeros(3)
    for i in range(6):
        out[i % 3] += x[i] * x[(i + 1) % 6]
    return np.sum(out**2)


def write_cumulative(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * 0.9 + np.sin(x[i])
    return np.sum(out**2)


ARRAY_WRITES = [
    Case(write_zeros_like_rows, lambda r: (normal(r, 3, 4),)),
    Case(write_zeros_n, lambda r: (normal(r, 4, 3),)),
    Case(write_empty, lambda r: (normal(r, 4) * 0.5,)),
    Case(write_copy, lambda r: (normal(r, 4, 2),)),
    Case(write_column_accumulate, lambda r: (normal(r, 3, 4), normal(r, 4, 2)), wrt=(0, 1)),
    Case(write_mask_in_loop, lambda r: (np.array([-0.8, 0.2, 0.7, 1.4, -0.1, 0.3]),)),
    Case(write_overwrite_slot, lambda r: (normal(r, 4),)),
    Case(write_accumulate_repeated_index, lambda r: (normal(r, 6),)),
    Case(write_cumulative, lambda r: (normal(r, 6),)),
]


# --------------------------------------------------------------------------
# Lists and tuples


def list_append_stack(x):
    hs = []
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.5 + 0.1)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def list_last_element(x):
    hs = [x]
    for _ in range(3):
        hs.append(np.sin(hs[-1]) * x)
    return np.sum(hs[-1])


def list_index_reads(x):
    hs = []
    for i in range(4):
        hs.append(x * (i + 1.0) + np.cos(x))
    return np.sum(hs[1] * hs[2] + hs[-1])


def list_iterate(x):
    hs = []
    for i in range(3):
        hs.append(x ** (i + 1))
    s = 0.0
    for h in hs:
        s = s + np.sum(np.sin(h))
    return s


def list_index_loop_variable(x):
    hs = []
    h = x
    for _ in range(3):
        h = np.sin(h) + x
        hs.append(h)
    s = 0.0
    for i in range(len(hs)):
        s = s + np.sum(hs[i] * hs[i - 1]) * (i + 1)
    return s


def list_concatenate(x, y):
    parts = []
    for i in range(3):
        parts.append(x * y[i])
    return np.sum(np.concatenate(parts) ** 2) + np.sum(np.concatenate(parts, axis=1)[:, 0])


def list_builtin_sum(x):
    hs = []
    for i in range(3):
        hs.append(np.exp(x * (0.5 * i)))
    return np.sum(sum(hs) ** 2)


def list_literal_stack_axis(x, y):
    parts = [x, y * 2.0, x * y]
    return np.sum(np.stack(parts, axis=1) ** 2 * np.arange(3.0))


def tuple_build_unpack(x):
    t = (x, x * 2.0, np.sin(x))
    a, b, c = t
    return np.sum(a * b * c)


def tuple_returning_helper(x):
    s, c = sin_cos(x)
    return np.sum(s * c + s)


def tuple_helper_in_loop(x):
    acc = 0.0
    h = x
    for _ in range(3):
        s, c = sin_cos(h)
        h = s + c * 0.5
        acc = acc + np.sum(s * c)
    return acc + np.sum(h)


LISTS = [
    Case(list_append_stack, lambda r: (normal(r, 2, 3),)),
    Case(list_last_element, lambda r: (normal(r, 4),)),
    Case(list_index_reads, lambda r: (normal(r, 4),)),
    Case(list_iterate, lambda r: (normal(r, 4),)),
    Case(list_index_loop_variable, lambda r: (normal(r, 4),)),
    Case(list_concatenate, lambda r: (normal(r, 2, 3), normal(r, 3)), wrt=(0, 1)),
    Case(list_builtin_sum, lambda r: (normal(r, 4),)),
    Case(list_literal_stack_axis, lambda r: (normal(r, 2, 3), normal(r, 2, 3)), wrt=(0, 1)),
    Case(tuple_build_unpack, lambda r: (normal(r, 4),)),
    Case(tuple_returning_helper, lambda r: (normal(r, 4),)),
    Case(tuple_helper_in_loop, lambda r: (normal(r, 4),)),
]


# --------------------------------------------------------------------------
# Parameter structures: the gradient has the structure of the argument


def dict_params(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"]
    return np.mean(out**2) * params["scale"]


def list_params(params, x):
    w, b = params[0], params[1]
    return np.sum(sigmoid(x @ w + b) ** 2) + params[2] ** 2


def tuple_params(params, x):
    w, b = params
    return np.sum(np.tanh(x @ w + b))


def nested_params(params, x):
    h = x
    for layer in params["layers"]:
        h = np.tanh(h @ layer["W"] + layer["b"])
    out = h @ params["head"][0] + params["head"][1]
    return np.mean(out**2) * params["temperature"]


def nested_params_direct_index(params, x):
    first = params["layers"][0]
    h = np.tanh(x @ first["W"] + first["b"])
    return np.sum(h * params["layers"][1]["b"]) + params["layers"][1]["W"][0, 1] ** 2


def dict_params_loop_over_keys(params):
    s = 0.0
    for key in ("a", "b"):
        s = s + np.sum(params[key] ** 2) * params["c"]
    return s


def two_structures(p, q, x):
    return np.sum(np.tanh(x @ p["w"]) * q[0]) + q[1] * np.sum(p["w"])


def _mlp_params(r):
    return {
        "layers": [
            {"W": normal(r, 3, 4) * 0.5, "b": normal(r, 4) * 0.1},
            {"W": normal(r, 4, 4) * 0.5, "b": normal(r, 4) * 0.1},
        ],
        "head": [normal(r, 4, 2) * 0.5, normal(r, 2) * 0.1],
        "temperature": 1.3,
    }


STRUCTURES = [
    Case(
        dict_params,
        lambda r: (
            {"W1": normal(r, 3, 4), "b1": normal(r, 4), "W2": normal(r, 4, 2), "scale": 0.7},
            normal(r, 5, 3),
        ),
    ),
    Case(list_params, lambda r: ([normal(r, 3, 2), normal(r, 2), 0.4], normal(r, 5, 3))),
    Case(tuple_params, lambda r: ((normal(r, 3, 2), normal(r, 2)), normal(r, 5, 3))),
    Case(nested_params, lambda r: (_mlp_params(r), normal(r, 5, 3))),
    Case(nested_params_direct_index, lambda r: (_mlp_params(r), normal(r, 5, 3)), wrt=(0, 1)),
    Case(
        dict_params_loop_over_keys, lambda r: ({"a": normal(r, 3), "b": normal(r, 2, 2), "c": 1.5},)
    ),
    Case(
        two_structures,
        lambda r: ({"w": normal(r, 3, 2)}, [normal(r, 2), 0.3], normal(r, 4, 3)),
        wrt=(0, 1),
    ),
]


# --------------------------------------------------------------------------
# Recurrent network: 50 steps, hidden 32, batch 16


def rnn_tanh(params, xs, h0):
    h = h0
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ params["Wx"] + h @ params["Wh"] + params["b"])
        hs.append(h)
    return np.mean(np.stack(hs) ** 2) + np.mean((h @ params["Wy"]) ** 2)


def rnn_iterate_inputs(params, xs, h0):
    h = h0
    loss = 0.0
    for x in xs:
        h = np.tanh(x @ params["Wx"] + h @ params["Wh"] + params["b"])
        loss = loss + np.mean(h**2)
    return loss


def _rnn_args(steps, batch, features, hidden):
    def build(r):
        params = {
            "Wx": normal(r, features, hidden) / np.sqrt(features),
            "Wh": normal(r, hidden, hidden) * (0.9 / np.sqrt(hidden)),
            "b": normal(r, hidden) * 0.1,
            "Wy": normal(r, hidden, 2) / np.sqrt(hidden),
        }
        return params, normal(r, steps, batch, features), normal(r, batch, hidden) * 0.5

    return build


RNN = [
    Case(rnn_tanh, _rnn_args(50, 16, 8, 32)),
    Case(rnn_tanh, _rnn_args(5, 3, 4, 6), wrt=(0, 1, 2), name="rnn_tanh_small_all_inputs"),
    Case(rnn_iterate_inputs, _rnn_args(6, 3, 4, 5), wrt=(0, 1, 2)),
]


CASES = BRANCHES + LOOPS + WHILE_RETURN + ARRAY_WRITES + LISTS + STRUCTURES + RNN
