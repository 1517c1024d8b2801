"""The compiler leaves no reference cycles behind.

While it runs, the cyclic garbage collector is paused (``gcpause``); what it made
in cycles is collected in one pass when it is turned back on, and that pass cost a
fifth of a long function's compile time when each control-flow graph, rule
expansion and recursive nested function left a cycle. Counted here with the
collector off: what ``gc.collect`` finds after a gradient is made and called.
"""

import gc
import importlib.util
import sys
from pathlib import Path

import numpy as np

from transpile import grad, hvp, jvp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import transpile_time


def _cyclic_garbage_after(make):
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        make()
        return gc.collect()
    finally:
        if was_on:
            gc.enable()


def _program(tmp_path, family, n):
    path = tmp_path / f"{family}{n}.py"
    path.write_text(transpile_time.program(family, n))
    spec = importlib.util.spec_from_file_location(f"garbage_{family}{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def test_a_long_loop_gradient_leaves_no_cycles(tmp_path):
    f = _program(tmp_path, "loop", 200)
    x, y = transpile_time.program_args()
    results = []

    def make():
        g = grad(f)
        results.extend([g(x, y), g(x, y), g(x, y)])  # generic, probe, shape variant

    found = _cyclic_garbage_after(make)
    # about 128,000 objects in cycles before (control-flow graphs, rule expansions)
    assert found < 100, found
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    np.testing.assert_allclose(results[2], results[0], rtol=1e-12)


def test_branches_forward_mode_and_hvp_leave_no_cycles():
    def f(x):
        s = 0.0
        for i in range(3):
            if i % 2:
                s = s + np.sum(np.tanh(x) * x)
            else:
                s = s - np.sum(x * x)
        return s

    x = np.linspace(-1.0, 1.0, 5)
    v = np.ones(5)

    def make():
        grad(f)(x)
        jvp(f)(x, v)
        hvp(f)(x, v)

    assert _cyclic_garbage_after(make) < 100
