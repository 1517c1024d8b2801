"""Randomly generated straight-line programs, differentiated on both paths.

Each program chains elementwise math, broadcasting between arrays of different
shapes (and Python floats), reductions with and without axes, matrix products,
means and sigmoids under logarithms: the ground where shape specialization
rewrites the most. Every gradient is called twice (the generic path, then the
specialized variant, with large-buffer reuse forced on), and both results are
checked against central finite differences; arguments must come back untouched
and float32 arguments must get float32 gradients.

The default run checks a few dozen programs; ``pytest -m slow`` checks many more.
"""

import copy
import importlib.util
import random

import fd
import numpy as np
import pytest
from variants import call_twice

from transpile import grad
from transpile.cleanup import buffers

SHAPES = [(3, 4), (4,), (3, 1), (1, 4), (), (2, 3, 4)]
UNARY_OR_BINARY = [
    "np.tanh({a}) * {b}",
    "{a} * {b} + 0.1",
    "np.sin({a}) - {b} * 0.3",
    "-{a} / (1.5 + {b} * {b})",
    "np.exp(0.2 * {a}) / (1.0 + {b} * {b})",
    "np.maximum({a}, {b})",
    "np.where({a} > 0, {a}, 0.2 * {b})",
    "({a} - {b}) ** 2",
    "np.sum({a}, axis=-1, keepdims=True) * {b}",
    "np.mean({a}) + {b}",
    "np.mean({a}, axis=0) * {b}",
    "np.sum({a} * {b}, axis=0)",
    "np.max({a}, axis=-1, keepdims=True) - {b}",
    "1.0 / (1.0 + np.exp(-{a}))",
    "np.log(1.0 + {a} * {a}) * {b}",
    "{a} @ W",
    "W.T * {b}",
    "np.reshape({a}, (-1,))[0] * {b}",
    "np.sum({a}) * {b}",
    "np.log(1.0 / (1.0 + np.exp(-{a}))) * {b}",
    "np.log(1.0 - 1.0 / (1.0 + np.exp(-{a}))) + {b}",
]
FINALS = [
    "np.sum({e})",
    "np.mean({e})",
    "-np.mean({e})",
    "np.sum({e} * {e})",
    "np.mean(np.sum({e}, axis=-1))",
    "np.sum(np.mean({e}, axis=0) ** 2)",
]


def program(seed):
    rnd = random.Random(seed)
    lines = ["import numpy as np", "", "", "def f(x, y, z, W):"]
    names = ["x", "y", "z"]
    for k in range(rnd.randint(2, 6)):
        target = rnd.choice(names + ["t1", "t2"]) if rnd.random() < 0.5 else f"v{k}"
        expression = rnd.choice(UNARY_OR_BINARY).format(a=rnd.choice(names), b=rnd.choice(names))
        lines.append(f"    {target} = {expression}")
        if target not in names:
            names.append(target)
    summed = " + ".join(rnd.sample(names, min(3, len(names))))
    lines.append("    return " + rnd.choice(FINALS).format(e=f"({summed})"))
    shapes = [rnd.choice(SHAPES) for _ in range(3)]
    return "\n".join(lines) + "\n", shapes, rnd.choice([(4, 4), (4, 2), (4,)])


def load(source, seed, folder):
    path = folder / f"random_program_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"random_program_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def check(seed, folder):
    source, shapes, w_shape = program(seed)
    f = load(source, seed, folder)
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=s) * 0.7 if s else float(rng.normal()) for s in shapes]
    args.append(rng.normal(size=w_shape) * 0.5)
    try:
        with np.errstate(all="ignore"):
            value = f(*args)
    except ValueError:
        return False  # shapes that do not combine: not a program
    if np.ndim(value) != 0 or not np.isfinite(value):
        return False
    wrt = (0, 1, 2, 3)
    pristine = copy.deepcopy(args)
    g = grad(f, wrt=wrt, allow_unused=True)  # a random program may not read an argument
    got = call_twice(g, *args)
    for a, b in zip(args, pristine):
        np.testing.assert_array_equal(a, b)
    fd.assert_close(got, fd.numeric_grad(f, args, wrt), rtol=1e-4, atol=1e-6, path=source)
    if all(isinstance(a, np.ndarray) for a in args):
        single = [a.astype(np.float32) for a in args]
        for d in call_twice(g, *single):
            assert d.dtype == np.float32, source
    return True


@pytest.fixture
def every_buffer_is_large(monkeypatch):
    monkeypatch.setattr(buffers, "REUSE_SIZE", 1)


def _run(seeds, folder):
    checked = sum(check(seed, folder) for seed in seeds)
    assert checked >= len(seeds) // 2  # most programs combine their shapes


def test_random_programs(tmp_path, every_buffer_is_large):
    _run(range(40), tmp_path)


@pytest.mark.slow
def test_random_programs_exhaustive(tmp_path, every_buffer_is_large):
    _run(range(40, 1540), tmp_path)
