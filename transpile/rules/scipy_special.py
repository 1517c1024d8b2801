"""``scipy.special``: log-sum-exp, softmax, the logistic and normal functions, gamma and
beta functions, ``xlogy``. Loaded only where scipy is installed (``rules.optional_families``).

``logsumexp`` takes ``axis``, ``b`` (differentiated too) and ``keepdims``; with
``return_sign`` (a tuple result) it has no rule, and a differentiated call is refused.

Forward mode: the elementwise rules read their reverse lines forwards; ``logsumexp``,
``softmax`` and ``log_softmax`` have forward lines of their own. The helpers the gradients
call (``scipy_ops.unlogsumexp``, ``unlogsumexp_weights``, ``xdivy``) have rules at the
bottom, in terms of themselves and numpy, so every function here is differentiated to any
order, forwards or backwards.
"""

import numpy as np
from scipy import special

from transpile.core.template import d, t
from transpile.rules.declare import ELEMENTWISE, FIRST_DATA, VARIES, rule
from transpile_runtime import ops, scipy_ops


@rule(special.logsumexp, shape=FIRST_DATA, reduces=True)
def logsumexp(y, a, _axis=None, b=None, _keepdims=False):
    d[a] += ops.unbroadcast(scipy_ops.unlogsumexp(d[y], y, a, _axis, b, _keepdims), a)
    d[b] += ops.unbroadcast(scipy_ops.unlogsumexp_weights(d[y], y, a, _axis, b, _keepdims), b)
    # the same weights, b * exp(a - y) and exp(a - y), summed against the tangents
    t[y] += np.sum(
        scipy_ops.unlogsumexp(1.0, y, a, _axis, b, _keepdims) * t[a], axis=_axis, keepdims=_keepdims
    )
    t[y] += np.sum(
        scipy_ops.unlogsumexp_weights(1.0, y, a, _axis, b, _keepdims) * t[b],
        axis=_axis,
        keepdims=_keepdims,
    )


@rule(special.softmax, shape=FIRST_DATA)
def softmax(y, x, _axis=None):
    d[x] += y * (d[y] - np.sum(d[y] * y, axis=_axis, keepdims=True))
    t[y] += y * (t[x] - np.sum(y * t[x], axis=_axis, keepdims=True))


@rule(special.log_softmax, shape=FIRST_DATA)
def log_softmax(y, x, _axis=None):
    d[x] += d[y] - np.exp(y) * np.sum(d[y], axis=_axis, keepdims=True)
    t[y] += t[x] - np.sum(np.exp(y) * t[x], axis=_axis, keepdims=True)


@rule(special.expit, shape=ELEMENTWISE)
def expit(y, x):
    d[x] += d[y] * y * (1.0 - y)


@rule(special.logit, shape=ELEMENTWISE)
def logit(y, x):
    d[x] += d[y] / (x * (1.0 - x))


@rule(special.gammaln, shape=ELEMENTWISE)
def gammaln(y, x):
    d[x] += d[y] * scipy_ops.digamma(x)


@rule(special.digamma, shape=ELEMENTWISE)  # also special.psi, the same ufunc
def digamma(y, x):
    d[x] += d[y] * scipy_ops.polygamma(1, x)


@rule(special.polygamma, shape=ELEMENTWISE)
def polygamma(y, _n, x):
    d[x] += ops.unbroadcast(d[y] * scipy_ops.polygamma(_n + 1, x), x)


@rule(special.betaln, shape=ELEMENTWISE)
def betaln(z, a, b):
    d[a] += ops.unbroadcast(d[z] * (scipy_ops.digamma(a) - scipy_ops.digamma(a + b)), a)
    d[b] += ops.unbroadcast(d[z] * (scipy_ops.digamma(b) - scipy_ops.digamma(a + b)), b)


@rule(special.erf, shape=ELEMENTWISE)
def erf(y, x):
    d[x] += d[y] * 1.1283791670955126 * np.exp(-x * x)  # 2 / sqrt(pi)


@rule(special.erfc, shape=ELEMENTWISE)
def erfc(y, x):
    d[x] -= d[y] * 1.1283791670955126 * np.exp(-x * x)


@rule(special.ndtr, shape=ELEMENTWISE)
def ndtr(y, x):
    d[x] += d[y] * 0.3989422804014327 * np.exp(-0.5 * x * x)  # 1 / sqrt(2 pi)


@rule(special.log_ndtr, shape=ELEMENTWISE)
def log_ndtr(y, x):
    d[x] += d[y] * 0.3989422804014327 * np.exp(-0.5 * x * x - y)


@rule(special.xlogy, shape=ELEMENTWISE)
def xlogy(z, x, y):
    d[x] += ops.unbroadcast(d[z] * np.log(y), x)
    d[y] += ops.unbroadcast(d[z] * scipy_ops.xdivy(x, y), y)


@rule(special.xlog1py, shape=ELEMENTWISE)
def xlog1py(z, x, y):
    d[x] += ops.unbroadcast(d[z] * np.log1p(y), x)
    d[y] += ops.unbroadcast(d[z] * scipy_ops.xdivy(x, 1.0 + y), y)


# The helpers the gradients above call, as rules: a gradient made by this library is
# differentiated again (``hvp``, ``grad(grad(f))``), and its tangent taken (``jvp`` of a
# gradient). With s = unlogsumexp(g, y, a, axis, b) = g b exp(a - y), spread over the
# reduced axes, its slope in y is -s and in a is s; each line calls only functions with
# rules, so the third derivative needs nothing more.


@rule(scipy_ops.unlogsumexp, shape=VARIES, fresh=True)
def unlogsumexp(s, g, y, a, _axis=None, b=None, _keepdims=False):
    d[g] += ops.unbroadcast(
        np.sum(
            d[s] * scipy_ops.unlogsumexp(1.0, y, a, _axis, b, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    d[y] -= ops.unbroadcast(np.sum(d[s] * s, axis=_axis, keepdims=_keepdims), y)
    d[a] += ops.unbroadcast(d[s] * s, a)
    d[b] += ops.unbroadcast(d[s] * scipy_ops.unlogsumexp_weights(g, y, a, _axis, b, _keepdims), b)
    t[s] += scipy_ops.unlogsumexp(t[g] - g * t[y], y, a, _axis, b, _keepdims)
    t[s] += s * t[a]
    t[s] += scipy_ops.unlogsumexp_weights(g, y, a, _axis, b, _keepdims) * t[b]


@rule(scipy_ops.unlogsumexp_weights, shape=VARIES, fresh=True)
def unlogsumexp_weights(s, g, y, a, _axis=None, _b=None, _keepdims=False):  # b: its shape only
    d[g] += ops.unbroadcast(
        np.sum(
            d[s] * scipy_ops.unlogsumexp_weights(1.0, y, a, _axis, _b, _keepdims),
            axis=_axis,
            keepdims=_keepdims,
        ),
        g,
    )
    d[y] -= ops.unbroadcast(np.sum(d[s] * s, axis=_axis, keepdims=_keepdims), y)
    d[a] += ops.unbroadcast(d[s] * s, a)
    t[s] += scipy_ops.unlogsumexp_weights(t[g] - g * t[y], y, a, _axis, _b, _keepdims)
    t[s] += s * t[a]


@rule(scipy_ops.xdivy, shape=VARIES, fresh=True, pointwise=True)
def xdivy(s, x, y):  # x / y, 0 where x is 0
    d[x] += ops.unbroadcast(scipy_ops.xdivy(d[s], y), x)
    d[y] -= ops.unbroadcast(scipy_ops.xdivy(d[s] * s, y), y)
