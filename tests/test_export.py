"""``export(g, path)``: gradients written as modules, run where the compiler is not.

Every case of the corpus (``tests/corpus_straight.py``, ``tests/corpus_control.py``) is
exported; one fresh interpreter (``-I -S``: no site-packages, so no editable install
of ``transpile``; its path holds a copy of ``runtime/`` named ``transpile_runtime``
and numpy's directory) imports each module, checks that ``transpile`` cannot be
imported, and computes the gradient; it must equal the live gradient of the same
arguments, which ``tests/test_corpus.py`` checks against finite differences.
"""

import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import corpus_control
import corpus_straight
import fd
import numpy as np
import pytest

import transpile_runtime
from transpile import ExportError, export, grad, source

CASES = corpus_straight.CASES + corpus_control.CASES

_CHILD = textwrap.dedent(
    """
    import importlib.util, pickle, sys
    assert importlib.util.find_spec("transpile") is None, "the compiler is importable"
    import numpy  # noqa: F401
    if sys.argv[1] == "-":  # standalone modules: not even the runtime
        assert importlib.util.find_spec("transpile_runtime") is None
    else:
        import transpile_runtime
        assert transpile_runtime.__file__.startswith(sys.argv[1]), transpile_runtime.__file__
    with open(sys.argv[2], "rb") as f:
        jobs = pickle.load(f)
    results = {}
    for name, path, args in jobs:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        results[name] = getattr(module, module.__all__[0])(*args)
        assert not any(m.startswith("transpile") for m in sys.modules if m != "transpile_runtime" and not m.startswith("transpile_runtime.")), name
    with open(sys.argv[3], "wb") as f:
        pickle.dump(results, f)
    """
)


def _isolated_runtime(tmp_path):
    """A folder holding only a copy of the runtime, as ``transpile_runtime``."""
    root = tmp_path / "path"
    shutil.copytree(Path(transpile_runtime.__file__).parent, root / "transpile_runtime")
    return root


def _run_isolated(tmp_path, jobs, runtime=True):
    """Run ``jobs`` in a fresh interpreter whose path holds numpy and (with ``runtime``)
    a copy of the runtime."""
    root = _isolated_runtime(tmp_path) if runtime else None
    numpy_dir = str(Path(np.__file__).resolve().parent.parent)
    (tmp_path / "jobs.pkl").write_bytes(pickle.dumps(jobs))
    path = ([str(root)] if runtime else []) + [numpy_dir]
    script = f"import sys; sys.path[:0] = {path!r}\n" + _CHILD
    given = str(root) if runtime else "-"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, given, "jobs.pkl", "results.pkl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr
    return pickle.loads((tmp_path / "results.pkl").read_bytes())


def _args(case):
    return case.make_args(np.random.default_rng(zlib.crc32(case.id.encode())))


@pytest.mark.parametrize("standalone", [False, True], ids=["with runtime", "standalone"])
def test_exported_corpus_runs_without_the_compiler_and_matches_the_live_gradient(
    tmp_path, standalone
):
    jobs, live = [], {}
    for i, case in enumerate(CASES):
        g = grad(case.func, wrt=case.wrt, allow_unused=case.allow_unused)
        name = f"exported_{i}_{case.id}"
        path = tmp_path / f"{name}.py"
        export(g, path, standalone=standalone)
        args = _args(case)
        live[name] = g(*args)
        jobs.append((name, str(path), args))
    results = _run_isolated(tmp_path, jobs, runtime=not standalone)
    assert len(results) == len(CASES)
    for name, expected in live.items():
        got = results[name]
        e_leaves, e_tree = fd.flatten(expected)
        g_leaves, g_tree = fd.flatten(got)
        assert len(e_leaves) == len(g_leaves), name
        for e, g in zip(e_leaves, g_leaves):
            # a later live call runs the shape variant, which may round differently
            rtol = 1e-5 if np.result_type(e) == np.float32 else 1e-10
            np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * 1e-2, err_msg=name)


def test_exported_variants_run_without_the_compiler_and_match_the_live_gradient(tmp_path):
    """With example arguments the module holds the shape variant for them (what
    ``source(g, *args)`` shows); a gradient with no variant for them is refused."""
    jobs, live, refused = [], {}, 0
    for i, case in enumerate(CASES):
        g = grad(case.func, wrt=case.wrt, allow_unused=case.allow_unused)
        name = f"variant_{i}_{case.id}"
        path = tmp_path / f"{name}.py"
        args = _args(case)
        try:
            text = export(g, path, standalone=True, args=args)
        except ExportError as exc:
            assert "no shape variant is made" in str(exc), (name, exc)
            refused += 1
            continue
        assert "is the shape variant for arguments" in text, name
        shown = source(g, *args)
        head = shown.split("(")[0]  # the names it reads may be renamed in the module
        assert len(_body(text, head)) == len(_body(shown, head)), name
        live[name] = g(*args)
        jobs.append((name, str(path), args))
    assert len(jobs) > refused  # most of the corpus specializes (149 of 241 cases today)
    results = _run_isolated(tmp_path, jobs, runtime=False)
    for name, expected in live.items():
        for e, got in zip(fd.flatten(expected)[0], fd.flatten(results[name])[0]):
            rtol = 1e-5 if np.result_type(e) == np.float32 else 1e-12
            np.testing.assert_allclose(got, e, rtol=rtol, atol=rtol * 1e-2, err_msg=name)


def _body(text, head):
    """The lines that compute (no comments) of the function ``head`` (``def name``)."""
    start = text.index(head + "(")
    code = text[start:].split("\n\n\n")[0]
    return [
        ln.strip() for ln in code.splitlines()[1:] if ln.strip() and not ln.strip().startswith("#")
    ]


def test_an_exported_variant_matches_finite_differences(tmp_path):
    case = next(c for c in corpus_straight.CASES if c.func is corpus_straight.matmul_both)
    g = grad(case.func, wrt=(0, 1))
    args = _args(case)
    text = export(g, tmp_path / "variant.py", args=args)
    namespace = {}
    exec(compile(text, str(tmp_path / "variant.py"), "exec"), namespace)
    got = namespace[namespace["__all__"][0]](*args)
    fd.assert_close(got, fd.numeric_grad(case.func, args, (0, 1)), rtol=1e-7, atol=1e-9)


def test_header_names_source_function_wrt_mode_and_version(tmp_path):
    case = next(c for c in corpus_straight.CASES if c.func is corpus_straight.matmul_both)
    text = export(grad(case.func, wrt=(0, 1)))
    head = text.split('"""')[1]
    assert "source: " + corpus_straight.__file__ in head
    assert "function: matmul_both" in head
    assert "wrt: a, b" in head
    assert "mode: grad" in head
    assert "exported by transpile 0.1.0" in head
    assert "import transpile\n" not in text and "from transpile " not in text


def test_standalone_imports_numpy_and_the_standard_library_alone():
    import explain_funcs

    text = export(grad(explain_funcs.expected_complete_loglik), standalone=True)
    imports = [t for t in text.split("\n") if t.startswith(("import ", "from "))]
    assert imports and all(
        t.split()[1].split(".")[0]
        in ("numpy", "math", "numbers", "types", "itertools", "typing", "collections")
        for t in imports
    ), imports
    assert "transpile_runtime" not in "\n".join(imports)
    assert "@helper" not in text  # the compiler's declarations are dropped


def test_grad_of_comments_carry_the_users_line_numbers():
    import explain_funcs

    text = export(grad(explain_funcs.dead_value))
    line = explain_funcs.line_of(explain_funcs.dead_value, "y = np.sin(x * w)")
    assert f"# grad of: y = np.sin(x * w)  (explain_funcs.py:{line})" in text


def test_callees_and_functions_called_under_stop_gradient_are_written_out(tmp_path):
    import explain_funcs

    g = grad(explain_funcs.expected_complete_loglik)
    text = export(g, tmp_path / "em.py")
    assert "def responsibilities" in text  # run as written, under stop_gradient
    assert "def log_joint_fwd" not in text  # small: inlined (front/helpers.py)
    rng = np.random.default_rng(3)
    params = {
        "logits": rng.normal(size=3),
        "mu": rng.normal(size=(3, 2)),
        "log_diag": 0.1 * rng.normal(size=(3, 2)),
    }
    X = rng.normal(size=(7, 2))
    results = _run_isolated(tmp_path, [("em", str(tmp_path / "em.py"), (params, X))])
    expected = g(params, X)
    for key in params:
        np.testing.assert_allclose(results["em"][key], expected[key], rtol=1e-12)
    # a helper that writes into an array stays a callee pair, written out with it
    import inline_funcs

    g = grad(inline_funcs.writes_into_an_array)
    apart = tmp_path / "pair"
    apart.mkdir()
    text = export(g, apart / "pair.py")
    for name in ("def _zeroes_first_fwd", "def _zeroes_first_bwd"):
        assert name in text
    x = rng.normal(size=5)
    results = _run_isolated(apart, [("pair", str(apart / "pair.py"), (x,))])
    np.testing.assert_allclose(results["pair"], g(x), rtol=1e-12)


GLOBAL_ARRAY = np.arange(3.0)


def reads_a_global_array(x):
    return np.sum(x * GLOBAL_ARRAY)


def test_a_global_array_is_refused_with_its_name():
    with pytest.raises(ExportError, match="GLOBAL_ARRAY, an array of shape \\(3,\\)"):
        export(grad(reads_a_global_array))


SCALE = 2.5


def reads_a_global_number(x):
    return np.sum(x * SCALE)


def test_a_global_number_is_written_with_its_value(tmp_path):
    text = export(grad(reads_a_global_number), tmp_path / "scaled.py")
    assert "SCALE = 2.5" in text
    x = np.arange(4.0)
    results = _run_isolated(tmp_path, [("scaled", str(tmp_path / "scaled.py"), (x,))])
    np.testing.assert_array_equal(results["scaled"], np.full(4, 2.5))


@pytest.mark.parametrize("standalone", [False, True], ids=["with runtime", "standalone"])
def test_cli_writes_the_module(tmp_path, standalone):
    out = tmp_path / "out.py"
    target = f"{corpus_straight.__file__}:matmul_both"
    flags = ["--standalone"] if standalone else []
    done = subprocess.run(
        [sys.executable, "-m", "transpile", target, "--wrt", "a,b", "-o", str(out), *flags],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    results = _run_isolated(tmp_path, [("cli", str(out), (a, b))], runtime=not standalone)
    t = 1.0 - np.tanh(a @ b) ** 2  # d sum(tanh(a @ b)): closed form
    np.testing.assert_allclose(results["cli"][0], t @ b.T, rtol=1e-12)
    np.testing.assert_allclose(results["cli"][1], a.T @ t, rtol=1e-12)
