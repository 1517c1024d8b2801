"""Structure of the generated gradient source.

These tests read ``transpile.source(grad(f))`` for functions in
``tests/structure_funcs.py`` and check what the design promises about it:
stop_gradient regions and dead code leave no trace, names are readable and
deterministic, first writes are plain assignments, every adjoint block is
labelled, loops reverse into loops, and loops save only what the adjoint
reads. Wherever a structural claim has a numeric consequence, the gradient is
also checked against an independent reference (a closed form, or central
finite differences from ``tests/fd.py``).
"""

import ast
import inspect
import re
import textwrap

import fd
import numpy as np
import pytest
import structure_funcs as S

from transpile import grad, pipeline, source

RUNTIME_NAMES = {"np", "ops", "tape", "Tape", "range", "reversed", "len"}


def rng():
    return np.random.default_rng(1234)


def src(func, wrt=0):
    return str(source(grad(func, wrt=wrt)))


def adjoint_part(text):
    """The lines of the adjoint sweep: from the seed of the output cotangent, or (when
    the output is a scalar by construction and the seed is a folded constant) from the
    first ``# grad of:`` block."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "ops.seed(" in line or "# grad of:" in line)
    if "# grad of:" in lines[start]:
        return "\n".join(lines[start:])
    return "\n".join(lines[start + 1 :])


def names_in(text):
    """Identifiers (Name nodes and function names) in a piece of Python source."""
    tree = ast.parse(text)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.FunctionDef):
            out.add(node.name)
            out.update(a.arg for a in node.args.args)
    return out


def user_names(func):
    return names_in(textwrap.dedent(inspect.getsource(func)))


def pushed_names(text):
    """Names whose values (or shapes: ``tape.push(ops.shape_of(name))``) go on the tape."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "push"
        ):
            out |= {
                n.id
                for arg in node.args
                for n in ast.walk(arg)
                if isinstance(n, ast.Name) and n.id not in RUNTIME_NAMES
            }
    return out


def popped_but_unread(text):
    """Names restored with ``name = tape.pop()`` that the adjoint loop never reads."""
    tree = ast.parse(text)
    bad = set()
    for loop in ast.walk(tree):
        if not (
            isinstance(loop, ast.For)
            and isinstance(loop.iter, ast.Call)
            and getattr(loop.iter.func, "id", None) == "reversed"
        ):
            continue
        popped, read = set(), set()
        for node in ast.walk(loop):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "pop"
            ):
                popped.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                read.add(node.id)
        bad |= popped - read
    return bad


# --------------------------------------------------------------------------
# (a) stop_gradient: no derivative code for the stopped expression


def test_stopped_cosh_has_no_sinh():
    assert "sinh" not in src(S.cosh_stopped)
    assert "np.sinh" in src(S.cosh_free)


def test_stopped_cosh_gradient_treats_value_as_constant():
    x = rng().standard_normal(5)
    got = grad(S.cosh_stopped)(x)
    reference = grad(S.cosh_const)(x, np.cosh(x))
    np.testing.assert_allclose(got, reference, rtol=1e-12)
    np.testing.assert_allclose(got, np.cosh(x) * np.cos(x), rtol=1e-12)
    # and the unstopped version is different: d/dx cosh(x) sin(x)
    free = grad(S.cosh_free)(x)
    np.testing.assert_allclose(free, np.sinh(x) * np.sin(x) + np.cosh(x) * np.cos(x), rtol=1e-12)
    fd.assert_close(free, fd.numeric_grad(S.cosh_free, (x,), (0,))[0], rtol=1e-7)


# --------------------------------------------------------------------------
# (b) nothing whose only route to the output passes through stop_gradient gets an adjoint


def test_no_adjoint_upstream_of_stop_gradient():
    text = src(S.exp_stopped)
    names = names_in(text)
    assert "da" not in names
    assert "db" not in names  # b is a constant: it gets no adjoint either
    temp = re.search(r"(\w+) = a \* 2", pipeline.dump(S.exp_stopped, (0,), "normalize")).group(1)
    assert f"d{temp}" not in names and f"d_{temp.lstrip('_')}" not in names
    adjoint = adjoint_part(text)
    assert not re.search(r"\ba\b", adjoint), "the adjoint reads `a`, a value only stopped"
    assert "np.exp" not in adjoint
    assert "grad of: a = " not in text and "grad of: b = " not in text
    assert text.count("np.exp(") == 1  # the primal computation only


def test_no_adjoint_upstream_of_stop_gradient_numeric():
    x = rng().standard_normal(4)
    got = grad(S.exp_stopped)(x)
    np.testing.assert_allclose(got, grad(S.exp_const)(x, np.exp(x) * 2), rtol=1e-12)
    np.testing.assert_allclose(got, 2 * np.exp(x), rtol=1e-12)


def test_stopped_max_in_logsumexp():
    text = src(S.logsumexp_stopped)
    assert "unreduce_extreme" not in text  # no adjoint for np.max
    assert "dm" not in names_in(text)
    x = rng().standard_normal(6)
    p = np.exp(x - x.max())
    np.testing.assert_allclose(grad(S.logsumexp_stopped)(x), p / p.sum(), rtol=1e-12)


# --------------------------------------------------------------------------
# (c) dead code


def test_unused_intermediate_is_gone():
    text = src(S.with_unused)
    assert "unused" not in names_in(text)
    assert "np.sin(" not in text
    x = rng().standard_normal(4)
    np.testing.assert_allclose(grad(S.with_unused)(x), np.exp(x) * (1 + x), rtol=1e-12)


# --------------------------------------------------------------------------
# (d) readable, deterministic names


def allowed_names(func):
    user = user_names(func)
    allowed = set(RUNTIME_NAMES) | user | {f"d{u}" for u in user} | {f"d{func.__name__}"}
    return allowed


def unexpected_names(func, text):
    allowed = allowed_names(func)
    user = user_names(func)
    bad = []
    for n in sorted(names_in(text)):
        if n in allowed or re.fullmatch(r"d?_t\d+|g\d+", n):  # temporaries, their adjoints
            continue
        # a re-assigned user variable gets a version: h2, dh2
        m = re.fullmatch(r"d?(\w*?)_?(\d+)", n)
        if m and m.group(1) in user:
            continue
        bad.append(n)
    return bad


@pytest.mark.parametrize(
    "func, wrt",
    [(S.mlp, (0, 1, 3)), (S.reassigned, (0, 1)), (S.tanh_rnn, (0, 1)), (S.elman, (0, 3))],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_naming_are_readable(func, wrt):
    text = src(func, wrt)
    assert unexpected_names(func, text) == [], text
    params = list(inspect.signature(func).parameters)
    for i in wrt:
        assert f"d{params[i]}" in names_in(text)


def test_adjoint_of_user_variable_is_d_name():
    text = src(S.mlp)
    names = names_in(text)
    assert {"dh", "dx", "dout"} <= names
    assert re.search(r"^    dh = ", text, re.MULTILINE)


def test_generation_is_deterministic():
    for func in (S.mlp, S.reassigned, S.tanh_rnn, S.elman):
        first = pipeline.dump(func, (0,), "emit")
        second = pipeline.dump(func, (0,), "emit")
        assert first == second
        assert first == src(func)


# --------------------------------------------------------------------------
# (e) first write instead of accumulate


def test_first_write_is_an_assignment():
    text = src(S.one_use)
    assert not re.search(r"^\s*(\w+) = \1 \+", text, re.MULTILINE), text
    assert "zeros_like" not in text
    assert "+=" not in text
    x, w = rng().standard_normal(4), rng().standard_normal(4)
    z = np.sin(x) * w
    np.testing.assert_allclose(grad(S.one_use)(x, w), np.exp(z) * w * np.cos(x), rtol=1e-12)


# --------------------------------------------------------------------------
# (f) each adjoint block is labelled with the user's line


def test_adjoint_blocks_have_grad_of_comments():
    text = src(S.mlp, wrt=(0, 1, 2, 3))
    comments = re.findall(r"# grad of: (.*)", text)
    assert comments == [
        "return np.mean(out * out)",
        "out = np.tanh(h @ W2)",
        "h = np.tanh(x @ W1 + b1)",
    ]
    # every adjoint statement sits under some comment
    adjoint = adjoint_part(text).splitlines()
    assert adjoint[0].strip().startswith("# grad of:")


def test_mlp_gradient_matches_finite_differences():
    r = rng()
    args = (
        r.standard_normal((4, 3)),
        r.standard_normal((3, 5)),
        r.standard_normal(5),
        r.standard_normal((5, 2)),
    )
    got = grad(S.mlp, wrt=(0, 1, 2, 3))(*args)
    fd.assert_close(got, fd.numeric_grad(S.mlp, args, (0, 1, 2, 3)), rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# (g) a loop's adjoint is a loop


def test_loop_adjoint_is_reversed_loop():
    text = src(S.tanh_rnn, wrt=(0, 1))
    assert re.search(r"^\s*for t in reversed\(", text, re.MULTILINE), text
    assert text.count("for ") == 2  # one forward, one backward


def loop_args():
    r = rng()
    return r.standard_normal(3) * 0.5, r.standard_normal((3, 3)) * 0.5, 4


def test_tanh_rnn_gradient():
    args = loop_args()
    got = grad(S.tanh_rnn, wrt=(0, 1))(*args)
    fd.assert_close(got, fd.numeric_grad(S.tanh_rnn, args, (0, 1)), rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# (h) loops push only what the adjoint reads


def test_rnn_pushes_only_h():
    text = src(S.tanh_rnn, wrt=(0, 1))
    assert pushed_names(text) == {"h"}, text


def test_accumulating_loop_records_only_a_shape():
    """s = s + x[t] * 2.0: the adjoint reads only s's shape (for unbroadcast), so the
    loop records that shape, never the array."""
    text = src(S.scaled_sum, wrt=0)
    pushes = [line.strip() for line in text.splitlines() if "tape.push(" in line]
    assert all("shape_of(" in p for p in pushes), text


@pytest.mark.parametrize("wrt", [0, 1])
def test_accumulating_loop_gradient(wrt):
    r = rng()
    s, x, n = r.standard_normal(3), r.standard_normal((4, 3)), 4
    got = grad(S.scaled_sum, wrt=wrt)(s, x, n)
    expected = np.ones(3) if wrt == 0 else np.full((4, 3), 2.0)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "func, wrt",
    [
        (S.tanh_rnn, (0, 1)),
        (S.scaled_sum, 0),
        (S.scaled_sum, 1),
        (S.elman, (0, 3)),
    ],
    ids=["tanh_rnn", "scaled_sum_s", "scaled_sum_x", "elman"],
)
def test_every_popped_value_is_read(func, wrt):
    text = src(func, wrt)
    assert popped_but_unread(text) == set(), text


def test_elman_pushes_only_what_adjoint_reads():
    """Whole values only for h (y = h * 2.0 the reverse step computes again); the
    matrix-product temporaries only as shapes."""
    text = src(S.elman, wrt=("h0", "Wh"))
    whole = {
        line.split("tape.push(")[1].rstrip(")")
        for line in text.splitlines()
        if "tape.push(" in line and "shape_of(" not in line
    }
    assert whole == {"h"}, text
    assert text.split("reversed(")[1].count("\n        y = h * 2.0\n") == 1, text
    assert all(re.fullmatch(r"_t\d+", n) for n in pushed_names(text) - whole), text


def elman_args():
    r = rng()
    return (
        r.standard_normal(4) * 0.5,
        r.standard_normal((5, 3)),
        r.standard_normal((3, 4)) * 0.5,
        r.standard_normal((4, 4)) * 0.5,
        r.standard_normal(4) * 0.1,
    )


def test_elman_gradient():
    args = elman_args()
    got = grad(S.elman, wrt=(0, 1, 2, 3, 4))(*args)
    fd.assert_close(got, fd.numeric_grad(S.elman, args, (0, 1, 2, 3, 4)), rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# array writes in straight-line code save only what the adjoint reads


def test_straight_line_slot_writes_use_no_tape():
    text = src(S.slot_writes)
    assert "tape" not in text and "Tape" not in text, text
    x = rng().standard_normal(4)
    expected = np.concatenate([[4.0 * x[0]], np.sin(x[1:]) + x[1:] * np.cos(x[1:])])
    np.testing.assert_allclose(grad(S.slot_writes)(x), expected, rtol=1e-12)


def test_overwritten_slot_that_adjoint_reads_is_restored():
    x = rng().standard_normal(4)
    pristine = x.copy()
    got = grad(S.slot_old_value_needed)(x)
    # f = sum(x**2 * y) with y = x except y[0] = 0: d/dx_i = 3 x_i^2 (i > 0), 0 for i = 0
    expected = 3.0 * x * x
    expected[0] = 0.0
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_array_equal(x, pristine)


# --------------------------------------------------------------------------
# source(g) is the code that runs: executing it reproduces g


def exec_source(func, g):
    """Execute ``source(g)`` in ``func``'s module namespace plus the runtime names."""
    from transpile_runtime import ops
    from transpile_runtime.tape import Tape

    ns = dict(vars(inspect.getmodule(func)))
    ns.update(np=np, ops=ops, Tape=Tape)
    exec(compile(str(source(g)), "<source>", "exec"), ns)
    return ns[g.__name__]


@pytest.mark.parametrize(
    "func, make_args, wrt",
    [
        (
            S.mlp,
            lambda r: (
                r.standard_normal((4, 3)),
                r.standard_normal((3, 5)),
                r.standard_normal(5),
                r.standard_normal((5, 2)),
            ),
            (0, 1, 2, 3),
        ),
        (S.tanh_rnn, lambda r: (r.standard_normal(3), r.standard_normal((3, 3)) * 0.5, 3), (0, 1)),
        (S.elman, lambda r: elman_args(), (0, 3)),
        (S.calls_layer_once, lambda r: (r.standard_normal(4),), 0),
        (S.calls_layer_twice, lambda r: (r.standard_normal(4),), 0),
    ],
    ids=["mlp", "tanh_rnn", "elman", "calls_layer_once", "calls_layer_twice"],
)
def test_source_reproduces_gradient(func, make_args, wrt):
    args = make_args(rng())
    g = grad(func, wrt=wrt)
    again = exec_source(func, g)
    fd.assert_close(again(*args), g(*args), rtol=0, atol=0)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = fd.numeric_grad(func, args, indices)
    fd.assert_close(
        g(*args), expected if isinstance(wrt, tuple) else expected[0], rtol=1e-6, atol=1e-9
    )
