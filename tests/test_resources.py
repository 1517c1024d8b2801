"""What a gradient keeps, and what its errors show (issue 19, item 11).

A dropped function is freed with everything made for it, also where its module's
globals hold it (every module-level function): the cache's entries live on the
function. A file is parsed once for the lambdas in it, while its lines stay the
same. An error raised in generated code names the user's file and line."""

import gc
import inspect
import linecache
import sys
import traceback
import types
import weakref

import numpy as np
import pytest

from transpile import grad, hvp, jvp, value_and_grad, vjp
from transpile.front import lambda_source

X = np.array([0.3, -0.5, 0.7])


def _module_function(i, tag):
    """``f`` of a new module made by ``exec`` (its source registered in linecache)."""
    source = f"import numpy as np\n\n\ndef f(x):\n    return np.sum(np.sin(x) * {i + 1}.0)\n"
    filename = f"<resources {tag} {i}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"resources_{tag}_{i}")
    exec(compile(source, filename, "exec"), module.__dict__)
    return module.f, filename


@pytest.mark.parametrize(
    "make",
    [
        lambda f: grad(f)(X) + grad(f)(X),  # the generic code, then a shape variant
        lambda f: value_and_grad(f)(X)[1],
        lambda f: vjp(f)(X, 2.0),
        lambda f: jvp(f)(X, X)[1],
        lambda f: hvp(f)(X, X),
        lambda f: hvp(f, mode="reverse")(X, X),
    ],
    ids=["grad", "value_and_grad", "vjp", "jvp", "hvp", "hvp-reverse"],
)
def test_dropped_module_functions_are_freed(make):
    refs, files = [], []
    for i in range(40):
        f, filename = _module_function(i, str(id(make)))
        assert np.all(np.isfinite(make(f)))
        refs.append(weakref.ref(f))
        files.append(filename)
        del f
    gc.collect()
    alive = [r for r in refs if r() is not None]
    for filename in files:
        linecache.cache.pop(filename, None)
    assert not alive, f"{len(alive)} of {len(refs)} functions still alive"


def test_the_cache_still_answers_for_a_live_function():
    f, filename = _module_function(7, "live")
    first = grad(f)
    assert grad(f).__transpile_dispatch__ is first.__transpile_dispatch__
    np.testing.assert_allclose(first(X), 8.0 * np.cos(X), rtol=1e-12)
    linecache.cache.pop(filename, None)


def test_a_copied_function_dict_does_not_share_entries():
    f, filename = _module_function(3, "copied")

    def other(x):
        return np.sum(x * x)

    grad(f)(X)
    other.__dict__.update(f.__dict__)  # what functools.wraps does to a wrapper
    np.testing.assert_allclose(grad(other)(X), 2.0 * X, rtol=1e-12)
    linecache.cache.pop(filename, None)


def _lambda_file(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import numpy as np\n\n\n"
        + "".join(f"def h{i}(x):\n    return x * {i}.0\n\n\n" for i in range(200))
        + f"def make():\n    return lambda x: {body}\n"
    )
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module, path


def test_a_file_is_parsed_once_for_its_lambdas(tmp_path):
    module, path = _lambda_file(tmp_path, "many_lambdas", "np.sum(np.tanh(x) * 2.0)")
    np.testing.assert_allclose(grad(module.make())(X), 2.0 / np.cosh(X) ** 2, rtol=1e-12)
    index = lambda_source._INDEX[str(path)]
    np.testing.assert_allclose(grad(module.make())(X), 2.0 / np.cosh(X) ** 2, rtol=1e-12)
    assert lambda_source._INDEX[str(path)] is index  # the second lambda read the same parse


def test_a_changed_file_is_parsed_again(tmp_path):
    module, path = _lambda_file(tmp_path, "changing_lambdas", "np.sum(np.tanh(x) * 2.0)")
    grad(module.make())(X)
    module, path = _lambda_file(tmp_path, "changing_lambdas", "np.sum(x * x * 3.0)")
    linecache.checkcache(str(path))
    np.testing.assert_allclose(grad(module.make())(X), 6.0 * X, rtol=1e-12)
    assert lambda_source._INDEX[str(path)][0] is linecache.getlines(str(path))


def raises_in_helper(x):
    return checked(x) * 2.0


def checked(x):
    y = np.sin(x)
    if np.any(x > 10.0):
        raise ValueError("x too large")  # the line the traceback must name
    return np.sum(y * x)


def singular(a):
    return np.sum(np.linalg.solve(a, np.ones(2)))


def _line_of(func, text):
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
@pytest.mark.parametrize(
    "call, func, text, warm",
    [
        (lambda: grad(raises_in_helper)(np.array([11.0, 1.0])), checked, "raise ValueError", 0),
        (lambda: jvp(raises_in_helper)(np.array([11.0, 1.0]), X[:2]), checked, "raise Value", 0),
        (lambda: grad(singular)(np.zeros((2, 2))), singular, "np.linalg.solve", 0),
        (lambda: grad(singular)(np.zeros((2, 2))), singular, "np.linalg.solve", 1),
    ],
    ids=["helper", "jvp", "numpy-first-call", "numpy-in-a-variant"],
)
def test_an_error_in_generated_code_names_the_users_line(call, func, text, warm):
    if warm:
        grad(singular)(np.eye(2))  # a good call first: the failing one runs a shape variant
    with pytest.raises(Exception) as info:
        call()
    formatted = "".join(traceback.format_exception(info.value))
    assert f"{__file__}:{_line_of(func, text)}" in formatted, formatted
