"""User-given derivative rules: defvjp, rule templates, nondifferentiable.

Every gradient is checked against central finite differences (tests/fd.py) on a first
and a later call (the first call records shapes, a later one may run a variant). The
functions differentiated and the rules live in tests/user_rule_funcs.py; the rules
are registered here, once, for functions no other test uses.
"""

import math
import threading

import numpy as np
import pytest
import user_rule_funcs as u
from fd import assert_close, numeric_grad

import transpile
from transpile import (
    CutGradientWarning,
    TranspileError,
    defvjp,
    grad,
    nondifferentiable,
    rule,
    source,
)

defvjp(u.erf, u.erf_adjoint)
defvjp(math.atan, lambda g, ans, x: g / (1.0 + x * x))
defvjp(u.lgamma, u.digamma_adjoint)
defvjp(u.logistic, u.logistic_adjoint)
defvjp(u.hypot, u.hypot_x, u.hypot_y)
defvjp(u.huber, u.huber_adjoint, None)
defvjp(u.scaled, None, lambda g, ans, x, scale=1.0: g * x)
defvjp(u.Spring.energy, None, u.spring_energy_adjoint)
rule(u.softplus)(u.softplus_rule)
nondifferentiable(u.scale_of)

RNG = np.random.default_rng(0)


def check(f, args, wrt=0, rtol=1e-6, atol=1e-9):
    """The gradient of ``f`` agrees with finite differences on a first and a later call."""
    g = grad(f, wrt=wrt)
    wrt_indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = numeric_grad(f, args, wrt_indices)
    if not isinstance(wrt, tuple):
        expected = expected[0]
    for _ in range(3):
        assert_close(g(*args), expected, rtol=rtol, atol=atol)
    return g


def test_no_source_vectorize():
    g = check(u.erf_loss, (RNG.normal(size=5),))
    text = source(g)
    assert "erf_vjp_x(" in text
    assert "= erf(x)" in text  # the primal call stays as written


def test_no_source_builtin():
    check(u.builtin_loss, (0.7,))
    assert "atan_vjp_x(" in source(grad(u.builtin_loss))


def test_rule_replaces_an_undifferentiable_body():
    g = check(u.lgamma_loss, (RNG.uniform(0.5, 3.0, size=4),))
    text = source(g)
    assert "lgamma_vjp_x(" in text
    assert "lgamma_fwd" not in text


def test_rule_takes_precedence_over_the_body():
    g = check(u.logistic_loss, (RNG.normal(size=6),))
    text = source(g)
    assert "logistic_vjp_x(" in text
    assert "logistic_fwd" not in text and "np.exp" not in text


def test_several_arguments_and_broadcasting():
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    g = check(u.hypot_loss, (x, y), wrt=(0, 1))
    text = source(g)
    assert "hypot_vjp_x(" in text and "hypot_vjp_y(" in text
    assert "ops.unbroadcast(hypot_vjp_y(" in text
    check(u.hypot_loss, (x, y), wrt=1)
    check(u.hypot_loss, (x, 0.3), wrt=0)


def test_none_adjoint_for_a_constant_argument():
    check(u.huber_loss, (np.linspace(-2, 2, 7) + 0.05,))


def test_none_adjoint_for_a_differentiated_argument_is_refused():
    def loss(x, delta):
        return np.sum(u.huber(x, delta))

    with pytest.raises(TranspileError, match="no adjoint for its argument 'delta'"):
        grad(loss, wrt=1)


def test_keyword_arguments():
    x, w = RNG.normal(size=5), 0.8
    g = check(u.scaled_loss, (x, w), wrt=1)
    assert "scaled_vjp_scale(" in source(g)
    with pytest.raises(TranspileError, match="no adjoint for its argument 'x'"):
        grad(u.scaled_loss, wrt=0)


def test_through_functools_partial():
    x, y = np.linspace(-2, 2, 7) + 0.05, RNG.normal(size=3)
    g = check(u.partial_loss, (x, y), wrt=(0, 1))
    assert "huber_vjp_x(" in source(g) and "hypot_vjp_y(" in source(g)


def test_through_a_bound_method():
    check(u.spring_loss, (RNG.normal(size=4),))
    assert "energy_vjp_x(" in source(grad(u.spring_loss))


def test_template_rule_is_inlined():
    x, w = RNG.normal(size=5), RNG.normal(size=5)
    g = check(u.softplus_loss, (x, w), wrt=(0, 1))
    text = source(g)
    assert "_sigmoid(" in text  # the template's helper, bound from its module
    assert "softplus_fwd" not in text and "vjp" not in text


def test_template_rule_is_checked_when_declared():
    def bad(y, x):
        return x

    with pytest.raises(ValueError, match="d\\[arg\\] \\+= expression"):
        rule(u.late)(bad)


def test_nondifferentiable():
    x = RNG.normal(size=5)
    s = u.scale_of(x)

    def held(x):  # the function with scale_of(x) held constant
        return np.sum(np.tanh(x) / s)

    g = grad(u.normalized_loss)
    expected = numeric_grad(held, (x,), (0,))[0]
    for _ in range(2):
        assert_close(g(x), expected, rtol=1e-6, atol=1e-9)
    code = [line for line in source(g).splitlines() if not line.lstrip().startswith("#")]
    assert sum("scale_of" in line for line in code) == 1  # its call, and no adjoint


def test_nondifferentiable_contributes_exactly_zero():
    x, w = RNG.normal(size=4), RNG.normal(size=4)
    with pytest.warns(CutGradientWarning, match=r"'x'.*cut by scale_of\(\) at line"):
        g = grad(u.through_scale, wrt=(0, 1))
    s = u.scale_of(x)
    for _ in range(2):
        dx, dw = g(x, w)
        assert np.all(dx == 0.0)
        expected = numeric_grad(lambda w: np.sum(w * s) + np.sum(w * w), (w,), (0,))[0]
        assert_close(dw, expected, rtol=1e-6, atol=1e-9)


def test_rule_registered_after_a_gradient_was_made():
    x = RNG.normal(size=5)
    before = check(u.late_loss, (x,))
    assert "late_vjp" not in source(before)
    defvjp(u.late, u.late_adjoint)
    after = check(u.late_loss, (x,))
    assert "late_vjp_x(" in source(after)
    assert_close(before(x), after(x), rtol=1e-12, atol=1e-12)  # the old one still works


def test_threads_share_a_gradient():
    x = RNG.normal(size=(8, 5))
    g = grad(u.erf_loss)
    expected = numeric_grad(u.erf_loss, (x,), (0,))[0]
    errors = []

    def work():
        try:
            for _ in range(50):
                assert_close(g(x), expected, rtol=1e-6, atol=1e-9)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_registration_checks_its_arguments():
    with pytest.raises(TypeError):
        defvjp(u.late)
    with pytest.raises(TypeError):
        defvjp(u.late, u.late_adjoint, None)  # late takes one argument
    with pytest.raises(TypeError):
        defvjp(u.late, 3.0)
    with pytest.raises(TypeError):
        nondifferentiable(3.0)


def test_exported():
    for n in ("defvjp", "nondifferentiable", "rule", "d"):
        assert n in transpile.__all__


def test_in_a_loop():
    h, w = RNG.normal(size=4) * 0.5, RNG.normal(size=4)
    g = check(u.erf_loop, (h, w), wrt=(0, 1))
    assert "erf_vjp_x(" in source(g) and "tape" in source(g)


def test_in_a_called_function():
    check(u.outer_loss, (RNG.uniform(0.5, 3.0, size=4),))


def test_functions_passed_as_arguments():
    x = np.linspace(-1, 1, 5) + 0.05
    check(u.act_loss, (x,))  # a partial as the default
    g = grad(u.act_loss)
    expected = numeric_grad(lambda x: u.act_loss(x, u.erf), (x,), (0,))[0]
    for _ in range(2):  # an np.vectorize with a rule, passed
        assert_close(g(x, u.erf), expected, rtol=1e-6, atol=1e-9)
    check(u.erf_act_loss, (x,))


def test_value_and_grad_and_vjp():
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    value, dx = transpile.value_and_grad(u.erf_loss)(x)
    assert value == pytest.approx(u.erf_loss(x))
    assert_close(dx, numeric_grad(u.erf_loss, (x,), (0,))[0], rtol=1e-6, atol=1e-9)
    dout = RNG.normal(size=(3, 4))
    pullback = transpile.vjp(u.erf_map, wrt=(0, 1))
    expected = numeric_grad(lambda x, y: np.sum(dout * u.erf_map(x, y)), (x, y), (0, 1))
    for _ in range(2):
        assert_close(pullback(x, y, dout), expected, rtol=1e-6, atol=1e-9)
