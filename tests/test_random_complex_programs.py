"""Random programs through complex values, differentiated once and twice.

Each program makes a complex vector from a real one, runs a few steps of complex
arithmetic, elementwise functions, FFTs, a convolution, reversal, a loop, a branch and
user helpers (one returning a tuple of a complex and a real array), and returns a real
number. Its gradient is checked against central finite differences (JAX's convention
makes a real function of real inputs' gradient the ordinary one), and its
Hessian-vector product, forward over reverse (``hvp``) and reverse over reverse
(``grad`` of an inner product with the gradient), against central differences of that
gradient; each on a first call and a later one.

The default run checks a few dozen programs; ``pytest -m slow`` checks many more.
"""

import importlib.util
import random

import numpy as np
import pytest

from transpile import grad, hvp

STEPS = [
    "z = np.exp(z * 0.3)",
    "z = np.sin(z) * 0.5",
    "z = z * np.conj(z) * 0.2 + z",
    "z = z @ M",
    "z = np.fft.fft(z) * 0.3",
    "z = np.fft.ifft(z) * 2.0",
    "z = np.cumsum(z) * 0.5",
    "z = z[::-1] * (0.5 - 0.25j)",
    "z, r = split(z)\n    z = z + r",
    "z = twice(z)",
    "z, r = halves(z)\n    z = z * (1.0 - 0.5j) + r",
    "z = np.where(np.real(z) > 0, z, z * 0.5)",
    "z = np.real(z) * 1.5 + 1j * np.imag(z)",
    "z = np.conj(z) + 0.1 * z * z",
    "z = np.tanh(z * 0.2)",
    "z = np.log(z * np.conj(z) + 1.0) + z",
    "z = np.sqrt(z * z + 4.0)",
    "z = np.convolve(z, np.array([0.5, 0.25j, 0.1]), 'same')",
    "z = z / (1.0 + 0.1 * z * np.conj(z))",
    "z = np.stack([z, z * 1j])[1] * 0.5",
    "z = np.concatenate([z[:2] * 2.0, z[2:]])",
    "z = np.abs(z) * (1.0 + 0.5j) + 0.5 * z",
    "for k in range(2):\n        z = z * (0.9 + 0.1j) + 0.05 * np.roll(z, 1)",
    "if np.real(np.sum(z)) > 0:\n        z = z * 1.1\n    else:\n        z = z * (0.9 - 0.2j)",
]
STARTS = [
    "z = a * (1.0 + 0.5j) + 1j * np.sin(a)",
    "z = a + 1j * a[::-1] * 0.5",
    "z = np.exp(1j * a) * a",
]
ENDS = [
    "return np.sum(np.real(z * np.conj(z)) * w)",
    "return np.real(np.vdot(z, z * w))",
    "return np.sum(np.imag(z) ** 2 + np.real(z) * w)",
    "return np.sum(np.abs(z) ** 2)",
    "return np.sum(np.abs(z) * w)",
]
HEAD = """import numpy as np

M = np.array(
    [[0.5, 0.1j, 0.0, 0.2], [0.1, 0.4, -0.2j, 0.0], [0.0, 0.3, 0.5, 0.1j], [0.2j, 0.0, 0.1, 0.6]]
)
w = np.array([1.0, 0.5, 2.0, 1.5])


def split(z):
    return z * 0.5, np.real(z) * 0.25


def twice(z):
    y = z * z * 0.1
    return y + np.conj(z) * 0.3


def halves(z):  # a branch keeps it a callee of its own (straight-line helpers are inlined)
    if z.shape[0] > 2:
        return z * 0.5, np.real(z) * 0.25
    return z, np.real(z)


"""


def program(seed):
    rnd = random.Random(seed)
    steps = [rnd.choice(STEPS) for _ in range(rnd.randint(1, 4))]
    body = [rnd.choice(STARTS), *steps, rnd.choice(ENDS)]
    return HEAD + "def f(a):\n" + "".join(f"    {line}\n" for line in body)


def load(source, seed, folder):
    path = folder / f"complex_program_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"complex_program_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def _central(f, x, v, h):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def check(seed, folder):
    source = program(seed)
    f = load(source, seed, folder)
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=4) * 0.7, rng.normal(size=4)
    g = grad(f)
    numeric = np.array([_central(f, x, e, 1e-6) for e in np.eye(4)])
    product = hvp(f)

    def along(x, v):
        return np.sum(g(x) * v)

    twice = grad(along)
    for _ in range(2):  # the first call and a later one
        np.testing.assert_allclose(g(x), numeric, rtol=1e-5, atol=1e-6, err_msg=source)
        want = _central(g, x, v, 1e-5)
        np.testing.assert_allclose(product(x, v), want, rtol=1e-4, atol=1e-5, err_msg=source)
        np.testing.assert_allclose(twice(x, v), want, rtol=1e-4, atol=1e-5, err_msg=source)


def test_random_complex_programs(tmp_path):
    for seed in range(30):
        check(seed, tmp_path)


@pytest.mark.slow
def test_random_complex_programs_exhaustive(tmp_path):
    for seed in range(30, 1030):
        check(seed, tmp_path)
