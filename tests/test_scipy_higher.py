"""Forward mode and second derivatives of the scipy rules (``transpile/rules/scipy_*.py``).

For every row of the scipy rule table (``ROWS`` of ``tests/test_rules_scipy.py``) and
each ``wrt``: ``jvp`` on a first and a second call against float64 central differences
of the function (``fd.numeric_jvp``); ``hvp`` against central differences of the
gradient (``grad`` is checked against finite differences by the rule table itself), and
``jvp`` of the gradient likewise, which runs the forward lines of the rules of the
helpers that gradients call. ``hessian`` is symmetric and matches the differences of the
gradient column by column; ``grad(grad(f))`` and ``grad(grad(grad(f)))`` of functions of
one number match differences of the derivative one order lower.

What is refused stays refused by name (a ``TranspileError``, never a silent zero): the
lists below say what and why, and the coverage tests keep them honest. Skipped where
scipy is not installed.
"""

import copy
import inspect
import re
import zlib

import fd
import numpy as np
import pytest

pytest.importorskip("scipy")

import odeint_funcs
import scipy_rule_funcs as sf
from scipy import integrate, stats
from test_rules_scipy import ROWS, _label, _make
from variants import call_twice

from transpile import TranspileError, grad, hessian, hvp, jvp
from transpile.core.template import parse_template
from transpile.rules import (
    declarations,
    optional_families,
    registry,
    scipy_integrate,
    scipy_linalg,
    scipy_stats,
)
from transpile_runtime import scipy_ops

REVERSE_ONLY = set()  # every scipy rule has forward lines

# Helpers that templates call which have no rule of their own: differentiating through
# them (one order more than the template they serve) is refused, naming the helper.
NO_RULE_HELPERS = {
    "unmvn_cov": "second derivatives of multivariate_normal in cov",
    "mvn_cov_dot": "grad of a jvp of multivariate_normal in cov",
    "t_logpdf_df_x": "third derivatives of t.logpdf in df",
    "t_logpdf_df_df": "third derivatives of t.logpdf in df",
    "odeint_adjoint_y0": "second derivatives through odeint (the adjoint of its adjoint)",
    "odeint_adjoint_t": "second derivatives through odeint",
    "odeint_adjoint_args": "second derivatives through odeint",
    "odeint_tangent_y0": "second derivatives through odeint (the jvp of its sensitivities)",
    "odeint_tangent_args": "second derivatives through odeint",
    "odeint_tangent_t": "second derivatives through odeint",
}
# scipy.linalg's adjoints and tangents have no rules yet: second derivatives through any
# of its functions are refused, naming the helper (those served by numpy's helpers,
# det, cholesky and pinv, follow numpy's: refused where numpy's are)
LINALG_HELPERS = {
    name: "second derivatives through scipy.linalg"
    for name in [
        "uninv",
        "inv_tangent",
        "unsolve_a",
        "unsolve_b",
        "solve_tangent",
        "unsolve_triangular_a",
        "unsolve_triangular_b",
        "solve_triangular_tangent",
        "uncho_factor",
        "cho_factor_tangent",
        "uncho_solve_b",
        "uncho_solve_factor",
        "cho_solve_tangent",
        "unlu_factor",
        "lu_factor_tangent",
        "unlu_solve_b",
        "unlu_solve_factor",
        "lu_solve_tangent",
        "unexpm",
        "expm_frechet",
        "uneigh",
        "eigh_tangent",
    ]
}
NO_RULE_HELPERS.update(LINALG_HELPERS)
LINALG_REFUSAL = "no derivative rule for (un|ops|forward_ops|scipy_ops|\\w+_tangent|expm_frechet)"


def _rng(*key):
    return np.random.default_rng(zlib.crc32(" ".join(map(str, key)).encode()))


def _random_like(rng, arg):
    if isinstance(arg, np.ndarray):
        return rng.standard_normal(arg.shape)
    return float(rng.standard_normal())


def _flat(value):
    """The numbers of a gradient (a tuple of them for a tuple ``wrt``) as one vector."""
    parts = value if isinstance(value, tuple) else (value,)
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])


def _setup(r, wrt, what):
    args = _make(r)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    rng = _rng(what, r.id, wrt)
    tangents = tuple(_random_like(rng, args[i]) for i in indices)
    return args, indices, tangents, tangents if isinstance(wrt, tuple) else tangents[0]


def _second_order_refusal(r, wrt):
    """What differentiating ``r`` twice in ``wrt`` is refused for (a pattern of the
    message), or None: multivariate_normal in cov (its last argument before c), and
    ``t_logpdf_df`` (the third derivative of t.logpdf in df)."""
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    mvn = (stats.multivariate_normal.logpdf, stats.multivariate_normal.pdf)
    if any(t == m for t in r.targets for m in mvn) and len(r.args) - 1 in indices:
        return "unmvn_cov|does not differentiate its argument"
    if scipy_ops.t_logpdf_df in r.targets:
        return "t_logpdf_df_"
    return None


def _is_linalg(r):
    return all(getattr(t, "__module__", "").startswith("scipy.linalg") for t in r.targets)


def _refused_in_linalg(r, run):
    """Run ``run()``; for a scipy.linalg row, a refusal naming a helper without a rule is
    the documented outcome (None is returned), anything else is checked as usual."""
    if not _is_linalg(r):
        return run()
    try:
        return run()
    except TranspileError as error:
        assert re.search(LINALG_REFUSAL, str(error)), str(error)
        return None


CASES = [pytest.param(r, w, id=f"{r.id}-{_label(w)}") for r in ROWS for w in r.wrt]


# --------------------------------------------------------------------------
# jvp of every row


@pytest.mark.parametrize("r,wrt", CASES)
def test_jvp(r, wrt):
    args, indices, tangents, tangent = _setup(r, wrt, "jvp")
    pristine = copy.deepcopy(args)
    out, tangent_out = call_twice(jvp(r.func, wrt=wrt), *args, copy.deepcopy(tangent))
    fd.assert_same(list(args), list(pristine), path="argument")
    np.testing.assert_allclose(out, r.func(*copy.deepcopy(args)), rtol=1e-12)
    expected = fd.numeric_jvp(r.func, args, indices, tangents)
    fd.assert_close(np.asarray(tangent_out, np.float64), expected, rtol=r.rtol, atol=r.atol)


# --------------------------------------------------------------------------
# Second order: hvp (reverse over reverse) and jvp of the gradient, every row


@pytest.mark.parametrize("r,wrt", CASES)
def test_hvp(r, wrt):
    args, indices, tangents, tangent = _setup(r, wrt, "hvp")
    refusal = _second_order_refusal(r, wrt)
    if refusal is not None:
        with pytest.raises(TranspileError, match=refusal):
            hvp(r.func, wrt=wrt)(*args, tangent)
        return
    g = grad(r.func, wrt=wrt)
    got = _refused_in_linalg(
        r, lambda: call_twice(hvp(r.func, wrt=wrt), *args, copy.deepcopy(tangent))
    )
    if got is None:
        return
    expected = fd.numeric_jvp(lambda *a: _flat(g(*a)), args, indices, tangents)
    for i, part in zip(indices, got if isinstance(wrt, tuple) else (got,)):
        assert np.shape(part) == np.shape(args[i]), f"hvp[{i}]: shape {np.shape(part)}"
    fd.assert_close(_flat(got), expected, rtol=1e-5, atol=1e-7, path="hvp vs fd of grad")


@pytest.mark.parametrize("r,wrt", CASES)
def test_jvp_of_the_gradient(r, wrt):
    args, indices, tangents, tangent = _setup(r, wrt, "jvp-grad")
    g = grad(r.func, wrt=wrt)
    refusal = _second_order_refusal(r, wrt)
    if refusal is not None:
        with pytest.raises(TranspileError, match=refusal):
            jvp(g, wrt=wrt)(*args, tangent)
        return
    result = _refused_in_linalg(
        r, lambda: call_twice(jvp(g, wrt=wrt), *args, copy.deepcopy(tangent))
    )
    if result is None:
        return
    _, tangent_out = result
    expected = fd.numeric_jvp(lambda *a: _flat(g(*a)), args, indices, tangents)
    fd.assert_close(_flat(tangent_out), expected, rtol=1e-5, atol=1e-7, path="jvp of grad vs fd")


# --------------------------------------------------------------------------
# hessian: symmetric, and each column the differences of the gradient


def _row(func, label):
    found = [r for r in ROWS if r.func is func and label in r.id]
    assert found, f"no row of {func.__name__} with {label!r}"
    return found[0]


HESSIAN_CASES = [
    (_row(sf.lse_axis, ",1)"), 0),
    (_row(sf.lse_b, "pos[4]"), 0),
    (_row(sf.lse_b, "pos[4]"), 1),
    (_row(sf.lse_b, "pos[4]"), (0, 1)),
    (_row(sf.softmax_axis, ""), 0),
    (_row(sf.log_softmax_all, ""), 0),
    (_row(sf.norm_logpdf, "normal[3,4]"), (0, 1, 2)),
    (_row(sf.t_logpdf, "normal[3,4]"), (0, 1)),
    (_row(sf.t_logpdf_kw, ""), (0, 1)),
    (_row(sf.gamma_logpdf_kw, ""), (0, 1, 2)),
    (_row(sf.xlogy, "normal[3,4],pos[4]"), (0, 1)),
    (_row(sf.gammaln, "pos[3,4]"), 0),
    (_row(sf.expit, "normal[3,4]"), 0),
    (_row(sf.mvn_logpdf, "normal[5,3]"), (0, 1)),
]


@pytest.mark.parametrize(
    "r,wrt", [pytest.param(r, w, id=f"{r.id}-{_label(w)}") for r, w in HESSIAN_CASES]
)
def test_hessian_is_symmetric_and_matches_differences_of_the_gradient(r, wrt):
    args = _make(r)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    sizes = [np.size(args[i]) for i in indices]
    blocks = hessian(r.func, wrt=wrt)(*args)
    if not isinstance(wrt, tuple):
        blocks = ((blocks,),)
    for (i, a), row in zip(enumerate(indices), blocks):
        for (j, b), block in zip(enumerate(indices), row):
            assert np.shape(block) == np.shape(args[a]) + np.shape(args[b]), (i, j)
    full = np.block(
        [[np.reshape(b, (m, n)) for b, n in zip(row, sizes)] for row, m in zip(blocks, sizes)]
    )
    np.testing.assert_allclose(full, full.T, rtol=1e-9, atol=1e-9 * np.max(np.abs(full)))
    g = grad(r.func, wrt=wrt)
    total = sum(sizes)
    columns = []
    for k in range(total):
        direction = np.zeros(total)
        direction[k] = 1.0
        pieces = np.split(direction, np.cumsum(sizes)[:-1])
        tangents = [
            np.reshape(p, np.shape(args[i])) if isinstance(args[i], np.ndarray) else float(p[0])
            for p, i in zip(pieces, indices)
        ]
        columns.append(fd.numeric_jvp(lambda *a: _flat(g(*a)), args, indices, tangents))
    fd.assert_close(full, np.stack(columns, axis=1), rtol=1e-5, atol=1e-7, path="hessian")


# --------------------------------------------------------------------------
# grad(grad(f)) and grad(grad(grad(f))) of functions of one number


SCALAR_FUNCS = [
    sf.s_lse,
    sf.s_lse_weights,
    sf.s_softmax,
    sf.s_log_softmax,
    sf.s_norm,
    sf.s_t,
    sf.s_gamma,
    sf.s_special,
    sf.s_mvn,
]


def _derivative_fd(f, s):
    return float(fd.numeric_jvp(f, (s,), (0,), (1.0,)))


@pytest.mark.parametrize("f", SCALAR_FUNCS, ids=lambda f: f.__name__)
def test_second_derivative_of_a_number(f):
    s = 1.3
    d1 = grad(f)
    d2 = grad(d1)
    for _ in range(2):
        np.testing.assert_allclose(d2(s), _derivative_fd(d1, s), rtol=1e-6, atol=1e-8)


THIRD_ORDER = [f for f in SCALAR_FUNCS if f is not sf.s_t]


@pytest.mark.parametrize("f", THIRD_ORDER, ids=lambda f: f.__name__)
def test_third_derivative_of_a_number(f):
    """The rules of the helpers call only functions with rules: a third derivative
    needs nothing more (multivariate_normal in x and mean, logsumexp in a and b)."""
    s = 1.3
    d2 = grad(grad(f))
    d3 = grad(d2, allow_unused=f is sf.s_mvn)  # quadratic in x: d2 is constant, d3 zero
    np.testing.assert_allclose(d3(s), _derivative_fd(d2, s), rtol=1e-5, atol=1e-7)


def test_third_derivative_of_t_in_df_is_refused_by_name():
    d2 = grad(grad(sf.s_t))
    with pytest.raises(TranspileError, match="t_logpdf_df_"):
        grad(d2)(1.3)


# --------------------------------------------------------------------------
# Coverage: a forward rule for every scipy rule, a rule for every helper a gradient
# calls, or a documented reason


def _templates():
    for family in optional_families():
        for decl, template in declarations(family):
            if template is not None:
                yield decl, template


def test_every_scipy_rule_has_a_forward_rule():
    missing, needless = [], []
    for decl, template in _templates():
        reverse_only = all(o in REVERSE_ONLY for o in decl.objects)
        has_forward = parse_template(template).forward is not None
        if not has_forward and not reverse_only:
            missing.append(template.__name__)
        if has_forward and reverse_only:
            needless.append(template.__name__)
    assert not missing, f"scipy rules without a forward rule: {missing}"
    assert not needless, f"listed as reverse-only, yet with a forward rule: {needless}"


def _helper_calls(template):
    """The names ``X`` of the ``scipy_ops.X(...)`` calls in a template (reverse and
    forward lines)."""
    return set(re.findall(r"scipy_ops\.(\w+)\(", inspect.getsource(template)))


def test_every_helper_a_scipy_template_calls_has_a_rule_or_a_reason():
    reg = registry()
    without = set()
    for _, template in _templates():
        for name in _helper_calls(template):
            helper = getattr(scipy_ops, name)
            if getattr(helper, "declared", None) is None:  # a scipy function (digamma)
                assert reg.declaration(helper) is not None, f"{name}: neither helper nor rule"
            elif reg.declaration(helper) is None:
                without.add(name)
    assert without == set(NO_RULE_HELPERS), (
        f"helpers without a rule: {sorted(without)}; documented: {sorted(NO_RULE_HELPERS)}"
    )


def test_the_refusals_are_documented_in_the_module_docstrings():
    assert "unmvn_cov" in scipy_stats.__doc__ and "t_logpdf_df" in scipy_stats.__doc__
    assert "second derivatives" in scipy_linalg.__doc__
    assert "second derivatives" in scipy_integrate.__doc__


@pytest.mark.parametrize(
    "func, args, wrt",
    [
        (odeint_funcs.decay_loss, (np.array([1.0, -0.5]), 0.8), 0),
        (odeint_funcs.decay_loss, (np.array([1.0, -0.5]), 0.8), 1),
        (odeint_funcs.oscillator_loss, (np.array([1.0, -0.3]), np.array([2.0, 0.3, 0.5])), 1),
        (odeint_funcs.scaled_times_loss, (np.array([1.0, -0.5]), 0.8, 1.3), 2),
    ],
)
def test_jvp_through_odeint_against_differences(func, args, wrt):
    # forward sensitivities: the augmented system integrated with the tangent
    rng = np.random.default_rng(4)
    tangent = rng.normal(size=np.shape(args[wrt])) if np.ndim(args[wrt]) else 0.7
    forward = jvp(func, wrt=wrt)
    expected = fd.numeric_jvp(func, args, (wrt,), (tangent,), step=STEP)
    for _ in range(2):
        value, got = forward(*args, tangent)
        assert np.isclose(value, func(*args))
        fd.assert_close(got, expected, rtol=2e-5, atol=1e-7)


# --------------------------------------------------------------------------
# The sensitivity helpers of odeint, given this library's jvp as a template would.
# odeint's own error (rtol = atol = 1e-11) is amplified by 1 / step in a difference:
# a larger step than the default keeps it below 1e-7, and the O(step^4) truncation too.

STEP = 1e-3


def _trajectory(y0, k, horizon):
    times = horizon * odeint_funcs.TIMES
    return integrate.odeint(
        odeint_funcs.oscillator,
        y0,
        times,
        args=(k,),
        rtol=odeint_funcs.TOL,
        atol=odeint_funcs.TOL,
    )


def test_odeint_sensitivity_helpers_against_differences():
    y0, theta, horizon = np.array([1.0, -0.3]), np.array([2.0, 0.3, 0.5]), 1.2
    ys = _trajectory(y0, theta, horizon)
    times = horizon * odeint_funcs.TIMES
    options = {"rtol": odeint_funcs.TOL, "atol": odeint_funcs.TOL}
    ty0, ttheta = np.array([0.4, -1.1]), np.array([0.3, -0.2, 0.7])
    common = (ys, odeint_funcs.oscillator, y0, times, (theta,), jvp)
    got = scipy_ops.odeint_tangent_y0(ty0, *common, **options)
    expected = fd.numeric_jvp(_trajectory, (y0, theta, horizon), (0,), (ty0,), step=STEP)
    fd.assert_close(got, expected, rtol=2e-5, atol=1e-7, path="y0")
    got = scipy_ops.odeint_tangent_args((ttheta,), *common, **options)
    expected = fd.numeric_jvp(_trajectory, (y0, theta, horizon), (1,), (ttheta,), step=STEP)
    fd.assert_close(got, expected, rtol=2e-5, atol=1e-7, path="args")
    # moving the times: horizon moves every t[i] by t[i] / horizon, the first one too
    times0 = times + 0.25
    ys0 = integrate.odeint(odeint_funcs.oscillator, y0, times0, args=(theta,), **options)

    def shifted(h):
        t = h * odeint_funcs.TIMES + 0.25
        return integrate.odeint(odeint_funcs.oscillator, y0, t, args=(theta,), **options)

    tt = odeint_funcs.TIMES
    got = scipy_ops.odeint_tangent_t(
        tt, ys0, odeint_funcs.oscillator, y0, times0, (theta,), jvp, **options
    )
    fd.assert_close(
        got, fd.numeric_jvp(shifted, (horizon,), (0,), (1.0,), step=STEP), rtol=2e-5, atol=1e-7
    )
    tt = tt + 1.0  # the first time moves too
    got = scipy_ops.odeint_tangent_t(
        tt, ys0, odeint_funcs.oscillator, y0, times0, (theta,), jvp, **options
    )

    def moved(e):
        t = times0 + e * tt
        return integrate.odeint(odeint_funcs.oscillator, y0, t, args=(theta,), **options)

    fd.assert_close(
        got, fd.numeric_jvp(moved, (0.0,), (0,), (1.0,), step=STEP), rtol=2e-5, atol=1e-7
    )
