"""Loops and comprehensions over dicts, as Python runs them: over the keys, in
insertion order (``test_dict_loops``). Each takes ``x``, a float array, first; the
weights by position make the order matter."""

import numpy as np


def sum_over_keys(x):
    d = {"b": x, "a": x * 2.0}
    return sum(np.sum(d[k] ** 2) for k in d)


def loop_over_items(x):
    d = {"b": x, "a": np.sin(x)}
    s = 0.0
    w = 1.0
    for k, v in d.items():
        s = s + w * np.sum(v * v) * len(k)
        w = w + 1.0
    return s


def values_in_order(x):
    d = {"b": np.cos(x), "a": x * x}
    vals = [v for v in d.values()]
    return np.sum(vals[0] * 1.0 + vals[-1] * 3.0)


def keys_method(x):
    d = {"b": x, "a": np.sin(x)}
    return sum(np.sum(d[k] * x) for k in d.keys())  # noqa: SIM118 - the view is the point


def int_keyed_comprehension(x):
    d = {i: x * float(i + 1) for i in range(3)}
    return sum(k * np.sum(np.tanh(d[k])) for k in d)


def key_added_to_comprehension(x):
    d = {i: x * float(i + 1) for i in range(2)}
    d[7] = np.sin(x)
    vals = list(d.values())
    return np.sum(vals[-1] * 5.0 + vals[0] * vals[1])


def enumerated_items(x):
    d = {"z": x, "y": np.exp(x * 0.5), "x": x**3}
    s = 0.0
    for i, (k, v) in enumerate(d.items()):
        s = s + (i + 1) * np.sum(v)
    return s


def reversed_keys(x):
    d = {"z": x, "y": np.exp(x * 0.5)}
    s = 0.0
    w = 1.0
    for k in reversed(d):
        s = s + w * np.sum(d[k] ** 2)
        w = w * 3.0
    return s


def total(p):
    return sum(np.sum(p[k] ** 2) for k in p)


def helper_iterates_dict(x):
    return total({"u": np.sin(x), "t": x})


def loop_over_dict_param(p, x):
    s = 0.0
    w = 1.0
    for k in p:
        s = s + w * np.sum(np.sin(p[k] * x))
        w = w + 1.0
    return s


def nested_dict_param(params, x):
    s = 0.0
    for name in params:
        for k, v in params[name].items():
            s = s + np.sum(np.tanh(v * x)) * (1.0 if k == "w" else 2.0)
    return s


def values_of_dict_param(p, x):
    return sum(np.sum(v * x * x) for v in p.values())


def sorted_keys(x):
    d = {"b": x, "a": x * 2.0}
    s = 0.0
    w = 1.0
    for k in sorted(d):  # "a" first
        s = s + w * np.sum(d[k] ** 2)
        w = w + 2.0
    return s


def stacked_values(x):
    d = {"b": np.sin(x), "a": x * 2.0}
    return np.sum(np.stack(list(d.values())) * np.array([[1.0], [3.0]]))


def sum_of_values(x):
    d = {"b": x * x, "a": np.cos(x)}
    return np.sum(sum(d.values()) * x)


ONE_ARGUMENT = (
    sum_over_keys,
    loop_over_items,
    values_in_order,
    keys_method,
    int_keyed_comprehension,
    key_added_to_comprehension,
    enumerated_items,
    reversed_keys,
    helper_iterates_dict,
    sorted_keys,
    stacked_values,
    sum_of_values,
)
