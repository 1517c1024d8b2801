"""``scipy.stats``: densities and distribution functions of ``norm``, ``t``, ``gamma``,
``beta``, ``poisson`` and ``multivariate_normal``, differentiated in ``x`` and in each
continuous parameter. Loaded only where scipy is installed (``rules.optional_families``).

They are called as methods of scipy's distribution objects, ``norm.logpdf(x, loc,
scale)``, positionally or by keyword; each template's parameters carry scipy's names.
With ``z = (x - loc) / scale``, every density's slope in ``loc`` is minus its slope in
``x``. A parameter a function has no closed-form slope in (the shape parameters of a
``cdf``) is read but not differentiated: a differentiated one is an error. A frozen
distribution (``norm(0, 1).logpdf(x)``) has no rule.

Forward mode: the univariate rules are declared ``pointwise`` (each entry of the result
depends on the arguments' entries at its position), so their reverse lines read forwards
are their forward lines; ``multivariate_normal`` has its own (``scipy_ops.
mvn_residual_dot`` in ``x`` and ``mean``, ``mvn_cov_dot`` in ``cov``).

Second derivatives (``hvp``, ``hessian``, ``grad(grad(f))``, ``jvp`` of a gradient): the
gradients call the scipy functions here again (``scipy_ops.norm.pdf``, ``digamma``), which
have these rules, and the helpers at the bottom, which have rules of their own. Refused,
by a ``TranspileError`` naming the helper: ``multivariate_normal`` differentiated twice in
``cov`` (``scipy_ops.unmvn_cov`` has no rule, and the rule of ``unmvn_x`` does not
differentiate ``cov``), and third derivatives of ``t.logpdf`` in ``df``
(``scipy_ops.t_logpdf_df_x`` and ``t_logpdf_df_df`` have no rules). The shape parameters of
a ``cdf`` stay undifferentiated at every order.
"""

import numpy as np
from scipy import stats

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, VARIES, no_rule, rule
from transpile_runtime import ops, scipy_ops

norm, student_t, gamma, beta = stats.norm, stats.t, stats.gamma, stats.beta
poisson, multivariate_normal = stats.poisson, stats.multivariate_normal


# norm -----------------------------------------------------------------------


@rule(norm.logpdf, shape=ALL_DATA, pointwise=True)
def norm_logpdf(y, x, loc=0.0, scale=1.0):
    d[x] -= ops.unbroadcast(d[y] * (x - loc) / (scale * scale), x)
    d[loc] += ops.unbroadcast(d[y] * (x - loc) / (scale * scale), loc)
    d[scale] += ops.unbroadcast(d[y] * (((x - loc) / scale) ** 2 - 1.0) / scale, scale)


@rule(norm.pdf, shape=ALL_DATA, pointwise=True)
def norm_pdf(y, x, loc=0.0, scale=1.0):
    d[x] -= ops.unbroadcast(d[y] * y * (x - loc) / (scale * scale), x)
    d[loc] += ops.unbroadcast(d[y] * y * (x - loc) / (scale * scale), loc)
    d[scale] += ops.unbroadcast(d[y] * y * (((x - loc) / scale) ** 2 - 1.0) / scale, scale)


@rule(norm.cdf, shape=ALL_DATA, pointwise=True)
def norm_cdf(y, x, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[y] * scipy_ops.norm.pdf(x, loc, scale), x)
    d[loc] -= ops.unbroadcast(d[y] * scipy_ops.norm.pdf(x, loc, scale), loc)
    d[scale] -= ops.unbroadcast(d[y] * scipy_ops.norm.pdf(x, loc, scale) * (x - loc) / scale, scale)


@rule(norm.logcdf, shape=ALL_DATA, pointwise=True)
def norm_logcdf(y, x, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[y] * np.exp(scipy_ops.norm.logpdf(x, loc, scale) - y), x)
    d[loc] -= ops.unbroadcast(d[y] * np.exp(scipy_ops.norm.logpdf(x, loc, scale) - y), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * np.exp(scipy_ops.norm.logpdf(x, loc, scale) - y) * (x - loc) / scale, scale
    )


# t: with z = (x - loc) / scale, d logpdf / dx = -(df + 1) z / ((df + z^2) scale) -------


@rule(student_t.logpdf, shape=ALL_DATA, pointwise=True)
def t_logpdf(y, x, df, loc=0.0, scale=1.0):
    d[x] -= ops.unbroadcast(d[y] * (df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2), x)
    d[loc] += ops.unbroadcast(d[y] * (df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2), loc)
    d[scale] += ops.unbroadcast(
        d[y] * df * ((x - loc) ** 2 - scale**2) / (df * scale**3 + scale * (x - loc) ** 2), scale
    )
    d[df] += ops.unbroadcast(d[y] * scipy_ops.t_logpdf_df(x, df, loc, scale), df)


@rule(student_t.pdf, shape=ALL_DATA, pointwise=True)
def t_pdf(y, x, df, loc=0.0, scale=1.0):
    d[x] -= ops.unbroadcast(d[y] * y * (df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2), x)
    d[loc] += ops.unbroadcast(
        d[y] * y * (df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2), loc
    )
    d[scale] += ops.unbroadcast(
        d[y] * y * df * ((x - loc) ** 2 - scale**2) / (df * scale**3 + scale * (x - loc) ** 2),
        scale,
    )
    d[df] += ops.unbroadcast(d[y] * y * scipy_ops.t_logpdf_df(x, df, loc, scale), df)


@rule(student_t.cdf, shape=ALL_DATA, pointwise=True)
def t_cdf(y, x, df, loc=0.0, scale=1.0):  # df is not differentiated
    d[x] += ops.unbroadcast(d[y] * scipy_ops.t.pdf(x, df, loc, scale), x)
    d[loc] -= ops.unbroadcast(d[y] * scipy_ops.t.pdf(x, df, loc, scale), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * scipy_ops.t.pdf(x, df, loc, scale) * (x - loc) / scale, scale
    )


@rule(student_t.logcdf, shape=ALL_DATA, pointwise=True)
def t_logcdf(y, x, df, loc=0.0, scale=1.0):  # df is not differentiated
    d[x] += ops.unbroadcast(d[y] * np.exp(scipy_ops.t.logpdf(x, df, loc, scale) - y), x)
    d[loc] -= ops.unbroadcast(d[y] * np.exp(scipy_ops.t.logpdf(x, df, loc, scale) - y), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * np.exp(scipy_ops.t.logpdf(x, df, loc, scale) - y) * (x - loc) / scale, scale
    )


# gamma: d logpdf / dx = (a - 1) / (x - loc) - 1 / scale -------------------------------


@rule(gamma.logpdf, shape=ALL_DATA, pointwise=True)
def gamma_logpdf(y, x, a, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[y] * ((a - 1.0) / (x - loc) - 1.0 / scale), x)
    d[loc] -= ops.unbroadcast(d[y] * ((a - 1.0) / (x - loc) - 1.0 / scale), loc)
    d[scale] += ops.unbroadcast(d[y] * ((x - loc) / scale - a) / scale, scale)
    d[a] += ops.unbroadcast(d[y] * (np.log((x - loc) / scale) - scipy_ops.digamma(a)), a)


@rule(gamma.pdf, shape=ALL_DATA, pointwise=True)
def gamma_pdf(y, x, a, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[y] * y * ((a - 1.0) / (x - loc) - 1.0 / scale), x)
    d[loc] -= ops.unbroadcast(d[y] * y * ((a - 1.0) / (x - loc) - 1.0 / scale), loc)
    d[scale] += ops.unbroadcast(d[y] * y * ((x - loc) / scale - a) / scale, scale)
    d[a] += ops.unbroadcast(d[y] * y * (np.log((x - loc) / scale) - scipy_ops.digamma(a)), a)


@rule(gamma.cdf, shape=ALL_DATA, pointwise=True)
def gamma_cdf(y, x, a, loc=0.0, scale=1.0):  # a is not differentiated
    d[x] += ops.unbroadcast(d[y] * scipy_ops.gamma.pdf(x, a, loc, scale), x)
    d[loc] -= ops.unbroadcast(d[y] * scipy_ops.gamma.pdf(x, a, loc, scale), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * scipy_ops.gamma.pdf(x, a, loc, scale) * (x - loc) / scale, scale
    )


@rule(gamma.logcdf, shape=ALL_DATA, pointwise=True)
def gamma_logcdf(y, x, a, loc=0.0, scale=1.0):  # a is not differentiated
    d[x] += ops.unbroadcast(d[y] * np.exp(scipy_ops.gamma.logpdf(x, a, loc, scale) - y), x)
    d[loc] -= ops.unbroadcast(d[y] * np.exp(scipy_ops.gamma.logpdf(x, a, loc, scale) - y), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * np.exp(scipy_ops.gamma.logpdf(x, a, loc, scale) - y) * (x - loc) / scale, scale
    )


# beta: d logpdf / dx = (a - 1) / (x - loc) - (b - 1) / (loc + scale - x) -----------------


@rule(beta.logpdf, shape=ALL_DATA, pointwise=True)
def beta_logpdf(y, x, a, b, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[y] * ((a - 1.0) / (x - loc) - (b - 1.0) / (loc + scale - x)), x)
    d[loc] -= ops.unbroadcast(d[y] * ((a - 1.0) / (x - loc) - (b - 1.0) / (loc + scale - x)), loc)
    d[scale] += ops.unbroadcast(
        d[y] * ((b - 1.0) * (x - loc) / (loc + scale - x) - a) / scale, scale
    )
    d[a] += ops.unbroadcast(
        d[y] * (np.log((x - loc) / scale) - scipy_ops.digamma(a) + scipy_ops.digamma(a + b)), a
    )
    d[b] += ops.unbroadcast(
        d[y] * (np.log1p((loc - x) / scale) - scipy_ops.digamma(b) + scipy_ops.digamma(a + b)), b
    )


@rule(beta.pdf, shape=ALL_DATA, pointwise=True)
def beta_pdf(y, x, a, b, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[y] * y * ((a - 1.0) / (x - loc) - (b - 1.0) / (loc + scale - x)), x)
    d[loc] -= ops.unbroadcast(
        d[y] * y * ((a - 1.0) / (x - loc) - (b - 1.0) / (loc + scale - x)), loc
    )
    d[scale] += ops.unbroadcast(
        d[y] * y * ((b - 1.0) * (x - loc) / (loc + scale - x) - a) / scale, scale
    )
    d[a] += ops.unbroadcast(
        d[y] * y * (np.log((x - loc) / scale) - scipy_ops.digamma(a) + scipy_ops.digamma(a + b)),
        a,
    )
    d[b] += ops.unbroadcast(
        d[y] * y * (np.log1p((loc - x) / scale) - scipy_ops.digamma(b) + scipy_ops.digamma(a + b)),
        b,
    )


@rule(beta.cdf, shape=ALL_DATA, pointwise=True)
def beta_cdf(y, x, a, b, loc=0.0, scale=1.0):  # a and b are not differentiated
    d[x] += ops.unbroadcast(d[y] * scipy_ops.beta.pdf(x, a, b, loc, scale), x)
    d[loc] -= ops.unbroadcast(d[y] * scipy_ops.beta.pdf(x, a, b, loc, scale), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * scipy_ops.beta.pdf(x, a, b, loc, scale) * (x - loc) / scale, scale
    )


@rule(beta.logcdf, shape=ALL_DATA, pointwise=True)
def beta_logcdf(y, x, a, b, loc=0.0, scale=1.0):  # a and b are not differentiated
    d[x] += ops.unbroadcast(d[y] * np.exp(scipy_ops.beta.logpdf(x, a, b, loc, scale) - y), x)
    d[loc] -= ops.unbroadcast(d[y] * np.exp(scipy_ops.beta.logpdf(x, a, b, loc, scale) - y), loc)
    d[scale] -= ops.unbroadcast(
        d[y] * np.exp(scipy_ops.beta.logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale, scale
    )


# poisson: the count k (and the integer shift loc) are not differentiated -----------------


@rule(poisson.logpmf, shape=ALL_DATA, pointwise=True)
def poisson_logpmf(y, k, mu, _loc=0):
    d[mu] += ops.unbroadcast(d[y] * ((k - _loc) / mu - 1.0), mu)


@rule(poisson.pmf, shape=ALL_DATA, pointwise=True)
def poisson_pmf(y, k, mu, _loc=0):
    d[mu] += ops.unbroadcast(d[y] * y * ((k - _loc) / mu - 1.0), mu)


@rule(poisson.cdf, shape=ALL_DATA, pointwise=True)
def poisson_cdf(y, k, mu, _loc=0):  # d cdf(k) / d mu = -pmf(floor(k))
    d[mu] -= ops.unbroadcast(d[y] * scipy_ops.poisson.pmf(np.floor(k), mu, _loc), mu)


@rule(poisson.logcdf, shape=ALL_DATA, pointwise=True)
def poisson_logcdf(y, k, mu, _loc=0):
    d[mu] -= ops.unbroadcast(d[y] * np.exp(scipy_ops.poisson.logpmf(np.floor(k), mu, _loc) - y), mu)


# multivariate_normal: x is (..., n), one density per sample; cov a matrix, a vector (its
# diagonal) or a number (times the identity). allow_singular has no rule.


@rule(multivariate_normal.logpdf, shape=ALL_DATA)
def multivariate_normal_logpdf(y, x, mean=None, cov=1.0):
    d[x] += ops.unbroadcast(scipy_ops.unmvn_x(d[y], x, mean, cov), x)
    d[mean] -= ops.unbroadcast(scipy_ops.unmvn_x(d[y], x, mean, cov), mean)
    d[cov] += scipy_ops.unmvn_cov(d[y], x, mean, cov)
    t[y] += scipy_ops.mvn_residual_dot(t[x], x, mean, cov)
    t[y] -= scipy_ops.mvn_residual_dot(t[mean], x, mean, cov)
    t[y] += scipy_ops.mvn_cov_dot(t[cov], x, mean, cov)


@rule(multivariate_normal.pdf, shape=ALL_DATA)
def multivariate_normal_pdf(y, x, mean=None, cov=1.0):
    d[x] += ops.unbroadcast(scipy_ops.unmvn_x(d[y] * y, x, mean, cov), x)
    d[mean] -= ops.unbroadcast(scipy_ops.unmvn_x(d[y] * y, x, mean, cov), mean)
    d[cov] += scipy_ops.unmvn_cov(d[y] * y, x, mean, cov)
    t[y] += y * scipy_ops.mvn_residual_dot(t[x], x, mean, cov)
    t[y] -= y * scipy_ops.mvn_residual_dot(t[mean], x, mean, cov)
    t[y] += y * scipy_ops.mvn_cov_dot(t[cov], x, mean, cov)


# The helpers the gradients above call, as rules (``hvp``, ``grad(grad(f))``, ``jvp`` of a
# gradient); the scipy functions they call (``scipy_ops.norm.pdf``, ``digamma``) are the
# very ones above. The multivariate helpers are linear in g and in the residual
# r = x - mean; their slopes in cov are not written: a differentiated cov is refused.


@rule(scipy_ops.t_logpdf_df, shape=VARIES, fresh=True, pointwise=True)
def t_logpdf_df(s, x, df, loc=0.0, scale=1.0):
    d[x] += ops.unbroadcast(d[s] * scipy_ops.t_logpdf_df_x(x, df, loc, scale), x)
    d[loc] -= ops.unbroadcast(d[s] * scipy_ops.t_logpdf_df_x(x, df, loc, scale), loc)
    d[scale] -= ops.unbroadcast(
        d[s] * scipy_ops.t_logpdf_df_x(x, df, loc, scale) * (x - loc) / scale, scale
    )
    d[df] += ops.unbroadcast(d[s] * scipy_ops.t_logpdf_df_df(x, df, loc, scale), df)


@rule(scipy_ops.unmvn_x, shape=VARIES, fresh=True)
def unmvn_x(s, g, x, mean, cov):  # -g cov^-1 (x - mean)
    d[g] += ops.unbroadcast(scipy_ops.mvn_residual_dot(d[s], x, mean, cov), g)
    d[x] += ops.unbroadcast(scipy_ops.unmvn_solve(g, d[s], x, mean, cov), x)
    d[mean] -= ops.unbroadcast(scipy_ops.unmvn_solve(g, d[s], x, mean, cov), mean)
    t[s] += scipy_ops.unmvn_x(t[g], x, mean, cov)
    t[s] += scipy_ops.unmvn_solve(g, t[x], x, mean, cov)
    t[s] -= scipy_ops.unmvn_solve(g, t[mean], x, mean, cov)


@rule(scipy_ops.mvn_residual_dot, shape=VARIES, fresh=True)
def mvn_residual_dot(s, w, x, mean, cov):  # -w . cov^-1 (x - mean)
    d[w] += ops.unbroadcast(scipy_ops.unmvn_x(d[s], x, mean, cov), w)
    d[x] += ops.unbroadcast(scipy_ops.unmvn_solve(d[s], w, x, mean, cov), x)
    d[mean] -= ops.unbroadcast(scipy_ops.unmvn_solve(d[s], w, x, mean, cov), mean)
    t[s] += scipy_ops.mvn_residual_dot(t[w], x, mean, cov)
    t[s] += scipy_ops.mvn_dot(w, t[x], x, mean, cov)
    t[s] -= scipy_ops.mvn_dot(w, t[mean], x, mean, cov)


@rule(scipy_ops.unmvn_solve, shape=VARIES, fresh=True)
def unmvn_solve(s, g, v, _x, _mean, cov):  # -g cov^-1 v: x and mean give its shape
    d[g] += ops.unbroadcast(scipy_ops.mvn_dot(d[s], v, _x, _mean, cov), g)
    d[v] += ops.unbroadcast(scipy_ops.unmvn_solve(g, d[s], _x, _mean, cov), v)
    t[s] += scipy_ops.unmvn_solve(t[g], v, _x, _mean, cov)
    t[s] += scipy_ops.unmvn_solve(g, t[v], _x, _mean, cov)


@rule(scipy_ops.mvn_dot, shape=VARIES, fresh=True)
def mvn_dot(s, w, v, _x, _mean, cov):  # -w . cov^-1 v
    d[w] += ops.unbroadcast(scipy_ops.unmvn_solve(d[s], v, _x, _mean, cov), w)
    d[v] += ops.unbroadcast(scipy_ops.unmvn_solve(d[s], w, _x, _mean, cov), v)
    t[s] += scipy_ops.mvn_dot(t[w], v, _x, _mean, cov)
    t[s] += scipy_ops.mvn_dot(w, t[v], _x, _mean, cov)


# Functions without a rule (no closed-form gradient): what the passes may assume of them.
NO_RULE = (no_rule(multivariate_normal.cdf, multivariate_normal.logcdf, shape=ALL_DATA),)
