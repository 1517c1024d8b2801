"""``grad(f, fuse=True)``: chains of elementwise operations in a shape variant evaluated
by one ``numexpr.evaluate`` call each (``transpile/fuse.py``).

Every gradient is checked on its first call (the generic code) and on later ones (the
variant, fused) against two references: the same gradient without ``fuse``, to 1e-12
relative to its largest entry (an entry where a gradient crosses zero carries no
relative precision of its own: the hand-written and the generated gradient of the
benchmark's chain differ there by 1e-10), and central finite differences (``fd``).
Arrays this small are fused with the size threshold monkeypatched to 1; one test
keeps the threshold and uses arrays above it.
"""

import re
import sys

import fd
import fuse_funcs as F
import numpy as np
import pytest
from test_random_programs import load, program

from transpile import buffers, fuse, grad, source, value_and_grad, vjp


@pytest.fixture
def small(monkeypatch):
    """Fuse arrays of any size (by default, only of at least 2**15 elements)."""
    pytest.importorskip("numexpr")
    monkeypatch.setattr(fuse, "MIN_SIZE", 1)


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def assert_same(fused, plain):
    """``fused`` equals the unfused gradient ``plain`` to 1e-12 relative to its scale."""
    for f, p in zip(_leaves(fused), _leaves(plain)):
        assert np.asarray(f).dtype == np.asarray(p).dtype
        np.testing.assert_allclose(f, p, rtol=1e-12, atol=1e-12 * np.max(np.abs(p)))


def checked(f, args, wrt=0, differences=True):
    """The fused variant's source, after checking three calls of ``grad(f, fuse=True)``
    against ``grad(f)`` and (with ``differences``) central differences."""
    plain, fused = grad(f, wrt=wrt), grad(f, wrt=wrt, fuse=True)
    expected = [plain(*args) for _ in range(2)]  # the generic result, then the variant's
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    reference = fd.numeric_grad(f, args, indices) if differences else None
    for call in range(3):
        got = fused(*args)
        assert_same(got, expected[min(call, 1)])
        if differences:
            fd.assert_close(tuple(_leaves(got)), reference, rtol=1e-6, atol=1e-9)
    return source(fused, *args)


def fused_lines(text):
    """``(comment, statement)`` for each numexpr call in ``text``."""
    lines = [line.strip() for line in text.splitlines()]
    return [(lines[i - 1], line) for i, line in enumerate(lines) if ".evaluate(" in line]


def rng():
    return np.random.default_rng(11)


# --------------------------------------------------------------------------
# What the fused variant computes and looks like


def test_a_chain_is_one_numexpr_call_under_its_statements(small):
    x = rng().uniform(0.2, 1.0, 7)
    text = checked(F.shown, (x,))
    fused = fused_lines(text)
    assert len(fused) == 2, text
    for comment, statement in fused:
        assert comment.startswith("# fused: "), text
        assert re.match(r"\w+ = numexpr\.evaluate\('[^']+', local_dict=\{", statement), text
    # the adjoint's statements are kept, in order, above the call that replaces them
    comment, statement = fused[-1]
    assert "b = np.cos(v2); dx = 1.0 * b; da = dv2 * x;" in comment, text
    assert comment.endswith("dx = dx + da * np.cos(x)"), text
    assert statement.startswith("dx = numexpr.evaluate('cos(v2) + dv2 * a + dv2 * x * cos(x)'")
    # a temporary fused code reads is named for good (``inline`` renumbers the others)
    assert "v2 = a * x + 1.0" in text  # two operations: left to numpy
    assert "a = np.sin(x)" in text  # read three times: a name of its own, one numpy call


def test_arrays_above_the_threshold_fuse():
    pytest.importorskip("numexpr")
    x = rng().uniform(0.2, 1.0, fuse.MIN_SIZE + 3)
    text = checked(F.chain, (x,), differences=False)
    assert len(fused_lines(text)) == 2, text


def test_arrays_below_the_threshold_are_left_to_numpy():
    pytest.importorskip("numexpr")
    x = rng().uniform(0.2, 1.0, 300)
    text = checked(F.chain, (x,))
    assert "numexpr" not in text
    assert text == source(grad(F.chain), x)


def test_a_variant_with_nothing_to_fuse_is_unchanged(small):
    x, W = rng().normal(size=(3, 4)), rng().normal(size=(4, 2))
    text = checked(F.nothing_to_fuse, (x, W))
    assert text == source(grad(F.nothing_to_fuse), x, W)
    assert "numexpr" not in text and "np.exp(x @ W)" in text


def test_float32_stays_float32(small):
    x = rng().uniform(0.2, 1.0, 9).astype(np.float32)
    plain, fused = grad(F.chain), grad(F.chain, fuse=True)
    expected = plain(x)
    reference = fd.numeric_grad(F.chain, (x,), (0,))[0]
    for _ in range(3):
        got = fused(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-5)
        np.testing.assert_allclose(got, reference, rtol=1e-4)
    text = source(fused, x)
    assert len(fused_lines(text)) == 2, text
    # an argument is passed as float32: a Python float would make numexpr compute in float64
    assert "'x': np.float32(x)" in text


def test_float32_with_a_python_float(small):
    x = rng().uniform(0.2, 1.0, 10).astype(np.float32)
    plain, fused = grad(F.scaled), grad(F.scaled, fuse=True)
    expected = plain(x, 0.7)
    for _ in range(3):
        got = fused(x, 0.7)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-5)
    text = source(fused, x, 0.7)
    assert "'k': np.float32(k)" in text
    assert "np.sign(x)" in text  # numexpr's sign is float64: numpy's stays
    assert not any("sign(" in statement for _, statement in fused_lines(text)), text


def test_a_python_float_argument(small):
    x = rng().uniform(0.2, 1.0, 11)
    text = checked(F.scaled, (x, 0.7))
    assert "'k': k" in text and "sign(x)" in text


def test_an_integer_argument(small):
    x, n = rng().uniform(0.2, 1.0, 12), np.arange(12) - 5
    text = checked(F.with_counts, (x, n))
    assert "numexpr.evaluate('(n * 2.0 + 1.0) * 3.0 - n'" in text, text
    assert "n ** 2.0" in text and "n ** 2.0" not in "".join(s for _, s in fused_lines(text))


def test_arguments_are_not_written_and_results_are_new(small):
    x, y = rng().uniform(0.2, 1.0, 12), rng().uniform(0.2, 1.0, 12)
    kept = x.copy(), y.copy()
    g = grad(F.two_outputs, wrt=(0, 1), fuse=True)
    results = [g(x, y) for _ in range(3)]
    assert ".evaluate(" in source(g, x, y)
    np.testing.assert_array_equal(x, kept[0])
    np.testing.assert_array_equal(y, kept[1])
    arrays = [a for r in results for a in r]
    for i, a in enumerate(arrays):
        assert a.flags.writeable and a.flags.owndata
        assert not np.shares_memory(a, x) and not np.shares_memory(a, y)
        assert not any(np.shares_memory(a, b) for b in arrays[i + 1 :])
    assert_same(results[-1], grad(F.two_outputs, wrt=(0, 1))(x, y))


def test_two_gradients(small):
    x, y = rng().uniform(0.2, 1.0, 13), rng().uniform(0.2, 1.0, 13)
    text = checked(F.two_outputs, (x, y), wrt=(0, 1))
    assert [s.split(" = ")[0] for _, s in fused_lines(text)] == ["u", "dy", "dx"], text


def test_names_written_twice(small):
    x = rng().uniform(0.2, 1.0, 14)
    text = checked(F.repeated, (x,))
    assert "a2 = numexpr.evaluate('a * a - cos(a)'" in text, text


# --------------------------------------------------------------------------
# Where a chain stops


def test_a_matrix_product_cuts_a_chain(small):
    x, W = rng().uniform(0.2, 1.0, (3, 5)), rng().normal(size=(5, 4))
    text = checked(F.through_matmul, (x, W))
    assert "z = h @ W" in text and "dh = dz @ W.T" in text, text
    assert [s.split(" = ")[0] for _, s in fused_lines(text)] == ["dz", "dx"], text
    assert "h = v2 * x + 1.0" in text  # two operations: left to numpy


def test_a_reduction_cuts_a_chain(small):
    x = rng().uniform(0.2, 1.0, 15)
    text = checked(F.through_sum, (x,))
    assert "s = np.sum(a * a)" in text and "np.add.reduce(" in text, text
    assert "'s': s" in text  # the sum is a number the next chain reads


def test_functions_numpy_computes_faster_cut_a_chain(small):
    x = rng().uniform(0.2, 1.0, 16)
    text = checked(F.cut_by_tanh, (x,))
    assert "b = np.tanh(a)" in text, text
    assert "tanh" not in "".join(s for _, s in fused_lines(text))


def test_names_numexpr_takes_for_its_own(small):
    x = rng().uniform(0.2, 1.0, 17)
    text = checked(F.named_like_numexpr, (x,))
    # the user's ``numexpr`` keeps its name; the module is bound under another
    assert "numexpr_1.evaluate(" in text and "numexpr = " not in text.split("return")[-1]
    assert "'sin(where_) + 1.0 + dwhere * (2.0 * sin_)'" in text, text
    assert "'where_': where" in text and "'sin_': sin" in text, text


def test_random_programs(tmp_path, small, monkeypatch):
    """``test_random_programs``' straight-line programs (elementwise math between
    arrays of different shapes and Python floats, reductions, matrix products), with
    every buffer reused: the fused gradient equals the unfused one and central
    differences, on float64 and (arrays only) float32 arguments left untouched."""
    monkeypatch.setattr(buffers, "REUSE_SIZE", 1)
    fused_variants = 0
    for seed in range(40):
        text, shapes, w_shape = program(seed)
        f = load(text, seed, tmp_path)
        r = np.random.default_rng(seed)
        args = [r.normal(size=s) * 0.7 if s else float(r.normal()) for s in shapes]
        args.append(r.normal(size=w_shape) * 0.5)
        with np.errstate(all="ignore"):
            try:
                value = f(*args)
            except ValueError:
                continue  # shapes that do not combine: not a program
        if np.ndim(value) != 0 or not np.isfinite(value):
            continue
        wrt = (0, 1, 2, 3)
        kept = [np.copy(a) for a in args]
        got = checked(f, args, wrt, differences=False)
        fused_variants += "evaluate(" in got
        fd.assert_close(grad(f, wrt=wrt, fuse=True)(*args), fd.numeric_grad(f, args, wrt), 1e-4)
        for a, b in zip(args, kept):
            np.testing.assert_array_equal(a, b)
        if all(isinstance(a, np.ndarray) for a in args):
            single = [a.astype(np.float32) for a in args]
            expected = grad(f, wrt=wrt)(*single)
            for _ in range(2):
                for g, e in zip(grad(f, wrt=wrt, fuse=True)(*single), expected):
                    assert g.dtype == e.dtype == np.float32, text
                    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * np.max(np.abs(e)))
    assert fused_variants >= 10


def test_a_long_chain_is_cut_into_calls_numexpr_can_parse(tmp_path, small):
    """60 statements each read once by the next: one expression of them all would nest
    deeper than numexpr parses (200 parentheses), so the run is cut every few lines."""
    lines = ["import numpy as np", "", "", "def f(x):", "    v = x"]
    lines += ["    v = v * 0.99 + x * 0.5"] * 60 + ["    return np.sum(v * v)"]
    f = load("\n".join(lines) + "\n", "long_chain", tmp_path)
    text = checked(f, (rng().uniform(0.2, 1.0, 20),))
    calls = [s for _, s in fused_lines(text)]
    assert 4 <= len(calls) <= 20, text
    assert max(s.count("(") for s in calls) < 50, text


# --------------------------------------------------------------------------
# The other entries, and numexpr missing


def test_value_and_grad_and_vjp_fuse(small):
    x = rng().uniform(0.2, 1.0, 18)
    plain, fused = value_and_grad(F.chain), value_and_grad(F.chain, fuse=True)
    for _ in range(3):
        (v, g), (w, h) = fused(x), plain(x)
        assert v == pytest.approx(w, rel=1e-14)
        assert_same(g, h)
    assert ".evaluate(" in source(fused, x)
    dout = 0.75
    plain, fused = vjp(F.chain), vjp(F.chain, fuse=True)
    for _ in range(3):
        assert_same(fused(x, dout), plain(x, dout))
    assert ".evaluate(" in source(fused, x, dout)


def test_without_numexpr_fuse_warns_and_changes_nothing(monkeypatch):
    monkeypatch.setattr(fuse, "MIN_SIZE", 1)
    monkeypatch.setitem(sys.modules, "numexpr", None)  # import numexpr raises ImportError
    x = rng().uniform(0.2, 1.0, 19)
    plain, fused = grad(F.cut_by_tanh), grad(F.cut_by_tanh, fuse=True)
    expected = [plain(x), plain(x)]
    first = fused(x)  # the generic code: no variant is built yet
    with pytest.warns(RuntimeWarning, match="numexpr is not installed"):
        second = fused(x)  # builds the variant
    assert_same(first, expected[0])
    assert_same(second, expected[1])
    fd.assert_close(second, fd.numeric_grad(F.cut_by_tanh, (x,), (0,))[0], rtol=1e-6)
    assert source(fused, x) == source(plain, x)


# --------------------------------------------------------------------------
# numexpr's functions


def _domain(name):
    """Arguments on which numpy's ``name`` is finite, from tiny to large."""
    r = rng()
    magnitudes = np.concatenate([r.uniform(-1, 1, 5000), r.normal(size=5000) * 30, [0.0, -0.0]])
    if name in ("arcsin", "arccos", "arctanh"):
        return np.clip(magnitudes, -0.999, 0.999)
    if name in ("log", "log10", "sqrt"):
        return np.abs(magnitudes) + 1e-300
    if name == "log1p":
        return np.abs(magnitudes) - 0.999
    if name == "arccosh":
        return np.abs(magnitudes) + 1.0
    if name in ("exp", "expm1", "sinh", "cosh"):
        return np.clip(magnitudes, -700, 700)
    return magnitudes


@pytest.mark.parametrize("name", sorted(fuse.FUNCTIONS | fuse.LEFT_TO_NUMPY))
def test_numexpr_functions_agree_with_numpy(name):
    """Each function numexpr could evaluate is numpy's to 1e-12 relative in float64
    (those in ``FUNCTIONS`` to the bit on this machine's numpy and C library); the fused
    ones keep float32 as float32."""
    numexpr = pytest.importorskip("numexpr")
    x = _domain(name)
    ufunc = getattr(np, "absolute" if name == "abs" else name)
    args = (x, x[::-1]) if ufunc.nin == 2 else (x,)
    text = f"{name}({', '.join('ab'[: ufunc.nin])})"
    got = numexpr.evaluate(text, local_dict=dict(zip("ab", args)))
    want = ufunc(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    if name in fuse.FUNCTIONS - fuse._FLOAT64_ONLY:
        small32 = [a.astype(np.float32) for a in args]
        got32 = numexpr.evaluate(text, local_dict=dict(zip("ab", small32)))
        assert got32.dtype == np.float32
        np.testing.assert_allclose(got32, ufunc(*small32), rtol=1e-6, atol=1e-30)
