"""Models made of objects kept in lists, tuples and dicts, and objects made inside the
differentiated function (``tests/test_object_models.py`` checks their gradients; the
transpiler reads their source, so they live in a file)."""

from dataclasses import dataclass

import numpy as np


class Dense:
    """An affine layer; ``parameters`` lists its arrays."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b

    def parameters(self):
        return [self.W, self.b]


class Tanh:
    """An activation layer: no parameters of its own."""

    def __call__(self, x):
        return np.tanh(x)

    def parameters(self):
        return []


class MLP:
    """PyTorch style: layers of mixed classes in a list, applied in a loop."""

    def __init__(self, sizes, rng, dtype=np.float64):
        self.layers = []
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            W = (rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)).astype(dtype)
            self.layers.append(Dense(W, rng.normal(size=n_out).astype(dtype)))
            self.layers.append(Tanh())
        self.layers.pop()  # no activation after the last layer
        self.name = "mlp"

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        params = []
        for layer in self.layers:
            params = params + layer.parameters()
        return params


def mlp_loss(model, x, y):
    return np.mean((model(x) - y) ** 2)


def l2_loss(model, x, y, lam):
    """Mean squared error plus an L2 penalty over ``model.parameters()``."""
    penalty = sum(np.sum(p**2) for p in model.parameters())
    return np.mean((model(x) - y) ** 2) + lam * penalty


def layers_loss(layers, x):
    """A list of layers passed in, not held by a model."""
    for layer in layers:
        x = layer(x)
    return np.sum(x**2)


class Residual:
    """Elements by index: a constant one, the last one, and a computed one."""

    def __init__(self, blocks, head):
        self.blocks = blocks  # a tuple of Dense layers of equal width
        self.head = head

    def __call__(self, x):
        h = self.blocks[0](x)
        for i in range(1, len(self.blocks)):
            h = h + np.tanh(self.blocks[i](h))
        return self.head(h) + self.blocks[-1].b[0]


def residual_loss(model, x):
    return np.sum(model(x) ** 2)


class Scaled:
    """``enumerate`` and ``reversed`` over the layers, and a dict of objects."""

    def __init__(self, layers, parts):
        self.layers = layers
        self.parts = parts  # {"gate": Dense, "out": Dense}

    def __call__(self, x):
        for i, layer in enumerate(self.layers):
            x = np.tanh(layer(x)) * 0.5**i
        for layer in reversed(self.layers):
            x = x + layer.b
        return self.parts["out"](x * self.parts["gate"](x))


def scaled_loss(model, x):
    return np.sum(model(x) ** 2)


class Stack:
    """Nested: a list of blocks, each a list of layers."""

    def __init__(self, blocks):
        self.blocks = blocks

    def __call__(self, x):
        for block in self.blocks:
            for layer in block:
                x = layer(x)
        return x


def stack_loss(model, x):
    return np.sum(model(x) ** 2)


# --------------------------------------------------------------------------
# Still refused


def breaks_in_loop(model, x):
    for layer in model.layers:
        if x.shape[0] > 100:
            break
        x = layer(x)
    return np.sum(x)


def assigns_loop_variable(model, x):
    for layer in model.layers:
        x = layer(x)
        layer = None
    return np.sum(x)


_rng = np.random.default_rng(3)
GLOBAL_MLP = MLP([3, 4, 2], _rng)


def global_model_loss(x):
    return np.sum(GLOBAL_MLP(x) ** 2)


# --------------------------------------------------------------------------
# Objects made inside the differentiated function


class Affine:
    """``__init__`` only stores its parameters (a default function, a constant)."""

    scale = 0.5  # a class attribute

    def __init__(self, W, b, act=np.tanh):
        """Docstrings are allowed."""
        self.W = W
        self.b = b
        self.act = act
        self.kind = "affine"

    def __call__(self, x):
        return self.act(x @ self.W + self.b) * self.scale


@dataclass
class Gain:
    g: float
    shift: np.ndarray

    def apply(self, x):
        return x * self.g + self.shift


def made_layer(W, b, x):
    layer = Affine(W, b)
    return np.sum(layer(x) ** 2)


def made_in_a_loop(Ws, x):
    for W in Ws:
        layer = Affine(W, 0.1, act=np.sin)
        x = layer(x)
    return np.sum(x**2)


def made_dataclass(g, shift, x):
    gain = Gain(g, shift=shift)
    return np.sum(gain.apply(x) ** 2)


def apply_layer(layer, x):
    return layer(x)


def made_and_passed(W, b, x):
    layer = Dense(W, b)
    return np.sum(apply_layer(layer, x) ** 2)


class Normalizing:
    """``__init__`` computes: not built as a dict; refused where differentiated."""

    def __init__(self, W):
        self.W = W / np.linalg.norm(W)

    def __call__(self, x):
        return x @ self.W


def made_normalizing(W, x):
    layer = Normalizing(W)
    return np.sum(layer(x))
