"""The optional scipy rules (``transpile/rules/scipy_special.py``, ``scipy_stats.py``)
against central finite differences, as ``tests/test_rules.py`` checks the numpy rules.

Skipped where scipy is not installed. Each ``Row`` names a wrapper in
``tests/scipy_rule_funcs.py`` (one function applied, weighted by ``c`` and summed), a
domain per argument, the arguments differentiated (each alone and all together), and
the scipy callables it exercises; ``test_every_scipy_rule_has_a_row`` checks that every
callable these families declare is one. Gradients are taken on a first call (generic
code) and a second (a shape-specialized variant where there is one), both checked.
"""

import copy
import inspect
import re
import subprocess
import sys
import zlib
from dataclasses import dataclass

import fd
import numpy as np
import pytest

scipy = pytest.importorskip("scipy")

import convolution_funcs
import scipy_rule_funcs as sf
import spectral_funcs
from scipy import integrate, special, stats

import transpile.pipeline
from transpile import TranspileError, grad, source, vjp
from transpile.rules import (
    declarations,
    optional_families,
    registry,
    scipy_fft,
    scipy_integrate,
    scipy_linalg,
    scipy_signal,
    scipy_special,
    scipy_stats,
)
from transpile.rules.declare import Kind
from transpile_runtime import scipy_ops

# --------------------------------------------------------------------------
# Domains: (name, make(rng, shape)); shape None is a Python float


def _dom(name, make):
    def spec(shape):
        def draw(rng):
            value = make(rng, () if shape is None else shape)
            return float(value) if shape is None else np.asarray(value, dtype=np.float64)

        draw.label = f"{name}{'' if shape is None else list(shape)}".replace(" ", "")
        return draw

    return spec


normal = _dom("normal", lambda r, s: r.standard_normal(s))
pos = _dom("pos", lambda r, s: r.uniform(0.6, 2.5, s))
big = _dom("big", lambda r, s: r.uniform(2.5, 6.0, s))  # degrees of freedom, gamma shapes
unit = _dom("unit", lambda r, s: r.uniform(0.15, 0.85, s))  # logit's and beta's domain
small = _dom("small", lambda r, s: r.uniform(-0.1, 0.1, s))  # a loc that keeps x - loc > 0
counts = _dom("counts", lambda r, s: r.integers(1, 7, s).astype(float))  # loc=1 leaves >= 0
wide = _dom("wide", lambda r, s: r.uniform(-6.0, 3.0, s))  # log_ndtr's far left tail


def spd(n):
    """A symmetric positive definite matrix, kept away from singular."""

    def draw(rng):
        m = rng.standard_normal((n, n)) * 0.3
        return m @ m.T + n * np.eye(n)

    draw.label = f"spd[{n}]"
    return draw


def const(value):
    def draw(rng):
        return copy.deepcopy(value)

    draw.label = repr(value).replace(" ", "")
    return draw


@dataclass
class Row:
    func: object
    args: tuple  # one draw per parameter except c
    targets: tuple  # the scipy callables exercised
    wrt: tuple = (0,)
    rtol: float = 1e-6
    atol: float = 1e-8

    @property
    def id(self):
        return f"{self.func.__name__}({','.join(a.label for a in self.args)})"


ROWS = []


def row(func, *args, targets, wrt=(0,), **kw):
    args = tuple(a if callable(a) else const(a) for a in args)
    ROWS.append(Row(func, args, tuple(targets), wrt, **kw))


def every(n):
    """Each of the first ``n`` arguments alone, and all of them together."""
    return tuple(range(n)) + ((tuple(range(n)),) if n > 1 else ())


# scipy.special -------------------------------------------------------------------------

row(sf.lse_all, normal((3, 4)), targets=[special.logsumexp])
row(sf.lse_all, normal(None), targets=[special.logsumexp])
for axis in (0, 1, -1, (0, 1), None):
    row(sf.lse_axis, normal((3, 4)), axis, targets=[special.logsumexp])
row(sf.lse_keepdims, normal((3, 4)), targets=[special.logsumexp])
row(sf.lse_b, normal((3, 4)), pos((4,)), targets=[special.logsumexp], wrt=every(2))
row(sf.lse_b, normal((3, 4)), pos((3, 4)), targets=[special.logsumexp], wrt=every(2))
row(sf.lse_b, normal((4,)), pos((3, 4)), targets=[special.logsumexp], wrt=every(2))
row(sf.lse_b_positional, normal((3, 4)), pos((3, 1)), targets=[special.logsumexp], wrt=every(2))
for f in (sf.softmax_axis, sf.softmax_all, sf.log_softmax_axis, sf.log_softmax_all):
    target = special.softmax if "log" not in f.__name__ else special.log_softmax
    row(f, normal((3, 4)), targets=[target])
row(sf.softmax_all, normal((5,)), targets=[special.softmax])
for f, target, dom in [
    (sf.expit, special.expit, normal),
    (sf.logit, special.logit, unit),
    (sf.gammaln, special.gammaln, pos),
    (sf.digamma, special.digamma, pos),
    (sf.psi, special.digamma, pos),
    (sf.polygamma, special.polygamma, pos),
    (sf.erf, special.erf, normal),
    (sf.erfc, special.erfc, normal),
    (sf.ndtr, special.ndtr, normal),
    (sf.log_ndtr, special.log_ndtr, wide),
]:
    row(f, dom((3, 4)), targets=[target])
    row(f, dom(None), targets=[target])
for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), (None, (3,)), ((2, 1), None)]:
    row(sf.betaln, pos(sa), pos(sb), targets=[special.betaln], wrt=every(2))
    row(sf.xlogy, normal(sa), pos(sb), targets=[special.xlogy], wrt=every(2))
    row(sf.xlog1py, normal(sa), pos(sb), targets=[special.xlog1py], wrt=every(2))

# scipy.stats ---------------------------------------------------------------------------

N = stats.norm
for f, target in [
    (sf.norm_logpdf, N.logpdf),
    (sf.norm_logpdf_kw, N.logpdf),
    (sf.norm_pdf, N.pdf),
    (sf.norm_cdf, N.cdf),
    (sf.norm_logcdf, N.logcdf),
]:
    row(f, normal((3, 4)), normal((4,)), pos(None), targets=[target], wrt=every(3))
    row(f, normal(None), normal((3,)), pos((2, 1)), targets=[target], wrt=every(3))
row(sf.norm_logpdf_std, normal((5,)), targets=[N.logpdf])

T = stats.t
for f, target in [(sf.t_logpdf, T.logpdf), (sf.t_pdf, T.pdf)]:
    row(f, normal((3, 4)), big((4,)), normal(None), pos((3, 1)), targets=[target], wrt=every(4))
    row(f, normal(None), big(None), normal(None), pos(None), targets=[target], wrt=every(4))
row(sf.t_logpdf_kw, normal((4,)), big((4,)), targets=[T.logpdf], wrt=every(2))
for f, target in [(sf.t_cdf, T.cdf), (sf.t_logcdf, T.logcdf)]:
    row(
        f,
        normal((3, 4)),
        big((4,)),
        normal(None),
        pos((3, 1)),
        targets=[target],
        wrt=(0, 2, 3, (0, 2, 3)),
    )

G = stats.gamma
for f, target, wrt in [
    (sf.gamma_logpdf, G.logpdf, every(4)),
    (sf.gamma_pdf, G.pdf, every(4)),
    (sf.gamma_cdf, G.cdf, (0, 2, 3, (0, 2, 3))),
    (sf.gamma_logcdf, G.logcdf, (0, 2, 3, (0, 2, 3))),
]:
    row(f, big((3, 4)), big((4,)), small(None), pos((3, 1)), targets=[target], wrt=wrt)
row(sf.gamma_logpdf_kw, big((4,)), big(None), pos((4,)), targets=[G.logpdf], wrt=every(3))

B = stats.beta
for f, target, wrt in [
    (sf.beta_logpdf, B.logpdf, every(5)),
    (sf.beta_pdf, B.pdf, every(5)),
    (sf.beta_cdf, B.cdf, (0, 3, 4, (0, 3, 4))),
    (sf.beta_logcdf, B.logcdf, (0, 3, 4, (0, 3, 4))),
]:
    row(f, unit((3, 4)), big((4,)), big(None), small(None), const(1.2), targets=[target], wrt=wrt)
    row(f, unit((4,)), big(None), big((3, 1)), small((4,)), pos(None), targets=[target], wrt=wrt)

P = stats.poisson
for f, target in [
    (sf.poisson_logpmf, P.logpmf),
    (sf.poisson_logpmf_loc, P.logpmf),
    (sf.poisson_pmf, P.pmf),
    (sf.poisson_cdf, P.cdf),
    (sf.poisson_logcdf, P.logcdf),
]:
    row(f, counts((3, 4)), big((4,)), targets=[target], wrt=(1,))
    row(f, const(3.0), big(None), targets=[target], wrt=(1,))

M = stats.multivariate_normal
for f, target in [(sf.mvn_logpdf, M.logpdf), (sf.mvn_logpdf_kw, M.logpdf), (sf.mvn_pdf, M.pdf)]:
    row(f, normal((5, 3)), normal((3,)), spd(3), targets=[target], wrt=every(3))
    row(f, normal((3,)), normal((3,)), spd(3), targets=[target], wrt=every(3))
    row(f, normal((2, 4, 3)), normal((3,)), spd(3), targets=[target], wrt=every(3))
row(sf.mvn_logpdf_nomean, normal((5, 2)), spd(2), targets=[M.logpdf], wrt=every(2))
row(sf.mvn_logpdf_diag, normal((5, 3)), normal((3,)), pos((3,)), targets=[M.logpdf], wrt=every(3))
row(sf.mvn_logpdf_scalar, normal((5, 3)), normal((3,)), pos(None), targets=[M.logpdf], wrt=every(3))

# the helpers gradients call, whose rules second derivatives use (rules at the bottom of
# scipy_special.py and scipy_stats.py): every argument but the options and cov ----------

S = scipy_ops
row(
    sf.h_unlogsumexp,
    normal((3,)),
    normal((3,)),
    normal((3, 4)),
    pos((4,)),
    targets=[S.unlogsumexp],
    wrt=every(4),
)
row(
    sf.h_unlogsumexp_all,
    normal(None),
    normal(None),
    normal((3, 4)),
    targets=[S.unlogsumexp],
    wrt=every(3),
)
row(
    sf.h_unlogsumexp_weights,
    normal((1, 4)),
    normal((1, 4)),
    normal((3, 4)),
    pos((3, 1)),
    targets=[S.unlogsumexp_weights],
    wrt=every(3),
)
row(sf.h_xdivy, normal((3, 4)), pos((4,)), targets=[S.xdivy], wrt=every(2))
row(
    sf.h_t_logpdf_df,
    normal((3, 4)),
    big((4,)),
    normal(None),
    pos((3, 1)),
    targets=[S.t_logpdf_df],
    wrt=every(4),
)
row(
    sf.h_unmvn_x,
    normal((5,)),
    normal((5, 3)),
    normal((3,)),
    spd(3),
    targets=[S.unmvn_x],
    wrt=every(3),
)
row(
    sf.h_mvn_residual_dot,
    normal((5, 3)),
    normal((5, 3)),
    normal((3,)),
    spd(3),
    targets=[S.mvn_residual_dot],
    wrt=every(3),
)
row(
    sf.h_unmvn_solve,
    normal((5,)),
    normal((5, 3)),
    normal((5, 3)),
    normal((3,)),
    spd(3),
    targets=[S.unmvn_solve],
    wrt=every(2),
)
row(
    sf.h_mvn_dot,
    normal((5, 3)),
    normal((5, 3)),
    normal((5, 3)),
    normal((3,)),
    spd(3),
    targets=[S.mvn_dot],
    wrt=every(2),
)


# scipy.linalg: matrices kept well conditioned (the solvers, spd for those reading one
# triangle); each rule's adjoint lies on the part of the matrix the call reads -----------

L = scipy.linalg


def wellcond(n, m=None):
    """A square matrix near ``n`` times the identity (or, with ``m``, an n x m one)."""

    def draw(rng):
        if m is not None:
            return rng.standard_normal((n, m))
        return rng.standard_normal((n, n)) + n * np.eye(n)

    draw.label = f"wellcond[{n}]" if m is None else f"normal[{n},{m}]"
    return draw


row(sf.la_inv, wellcond(3), targets=[L.inv])
row(sf.la_inv_pos, spd(3), targets=[L.inv])
row(sf.la_inv_sym_lower, spd(3), targets=[L.inv])
row(sf.la_det, wellcond(3), targets=[L.det])
row(sf.la_solve, wellcond(3), normal((3,)), targets=[L.solve], wrt=every(2))
row(sf.la_solve, wellcond(3), normal((3, 2)), targets=[L.solve], wrt=every(2))
for assume_a, lower, transposed in [
    ("gen", False, True),
    ("sym", False, False),
    ("sym", True, True),
    ("pos", True, False),
    ("pos", False, False),
    ("upper triangular", False, False),
    ("lower triangular", False, True),
    ("diagonal", False, False),
    ("tridiagonal", False, False),
]:
    matrix = spd(3) if assume_a in ("sym", "pos") else wellcond(3)
    row(
        sf.la_solve_assume,
        matrix,
        normal((3, 2)),
        assume_a,
        lower,
        transposed,
        targets=[L.solve],
        wrt=every(2),
    )
for trans, lower, unit in [
    (0, False, False),
    (1, True, False),
    ("T", False, True),
    (0, True, True),
]:
    row(
        sf.la_solve_triangular,
        wellcond(3),
        normal((3, 2)),
        trans,
        lower,
        unit,
        targets=[L.solve_triangular],
        wrt=every(2),
    )
row(
    sf.la_solve_triangular,
    wellcond(3),
    normal((3,)),
    0,
    True,
    False,
    targets=[L.solve_triangular],
    wrt=every(2),
)
for lower in (False, True):
    row(sf.la_cholesky, spd(3), lower, targets=[L.cholesky])
    row(
        sf.la_cho_solve,
        spd(3),
        normal((3, 2)),
        lower,
        targets=[L.cho_factor, L.cho_solve],
        wrt=every(2),
    )
    row(sf.la_cho_factor, spd(3), lower, targets=[L.cho_factor])
    row(sf.la_eigh, spd(3), lower, targets=[L.eigh])
    row(sf.la_eigvalsh, spd(3), lower, targets=[L.eigh])
for trans in (0, 1):
    row(
        sf.la_lu_solve,
        normal((3, 3)),
        normal((3, 2)),
        trans,
        targets=[L.lu_factor, L.lu_solve],
        wrt=every(2),
    )
row(sf.la_lu_solve, normal((4, 4)), normal((4,)), 0, targets=[L.lu_solve], wrt=every(2))
row(sf.la_lu_factor, normal((3, 3)), targets=[L.lu_factor])
row(sf.la_expm, normal((3, 3)), targets=[L.expm])
row(sf.la_pinv, normal((3, 2)), targets=[L.pinv])


# --------------------------------------------------------------------------
# Cases


def _rng(key):
    return np.random.default_rng(zlib.crc32(key.encode()))


class _Probe:
    """Stands in for ``c``: records the shape of what it is multiplied with."""

    __array_ufunc__ = None

    def __init__(self):
        self.shape = None

    def __mul__(self, other):
        self.shape = np.shape(other)
        return 0.0

    __rmul__ = __mul__


def _make(r):
    rng = _rng(r.id)
    args = [a(rng) for a in r.args]
    probe = _Probe()
    r.func(*copy.deepcopy(args), probe)
    c = float(rng.uniform(0.5, 1.5)) if probe.shape == () else rng.standard_normal(probe.shape)
    return tuple(args) + (c,)


def _label(w):
    return "wrt=" + (",".join(map(str, w)) if isinstance(w, tuple) else str(w))


CASES = [pytest.param(r, w, id=f"{r.id}-{_label(w)}") for r in ROWS for w in r.wrt]


def _check_leaf(g, a, path):
    if isinstance(a, np.ndarray):
        assert np.shape(g) == a.shape, f"{path}: shape {np.shape(g)}, argument {a.shape}"
        assert np.asarray(g).dtype == a.dtype, f"{path}: dtype {np.asarray(g).dtype}"
    else:
        assert np.ndim(g) == 0, f"{path}: a Python float got a gradient of shape {np.shape(g)}"


@pytest.mark.parametrize("r,wrt", CASES)
def test_rule(r, wrt):
    args = _make(r)
    pristine = copy.deepcopy(args)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    g = grad(r.func, wrt=wrt)
    expected = fd.numeric_grad(r.func, list(args), indices)
    for call in ("first call", "second call"):
        actual = g(*args)
        fd.assert_same(list(args), list(pristine), path="argument")
        actual = actual if isinstance(wrt, tuple) else (actual,)
        for i, a in zip(indices, actual):
            _check_leaf(a, args[i], f"{call}: grad[{i}]")
        fd.assert_close(tuple(actual), expected, rtol=r.rtol, atol=r.atol, path=call)


# --------------------------------------------------------------------------
# vjp: <dout, J v> == <J^T dout, v> for the vector-valued rules

VJP_ROWS = [
    (sf.v_lse_axis, (normal((3, 4)),), 0),
    (sf.v_lse_b, (normal((3, 4)), pos((4,))), (0, 1)),
    (sf.v_softmax, (normal((3, 4)),), 0),
    (sf.v_log_softmax, (normal((3, 4)),), 0),
    (sf.v_mvn_logpdf, (normal((5, 3)), normal((3,)), spd(3)), (0, 1, 2)),
    (sf.v_la_solve, (wellcond(3), normal((3, 2))), (0, 1)),
    (sf.v_la_cho, (spd(3), normal((3,))), (0, 1)),
    (sf.v_la_lu, (wellcond(4), normal((4, 2))), (0, 1)),
]


@pytest.mark.parametrize(
    "func,specs,wrt",
    VJP_ROWS,
    ids=[f"{f.__name__}({','.join(s.label for s in specs)})" for f, specs, _ in VJP_ROWS],
)
def test_vjp_inner_product(func, specs, wrt):
    rng = _rng("vjp|" + func.__name__)
    args = tuple(s(rng) for s in specs)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    out = func(*copy.deepcopy(args))
    dout = rng.standard_normal(np.shape(out))
    tangents = [rng.standard_normal(np.shape(args[i])) for i in indices]
    if func is sf.v_mvn_logpdf:  # a symmetric direction for the covariance
        tangents[2] = tangents[2] + tangents[2].T
    if func is sf.v_la_cho:  # cho_factor reads the upper triangle only
        tangents[0] = np.triu(tangents[0])
    h = vjp(func, wrt=wrt)
    jv = fd.numeric_jvp(func, args, indices, tangents)
    lhs = fd.inner(dout, jv)
    for _ in range(2):  # first and second call
        cot = h(*args, dout)
        cot = cot if isinstance(wrt, tuple) else (cot,)
        rhs = fd.inner(list(cot), tangents)
        assert abs(lhs - rhs) <= 1e-7 * (1.0 + abs(lhs)), f"<dout, Jv> = {lhs}, <vjp, v> = {rhs}"


# --------------------------------------------------------------------------
# Coverage: every scipy rule has a row; the templates and helpers are declared


def _declared(family):
    return [(decl, template) for decl, template in declarations(family)]


def test_the_scipy_families_are_loaded():
    # importing scipy.stats imports scipy.integrate, whose odeint rule loads with it, and
    # scipy.fft (its rules: tests/spectral_funcs.py)
    assert optional_families() == (
        scipy_special,
        scipy_stats,
        scipy_integrate,
        scipy_linalg,
        scipy_fft,
        scipy_signal,
    )
    assert registry().declaration(special.logsumexp) is not None
    # a bound method is found although each attribute access makes a new one
    assert stats.norm.logpdf is not stats.norm.logpdf
    assert registry().declaration(stats.norm.logpdf) is not None
    assert registry().declaration(stats.t.logpdf) is not registry().declaration(
        stats.norm.logpdf
    )  # the same function (rv_continuous.logpdf) bound to another distribution


def test_every_scipy_rule_has_a_row():
    # odeint, whose argument is a function, has tests of its own (tests/test_odeint.py);
    # scipy.fft's rows are with numpy.fft's (tests/spectral_funcs.py)
    rows = ROWS + spectral_funcs.SCIPY_ROWS + convolution_funcs.SCIPY_ROWS
    targets = [t for r in rows for t in r.targets] + [integrate.odeint]
    missing = []
    for family in optional_families():
        for decl, template in _declared(family):
            if template is None:
                continue
            missing += [repr(o) for o in decl.objects if not any(t == o for t in targets)]
    assert not missing, f"scipy rules without a row: {missing}"


def test_every_scipy_template_is_declared_and_calls_declared_helpers():
    for family in optional_families():
        for name, f in vars(family).items():
            if not (inspect.isfunction(f) and f.__module__ == family.__name__):
                continue
            decls = getattr(f, "declarations", ())
            assert decls and all(d.kind is Kind.RULE for d in decls), name
            for helper in re.findall(r"scipy_ops\.(\w+)\(", inspect.getsource(f)):
                declared = getattr(getattr(scipy_ops, helper), "declared", None)
                if declared is None:  # a scipy function read through scipy_ops (digamma)
                    assert registry().declaration(getattr(scipy_ops, helper)), helper
                else:
                    assert declared.fresh, helper


def test_scipy_ops_reads_scipy_lazily():
    assert scipy_ops.digamma is special.digamma
    assert scipy_ops.norm is stats.norm
    with pytest.raises(AttributeError):
        scipy_ops.not_a_scipy_name  # noqa: B018


# --------------------------------------------------------------------------
# What has no rule is refused at transpile time, never a silent zero


@pytest.mark.parametrize(
    "func,args,match",
    [
        (sf.lse_return_sign, (np.ones(3),), "logsumexp"),
        (sf.t_cdf_df, (3.0,), "df"),
        (sf.frozen_norm, (0.5,), "logpdf"),
        (sf.mvn_cdf, (np.ones(2),), "cdf"),
        (sf.la_eigh_generalized, (np.eye(3) * 2.0,), "eigh"),
    ],
    ids=["logsumexp-return_sign", "t.cdf-in-df", "frozen-distribution", "mvn.cdf", "eigh-b"],
)
def test_no_rule_is_refused(func, args, match):
    with pytest.raises(TranspileError, match=match):
        grad(func)(*args, 1.0)


def test_xlogy_slope_in_y_is_zero_where_x_is():
    def f(x, y):
        return np.sum(special.xlogy(x, y))

    dy = grad(f, wrt=1)(np.array([0.0, 2.0]), np.array([0.0, 4.0]))
    np.testing.assert_allclose(dy, [0.0, 0.5])


def test_generated_code_reads_as_math():
    def f(x, loc):
        return np.sum(stats.norm.logpdf(x, loc=loc) + special.gammaln(x))

    text = source(grad(f, wrt=(0, 1)))
    assert "scipy_ops.digamma(x)" in text
    assert "d_t1 * (x - loc)" in text  # scale=1.0 folded away


def test_a_bound_method_is_transpiled_once(monkeypatch):
    """``norm.logpdf`` is a new object on each access: the checks that the names a gradient
    read still denote what they did must not take that for a rebinding."""
    runs = []
    real = transpile.pipeline.run
    monkeypatch.setattr(
        transpile.pipeline, "run", lambda ctx, *a, **k: runs.append(1) or real(ctx, *a, **k)
    )

    def f(w, x):
        return np.sum(stats.norm.logpdf(x, loc=w, scale=2.0))

    g = grad(f)
    for _ in range(4):
        g(np.ones(3), np.arange(3.0))
    assert len(runs) == 1


def test_without_scipy_everything_else_works(tmp_path):
    """With scipy hidden, transpile imports, loads no scipy rules, and differentiates."""
    script = tmp_path / "no_scipy.py"
    script.write_text(
        "import sys\n"
        "sys.modules['scipy'] = None  # import scipy raises ImportError\n"
        "import numpy as np\n"
        "from transpile import grad\n"
        "from transpile.rules import optional_families\n"
        "assert optional_families() == ()\n"
        "def f(x):\n"
        "    return np.sum(np.tanh(x))\n"
        "print(grad(f)(np.zeros(2)))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "[1. 1.]" in out.stdout


# --------------------------------------------------------------------------
# Realistic models, against finite differences on a first and a second call


def gmm_loglik(means, log_scales, logits, x):
    """A one-dimensional Gaussian mixture's log-likelihood of the samples ``x``."""
    log_weights = special.log_softmax(logits)
    per_component = stats.norm.logpdf(x[:, None], means, np.exp(log_scales)) + log_weights
    return np.sum(special.logsumexp(per_component, axis=1))


def regression_log_posterior(w, log_noise, features, y):
    """Bayesian linear regression: a normal prior on the weights, a normal likelihood
    with a learned noise scale, and a gamma prior on that scale."""
    prior = np.sum(stats.norm.logpdf(w, loc=0.0, scale=2.0))
    noise = np.exp(log_noise)
    likelihood = np.sum(stats.norm.logpdf(y, loc=features @ w, scale=noise))
    return prior + likelihood + stats.gamma.logpdf(noise, 2.0, scale=0.5)


def _check_model(func, args, wrt):
    g = grad(func, wrt=wrt)
    expected = fd.numeric_grad(func, list(args), wrt)
    for call in ("first call", "second call"):
        fd.assert_close(tuple(g(*args)), expected, rtol=1e-6, atol=1e-8, path=call)


def test_gaussian_mixture_log_likelihood():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(-2.0, 0.5, 30), rng.normal(1.5, 1.0, 50)])
    args = (np.array([-1.0, 0.5, 2.0]), np.array([0.1, -0.2, 0.3]), np.zeros(3), x)
    _check_model(gmm_loglik, args, (0, 1, 2))


def test_bayesian_regression_log_posterior():
    rng = np.random.default_rng(2)
    features = rng.normal(size=(40, 4))
    y = features @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rng.normal(size=40)
    args = (rng.normal(size=4), np.log(0.4), features, y)
    _check_model(regression_log_posterior, args, (0, 1))
