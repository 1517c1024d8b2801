"""Large generated functions transpile and give the right gradient.

The programs are the ones ``benchmarks/transpile_time.py`` times: thousands of
elementwise numpy statements ``v{k} = <expr>``, each reading one to three
earlier values, straight-line or as the body of a ``for t in range(3)`` loop
that carries a value. Both the first call (the generic code) and the second
(for straight-line code, the variant specialized to the argument shapes) are
checked against central finite differences. There is no timing assertion: the
benchmark measures speed, this test only that the compiler copes with the size.

The 3,000-statement straight-line case takes about a minute with today's
compiler, so it is marked slow (``pytest -m slow``); the default run checks
1,000 statements of each kind.
"""

import importlib.util
from pathlib import Path

import fd
import numpy as np
import pytest

from transpile import grad

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "transpile_time.py"


def _benchmark_module():
    spec = importlib.util.spec_from_file_location("transpile_time_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("family", "n"),
    [
        ("straight", 1000),
        ("loop", 1000),
        pytest.param("straight", 3000, marks=pytest.mark.slow),
    ],
)
def test_large_function_gradient(family, n, tmp_path):
    bench = _benchmark_module()
    path = tmp_path / f"scale_{family}_{n}.py"
    path.write_text(bench.program(family, n))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = bench.program_args()
    want = fd.numeric_grad(module.f, args, (0, 1))
    scale = max(float(np.max(np.abs(w))) for w in want)
    assert scale > 1e-4, "the generated program's gradient vanished; pick other templates"
    g = grad(module.f, wrt=(0, 1))
    for call in ("first call", "second call"):
        got = g(*args)
        fd.assert_close(got, want, rtol=1e-6, atol=1e-8 * scale, path=f"{call}: grad")
