"""An RNN-style loop for the memory test: only ``h`` (and a shape) must be recorded."""

import numpy as np


def rnn_loss(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        a = xs[t] @ U + h @ W + b
        h = np.tanh(a)
    return np.sum(h * h)
