"""Helpers in a module of their own, for ``tests/test_inlined_helpers.py``: their
globals are this module's, some named as the test module's are."""

import numpy as np

SCALE = 3.0  # the test module has a SCALE of its own


def act(z):
    return np.sin(z)


def scaled(x):
    return x * SCALE  # a number of this module: not inlined (it would be read live there)


def layer(x):
    return act(x) * 2.0  # a function of this module: inlined where the caller's act is it


def softplus(x):
    return np.log1p(np.exp(x))
