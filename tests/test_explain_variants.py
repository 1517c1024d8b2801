"""``explain(g)`` names the line that keeps a gradient from having shape variants.

A ``while`` loop, a value-dependent shape (``np.unique``, a boolean mask) and a
branch each make the body ineligible at transpile time (``fixed_shapes.refusal``):
that line, and no other, is reported with status ``refused`` (or, where it has an
adjoint, ``active`` with a ``no shape variant:`` remark), its reason in ``variant``;
the other lines keep the statuses they have without it. A function that does get
variants reports no such line. Each gradient is checked against central finite
differences on its first call and on a later one (the one a variant would run).
"""

import explain_funcs as E
import fd
import gast
import numpy as np
import pytest

from transpile import explain, grad, pipeline, value_and_grad, vjp
from transpile.backend import fixed_shapes, specialize

W = np.array([0.3, -0.7, 1.1, 0.5])
X = np.array([1.0, -2.0, 3.0, 1.0])


def by_line(explanation, func):
    return {line.lineno: line for line in explanation if line.function == func.__name__}


def check_gradient(g, func, args=(W, X), reference=None):
    """``g(*args)`` against central differences of ``reference`` (``func`` with what
    it stops held fixed; ``func`` itself by default), on three calls."""
    (want,) = fd.numeric_grad(reference or func, args, (0,))
    for _ in range(3):  # the first call (the probe's), the second, a later one
        fd.assert_close(g(*args), want, rtol=1e-6, atol=1e-9)


def expect(func, refused, why, statuses, reference=None):
    """``explain(grad(func))`` with and without example arguments: the line
    ``refused`` names ``why``; every line has the status in ``statuses``."""
    g = grad(func)
    at = E.line_of(func, refused)
    for ex in (explain(g), explain(g, W, X)):
        lines = by_line(ex, func)
        assert {n: line.status for n, line in lines.items()} == {
            E.line_of(func, text): status for text, status in statuses.items()
        }
        assert {n for n, line in lines.items() if line.variant} == {at}
        line = lines[at]
        assert line.variant == why
        assert f"no shape variant: {why}" in line.reason
        assert f"no shape variant: {why}" in str(ex)
        page = ex._repr_html_()
        assert "no variant</small>" in page
    assert ex.functions[0].note == (
        f"no shape variant is made: line {at} refuses it; the generic gradient's lines"
    )
    check_gradient(g, func, reference=reference)
    assert g.__transpile_dispatch__.current().variants == {}  # generic indeed
    return lines


def test_a_while_loop_refuses_variants():
    lines = expect(
        E.while_loop,
        "while k < 3:",
        "a while loop: its trip count is not part of the signature",
        {
            "y = np.sin(w * x)": "active",
            "k = 0": "inactive",
            "while k < 3:": "refused",
            "y = y * w": "active",
            "k = k + 1": "inactive",
            "return np.sum(y)": "active",
        },
    )
    line = lines[E.line_of(E.while_loop, "while k < 3:")]
    assert line.reason.endswith("; besides, inactive: does not depend on w")
    assert "<b>refused</b>" in explain(grad(E.while_loop))._repr_html_()


def test_np_unique_refuses_variants():
    expect(
        E.unique_values,
        "u = np.unique(x)",
        "np.unique: its result's shape is not declared to follow from its arguments' shapes",
        {
            "u = np.unique(x)": "refused",
            "z = np.sum(u) * w": "active",
            "return np.sum(z**2)": "active",
        },
    )


def test_a_boolean_mask_refuses_variants_on_a_line_that_has_an_adjoint():
    lines = expect(
        E.masked,
        "m = y[x > 0]",
        "an index that is not a constant, a shape or an integer parameter (a mask, an "
        "array of indices): its result's shape depends on values",
        {
            "y = np.tanh(w) * 2.0": "active",
            "m = y[x > 0]": "active",  # its adjoint is shown as well
            "return np.sum(m**2)": "active",
        },
    )
    line = lines[E.line_of(E.masked, "m = y[x > 0]")]
    assert line.reason.startswith("has an adjoint; no shape variant: an index")
    assert line.adjoint and any("add_at" in t for t in line.adjoint)


def test_a_data_dependent_branch_refuses_variants():
    expect(
        E.data_branch,
        "if np.sum(x) > 0:",
        "a branch: which way it goes depends on values",
        {
            "y = np.sin(w)": "active",
            "if np.sum(x) > 0:": "refused",
            "y = y * 2.0": "active",
            "return np.sum(y * x)": "active",
        },
    )


def test_a_function_with_variants_reports_no_such_line():
    g = grad(E.static_loop)
    check_gradient(g, E.static_loop)
    assert len(g.__transpile_dispatch__.current().variants) == 1  # made, and run
    for ex in (explain(g), explain(g, W, X)):
        assert not any(line.variant for line in ex)
        assert "refused" not in ex.status().values()
        assert "no shape variant" not in str(ex)
    assert ex.functions[0].note == "the shape variant for these arguments, one operation per line"
    assert ex.status() == {
        ("static_loop", E.line_of(E.static_loop, text)): status
        for text, status in {
            "y = np.sin(w) * x": "active",
            "for _ in range(3):": "inactive",  # its header's range reads no w
            "y = np.tanh(y * w)": "active",
            "return np.sum(y**2)": "active",
        }.items()
    }


def entry_generated(g):
    return g.__transpile_dispatch__.current().function.__transpile_generated__


def test_refusal_names_the_generated_statement_and_eligible_agrees():
    """``fixed_shapes.refusal_of`` (what explain reads) gives the statement and why;
    the stage, through ``eligible``, still gives the static parameters or None."""
    for func, kind in (
        (E.while_loop, gast.While),
        (E.data_branch, gast.If),
        (E.masked, gast.Assign),
    ):
        generated = entry_generated(grad(func))
        fn = pipeline.remake(generated.recipe, until="fixed_shapes")
        stmt, why = fixed_shapes.refusal_of(fn, generated.recipe.ctx)
        assert isinstance(stmt, kind) and why
        assert fn.static is None
    generated = entry_generated(grad(E.static_loop))
    fn = pipeline.remake(generated.recipe, until="fixed_shapes")
    assert fn.static == frozenset()
    assert fixed_shapes.refusal_of(fn, generated.recipe.ctx) == (None, None)


def test_a_statement_the_variant_stages_cannot_specialize_is_named(monkeypatch):
    """With example arguments, a line whose statement the variant stages refuse for
    them (``specialize.Unspecializable``, raised here on purpose for the first primal
    statement of one line, since the shapes of well-formed code always agree) is
    marked too, and the variant is back once they no longer refuse it."""
    g = grad(E.static_loop)
    check_gradient(g, E.static_loop)
    at = E.line_of(E.static_loop, "y = np.sin(w) * x")
    relative = at - (E.line_of(E.static_loop, "def static_loop") - 1)
    real = specialize.Specializer.statement

    def refusing(self, i, s):
        if getattr(s, "lineno", None) == relative:
            raise specialize.Unspecializable("shapes do not broadcast")
        return real(self, i, s)

    monkeypatch.setattr(specialize.Specializer, "statement", refusing)
    ex = explain(g, W, X)
    line = ex.at(at)
    assert line.status == "active" and line.adjoint
    why = "it could not be specialized for these arguments (shapes do not broadcast)"
    assert line.variant == why and line.reason == f"has an adjoint; no shape variant: {why}"
    assert {n.lineno for n in ex if n.variant} == {at}
    assert ex.functions[0].note.startswith(f"no shape variant is made: line {at} refuses it")
    assert not any(n.variant for n in explain(g))  # at transpile time nothing refused it
    monkeypatch.undo()
    assert explain(g, W, X).functions[0].note.startswith("the shape variant")
    check_gradient(g, E.static_loop)


@pytest.mark.parametrize("func, text", [(E.while_loop, "while k"), (E.masked, "m = y")])
def test_value_and_grad_and_vjp_mark_the_line_too(func, text):
    for make in (value_and_grad, vjp):
        ex = explain(make(func))
        assert {line.lineno for line in ex if line.variant} == {E.line_of(func, text)}


def test_a_stopped_line_that_refuses_variants_stays_stopped():
    """A user function called where nothing is differentiated has no declared shape:
    its line refuses variants, and keeps its status (what it says of the adjoint)."""
    lines = expect(
        E.stopped_user_call,
        "s = stop_gradient(",
        "sigmoid: its result's shape is not declared to follow from its arguments' shapes",
        {"s = stop_gradient(sigmoid(w * x))": "stopped", "return np.sum(s * w)": "active"},
        reference=lambda w, x: np.sum(E.sigmoid(W * X) * w),  # s held at its value
    )
    line = lines[E.line_of(E.stopped_user_call, "s = stop_gradient(")]
    assert line.reason.startswith("no adjoint: stop_gradient(...) makes it a constant; no shape")
