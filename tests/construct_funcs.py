"""Functions written the way published numerical programs are: lambdas, functions
defined inside the differentiated one, comprehensions, generators, ``map`` and dicts
that grow, for ``tests/test_constructs.py``. Nothing here runs at import time."""

import functools

import numpy as np

from transpile import insert_grad_of

# --------------------------------------------------------------------------
# lambdas


def lambda_bound(w):
    g = lambda t: np.tanh(t) * 2.0
    return np.sum(g(w))


def lambda_called_in_loop(w):
    step = lambda h: np.sin(h) * w
    h = w
    for _ in range(3):
        h = step(h)
    return np.sum(h)


def lambda_inline(w):
    return np.sum((lambda t: t * t)(w + 1.0))


def lambda_late_binding(w):
    scaled = lambda t: t * scale
    scale = np.cos(w)
    first = scaled(w)
    scale = scale * 2.0
    return np.sum(first + scaled(w))


def lambda_default(w):
    c = np.exp(w)
    f = lambda t, k=c: t * k
    c = c * 3.0
    return np.sum(f(w) + f(w, c))


def lambda_arguments_swapped(a, b):
    sub = lambda a, b: a - b * b
    return np.sum(sub(b, a) * a)


def lambda_of_expression_arguments(w):
    norm2 = lambda v: np.sum(v * v)
    return norm2(w * 2.0) + norm2(np.sin(w))


# --------------------------------------------------------------------------
# functions defined inside the differentiated function


def nested_closure(w, x):
    b = np.cos(w)

    def layer(z):
        h = np.tanh(z * w + b)
        return h * x

    return np.sum(layer(x) + layer(x * 2.0))


def nested_with_early_return(w):
    def clipped(z, limit):
        for i in range(3):
            if np.sum(z) > limit:
                return z * 0.5
            z = z * 1.5
        return z

    return np.sum(clipped(w, 2.0) * w)


def nested_in_loop(w):
    def update(h, k):
        return np.sin(h) + k * w

    h = w
    for k in range(4):
        h = update(h, k)
    return np.sum(h * h)


def nested_calls_nested(w):
    def inner(z):
        return z * z

    def outer(z):
        def twice(v):
            return inner(v) + inner(v * 0.5)

        return twice(z) * np.exp(-z)

    return np.sum(outer(w))


def nested_rebinds_parameter(w):
    def grow(t):
        t = t * 2.0
        t = t + w
        return t

    t = w * 3.0
    return np.sum(grow(t) * t)


def nested_keywords_and_defaults(w):
    def affine(z, scale=2.0, shift=0.0):
        return z * scale + shift

    return np.sum(affine(w) * affine(w, shift=w) * affine(z=w, scale=w))


def nested_names_do_not_clobber(w):
    h = w * 2.0

    def f(z):
        h = z * 3.0  # this h is f's own
        return h + 1.0

    return np.sum(f(w) * h)


# --------------------------------------------------------------------------
# comprehensions, generators, map


def listcomp_stack(w):
    return np.sum(np.stack([w * i for i in range(3)]) ** 2)


def listcomp_filtered_nested(ws):
    terms = [np.sum(a * b) for a in ws for b in ws if a is not b]
    return sum(terms)


def listcomp_array(w):
    v = np.array([w[0] * w[1], np.sin(w[2]), w[1] ** 2])
    return np.sum(v * v)


def generator_in_sum(ws):
    return sum(np.sum(w**2) for w in ws) + np.sum(ws[0] * ws[1])


def generator_with_index(w):
    return sum(w[i] * w[i + 1] for i in range(len(w) - 1))


def comprehension_variable_is_its_own(w):
    i = 2
    vals = [w[i] * 3.0 for i in range(2)]
    return vals[0] + vals[1] * w[i]


def dictcomp(ws):
    scaled = {k: np.tanh(ws[k]) * (k + 1) for k in range(len(ws))}
    return np.sum(scaled[0] * scaled[1])


def setcomp_of_integers(w):
    kinds = {i % 2 for i in range(5)}
    return np.sum(w * len(kinds))


def map_with_lambda(ws):
    squares = list(map(lambda t: t * t, ws))  # noqa: C417 (the construct under test)
    return np.sum(squares[0] + squares[1])


def map_with_numpy(ws):
    return sum(map(np.sum, map(np.tanh, ws)))


def map_two_sequences(ws, vs):
    return sum(map(lambda a, b: np.sum(a * b), ws, vs))


# --------------------------------------------------------------------------
# dicts built here and then given new keys


def dict_new_key(w):
    d = {"a": w, "b": w * 2.0}
    d["c"] = d["a"] * d["b"]
    return np.sum(d["c"])


def dict_new_keys_in_loop(w):
    d = {}
    d["x0"] = w
    for i in range(3):
        d["x" + str(i + 1)] = np.sin(d["x" + str(i)]) * w
    return np.sum(d["x3"])


def dict_overwritten_and_new(w):
    d = dict(a=w)
    d["a"] = d["a"] * 3.0
    d["b"] = np.tanh(d["a"])
    d["a"] = d["b"] * d["a"]
    return np.sum(d["a"] + d["b"])


# --------------------------------------------------------------------------
# realistic programs


def lstm_loss(params, xs, target):
    """An LSTM over a sequence, written with nested helpers and a lambda, as in
    published autograd examples."""
    sigmoid = lambda z: 0.5 * (np.tanh(z * 0.5) + 1.0)

    def gate(name, x, h):
        return x @ params["W" + name] + h @ params["U" + name] + params["b" + name]

    def cell(x, h, c):
        i = sigmoid(gate("i", x, h))
        f = sigmoid(gate("f", x, h))
        o = sigmoid(gate("o", x, h))
        g = np.tanh(gate("g", x, h))
        c = f * c + i * g
        return o * np.tanh(c), c

    h = np.zeros(params["bi"].shape)
    c = np.zeros(params["bi"].shape)
    for x in xs:
        h, c = cell(x, h, c)
    penalty = sum(np.sum(params[k] ** 2) for k in ["Wi", "Wf", "Wo", "Wg"])
    return np.sum((h - target) ** 2) + 1e-3 * penalty


def mlp_loss(weights, x, y):
    """A small MLP: layers as a list of (W, b) pairs, the activation a lambda, the
    regularizer a generator expression."""
    relu_ish = lambda z: np.log1p(np.exp(z))
    h = x
    for W, b in weights[:-1]:
        h = relu_ish(h @ W + b)
    W, b = weights[-1]
    out = h @ W + b
    l2 = sum(np.sum(W_**2) for W_, _ in weights)
    return np.mean((out - y) ** 2) + 0.01 * l2


# --------------------------------------------------------------------------
# functions as arguments and defaults


def softplus(z):
    return np.log1p(np.exp(z))


def predict(params, x, nonlinearity=np.tanh):
    return nonlinearity(x @ params)


def loss_with_default_nonlinearity(params, x):
    return np.sum(predict(params, x) ** 2)


def loss_with_numpy_nonlinearity(params, x):
    return np.sum(predict(params, x, np.sin) ** 2)


def loss_with_user_nonlinearity(params, x):
    return np.sum(predict(params, x, nonlinearity=softplus) ** 2)


def weighted_activation(w, act=np.tanh):
    return np.sum(act(w) * w)


def activation_without_default(w, act):
    return np.sum(act(w) * w)


# --------------------------------------------------------------------------
# starred unpacking and starred arguments


def starred_unpacking(w):
    first, *middle, last = w[0], w[1], w[2], w[3]
    head, *tail = [np.sin(w), w * 2.0, w**2]
    return first * middle[0] * last + middle[1] + np.sum(head * tail[1] + tail[0])


def starred_unpacking_of_a_value(ws):
    a, *rest = ws
    *init, z = rest
    return np.sum(a * z) + np.sum(init[0])


def starred_shape_argument(w):
    shape = (2, 3)
    noise = np.zeros(*[shape])
    return np.sum(np.reshape(w, shape) * 2.0 + noise)


# --------------------------------------------------------------------------
# *args


def sum_of_squares(*params):
    return sum(np.sum(p**2) for p in params) + np.sum(params[0] * params[-1])


def scaled_pairs(scale, *ws):
    return scale * np.sum(ws[0] * ws[1])


def tanh_total(scale, *zs):
    total = 0.0
    for z in zs:
        total = total + np.sum(np.tanh(z) * scale)
    return total + np.sum(zs[0] * zs[-1])


def calls_with_varargs(x, y):
    return tanh_total(2.0, x, y, x * y) + tanh_total(1.0, y)


# --------------------------------------------------------------------------
# insert_grad_of: user code on an adjoint, as the backward sweep reaches it

SEEN = []


def doubled_gradient(x):
    y = np.sin(x)
    with insert_grad_of(y) as dy:
        SEEN.append(np.copy(dy))
        dy = dy * 2.0
    return np.sum(y * y)


def clipped_gradient(x):
    h = x * 3.0
    with insert_grad_of(h) as dh:
        dh = np.clip(dh, -1.0, 1.0)
    return np.sum(h**2)


def damped_in_loop(x):
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.5)
        with insert_grad_of(h) as dh:
            dh = dh * 0.5
    return np.sum(h)


# --------------------------------------------------------------------------
# functools.partial of numpy functions, reversed, sorted keys


def partial_of_numpy(x):
    return np.sum(functools.partial(np.multiply, 2.0)(x) * x)


def reversed_loop(ws):
    total = 0.0
    for w in reversed(ws):
        total = total * 0.5 + np.sum(np.sin(w))
    return total


def sorted_by_key(ws):
    order = sorted(range(len(ws)), key=lambda i: -i)
    return sum(np.sum(ws[i] * (k + 1)) for k, i in enumerate(order))


def scaled_tanh(x, s, shift=0.0):
    return np.sum(np.tanh(x + shift) * s)


SCALED_TWICE = functools.partial(scaled_tanh, s=2.0)


def global_partial_of_user_function(x):
    return SCALED_TWICE(x) + SCALED_TWICE(x * x, shift=0.5)


def local_partial(x, s):
    f = functools.partial(scaled_tanh, s=s)
    g = functools.partial(np.multiply, x)
    return f(x) + f(x * 2.0, shift=s) + np.sum(g(x)) + functools.partial(scaled_tanh, x)(s)


def partial_then_rebound(x, s):
    f = functools.partial(scaled_tanh, s=s)
    s = s * 3.0
    return f(x) + np.sum(s * x)


def sorted_arrays_by_key(ws):
    ordered = sorted(ws, key=lambda w: float(np.sum(w)))
    largest_first = sorted(ws, key=lambda w: float(np.max(w)), reverse=True)
    return np.sum(ordered[0] * 2.0 + ordered[-1]) + np.sum(largest_first[0] ** 2)


def sorted_numbers(w):
    values = sorted([w[0] * 2.0, w[1], np.sin(w[2])])
    return values[0] + 3.0 * values[-1]


def unzip_pairs(pairs):
    xs, ys = zip(*pairs)
    return np.sum(np.stack(xs) * np.stack(ys) ** 2)


def forwards_its_arguments(*args):
    return tanh_total(0.5, *args) + scaled_pairs(*args)


def forwards_a_tuple(x, y):
    both = (x, y * 2.0)
    return scaled_pairs(3.0, *both)


def shifted(z, **options):
    return z * options["scale"] + options["shift"]


def calls_with_keywords(x, s):
    return np.sum(shifted(x, scale=s, shift=1.0) * shifted(x * 2.0, shift=s, scale=3.0))
