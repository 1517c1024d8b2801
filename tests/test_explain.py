"""``explain(g)`` line by line, and the warning for a ``wrt`` argument that is cut.

The expectations are written by hand from the functions in ``tests/explain_funcs.py``
(the notebooks' stop_gradient uses, an unused argument, an ``int()`` cut): which line
is stopped, which active, and nothing else. Where a line is active, the generated
lines said to be its adjoint must be lines of ``source(g)``; where it is stopped, the
generated code must hold no adjoint of what it defines.
"""

import subprocess
import sys
import warnings

import explain_funcs as E
import fd
import numpy as np
import pytest

from transpile import CutGradientWarning, explain, grad, jvp, pipeline, source, value_and_grad, vjp


def statuses(explanation, func):
    return {line.text: line.status for line in explanation if line.function == func.__name__}


def check_adjoint_lines(explanation, g):
    """Every active line shows generated lines of ``source(g)``; the others show none."""
    text = source(g).split("\n")
    stripped = {t.strip() for t in text}
    for line in explanation:
        if line.status == "active":
            assert line.adjoint, line
            assert set(line.adjoint) <= stripped, line
        else:
            assert not line.adjoint and not line.adjoint_lines, line


def test_em_e_step_is_stopped_and_the_m_step_active():
    g = grad(E.expected_complete_loglik)
    ex = explain(g)
    assert statuses(ex, E.expected_complete_loglik) == {
        "r = stop_gradient(responsibilities(params, X))": "stopped",
        "return np.sum(r * log_joint(params, X)) / X.shape[0]": "active",
    }
    # the log-joint, a small helper, is inlined (front/helpers.py): its lines are the
    # return line's, active, and it is no callee pair of its own
    assert statuses(ex, E.log_joint) == {} and "log_joint_fwd" not in source(g)
    # the E-step's function is called only inside stop_gradient: all of it stopped
    assert statuses(ex, E.responsibilities) == {
        "a = log_joint(params, X)": "stopped",
        "return np.exp(a - log_normalizer(a))": "stopped",
    }
    assert "stop_gradient(...)" in ex.at(E.line_of(E.expected_complete_loglik, "r =")).reason
    assert "dr" not in source(g) and "responsibilities_bwd" not in source(g)
    check_adjoint_lines(ex, g)


def test_em_written_out_reports_the_e_step_lines_before_the_stop():
    ex = explain(grad(E.em_written_out))
    assert statuses(ex, E.em_written_out) == {
        "a = log_joint(params, X)": "stopped",
        "r = np.exp(a - log_normalizer(a))": "stopped",
        "r = stop_gradient(r)": "stopped",
        "q = r * log_joint(params, X)": "active",
        "return np.sum(q) / X.shape[0]": "active",
    }
    stop_line = E.line_of(E.em_written_out, "r = stop_gradient(r)")
    first = ex.at(E.line_of(E.em_written_out, "a = log_joint"), "em_written_out")
    assert f"stop_gradient(...) at line {stop_line}" in first.reason


def test_cd_sampler_is_stopped():
    g = grad(E.cd_loss)
    ex = explain(g)
    assert statuses(ex, E.cd_loss) == {
        "v_model = stop_gradient(gibbs_chain(params, v_data, noise))": "stopped",
        "return np.mean(free_energy(params, v_data)) - np.mean(free_energy(params, v_model))": (
            "active"
        ),
    }
    chain = statuses(ex, E.gibbs_chain)
    assert chain.pop("for u_h, u_v in zip(noise[0], noise[1]):") == "control"
    assert set(chain.values()) == {"stopped"}
    # free_energy, a small helper, is inlined (front/helpers.py) into the active return
    assert statuses(ex, E.free_energy) == {} and "free_energy_fwd" not in source(g)
    check_adjoint_lines(ex, g)


def test_fgsm_attack_is_stopped():
    g = grad(E.adversarial_loss)
    ex = explain(g)
    assert statuses(ex, E.adversarial_loss) == {
        "x_adv = stop_gradient(fgsm(params, x, y, eps))": "stopped",
        "return 0.5 * loss(params, x, y) + 0.5 * loss(params, x_adv, y)": "active",
    }
    assert set(statuses(ex, E.fgsm).values()) == {"stopped"}
    # loss and predict, small helpers, are inlined (front/helpers.py) into the return
    assert statuses(ex, E.predict) == {} and "predict_fwd" not in source(g)
    check_adjoint_lines(ex, g)


def test_unused_argument():
    ex = explain(grad(E.unused_argument, wrt=("w", "b"), allow_unused=True))
    assert statuses(ex, E.unused_argument) == {
        "scale = np.sum(b * b)": "unused",
        "return np.sum(np.tanh(x @ w))": "active",
    }
    ex = explain(grad(E.unused_argument))  # w only: the b line does not depend on it
    line = ex.at(E.line_of(E.unused_argument, "scale ="))
    assert line.status == "inactive" and "does not depend on w" in line.reason


def test_int_cut_names_the_call_and_the_chain():
    ex = explain(grad(E.int_cut, allow_unused=True))
    assert statuses(ex, E.int_cut) == {
        "n = int(np.sum(w))": "integer",
        "scaled = x * n": "inactive",
        "return np.sum(scaled**2)": "inactive",
    }
    cut_line = E.line_of(E.int_cut, "n = int")
    scaled = ex.at(E.line_of(E.int_cut, "scaled ="))
    assert scaled.chain == ("w", "n", "scaled")
    assert f"int() at line {cut_line}" in scaled.reason


def test_comparison_and_dead_value():
    ex = explain(grad(E.comparison_cut, allow_unused=True))
    assert statuses(ex, E.comparison_cut) == {
        "mask = w > 0.0": "integer",
        "return np.sum(x * mask)": "inactive",
    }
    ex = explain(grad(E.dead_value))
    assert statuses(ex, E.dead_value) == {
        "wasted = np.exp(w)": "unused",
        "y = np.sin(x * w)": "active",
        "return np.sum(y)": "active",
    }


def test_text_and_html_show_every_line():
    ex = explain(grad(E.int_cut, allow_unused=True))
    text = str(ex)
    for line in ex:
        assert f"{line.lineno:>6}  {line.status:<9} {line.text}" in text
    page = ex._repr_html_()
    assert "n = int(np.sum(w))" in page and "<b>integer</b>" in page


def test_explain_of_value_and_grad_and_vjp():
    for make in (value_and_grad, vjp):
        ex = explain(make(E.dead_value))
        assert ex.at(E.line_of(E.dead_value, "wasted =")).status == "unused"
        assert ex.at(E.line_of(E.dead_value, "y =")).status == "active"


def test_explain_of_jvp_shows_tangent_lines():
    ex = explain(jvp(E.dead_value))
    line = ex.at(E.line_of(E.dead_value, "y ="))
    assert line.status == "active" and "tangent" in line.reason
    assert line.adjoint and all("_dot" in t for t in line.adjoint)
    assert ex.at(E.line_of(E.dead_value, "wasted =")).status == "unused"


def test_cli_explain():
    done = subprocess.run(
        [sys.executable, "-m", "transpile", f"{E.__file__}:int_cut", "--explain"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    line = E.line_of(E.int_cut, "n = int")
    assert f"{line:>6}  integer   n = int(np.sum(w))" in done.stdout


# -- the cut-gradient warning -------------------------------------------------------


@pytest.mark.parametrize(
    "func, wrt, says",
    [
        (E.int_cut, 0, "int() at line {}".format(E.line_of(E.int_cut, "n = int"))),
        (E.comparison_cut, 0, "a comparison at line"),
        (E.unused_argument, ("w", "b"), "'b'"),
        (E.never_read, 0, "it is never read"),
    ],
)
def test_a_cut_wrt_argument_warns_naming_it_and_the_line(func, wrt, says):
    with pytest.warns(CutGradientWarning, match="has no path to the output") as caught:
        g = grad(func, wrt=wrt)
    assert len(caught) == 1
    assert says in str(caught[0].message)
    assert caught[0].filename == __file__  # pointed at the grad() call
    args = {
        E.int_cut: (np.array([1.5, 2.0]), np.array([0.5, 1.0])),
        E.comparison_cut: (np.array([1.5, -2.0]), np.array([0.5, 1.0])),
        E.unused_argument: (np.ones(2), np.ones(3), np.ones((4, 2))),
        E.never_read: (np.ones(3), np.ones(3)),
    }[func]
    result = g(*args)
    cut = result[1] if isinstance(wrt, tuple) else result
    np.testing.assert_array_equal(cut, np.zeros_like(cut))  # zero indeed


def test_a_stop_gradient_cut_warns_naming_stop_gradient():
    with pytest.warns(CutGradientWarning, match=r"cut by stop_gradient\(\.\.\.\) at line"):
        grad(E.cd_loss, wrt="noise")


def test_allow_unused_silences_it_and_a_path_gives_none():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CutGradientWarning)
        grad(E.int_cut, allow_unused=True)
        value_and_grad(E.int_cut, allow_unused=True)
        vjp(E.int_cut, allow_unused=True)
        grad(E.int_cut, wrt=1)  # x reaches the output
        grad(E.unused_argument)  # w does; b is not differentiated
        grad(allow_unused=True)(E.int_cut)  # as a decorator


def test_value_and_grad_and_vjp_warn_too():
    for make in (value_and_grad, vjp):
        with pytest.warns(CutGradientWarning, match="'w'"):
            make(E.int_cut)


def test_with_example_arguments_the_adjoint_lines_are_the_variants():
    """The same statuses as the generic explanation, each active line's adjoint lines
    read from the shape variant that runs for the arguments (``source(g, *args)``)."""
    rng = np.random.default_rng(3)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((5, 3)), rng.standard_normal(5))
    g = grad(E.two_layer)
    generic, special = explain(g), explain(g, *args)
    assert special.status() == generic.status()
    assert (
        special.functions[0].note == "the shape variant for these arguments, one operation per line"
    )
    variant = {
        t.strip() for t in pipeline.dump(E.two_layer, (0,), "guard_return", args=args).split("\n")
    }
    active = [line for line in special if line.status == "active"]
    assert any(line.adjoint for line in active)
    for line in active:  # each shows its lines, or says they were folded into the next's
        assert set(line.adjoint) <= variant and (line.adjoint or "folded" in line.reason), line
    assert any(set(line.adjoint) != set(g_line.adjoint) for line, g_line in zip(special, generic))
    for _ in range(2):  # the variant explained is the one the gradient runs
        (want,) = fd.numeric_grad(E.two_layer, args, (0,))
        np.testing.assert_allclose(g(*args), want, rtol=1e-7, atol=1e-9)


def test_with_example_arguments_and_no_variant_the_generic_lines_and_why():
    xs = [np.ones(2), np.arange(2.0)]
    g = grad(E.sums_a_list)
    ex = explain(g, xs)
    assert ex.functions[0].note.startswith("no shape variant is made for these arguments")
    check_adjoint_lines(ex, g)
