"""Functions with user-given derivative rules, and functions that call them, for
tests/test_user_rules.py. The rules themselves are registered by the tests."""

import functools
import math

import numpy as np
from scipy import special

from transpile import d

# ---- functions without Python source
erf = np.vectorize(math.erf)  # an np.vectorize object over a C function
hypot = np.vectorize(math.hypot)


def erf_adjoint(g, ans, x):
    return g * 2.0 / math.sqrt(math.pi) * np.exp(-x * x)


def erf_loss(x):
    return np.sum(erf(x) * np.cos(x))


def builtin_loss(x):
    return math.atan(x) * x  # a builtin with a rule given below (math.atan has none built in)


# ---- a Python function whose body the rule replaces
_lgamma = np.vectorize(math.lgamma)


def lgamma(x):
    return _lgamma(x)  # calls a C routine: its body cannot be differentiated


def lgamma_loss(x):
    return np.sum(lgamma(x) * x)


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))  # differentiable, but the rule is used instead


def logistic_adjoint(g, ans, x):
    return g * ans * (1.0 - ans)  # reads the result, not x: the rule's formula


def logistic_loss(x):
    return np.sum(logistic(x) ** 2)


# ---- several arguments, a None adjoint, broadcasting
def hypot_x(g, ans, x, y):
    return g * x / ans


def hypot_y(g, ans, x, y):
    return g * y / ans


def hypot_loss(x, y):
    return np.sum(hypot(x, y) * x)


# ---- keyword arguments
def huber(x, delta=1.0):
    return _huber(x, delta)


_huber = np.vectorize(
    lambda x, delta: 0.5 * x * x if abs(x) <= delta else delta * (abs(x) - 0.5 * delta)
)


def huber_adjoint(g, ans, x, delta=1.0):
    return g * np.clip(x, -delta, delta)


def huber_loss(x):
    return np.sum(huber(x, delta=0.5)) + np.sum(huber(2.0 * x))


def scaled(x, scale=1.0):
    return _times(x, scale)


_times = np.vectorize(lambda a, b: a * b)


def scaled_loss(x, w):
    return np.sum(scaled(x, scale=w) ** 2)


# ---- through functools.partial and bound methods
huber_half = functools.partial(huber, delta=0.5)
hypot_two = functools.partial(hypot, 2.0)


def partial_loss(x, y):
    return np.sum(huber_half(x)) + np.sum(hypot_two(y) * y)


class Spring:
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return _times(0.5 * self.k, x * x)


def spring_energy_adjoint(g, ans, spring, x):
    return g * spring.k * x


spring = Spring(3.0)


def spring_loss(x):
    return np.sum(spring.energy(x) * x)


# ---- a template rule
def softplus(x):
    return np.log1p(np.exp(x))


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def softplus_rule(y, x):
    d[x] += d[y] * _sigmoid(x)


def softplus_loss(x, w):
    return np.sum(softplus(x * w) ** 2)


# ---- nondifferentiable
def scale_of(x):
    return np.sqrt(np.mean(x * x))


def normalized_loss(x):
    return np.sum(np.tanh(x) / scale_of(x))


def through_scale(x, w):
    return np.sum(w * scale_of(x)) + np.sum(w * w)


# ---- a rule given after a gradient was made
def late(x):
    return x * np.sin(x)


def late_adjoint(g, ans, x):
    return g * (np.sin(x) + x * np.cos(x))


def late_loss(x):
    return np.sum(late(x) ** 2)


def digamma_adjoint(g, ans, x):
    return g * special.digamma(x)


# ---- in a loop, and in a function the differentiated one calls
def erf_loop(h, w):
    for _ in range(3):
        h = erf(h * w) + h
    return np.sum(h)


def inner(x):
    return lgamma(x) + softplus(x)


def outer_loss(x):
    return np.sum(inner(x) * x)


# ---- functions passed as arguments
def act_loss(x, act=huber_half):
    return np.sum(act(x) * x)


def erf_act_loss(x, act=erf):
    return np.sum(act(x))


def erf_map(x, y):
    return hypot(x, y) * erf(x)
