"""The entry of a gradient: routing, names, rebound globals, threads, fresh results, cache.

Each test reproduces a way the gradient once came out silently wrong (issue 13) and
checks the right answer against a closed form or central finite differences, on a
first call (the generic code, recording shapes) and on later calls (the variant
specialized for those shapes).
"""

import gc
import importlib.util
import itertools
import sys
import threading
import weakref

import fd
import numpy as np
import pytest

from transpile import TranspileError, grad, jvp, pipeline, source, value_and_grad, vjp
from transpile.backend import dispatch as dispatch_module
from transpile.core import emit

_modules = itertools.count()


def load(tmp_path, text, name="f"):
    """A function defined in a fresh module file (the transpiler reads source)."""
    index = next(_modules)
    path = tmp_path / f"trust_module_{index}.py"
    path.write_text("import numpy as np\n\n" + text)
    spec = importlib.util.spec_from_file_location(f"trust_module_{index}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), module


def tanh_sq_sum(x, b):
    return np.sum(np.tanh(x + b) ** 2)


def tanh_sq_sum_grad_b(x, b):
    """Closed form of d/db sum(tanh(x + b)**2), summed back to b's shape."""
    t = np.tanh(x + b)
    g = 2 * t * (1 - t * t)
    extra = g.ndim - np.ndim(b)
    g = g.sum(axis=tuple(range(extra)))
    ones = tuple(i for i, n in enumerate(np.shape(b)) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=ones, keepdims=True) if ones else g


def assert_fresh(result, args):
    """Every array leaf is writable and shares memory with no argument and no other leaf."""
    leaves, _ = fd.flatten(result)
    arg_leaves, _ = fd.flatten(list(args))
    arrays = [a for a in leaves if isinstance(a, np.ndarray)]
    for i, a in enumerate(arrays):
        assert a.flags.writeable, f"leaf {i} is read-only"
        for j, b in enumerate(arrays[:i]):
            assert not np.shares_memory(a, b), f"leaves {j} and {i} share memory"
        for arg in arg_leaves:
            if isinstance(arg, np.ndarray):
                assert not np.shares_memory(a, arg), f"leaf {i} shares memory with an argument"


# --------------------------------------------------------------------------
# threads


def test_first_calls_racing_in_threads_leave_right_variants(tmp_path):
    """Two threads making first calls with different signatures at once: every later
    call of either signature is right (the shapes one call recorded once leaked into
    the other's variant, and the last route stored won for both)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 300))
    b_vec, b_full = rng.normal(size=300), rng.normal(size=(1000, 300))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: races show up in every run
    try:
        _race_first_calls(tmp_path, x, b_vec, b_full)
    finally:
        sys.setswitchinterval(interval)


def _race_first_calls(tmp_path, x, b_vec, b_full):
    for trial in range(12):
        f, _ = load(tmp_path, "def f(x, b):\n    return np.sum(np.tanh(x + b) ** 2)\n")
        g = grad(f, wrt=1)
        barrier = threading.Barrier(2)
        errors = []

        def first(b, barrier=barrier, g=g, errors=errors):
            barrier.wait()
            try:
                fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)
            except Exception as error:
                errors.append(error)

        threads = [threading.Thread(target=first, args=(b,)) for b in (b_vec, b_full)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for b in (b_vec, b_full, b_vec, b_full):
            got = g(x, b)
            assert got.shape == b.shape, (trial, got.shape, b.shape)
            fd.assert_close(got, tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)


def test_eight_threads_first_calls_with_four_signatures(tmp_path):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(500, 200))
    bs = [rng.normal(size=s) for s in ((200,), (500, 200), (1, 200), (500, 1))]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(6):
            f, _ = load(tmp_path, "def f(x, b):\n    return np.sum(np.tanh(x + b) ** 2)\n")
            g = grad(f, wrt=1)
            barrier = threading.Barrier(8)
            errors = []

            def first(b, g=g, barrier=barrier, errors=errors):
                barrier.wait()
                try:
                    fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)
                except Exception as error:
                    errors.append(error)

            threads = [threading.Thread(target=first, args=(bs[k % 4],)) for k in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors[:2]
            for b in bs:  # later calls run the variants the race left behind
                fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)
    finally:
        sys.setswitchinterval(interval)


def test_generic_gradient_compiled_once_by_threads_that_first_need_it(tmp_path):
    """A gradient with shape variants compiles its generic code only when a call needs
    it (here: once it has as many variants as it keeps); eight threads needing it at
    once all get the right gradient from one compiled function."""
    f, _ = load(tmp_path, "def f(x, b):\n    return np.sum(np.tanh(x + b) ** 2)\n")
    g = grad(f, wrt=1)
    dispatcher = g.__transpile_dispatch__
    assert dispatcher.compiled_generic is None  # not compiled by grad
    rng = np.random.default_rng(5)
    kept = dispatch_module.MAX_VARIANTS
    for n in range(1, kept + 1):  # each signature's second call makes its variant
        x, b = rng.normal(size=(3, n)), rng.normal(size=n)
        for _ in range(2):
            fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)
    assert dispatcher.compiled_generic is None  # probes and variants ran, never it
    later = [(rng.normal(size=(3, n)), rng.normal(size=n)) for n in range(kept + 1, kept + 9)]
    barrier = threading.Barrier(len(later))
    errors, seen = [], []

    def call(x, b):
        barrier.wait()
        try:
            fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)
            seen.append(dispatcher.generic)
        except Exception as error:
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=call, args=args) for args in later]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[:2]
    assert len(seen) == len(later) and all(s is seen[0] for s in seen)
    x, b = later[0]  # and a later call of one of those signatures
    fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)


def test_source_of_a_gradient_with_variants_printed_once_when_first_read(tmp_path):
    """grad(f) of straight-line code compacts and prints its generic code only when
    its source is first read; the calls before and after (probe, variant, generic)
    give the closed form, and eight threads reading the source at once get one text,
    the text a gradient made with every stage run at once shows."""
    f, _ = load(tmp_path, "def f(x, b):\n    return np.sum(np.tanh(x + b) ** 2)\n")
    g = grad(f, wrt=1)
    generated = g.__transpile_generated__
    assert generated.text is None  # not printed by grad
    rng = np.random.default_rng(6)
    x, b = rng.normal(size=(4, 3)), rng.normal(size=3)
    for _ in range(3):  # the probe, the call that makes the variant, the variant
        fd.assert_close(g(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)
    assert generated.text is None
    barrier = threading.Barrier(8)
    texts = []

    def read():
        barrier.wait()
        texts.append(source(g))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(texts) == 8 and len(set(texts)) == 1
    assert texts[0] == pipeline.dump(f, (1,), "emit")  # every stage run at once
    assert "def df(x, b):" in texts[0] and "np.tanh" in texts[0]
    generic = g.__transpile_dispatch__.generic  # compiled from that text
    assert generic.__transpile_source__ == generated.source
    fd.assert_close(generic(x, b), tanh_sq_sum_grad_b(x, b), rtol=1e-10, atol=1e-12)


def test_generic_code_made_late_follows_a_rebound_global(tmp_path):
    """A gradient whose generic code is made only when first needed, after a global
    it reads was rebound: its source, its generic code and its calls are those of
    the function as it reads now (first call, later calls), against closed forms."""
    f, module = load(tmp_path, "ACT = np.tanh\n\n\ndef f(x):\n    return np.sum(ACT(x) ** 2)\n")
    g = grad(f)
    x = np.array([0.3, -1.2, 0.7])
    t = np.tanh(x)
    fd.assert_close(g(x), 2 * t * (1 - t * t), rtol=1e-12, atol=1e-14)  # the probe
    assert g.__transpile_generated__.text is None
    module.ACT = np.sin
    want = 2 * np.sin(x) * np.cos(x)
    for _ in range(3):  # the gradient made again, its first and later calls
        fd.assert_close(g(x), want, rtol=1e-12, atol=1e-14)
    text = source(g)
    assert "np.cos" in text and "tanh" not in text
    generic = g.__transpile_dispatch__.current().generic
    fd.assert_close(generic(x), want, rtol=1e-12, atol=1e-14)


def test_fifty_functions_transpiled_from_eight_threads(tmp_path):
    """Transpiling and first-calling 50 different functions from 8 threads at once."""
    sources = [
        f"def f(x, w):\n    return np.sum(np.tanh(x * w + {k / 10}) ** 2) + {k} * np.sum(w * w)\n"
        for k in range(50)
    ]
    functions = [load(tmp_path, s)[0] for s in sources]
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(6, 4)), rng.normal(size=4)
    errors = []

    def work(chunk):
        for k, f in chunk:
            try:
                for _ in range(2):
                    t = np.tanh(x * w + k / 10)
                    want = np.sum(2 * t * (1 - t * t) * x, axis=0) + 2 * k * w
                    fd.assert_close(grad(f, wrt=1)(x, w), want, rtol=1e-10, atol=1e-12)
            except Exception as error:
                errors.append((k, error))

    items = list(enumerate(functions))
    threads = [threading.Thread(target=work, args=(items[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# --------------------------------------------------------------------------
# names the entry and its variants introduce


@pytest.mark.parametrize(
    "param", ["hit", "_fast", "_slow", "_s0", "_t0", "_route", "_check", "_float", "_is0", "_probe"]
)
def test_parameter_names_clash_with_nothing(tmp_path, param):
    f, _ = load(tmp_path, f"def f(x, {param}):\n    return np.sum(x * {param} + x * x)\n")
    g = grad(f)
    x, other = np.array([1.0, -2.0, 3.0]), np.array([2.0, 2.0, 0.5])
    for _ in range(3):
        np.testing.assert_allclose(g(x, other), other + 2 * x, rtol=1e-14)


@pytest.mark.parametrize("local", ["_seen", "_probe", "_fast", "_check", "hit"])
def test_local_names_clash_with_nothing(tmp_path, local):
    f, _ = load(tmp_path, f"def f(x):\n    {local} = x * 2.0\n    return np.sum({local} * x)\n")
    g = grad(f)
    x = np.array([0.0, 1.0, 2.0])
    for _ in range(3):
        np.testing.assert_allclose(g(x), 4 * x, rtol=1e-14)


# --------------------------------------------------------------------------
# globals and closures that change after the gradient was made


def test_variant_follows_a_global_array_that_changes_shape(tmp_path):
    f, module = load(tmp_path, "B = np.ones(3)\n\n\ndef f(x):\n    return np.sum(x * B)\n")
    g = grad(f)
    x = np.array([1.0, 2.0, 3.0])
    for _ in range(2):
        np.testing.assert_allclose(g(x), np.ones(3))
    module.B = np.ones((2, 3))
    for _ in range(2):
        np.testing.assert_allclose(g(x), [2.0, 2.0, 2.0])
    module.B = np.array([1.0, -1.0, 0.5])
    for _ in range(2):
        np.testing.assert_allclose(g(x), module.B)


def test_rule_follows_a_rebound_global_function(tmp_path):
    f, module = load(tmp_path, "ACT = np.tanh\n\n\ndef f(x):\n    return np.sum(ACT(x))\n")
    x = np.array([0.3, -1.2, 2.0])
    g = grad(f)
    for _ in range(2):
        np.testing.assert_allclose(g(x), 1 - np.tanh(x) ** 2, rtol=1e-12)
    module.ACT = np.sin
    for _ in range(2):  # the gradient made before, and a fresh one
        np.testing.assert_allclose(g(x), np.cos(x), rtol=1e-12)
        np.testing.assert_allclose(grad(f)(x), np.cos(x), rtol=1e-12)
    assert "cos" in source(g) and "tanh" not in source(g)
    module.ACT = np.tanh
    np.testing.assert_allclose(g(x), 1 - np.tanh(x) ** 2, rtol=1e-12)


def test_jvp_follows_a_rebound_global_function(tmp_path):
    f, module = load(tmp_path, "ACT = np.tanh\n\n\ndef f(x):\n    return np.sum(ACT(x))\n")
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    forward = jvp(f)
    for _ in range(2):
        np.testing.assert_allclose(forward(x, v)[1], np.sum((1 - np.tanh(x) ** 2) * v))
    module.ACT = np.sin
    for _ in range(2):  # the jvp made before follows the name
        np.testing.assert_allclose(forward(x, v)[1], np.sum(np.cos(x) * v), rtol=1e-12)


def test_redefined_helper_is_differentiated_again(tmp_path):
    text = (
        "def helper(x):\n    return np.tanh(x)\n\n\n"
        "def other(x):\n    return np.sin(x)\n\n\n"
        "def f(x):\n    h = x\n    for _ in range(2):\n        h = helper(h)\n    return np.sum(h)\n"
    )
    f, module = load(tmp_path, text)
    x = np.array([0.5, -0.25])
    g = grad(f)
    np.testing.assert_allclose(g(x), (1 - np.tanh(np.tanh(x)) ** 2) * (1 - np.tanh(x) ** 2))
    module.helper = module.other
    np.testing.assert_allclose(g(x), np.cos(np.sin(x)) * np.cos(x), rtol=1e-12)


def test_closure_variable_is_read_live(tmp_path):
    text = (
        "def make():\n"
        "    scale = np.array([1.0, 2.0])\n"
        "    def f(x):\n"
        "        return np.sum(x * scale)\n"
        "    def set_scale(value):\n"
        "        nonlocal scale\n"
        "        scale = value\n"
        "    return f, set_scale\n"
    )
    make, _ = load(tmp_path, text, "make")
    f, set_scale = make()
    g = grad(f)
    x = np.array([3.0, 4.0])
    for _ in range(2):
        np.testing.assert_allclose(g(x), [1.0, 2.0])
    set_scale(np.array([5.0, -1.0]))
    for _ in range(2):
        np.testing.assert_allclose(g(x), [5.0, -1.0])
    set_scale(np.ones((3, 2)))  # a new shape: the variant must not be reused
    for _ in range(2):
        np.testing.assert_allclose(g(x), [3.0, 3.0])


# --------------------------------------------------------------------------
# results


@pytest.mark.parametrize("n", [4, 300])
def test_results_are_fresh_writable_and_unshared(n):
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=n), rng.normal(size=n)
    g = grad(same_sum_module, wrt=(0, 1))
    for _ in range(3):
        gx, gy = g(x, y)
        assert_fresh((gx, gy), (x, y))
        gx += 1.0
        np.testing.assert_allclose(gy, np.ones(n))
    X = rng.normal(size=(n, n))
    g = grad(sum_of_column_sums_squared)
    for _ in range(3):
        d = g(X)
        assert_fresh(d, (X,))
        d *= 0.5
        np.testing.assert_allclose(g(X), 2 * np.broadcast_to(X.sum(0), X.shape), rtol=1e-12)


def same_sum_module(x, y):
    return np.sum(x + y)


def sum_of_column_sums_squared(x):
    return np.sum(np.sum(x, 0) ** 2)


def reshape_out(x):
    return np.reshape(x, (-1,)) * 1.0


def transpose_out(x):
    return x.T


def test_vjp_results_share_nothing_with_dout():
    x = np.arange(6.0).reshape(2, 3)
    for f, dout in ((transpose_out, np.ones((3, 2))), (reshape_out, np.ones(6))):
        g = vjp(f)
        for _ in range(2):
            dx = g(x, dout)
            assert_fresh(dx, (x, dout))
            np.testing.assert_allclose(dx, np.ones((2, 3)))


def test_value_and_grad_results_are_fresh():
    x, y = np.ones(5), np.ones(5)
    g = value_and_grad(same_sum_module, wrt=(0, 1))
    for _ in range(2):
        value, (gx, gy) = g(x, y)
        assert value == 10.0
        assert_fresh((gx, gy), (x, y))


# --------------------------------------------------------------------------
# routing cost and the cache


def test_alternating_signatures_compile_nothing_new():
    g = grad(tanh_sq_sum, wrt=1)
    a = (np.ones((4, 3)), np.ones(3))
    b = (np.ones((5, 2)), np.ones(2))
    for args in (a, a, b, b):
        g(*args)
    before = next(emit._counter)
    for _ in range(20):
        for args in (a, b):
            fd.assert_close(g(*args), tanh_sq_sum_grad_b(*args), rtol=1e-12)
    assert next(emit._counter) == before + 1  # no route, probe or variant was compiled


def test_dropped_functions_are_freed(tmp_path):
    make, _ = load(
        tmp_path,
        "def make(k):\n"
        "    big = np.full(131072, float(k))  # 1 MB\n"
        "    def f(x):\n"
        "        return np.sum(x * big[:3])\n"
        "    return f\n",
        "make",
    )
    refs = []
    for k in range(60):
        f = make(k)
        g = grad(f)
        np.testing.assert_allclose(g(np.ones(3)), np.full(3, float(k)))
        np.testing.assert_allclose(g(np.ones(3)), np.full(3, float(k)))
        refs.append(weakref.ref(f.__closure__[0].cell_contents))
        del f, g
    for _ in range(5):  # a weakly keyed cache entry dies in a collection, its contents in the next
        gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive == 0, alive


def test_gradient_kept_after_its_function_is_dropped(tmp_path):
    make, _ = load(
        tmp_path,
        "ACT = np.tanh\n\n\ndef make(c):\n    def f(x):\n        return np.sum(ACT(x) * c)\n"
        "    return f\n",
        "make",
    )
    g = grad(make(2.0))
    gc.collect()
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(g(x), 2.0 * (1 - np.tanh(x) ** 2), rtol=1e-12)
    make.__globals__["ACT"] = np.sin  # a rebuild without the function object
    np.testing.assert_allclose(g(x), 2.0 * np.cos(x), rtol=1e-12)


# --------------------------------------------------------------------------
# what runs must be what is differentiated


def test_decorator_that_changes_the_result_is_refused(tmp_path):
    text = (
        "import functools\n\n\n"
        "def doubled(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(*a):\n"
        "        return 2.0 * fn(*a)\n"
        "    return wrapper\n\n\n"
        "@doubled\n"
        "def f(x):\n"
        "    return np.sum(x * x)\n"
    )
    f, _ = load(tmp_path, text)
    with pytest.raises(TranspileError, match="wrapped by a decorator") as info:
        grad(f)
    assert "wrapper" in str(info.value) and "trust_module" in str(info.value)
    np.testing.assert_allclose(grad(f.__wrapped__)(np.ones(2)), [2.0, 2.0])


def test_source_changed_after_import_is_refused(tmp_path):
    f, module = load(tmp_path, "def f(x):\n    return np.sum(x * x)\n")
    path = module.__file__
    with open(path, "w") as out:
        out.write("import numpy as np\n\ndef f(x):\n    return np.sum(x * x * x)\n")
    import linecache

    linecache.checkcache(path)
    with pytest.raises(TranspileError, match="re-import"):
        grad(f)


def test_unchanged_source_with_imported_module_methods_is_accepted(tmp_path):
    f, _ = load(tmp_path, "import math\n\n\ndef f(x):\n    return np.sum(x) * math.exp(1.0)\n")
    np.testing.assert_allclose(grad(f)(np.ones(2)), [np.e, np.e])


# --------------------------------------------------------------------------
# refusals instead of wrong values


def bare_return(x):
    y = np.sum(x)
    return  # noqa: PLR1711  (the bare return is what is tested)


def falls_through(x):
    if np.sum(x) > 0:
        return np.sum(x)


def with_mode(x, mode):
    if mode == "sq":
        return np.sum(x**2)
    return np.sum(x)


def with_none_default(x, b=None):
    if b is None:
        return np.sum(x**2)
    return np.sum(x * b)


def residuals(w, x):
    return np.tanh(x @ w)


def square_sum(x):
    return np.sum(x * x)


def abs_square_sum(x):
    return np.sum(np.abs(x) ** 2)


def test_function_returning_none_is_refused():
    with pytest.raises(TranspileError, match="None"):
        grad(bare_return)
    with pytest.raises(TranspileError, match="without a return"):
        grad(falls_through)


def test_non_numeric_wrt_argument_is_refused():
    with pytest.raises(TypeError, match="mode.*str"):
        grad(with_mode, wrt=1, allow_unused=True)(np.ones(3), "sq")  # only compared
    with pytest.raises(TypeError, match="default is None"):
        grad(with_none_default, wrt=1)(np.ones(3))
    with pytest.raises(TypeError, match="boolean"):
        grad(square_sum)(np.array([True, False]))
    np.testing.assert_allclose(grad(with_mode)(np.ones(3), "sq"), 2 * np.ones(3))


def test_dout_of_the_wrong_shape_is_refused():
    w, x = np.ones(3), np.ones((5, 3))
    g = vjp(residuals)
    for dout in (np.ones(4), np.ones((5, 5)), 1.0):
        with pytest.raises(ValueError, match=r"dout has shape .*\(5,\)"):
            g(w, x, dout)
    fd.assert_close(g(w, x, np.ones(5)), x.T @ (1 - np.tanh(x @ w) ** 2), rtol=1e-12)


def test_complex_arguments_need_a_real_output_and_matrices_are_refused():
    # complex arguments follow JAX's convention; a complex output (a full reduction,
    # whose seed is folded to 1.0) is refused as JAX refuses it, on every call
    z = np.array([1 + 1j, 2.0])
    for _ in range(3):
        with pytest.raises(TypeError, match="real scalar.*holomorphic=True"):
            grad(square_sum)(z)
        with pytest.raises(TypeError, match="real scalar.*holomorphic=True"):
            grad(square_sum)(1 + 2j)
        with pytest.raises(TypeError, match="real scalar.*holomorphic=True"):
            value_and_grad(square_sum)(z)
        np.testing.assert_allclose(grad(abs_square_sum)(z), 2.0 * np.conj(z))  # d/dx - i d/dy
    with pytest.warns(PendingDeprecationWarning):
        matrix = np.matrix([[1.0, 2.0]])
    with pytest.raises(TypeError, match="np.matrix"):
        grad(square_sum)(matrix)
    # after a refusal, the same gradient still works with good arguments, on both paths
    for _ in range(2):
        np.testing.assert_allclose(grad(square_sum)(np.array([1.0, 2.0])), [2.0, 4.0])


def test_float32_gradient_on_every_call_where_the_function_mixes_in_float64(tmp_path):
    # np.max of a Python number is a float64 array: the values mix in float64, and the
    # generic code (first call) and the shape variant (later ones) used to differ
    text = (
        "def f(x, z):\n"
        "    y = np.sin(z) - z * 0.3\n"
        "    t = np.max(x, axis=-1, keepdims=True) - y\n"
        "    return -np.mean(t + z + x)\n\n\n"
        "def looped(x, z):\n"
        "    s = 0.0\n"
        "    for _ in range(2):\n"
        "        s = s + np.sum(np.sin(z) * x)\n"
        "    return s\n"
    )
    f, module = load(tmp_path, text)
    z = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4).astype(np.float32)
    for func in (f, module.looped):
        g = grad(func, wrt=1)
        expected = grad(func, wrt=1)(0.5, z.astype(np.float64))
        for call in range(3):
            got = g(0.5, z)
            assert got.dtype == np.float32, (func.__name__, call, got.dtype)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
