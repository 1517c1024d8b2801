"""The public API's type hints (``py.typed`` ships them), checked by mypy.

``test_public_functions_are_annotated`` needs no type checker: every public function
has a hint on each parameter and on its result. The mypy tests (skipped without mypy,
which the ``test`` extra installs) check the public modules, then a user's script that
uses every public function, and that mypy flags the mistakes the hints exist for.
The runtime folder installs as ``transpile_runtime``, so mypy reads both packages
through links under those names in a temporary folder.
"""

import contextlib
import inspect
from pathlib import Path

import pytest

import transpile

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = [
    "transpile",
    "transpile.api",
    "transpile.checking",
    "transpile.jacobians",
    "transpile.second_order",
    "transpile.core.template",
    "transpile.rules.user_rules",
    "transpile_runtime",
    "transpile_runtime.gradcheck",
    "transpile_runtime.structure",
]

USES = """\
import numpy as np
from transpile import check_grad, checkpoint, d, defvjp, grad, hessian, hvp, jacobian, jvp, nondifferentiable, rule, source, stop_gradient, value_and_grad, vjp


def loss(w: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum(np.tanh(x @ w) ** 2))


def softplus(x: np.ndarray) -> np.ndarray:
    return np.log1p(np.exp(x))


def scale(x: np.ndarray, k: float) -> np.ndarray:
    return x * k


w, x = np.ones(3), np.ones((2, 3))
dloss = grad(loss)
print(dloss(w, x), value_and_grad(loss, wrt=("w", "x"))(w, x), vjp(loss, wrt=[0])(w, x, 1.0))
print(jvp(loss, wrt="w")(w, x, w), hvp(loss)(w, x, w), hessian(loss)(w, x))
print(jacobian(softplus, mode="forward")(w), source(dloss), source(dloss, w, x))
print(check_grad(loss, w, x, wrt=0, rtol=1e-5).passed)
doubled: np.ndarray = stop_gradient(w) * 2.0
same = defvjp(scale, lambda g, ans, x, k: g * k, None)
print(same(w, 2.0), nondifferentiable(softplus)(w), checkpoint(softplus)(w))
print(grad(loss, argnums=0, has_aux=False, verbose=2)(w, x))
print(check_grad(loss, w, x, mode="directions", n=2, order=2).passed)
print(check_grad(loss, w, x, entries=3, seed=1).passed)


@grad(wrt="w")
def dloss2(w: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum(w * x))


@rule(softplus)
def _(y: np.ndarray, x: np.ndarray) -> None:
    d[x] += d[y] / (1.0 + np.exp(-x))
"""

MISTAKES = {  # a line of a script, and what mypy says of it
    "grad(loss, wrt=1.5)": 'Argument "wrt" to "grad" has incompatible type "float"',
    "jvp(loss, verbose='yes')": 'Argument "verbose" to "jvp" has incompatible type "str"',
    "source('dloss')": 'Argument 1 to "source" has incompatible type "str"',
    "text: str = stop_gradient(1.0)": 'Incompatible types in assignment (expression has type "float"',
    "defvjp(softplus, 3)": 'Argument 2 to "defvjp" has incompatible type "int"',
    "hessian(loss, wrt=None)": 'Argument "wrt" to "hessian" has incompatible type "None"',
    "number: int = nondifferentiable(softplus)": "Incompatible types in assignment",
    "check_grad(loss, w, x, wrt=2.0)": 'Argument "wrt" to "check_grad" has incompatible type',
    "grad(loss, argnums='w')": 'Argument "argnums" to "grad" has incompatible type "str"',
    "check_grad(loss, w, x, entries='all')": 'Argument "entries" to "check_grad" has',
}


def test_public_functions_are_annotated():
    unannotated = []
    for public in transpile.__all__:
        obj = getattr(transpile, public)
        if not inspect.isfunction(obj):
            continue  # classes (GradReport, insert_grad_of, TranspileError) and d
        sig = inspect.signature(obj)
        missing = [p for p, v in sig.parameters.items() if v.annotation is v.empty]
        if missing or sig.return_annotation is sig.empty:
            unannotated.append(f"{public}{sig}")
    assert not unannotated
    assert (ROOT / "transpile" / "py.typed").is_file()
    assert (ROOT / "runtime" / "py.typed").is_file()


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    api = pytest.importorskip("mypy.api")
    folder = tmp_path_factory.mktemp("typed")
    (folder / "transpile").symlink_to(ROOT / "transpile")
    (folder / "transpile_runtime").symlink_to(ROOT / "runtime")
    config = str(ROOT / "pyproject.toml")
    cache = str(folder / ".mypy_cache")

    def run(*args):
        with contextlib.chdir(folder):  # where mypy finds both packages
            out, err, status = api.run(["--config-file", config, "--cache-dir", cache, *args])
        return status, out + err

    return folder, run


def test_public_modules_type_check(mypy_run):
    folder, run = mypy_run
    modules = [a for m in PUBLIC_MODULES for a in ("-m", m)]
    status, report = run(*modules)
    assert status == 0, report


def test_a_users_script_type_checks(mypy_run):
    folder, run = mypy_run
    script = folder / "uses.py"
    script.write_text(USES)
    status, report = run(script.name)
    assert status == 0, report


def test_mypy_flags_misuse(mypy_run):
    folder, run = mypy_run
    lines = list(MISTAKES)
    script = folder / "misuse.py"
    script.write_text(USES + "\n" + "\n".join(lines) + "\n")
    status, report = run(script.name)
    assert status == 1
    first = USES.count("\n") + 2
    for k, line in enumerate(lines):
        said = [r for r in report.splitlines() if r.startswith(f"{script.name}:{first + k}:")]
        assert said and MISTAKES[line] in " ".join(said), (line, report)
    assert report.count(": error:") == len(lines), report
