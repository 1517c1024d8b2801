"""Programs written as their authors write them, for tests/test_kwargs_programs.py:
keyword arguments passed on (``**kwargs``, ``**d``, keyword-only parameters), objects
that count their calls, and functions as values (lambdas given to helpers, lists of
functions, layer combinators that return closures, ``super()``).
"""

import numpy as np

# -- a stax-style layer-combinator network ------------------------------------------
# Each layer is a pair (init_fun, apply_fun); apply_fun(params, inputs, **kwargs) takes
# and passes on keywords it may not use (rng=..., mode=...), as stax's layers do.


def Dense(out_dim):
    def init_fun(rng, input_dim):
        W = rng.normal(size=(input_dim, out_dim)) / np.sqrt(input_dim)
        return out_dim, (W, 0.1 * rng.normal(size=out_dim))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return np.dot(inputs, W) + b

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    init_fun = lambda rng, input_dim: (input_dim, ())
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


def softplus(x, beta=1.0):
    return np.logaddexp(beta * x, 0.0) / beta


Tanh = elementwise(np.tanh)
Softplus = elementwise(softplus, beta=2.0)


def serial(*layers):
    init_funs = tuple(layer[0] for layer in layers)
    apply_funs = tuple(layer[1] for layer in layers)

    def init_fun(rng, input_dim):
        params = []
        for init in init_funs:
            input_dim, param = init(rng, input_dim)
            params.append(param)
        return input_dim, params

    def apply_fun(params, inputs, **kwargs):
        for fun, param in zip(apply_funs, params):
            inputs = fun(param, inputs, **kwargs)
        return inputs

    return init_fun, apply_fun


init_net, apply_net = serial(Dense(6), Tanh, Dense(4), Softplus, Dense(1))


def stax_loss(params, inputs, targets):
    predictions = apply_net(params, inputs, mode="train")
    return np.mean((predictions[:, 0] - targets) ** 2)


def stax_loss_without_keywords(params, inputs, targets):
    return np.mean((apply_net(params, inputs)[:, 0] - targets) ** 2)


# -- a GPT-2 style transformer block, parameters in dicts passed with ** --------------


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def linear(x, w, b):
    return x @ w + b


def ffn(x, c_fc, c_proj):
    return linear(gelu(linear(x, **c_fc)), **c_proj)


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, *, n_head):
    x = linear(x, **c_attn)
    q, k, v = np.split(x, 3, axis=-1)
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    heads = []
    for h in range(n_head):
        qs, ks, vs = (
            np.split(q, n_head, axis=-1),
            np.split(k, n_head, axis=-1),
            np.split(v, n_head, axis=-1),
        )
        heads.append(attention(qs[h], ks[h], vs[h], causal_mask))
    return linear(np.hstack(heads), **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head=2):
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)
    return x + ffn(layer_norm(x, **ln_2), **mlp)


def gpt2(x, blocks, ln_f, n_head):
    for block in blocks:
        x = transformer_block(x, **block, n_head=n_head)
    return np.sum(layer_norm(x, **ln_f) ** 2)


def gpt_loss(x, params):
    h = transformer_block(x, **params)
    return np.sum(h * h) / h.size


# -- a model class whose loss method is given to grad, counting its calls ------------


class GLM:
    """A Poisson GLM whose loss counts its evaluations, as optimizers' objectives do."""

    def __init__(self, X, y, l2=0.1):
        self.X, self.y, self.l2 = X, y, l2
        self.nfev = 0
        self.last_seen = None
        self.history = []

    def rate(self, w):
        return np.exp(self.X @ w)

    def loss(self, w):
        self.nfev += 1
        self.last_seen = w.shape  # a cache that nothing differentiated reads
        self.history.append(self.nfev)  # a log
        rate = self.rate(w)
        return np.mean(rate - self.y * (self.X @ w)) + self.l2 * np.sum(w * w)


class ScaledGLM(GLM):
    def loss(self, w):
        return 2.0 * super().loss(w)


class Cached:
    """Keeps what it computed on the object: a differentiated value written to an
    attribute, which must be refused (a later read would not be differentiated)."""

    def __init__(self):
        self.h = None

    def forward(self, x):
        self.h = np.tanh(x)
        return np.sum(self.h)


CACHED = Cached()


def cached_forward(x):
    return CACHED.forward(x)


# -- an integrator taking a lambda step -----------------------------------------------


def fori_loop(lower, upper, body_fun, init_val):
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


def leapfrog(q, p, grad_u, dt):
    p = p - 0.5 * dt * grad_u(q)
    q = q + dt * p
    p = p - 0.5 * dt * grad_u(q)
    return q, p


def pendulum_energy(q0, p0, k):
    dt = 0.1

    def step(state):
        q, p = state
        return leapfrog(q, p, lambda z: k * np.sin(z), dt)

    q, p = fori_loop(0, 5, lambda i, s: step(s), (q0, p0))
    return np.sum(0.5 * p * p + k * (1.0 - np.cos(q)))


# -- functions held in lists, objects in lists built elsewhere -----------------------

ACTIVATIONS = [np.sin, np.tanh, np.sin]


def composed(v, s):
    for fun in ACTIVATIONS:
        v = fun(v * s)
    return np.sum(v)


class Layer:
    def __init__(self, scale):
        self.scale = scale

    def forward_pass(self, x, params):
        return np.tanh(self.scale * x @ params)


LAYERS = [Layer(1.0), Layer(0.5)]


def through_layers(x, params):
    for layer in LAYERS:
        x = layer.forward_pass(x, params)
    return np.sum(x * x)


class LeastSquares:
    def __call__(self, params, data):
        inputs, targets = data
        return np.sum((inputs @ params - targets) ** 2)


def least_squares(params, inputs, targets):
    return LeastSquares()(params, (inputs, targets))


# -- keyword-only parameters and **kwargs in the function given to grad --------------


def huber(r, *, delta=1.0):
    a = np.abs(r)
    return np.where(a < delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def robust_loss(w, X, y, *, delta=0.5, l2=0.0):
    return np.sum(huber(X @ w - y, delta=delta)) + l2 * np.sum(w * w)


def weighted(w, **weights):
    total = 0.0
    for name in weights:
        total = total + weights[name] * np.sum(np.sin(w) ** 2)
    return total


# -- flatten/unflatten: a closure rebuilding the parameters from one flat vector -----


def flatten(params):
    shapes = [np.shape(p) for p in params]
    sizes = [int(np.size(p)) for p in params]
    flat = np.concatenate([np.ravel(p) for p in params])

    def unflatten(vector):
        out, start = [], 0
        for shape, size in zip(shapes, sizes):
            out.append(np.reshape(vector[start : start + size], shape))
            start += size
        return out

    return flat, unflatten


def flatten_dict(params):
    keys = sorted(params)
    shapes = {k: np.shape(params[k]) for k in keys}
    flat = np.concatenate([np.ravel(params[k]) for k in keys])

    def unflatten(vector):
        out, i = {}, 0
        for k in keys:
            n = int(np.prod(shapes[k]))
            out[k] = vector[i : i + n].reshape(shapes[k])
            i += n
        return out

    return flat, unflatten


_R = np.random.default_rng(11)
FLAT, UNFLATTEN = flatten([_R.normal(size=(3, 2)), _R.normal(size=2), _R.normal(size=(2, 1))])
FLAT_DICT, UNFLATTEN_DICT = flatten_dict({"W": _R.normal(size=(3, 2)), "b": _R.normal(size=2)})
INPUTS = _R.normal(size=(4, 3))


def flat_objective(v):
    W1, b1, W2 = UNFLATTEN(v)
    return np.sum(np.tanh(INPUTS @ W1 + b1) @ W2)


def flat_dict_objective(v):
    p = UNFLATTEN_DICT(v)
    return np.sum(np.tanh(INPUTS @ p["W"] + p["b"]) ** 2)


def make_composed(n):
    funs = [np.sin] * n

    def composed_n(v):
        for fun in funs:
            v = fun(v)
        return np.sum(v)

    return composed_n


def composed_locally(v, s):
    funs = (np.sin, np.cos, np.tanh)
    for k, fun in enumerate(funs):
        v = fun(v) * s + k
    return np.sum(v * v)
