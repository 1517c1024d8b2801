"""``grad(f, fuse=True)``: regions of elementwise lines over one large shape evaluated
a block of entries at a time, and chains of elementwise operations left outside them
evaluated by one ``numexpr.evaluate`` call each (``transpile/backend/fuse.py``).

Every gradient is checked on its first call (the generic code) and on later ones (the
variant, fused) against two references: the same gradient without ``fuse``, to 1e-12
relative to its largest entry (an entry where a gradient crosses zero carries no
relative precision of its own: the hand-written and the generated gradient of the
benchmark's chain differ there by 1e-10), and central finite differences (``fd``).
Arrays this small are fused with the size threshold monkeypatched to 1 (``small``) and
blocked with blocks of 4 entries from 16 (``blocked``, two threads from 32); a test of
each keeps the thresholds and uses arrays above them.
"""

import linecache
import re
import sys
import textwrap
import threading
import time

import fd
import fuse_funcs as F
import gast
import numpy as np
import pytest
from test_random_programs import load, program

from transpile import grad, source, value_and_grad, vjp
from transpile.backend import blocks, fuse, probe
from transpile.cleanup import buffers
from transpile.core import emit
from transpile.core.ir import Annotation, annotate
from transpile.front.naming import Namer
from transpile_runtime import blocks as runtime_blocks


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


def checked(f, args, wrt=0, differences=True, allow_unused=False):
    """The fused variant's source, after checking three calls of ``grad(f, fuse=True)``
    against ``grad(f)`` and (with ``differences``) central differences."""
    plain = grad(f, wrt=wrt, allow_unused=allow_unused)
    fused = grad(f, wrt=wrt, fuse=True, allow_unused=allow_unused)
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
    assert "b = np.cos(v2); dx = b; da = dv2 * x;" in comment, text  # (1.0 * b folded)
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


def test_naming_written_twice(small):
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


def test_naming_numexpr_takes_for_its_own(small):
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
        # a random program may leave an argument unread: its zero gradient is checked too
        got = checked(f, args, wrt, differences=False, allow_unused=True)
        fused_variants += "evaluate(" in got
        fused = grad(f, wrt=wrt, fuse=True, allow_unused=True)
        fd.assert_close(fused(*args), fd.numeric_grad(f, args, wrt), 1e-4)
        for a, b in zip(args, kept):
            np.testing.assert_array_equal(a, b)
        if all(isinstance(a, np.ndarray) for a in args):
            single = [a.astype(np.float32) for a in args]
            expected = grad(f, wrt=wrt, allow_unused=True)(*single)
            for _ in range(2):
                for g, e in zip(fused(*single), expected):
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
    with pytest.warns(RuntimeWarning, match="numexpr is not installed") as seen:
        second = fused(x)  # builds the variant
    # shown at this line, the user's call, not in transpile/backend/fuse.py
    (warned,) = seen
    assert warned.filename == __file__
    assert (
        linecache.getline(warned.filename, warned.lineno).strip()
        == "second = fused(x)  # builds the variant"
    )
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


# --------------------------------------------------------------------------
# Blocks: regions of elementwise lines over one large shape, a block at a time


@pytest.fixture
def blocked(monkeypatch):
    """Regions of 16 entries or more in blocks of 4 (a last one shorter where the size
    is no multiple of 4), on two threads from 32 entries."""
    monkeypatch.setattr(blocks, "MIN_BLOCKED", 16)
    monkeypatch.setattr(blocks, "BLOCK", 4)
    monkeypatch.setattr(runtime_blocks, "MIN_THREADED", 32)


def block_functions(text):
    """The lines of each block function ``def block(i):`` in ``text``, stripped."""
    out, current = [], None
    for line in text.splitlines():
        if re.match(r"    def block\w*\(", line):
            current = []
            out.append(current)
        elif current is not None and line.startswith("        "):
            current.append(line.strip())
        else:
            current = None
    return out


def test_a_region_is_a_function_of_one_block_called_for_each(blocked):
    x = rng().uniform(0.2, 1.0, 23)
    text = checked(F.read_after, (x, rng().normal(size=(23, 3))))
    text = checked(F.chain, (x,))
    (block,) = block_functions(text)
    assert "dx = np.empty((23,), np.float64)" in text, text
    assert re.search(r"\n    in_blocks\(block, 23, 4, x, dx\)\n    return dx\n", text), text
    assert block[0] == "# entries i to i + 4 of the 23; in_blocks calls this for each block"
    assert block[1] == "xb = x[i:i + 4]", text
    # the statements stay one per line, under their comments, names unchanged
    assert "a = np.sin(xb)" in block and "# grad of: a = np.sin(x)" in block, text
    assert block[-1] == "dx[i:i + 4] = dxb", text
    assert "numexpr" not in text


def test_the_benchmark_size_is_blocked_on_two_threads():
    """The default threshold, block and thread sizes, on the benchmark's chain: the
    result equals the unfused gradient's to the bit (no sum is split)."""
    x = rng().uniform(-1.0, 1.0, runtime_blocks.MIN_THREADED + 5)
    plain, fused = grad(F.chain), grad(F.chain, fuse=True)
    expected = [plain(x), plain(x)]
    for call in range(3):
        np.testing.assert_array_equal(fused(x), expected[min(call, 1)])
    text = source(fused, x)
    assert f"in_blocks(block, {x.size}, {blocks.BLOCK}, x, dx)" in text, text
    assert ".evaluate(" not in text  # nothing left for numexpr


def test_below_the_threshold_nothing_is_blocked():
    x = rng().uniform(0.2, 1.0, blocks.MIN_BLOCKED - 1)
    assert "in_blocks" not in checked(F.shown, (x,), differences=False)


def test_blocks_without_numexpr(blocked, monkeypatch):
    monkeypatch.setitem(sys.modules, "numexpr", None)  # import numexpr raises ImportError
    x = rng().uniform(0.2, 1.0, 17)
    with pytest.warns(RuntimeWarning, match="numexpr is not installed"):
        text = checked(F.cut_by_tanh, (x,))
    assert "in_blocks(block, 17, 4, " in text and "numexpr" not in text


def test_blocks_keep_float32(blocked):
    x = rng().uniform(0.2, 1.0, 21).astype(np.float32)
    plain, fused = grad(F.chain), grad(F.chain, fuse=True)
    expected = [plain(x), plain(x)]
    for call in range(3):
        got = fused(x)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, expected[min(call, 1)])
    assert "dx = np.empty((21,), np.float32)" in source(fused, x)


def test_blocks_leave_arguments_alone_and_return_new_arrays(blocked):
    x, y = rng().uniform(0.2, 1.0, 18), rng().uniform(0.2, 1.0, 18)
    kept = x.copy(), y.copy()
    g = grad(F.two_outputs, wrt=(0, 1), fuse=True)
    results = [g(x, y) for _ in range(3)]
    assert "in_blocks(" in source(g, x, y)
    np.testing.assert_array_equal(x, kept[0])
    np.testing.assert_array_equal(y, kept[1])
    arrays = [a for r in results for a in r]
    for i, a in enumerate(arrays):
        assert a.flags.writeable and a.flags.owndata
        assert not np.shares_memory(a, x) and not np.shares_memory(a, y)
        assert not any(np.shares_memory(a, b) for b in arrays[i + 1 :])
    assert_same(results[-1], grad(F.two_outputs, wrt=(0, 1))(x, y))


@pytest.mark.parametrize("layout", ["transposed", "strided", "strided 2-d"])
def test_blocks_of_non_contiguous_arguments(blocked, layout):
    base = rng().uniform(0.2, 1.0, (9, 40))
    x = {"transposed": base.T, "strided": base[1, ::2], "strided 2-d": base[::2, ::3]}[layout]
    kept = x.copy()
    text = checked(F.scaled, (x, 0.7))
    np.testing.assert_array_equal(x, kept)
    if x.ndim == 2:  # a flat view where the array is contiguous, else one copy
        assert "x_flat = x.reshape(-1)" in text and "dx.reshape(-1)[i:i + 4] = " in text
        assert f"dx = np.empty({x.shape}, np.float64)" in text, text
    else:
        assert "= x[i:i + 4]" in text, text


def test_a_matrix_product_cuts_a_region(blocked):
    x, W = rng().uniform(0.2, 1.0, (6, 5)), rng().normal(size=(5, 4))
    text = checked(F.through_matmul, (x, W))
    # h before the product, the cosine's adjoint after it, the sine's before it
    assert [len(b) > 3 for b in block_functions(text)] == [True] * 3, text
    assert "z = h @ W" in text and "(dz @ W.T)" in text, text
    assert "h = np.empty((6, 5), np.float64)" in text, text  # read by the product


def test_a_reduction_over_an_axis_cuts_a_region(blocked):
    x = rng().uniform(0.2, 1.0, (6, 5))
    text = checked(F.through_axis_sum, (x,))
    assert len(block_functions(text)) >= 2, text
    assert "np.sum(a, axis=0)" in text, text


def test_a_full_sum_is_a_number_a_region_reads(blocked):
    x = rng().uniform(0.2, 1.0, 19)
    text = checked(F.through_sum, (x,))
    assert "s = np.sum(" in text, text
    # the region after the sum reads s as a number (the adjoint's region too)
    assert any("s" in re.findall(r"\w+", line) for b in block_functions(text) for line in b)


def test_values_read_after_a_region(blocked):
    x, W = rng().uniform(0.2, 1.0, 17), rng().normal(size=(17, 3))
    text = checked(F.read_after, (x, W))
    assert "du = np.empty((17,), np.float64)" in text, text
    assert "du[i:i + 4] = dub" in text, text
    # the next region reads du's array and rebinds the name in its blocks
    assert "dub = du[i:i + 4]" in text and "du = dub + dhb" in text, text
    x, W = rng().uniform(0.2, 1.0, (5, 4)), rng().normal(size=(4, 3))
    text = checked(F.read_after, (x, W))
    assert "du.reshape(-1)[i:i + 4] = dub" in text and "du_flat = du.reshape(-1)" in text


def test_a_number_between_the_lines_of_a_region(blocked):
    x = rng().uniform(0.2, 1.0, 22)
    text = checked(F.rebinds, (x, 0.7))
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines) if "h = k * 0.5 + 1.0" in line)
    assert lines[number] == "    h = k * 0.5 + 1.0", text  # once, before the blocks
    assert number < next(i for i, line in enumerate(lines) if "def block" in line)
    assert len(block_functions(text)) == 1, text


def test_blocks_value_and_grad_and_vjp(blocked):
    x = rng().uniform(0.2, 1.0, 26)
    plain, fused = value_and_grad(F.chain), value_and_grad(F.chain, fuse=True)
    for _ in range(3):
        (v, g), (w, h) = fused(x), plain(x)
        assert v == w
        assert_same(g, h)
    assert "in_blocks(" in source(fused, x)
    fd.assert_close(fused(x)[1], fd.numeric_grad(F.chain, (x,), (0,))[0], rtol=1e-6)
    dout = 0.75
    plain, fused = vjp(F.chain), vjp(F.chain, fuse=True)
    for _ in range(3):
        assert_same(fused(x, dout), plain(x, dout))
    assert "in_blocks(" in source(fused, x, dout)


def test_errstate_reaches_the_second_thread(blocked):
    """A block on the helper thread raises where the caller's ``np.errstate`` says."""
    x = rng().uniform(0.2, 1.0, 40)
    g = grad(F.logs, fuse=True)
    g(x), g(x)
    assert "in_blocks(" in source(g, x)
    x[37] = 0.0  # the last blocks: the helper thread may take them
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        g(x)
    with np.errstate(all="ignore"):
        assert np.isinf(g(x)[37]) or np.isnan(g(x)[37])


def test_in_blocks_calls_every_block_once_on_two_threads(monkeypatch):
    monkeypatch.setattr(runtime_blocks, "_cpus", lambda: 2)
    monkeypatch.setattr(runtime_blocks, "MIN_THREADED", 1)
    seen, threads = [], set()

    def block(i):
        seen.append(i)
        threads.add(threading.get_ident())
        time.sleep(0.001)

    runtime_blocks.in_blocks(block, 103, 4)
    assert sorted(seen) == list(range(0, 103, 4))
    assert len(threads) == 2

    def failing(i):
        if i == 40:
            raise ValueError("block 40")

    with pytest.raises(ValueError, match="block 40"):
        runtime_blocks.in_blocks(failing, 103, 4)

    settings = []

    def checking(i):
        settings.append((threading.get_ident(), np.geterr()["divide"]))
        time.sleep(0.001)

    with np.errstate(divide="raise"):
        runtime_blocks.in_blocks(checking, 103, 4)
    assert len({t for t, _ in settings}) == 2  # the caller's errstate on both threads
    assert {e for _, e in settings} == {"raise"}


def test_in_blocks_on_one_thread_below_the_threshold():
    seen = []
    runtime_blocks.in_blocks(lambda i: seen.append((i, threading.get_ident())), 50, 7)
    assert [i for i, _ in seen] == list(range(0, 50, 7))
    assert {t for _, t in seen} == {threading.get_ident()}


@pytest.mark.parametrize("with_chains", [False, True])
def test_random_programs_in_blocks(tmp_path, blocked, monkeypatch, with_chains):
    """``test_random_programs``' straight-line programs (arrays of shapes that
    broadcast, numbers, reductions with and without axes, matrix products) with every
    region of 2 entries or more blocked, 3 at a time (and what is left fused by
    numexpr at any size, ``with_chains``): the gradient equals the unfused one and
    central differences, in float64 and float32, arguments untouched."""
    if with_chains:
        pytest.importorskip("numexpr")
        monkeypatch.setattr(fuse, "MIN_SIZE", 1)
    monkeypatch.setattr(blocks, "MIN_BLOCKED", 2)
    monkeypatch.setattr(blocks, "BLOCK", 3)
    monkeypatch.setattr(buffers, "REUSE_SIZE", 1)
    variants = 0
    for seed in range(40):
        text, shapes, w_shape = program(seed)
        f = load(text, f"blocked_{seed}_{with_chains}", tmp_path)
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
        # a random program may leave an argument unread: its zero gradient is checked too
        got = checked(f, args, wrt, differences=False, allow_unused=True)
        variants += "in_blocks(" in got
        fused = grad(f, wrt=wrt, fuse=True, allow_unused=True)
        fd.assert_close(fused(*args), fd.numeric_grad(f, args, wrt), 1e-4)
        for a, b in zip(args, kept):
            np.testing.assert_array_equal(a, b)
        if all(isinstance(a, np.ndarray) for a in args):
            single = [a.astype(np.float32) for a in args]
            expected = grad(f, wrt=wrt, allow_unused=True)(*single)
            for _ in range(2):
                for g, e in zip(fused(*single), expected):
                    assert g.dtype == e.dtype == np.float32, text
                    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * np.max(np.abs(e)))
    assert variants >= 10


def _blocked_directly(text, args):
    """``blocks.blocks`` run on the function ``text`` (one statement per line), each
    line annotated with the shape and dtype of the array it assigns on ``args``: the
    new function's source, and its result next to the function's."""
    tree = gast.parse(textwrap.dedent(text)).body[0]
    params = [a.id for a in tree.args.args]
    scope = {"np": np, **dict(zip(params, args))}
    for s in tree.body[:-1]:
        exec(compile(gast.unparse(s), "<line>", "exec"), scope)
        value = scope[s.targets[0].id]
        if isinstance(value, np.ndarray):
            annotate(s, Annotation.ARRAY, (value.shape, value.dtype))
    expected = eval(compile(gast.unparse(tree.body[-1].value), "<line>", "eval"), scope)
    names = {"np": "np", "ops": "ops"}
    metas = {p: probe.meta(a) for p, a in zip(params, args)}
    body, bound = blocks.blocks(tree.body, names, Namer.for_tree(tree), metas)
    tree.body = body
    new = emit.to_source(tree)
    found = {"np": np, **bound}
    exec(new, found)
    return new, found[tree.name](*args), expected


def test_a_region_that_reads_the_array_its_result_replaces(blocked):
    """``a`` is read by the second region and rebound by it, and read after it: the
    blocks read the first array under another name while they fill the new one."""
    text = """
    def f(x, y):
        a = np.sin(x) * y + x
        s = np.sum(a)
        a = a * s + x
        a = np.cos(a) * a
        return a @ y
    """
    x, y = rng().uniform(0.2, 1.0, 18), rng().uniform(0.2, 1.0, 18)
    new, got, expected = _blocked_directly(text, (x, y))
    assert len(block_functions(new)) == 2, new
    assert "a_0 = a" in new and "a = np.empty((18,), np.float64)" in new, new
    assert "ab = a_0[i:i + 4]" in new, new
    assert got == expected
