"""Classes and methods whose gradients ``tests/test_methods.py`` checks (the transpiler
reads their source, so they live in a file)."""

from dataclasses import dataclass

import numpy as np


class Linear:
    """A model with parameters held on the instance."""

    def __init__(self, W, b, scale=2.0):
        self.W = W
        self.b = b
        self.scale = scale

    def predict(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale

    def loss(self, x, y):
        return np.mean((self.predict(x) - y) ** 2)


class Scaler:
    """Takes another user object: ``shift`` reads the other's attributes."""

    def __init__(self, c):
        self.c = c

    def apply(self, model, x):
        return model.predict(x) * self.c


class Dense:
    """A layer called as a function (``__call__``)."""

    def __init__(self, W, act=np.tanh):
        self.W = W
        self.act = act

    def __call__(self, x):
        return self.act(x @ self.W)


class MLP:
    """Weights stored by ``__init__``, a ``forward`` method, a class constant."""

    leak = 0.1

    def __init__(self, W1, b1, W2):
        self.W1 = W1
        self.b1 = b1
        self.W2 = W2
        self.name = "mlp"

    def hidden(self, x):
        z = x @ self.W1 + self.b1
        return np.maximum(z, self.leak * z)

    def forward(self, x):
        return self.hidden(x) @ self.W2


@dataclass
class Params:
    W: np.ndarray
    b: float


class Frozenish:
    """Writes an attribute: refused."""

    def __init__(self, W):
        self.W = W

    def update(self, x):
        self.W = self.W * 2.0
        return np.sum(x @ self.W)


rng = np.random.default_rng(7)
MODEL = Linear(rng.normal(size=(3, 2)), rng.normal(size=2))
SCALER = Scaler(1.5)
LAYER = Dense(rng.normal(size=(3, 4)))


def global_method(x, y):
    return np.mean((MODEL.predict(x) - y) ** 2)


def global_method_of_method(x, y):
    return MODEL.loss(x, y)


def method_taking_object(x):
    return np.sum(SCALER.apply(MODEL, x) ** 2)


def call_global_layer(x):
    return np.sum(LAYER(x) ** 2)


def call_layer(layer, x):
    return np.sum(layer(x) ** 2)


def mlp_loss(model, x, y):
    return np.mean((model.forward(x) - y) ** 2)


def linear_loss(model, x, y):
    return model.loss(x, y)


def params_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def method_with_object_argument(scaler, model, x):
    return np.sum(scaler.apply(model, x) ** 2)


def writes_attribute(x):
    obj = Frozenish(np.ones((3, 2)))
    return obj.update(x)


WRITER = Frozenish(np.ones((3, 2)))


def writes_attribute_of_global(x):
    return WRITER.update(x)
