"""Wrappers for the scipy rule table (``tests/test_rules_scipy.py``): one scipy function
applied, weighted by ``c`` (shaped like its result) and summed, so that every entry of
its Jacobian counts, as ``tests/rule_funcs.py`` does for the numpy rules."""

import numpy as np
from scipy import special
from scipy.special import logsumexp, softmax
from scipy.stats import beta, gamma, multivariate_normal, norm, poisson, t

from transpile_runtime import scipy_ops

# scipy.special --------------------------------------------------------------


def lse_all(a, c):
    return np.sum(logsumexp(a) * c)


def lse_axis(a, axis, c):
    return np.sum(logsumexp(a, axis=axis) * c)


def lse_keepdims(a, c):
    return np.sum(logsumexp(a, axis=1, keepdims=True) * c)


def lse_b(a, b, c):
    return np.sum(logsumexp(a, axis=0, b=b) * c)


def lse_b_positional(a, b, c):
    return np.sum(special.logsumexp(a, 1, b) * c)


def lse_return_sign(a, c):
    out, sign = logsumexp(a, return_sign=True)
    return np.sum(out * sign * c)


def softmax_axis(x, c):
    return np.sum(softmax(x, axis=1) * c)


def softmax_all(x, c):
    return np.sum(softmax(x) * c)


def log_softmax_axis(x, c):
    return np.sum(special.log_softmax(x, axis=-1) * c)


def log_softmax_all(x, c):
    return np.sum(special.log_softmax(x) * c)


def expit(x, c):
    return np.sum(special.expit(x) * c)


def logit(x, c):
    return np.sum(special.logit(x) * c)


def gammaln(x, c):
    return np.sum(special.gammaln(x) * c)


def digamma(x, c):
    return np.sum(special.digamma(x) * c)


def psi(x, c):
    return np.sum(special.psi(x) * c)


def polygamma(x, c):
    return np.sum(special.polygamma(2, x) * c)


def betaln(a, b, c):
    return np.sum(special.betaln(a, b) * c)


def erf(x, c):
    return np.sum(special.erf(x) * c)


def erfc(x, c):
    return np.sum(special.erfc(x) * c)


def ndtr(x, c):
    return np.sum(special.ndtr(x) * c)


def log_ndtr(x, c):
    return np.sum(special.log_ndtr(x) * c)


def xlogy(x, y, c):
    return np.sum(special.xlogy(x, y) * c)


def xlog1py(x, y, c):
    return np.sum(special.xlog1py(x, y) * c)


# scipy.stats: loc and scale by keyword, positionally, and left out -------------------


def norm_logpdf(x, loc, scale, c):
    return np.sum(norm.logpdf(x, loc, scale) * c)


def norm_logpdf_kw(x, loc, scale, c):
    return np.sum(norm.logpdf(x, loc=loc, scale=scale) * c)


def norm_logpdf_std(x, c):
    return np.sum(norm.logpdf(x) * c)


def norm_pdf(x, loc, scale, c):
    return np.sum(norm.pdf(x, loc, scale=scale) * c)


def norm_cdf(x, loc, scale, c):
    return np.sum(norm.cdf(x, loc, scale) * c)


def norm_logcdf(x, loc, scale, c):
    return np.sum(norm.logcdf(x, loc=loc, scale=scale) * c)


def t_logpdf(x, df, loc, scale, c):
    return np.sum(t.logpdf(x, df, loc, scale) * c)


def t_logpdf_kw(x, df, c):
    return np.sum(t.logpdf(x, df=df) * c)


def t_pdf(x, df, loc, scale, c):
    return np.sum(t.pdf(x, df, loc=loc, scale=scale) * c)


def t_cdf(x, df, loc, scale, c):
    return np.sum(t.cdf(x, df, loc, scale) * c)


def t_logcdf(x, df, loc, scale, c):
    return np.sum(t.logcdf(x, df, loc, scale) * c)


def gamma_logpdf(x, a, loc, scale, c):
    return np.sum(gamma.logpdf(x, a, loc, scale) * c)


def gamma_logpdf_kw(x, a, scale, c):
    return np.sum(gamma.logpdf(x, a, scale=scale) * c)


def gamma_pdf(x, a, loc, scale, c):
    return np.sum(gamma.pdf(x, a, loc, scale) * c)


def gamma_cdf(x, a, loc, scale, c):
    return np.sum(gamma.cdf(x, a, loc=loc, scale=scale) * c)


def gamma_logcdf(x, a, loc, scale, c):
    return np.sum(gamma.logcdf(x, a, loc, scale) * c)


def beta_logpdf(x, a, b, loc, scale, c):
    return np.sum(beta.logpdf(x, a, b, loc, scale) * c)


def beta_pdf(x, a, b, loc, scale, c):
    return np.sum(beta.pdf(x, a, b, loc=loc, scale=scale) * c)


def beta_cdf(x, a, b, loc, scale, c):
    return np.sum(beta.cdf(x, a, b, loc, scale) * c)


def beta_logcdf(x, a, b, loc, scale, c):
    return np.sum(beta.logcdf(x, a, b, loc, scale) * c)


def poisson_logpmf(k, mu, c):
    return np.sum(poisson.logpmf(k, mu) * c)


def poisson_logpmf_loc(k, mu, c):
    return np.sum(poisson.logpmf(k, mu, loc=1) * c)


def poisson_pmf(k, mu, c):
    return np.sum(poisson.pmf(k, mu) * c)


def poisson_cdf(k, mu, c):
    return np.sum(poisson.cdf(k, mu) * c)


def poisson_logcdf(k, mu, c):
    return np.sum(poisson.logcdf(k, mu) * c)


def mvn_logpdf(x, mean, a, c):
    """``cov`` made symmetric from ``a``: a symmetric matrix's gradient is taken as the
    symmetric one, which finite differences in ``a`` see."""
    cov = 0.5 * (a + a.T)
    return np.sum(multivariate_normal.logpdf(x, mean, cov) * c)


def mvn_logpdf_kw(x, mean, a, c):
    cov = 0.5 * (a + a.T)
    return np.sum(multivariate_normal.logpdf(x, mean=mean, cov=cov) * c)


def mvn_logpdf_nomean(x, a, c):
    cov = 0.5 * (a + a.T)
    return np.sum(multivariate_normal.logpdf(x, cov=cov) * c)


def mvn_logpdf_diag(x, mean, v, c):
    return np.sum(multivariate_normal.logpdf(x, mean, v) * c)


def mvn_logpdf_scalar(x, mean, s, c):
    return np.sum(multivariate_normal.logpdf(x, mean, s) * c)


def mvn_pdf(x, mean, a, c):
    cov = 0.5 * (a + a.T)
    return np.sum(multivariate_normal.pdf(x, mean, cov) * c)


# the helpers gradients call, as functions of all their arguments (rules/scipy_*.py) ---


def h_unlogsumexp(g, y, a, b, c):
    return np.sum(scipy_ops.unlogsumexp(g, y, a, 1, b, False) * c)


def h_unlogsumexp_all(g, y, a, c):
    return np.sum(scipy_ops.unlogsumexp(g, y, a) * c)


def h_unlogsumexp_weights(g, y, a, b, c):
    return np.sum(scipy_ops.unlogsumexp_weights(g, y, a, 0, b, True) * c)


def h_xdivy(x, y, c):
    return np.sum(scipy_ops.xdivy(x, y) * c)


def h_t_logpdf_df(x, df, loc, scale, c):
    return np.sum(scipy_ops.t_logpdf_df(x, df, loc, scale) * c)


def h_unmvn_x(g, x, mean, cov, c):
    return np.sum(scipy_ops.unmvn_x(g, x, mean, cov) * c)


def h_mvn_residual_dot(w, x, mean, cov, c):
    return np.sum(scipy_ops.mvn_residual_dot(w, x, mean, cov) * c)


def h_unmvn_solve(g, v, x, mean, cov, c):
    return np.sum(scipy_ops.unmvn_solve(g, v, x, mean, cov) * c)


def h_mvn_dot(w, v, x, mean, cov, c):
    return np.sum(scipy_ops.mvn_dot(w, v, x, mean, cov) * c)


# vector outputs, for vjp inner-product checks --------------------------------


def v_lse_axis(a):
    return logsumexp(a, axis=0)


def v_lse_b(a, b):
    return logsumexp(a, axis=1, b=b, keepdims=True)


def v_softmax(x):
    return softmax(x, axis=1)


def v_log_softmax(x):
    return special.log_softmax(x, axis=0)


def v_mvn_logpdf(x, mean, a):
    return multivariate_normal.logpdf(x, mean, 0.5 * (a + a.T))


# refused -----------------------------------------------------------------------


def t_cdf_df(df, c):
    return np.sum(t.cdf(0.3, df) * c)


def frozen_norm(loc, c):
    return np.sum(norm(loc, 1.0).logpdf(0.3) * c)


def mvn_cdf(x, c):
    return np.sum(multivariate_normal.cdf(x, np.zeros(2), np.eye(2)) * c)


# one number in, one out: second and third derivatives by grad(grad(...)) -------------

A34 = np.array([[0.3, -1.2, 0.5, 2.0], [1.1, 0.4, -0.7, 0.2], [-0.5, 0.9, 1.3, -1.6]])
B34 = np.array([0.5, 1.5, 0.8, 1.2])


def s_lse(s):
    return np.sum(logsumexp(s * A34, axis=1, b=B34) * np.array([1.0, -0.5, 2.0]))


def s_lse_weights(s):
    return np.sum(logsumexp(A34, axis=0, b=s * B34 + 1.0, keepdims=True) * B34)


def s_softmax(s):
    return np.sum(softmax(s * A34, axis=0) * A34)


def s_log_softmax(s):
    return np.sum(special.log_softmax(s * A34, axis=1) * A34)


def s_norm(s):
    return np.sum(norm.logpdf(A34, loc=s, scale=1.0 + s * s))


def s_t(s):
    return np.sum(t.logpdf(A34, 2.0 + s * s, loc=0.5 * s))


def s_gamma(s):
    return np.sum(gamma.logpdf(B34, 1.0 + s * s, scale=s))


def s_special(s):
    x = s * B34
    return np.sum(special.xlogy(x, 1.0 + x) + special.gammaln(x) + special.expit(s * A34))


def s_mvn(s):
    return np.sum(multivariate_normal.logpdf(s * A34[:, :3], B34[:3], np.diag(B34[1:])))


# scipy.linalg -------------------------------------------------------------------------

from scipy import linalg


def la_inv(a, c):
    return np.sum(linalg.inv(a) * c)


def la_inv_pos(a, c):
    return np.sum(linalg.inv(a, assume_a="pos") * c)


def la_inv_sym_lower(a, c):
    return np.sum(linalg.inv(a, assume_a="sym", lower=True) * c)


def la_det(a, c):
    return np.sum(linalg.det(a) * c)


def la_solve(a, b, c):
    return np.sum(linalg.solve(a, b) * c)


def la_solve_assume(a, b, assume_a, lower, transposed, c):
    return np.sum(linalg.solve(a, b, lower=lower, assume_a=assume_a, transposed=transposed) * c)


def la_solve_triangular(a, b, trans, lower, unit_diagonal, c):
    x = linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    return np.sum(x * c)


def la_cholesky(a, lower, c):
    return np.sum(linalg.cholesky(a, lower=lower) * c)


def la_cho_solve(a, b, lower, c):
    factor = linalg.cho_factor(a, lower=lower)
    return np.sum(linalg.cho_solve(factor, b) * c)


def la_cho_factor(a, lower, c):
    factor, low = linalg.cho_factor(a, lower=lower)
    return np.sum(factor * c)


def la_lu_solve(a, b, trans, c):
    return np.sum(linalg.lu_solve(linalg.lu_factor(a), b, trans=trans) * c)


def la_lu_factor(a, c):
    lu, piv = linalg.lu_factor(a)
    return np.sum(lu * c)


def la_expm(a, c):
    return np.sum(linalg.expm(a) * c)


def la_eigh(a, lower, c):
    w, v = linalg.eigh(a, lower=lower)
    return np.sum((w + v * v[:1]) * c)  # v * v[:1]: each eigenvector's sign cancels


def la_eigvalsh(a, lower, c):
    return np.sum(linalg.eigh(a, lower=lower, eigvals_only=True) * c)


def la_pinv(a, c):
    return np.sum(linalg.pinv(a) * c)


def v_la_solve(a, b):
    return linalg.solve(a, b)


def v_la_cho(a, b):
    return linalg.cho_solve(linalg.cho_factor(a), b)


def v_la_lu(a, b):
    return linalg.lu_solve(linalg.lu_factor(a), b)


def la_eigh_generalized(a, c):
    return np.sum(linalg.eigh(a, np.eye(3))[0] * c)
