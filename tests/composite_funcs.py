"""Functions for ``test_composites.py``: the max shift of a log-softmax or logsumexp
written out without ``stop_gradient`` (``transpile/analysis/composites.py``, ``shifts``).

Each function where the composite applies has a twin that adds ``0.0 * np.sum(m)``:
the same value and gradient, but ``m`` is read once more, so the pattern does not
apply and the ordinary rules (the adjoint of the max included) run. The functions
where the pattern must not apply differ from it in one way each, and their
gradients depend on ``m``.
"""

import numpy as np

# --- the composite applies ---------------------------------------------------


def log_softmax(z, y):
    m = np.max(z, axis=1, keepdims=True)
    logp = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(y * logp)


def log_softmax_ref(z, y):
    m = np.max(z, axis=1, keepdims=True)
    logp = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(y * logp) + 0.0 * np.sum(m)


def log_softmax_named(z, y):
    m = np.amax(z, -1, keepdims=True)
    s = z - m
    logp = s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True))
    return np.sum(y * logp**2)


def log_softmax_named_ref(z, y):
    m = np.amax(z, -1, keepdims=True)
    s = z - m
    logp = s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True))
    return np.sum(y * logp**2) + 0.0 * np.sum(m)


def logsumexp(z, w):
    m = np.max(z, axis=0, keepdims=True)
    lse = m + np.log(np.sum(np.exp(z - m), axis=0, keepdims=True))
    return np.sum(w * np.sin(lse))


def logsumexp_ref(z, w):
    m = np.max(z, axis=0, keepdims=True)
    lse = m + np.log(np.sum(np.exp(z - m), axis=0, keepdims=True))
    return np.sum(w * np.sin(lse)) + 0.0 * np.sum(m)


def logsumexp_then_log_softmax(z, y):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.mean(np.sum(y * (z - lse), axis=1))


def logsumexp_then_log_softmax_ref(z, y):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.mean(np.sum(y * (z - lse), axis=1)) + 0.0 * np.sum(m)


def softmax_cross_entropy(W, b, x, y):
    logits = np.tanh(x @ W + b)
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def softmax_cross_entropy_ref(W, b, x, y):
    logits = np.tanh(x @ W + b)
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1)) + 0.0 * np.sum(m)


def log_softmax_vector(z):
    m = np.max(z, axis=1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def log_softmax_vector_ref(z):
    m = np.max(z, axis=1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + 0.0 * np.sum(m)


def _log_softmax_rows(z):
    m = np.max(z, axis=1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def _log_softmax_rows_ref(z):
    m = np.max(z, axis=1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + 0.0 * np.sum(m)


def through_helper(W, x, y):
    return -np.sum(y * _log_softmax_rows(x @ W))


def through_helper_ref(W, x, y):
    return -np.sum(y * _log_softmax_rows_ref(x @ W))


APPLIES = [
    (log_softmax, log_softmax_ref),
    (log_softmax_named, log_softmax_named_ref),
    (logsumexp, logsumexp_ref),
    (logsumexp_then_log_softmax, logsumexp_then_log_softmax_ref),
    (softmax_cross_entropy, softmax_cross_entropy_ref),
    (through_helper, through_helper_ref),
]

# --- the composite must not apply ---------------------------------------------


def m_used_elsewhere(z, y):
    m = np.max(z, axis=1, keepdims=True)
    logp = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(y * logp) + np.sum(m**2)


def m_rebound(z, y):
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    m = 0.5 * m
    logp = s - m - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return np.sum(y * logp)


def z_rebound(z, y):
    m = np.max(z, axis=1, keepdims=True)
    z = z * 2.0
    logp = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(y * logp)


def axis_mismatch(z, y):
    m = np.max(z, axis=1, keepdims=True)
    logp = z - m - np.log(np.sum(np.exp(z - m), axis=0, keepdims=True))
    return np.sum(y * logp)


def exp_used_elsewhere(z, y):
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    logp = z - m - np.log(np.sum(e, axis=1, keepdims=True))
    return np.sum(y * logp) + np.sum(e)


def logsumexp_minus_m(z, w):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) - m
    return np.sum(w * lse)


def shift_of_other_array(z, v, y):
    m = np.max(v, axis=1, keepdims=True)
    logp = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(y * logp * v)


def shift_in_loop(z, y):
    total = 0.0
    for k in range(2):
        m = np.max(z * (k + 1.0), axis=1, keepdims=True)
        logp = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
        total = total + np.sum(y * logp)
    return total


NOT_APPLIES = [
    m_used_elsewhere,
    m_rebound,
    z_rebound,
    axis_mismatch,
    exp_used_elsewhere,
    logsumexp_minus_m,
    shift_of_other_array,
    shift_in_loop,
]
