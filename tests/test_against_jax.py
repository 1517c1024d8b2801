"""The complex and spectral gradients against JAX's own (skipped without jax): every row
of ``tests/spectral_funcs.py`` run through ``jax.vjp`` with ``jax.numpy`` in place of
numpy, at 1e-7, dtype included; the programs of ``test_complex_spectral.py`` too."""

import types

import numpy as np
import pytest
import spectral_funcs as sf
import test_complex_spectral as tcs

from transpile import grad, vjp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _in_jax(f):
    """``f`` with ``jax.numpy`` for numpy (and ``jax.numpy.fft`` for ``scipy.fft``)."""
    namespace = {**f.__globals__, "np": jnp, "sfft": jnp.fft}
    return types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__)


def _jax_vjp(f, args, i, dout):
    def of_one(x):
        return _in_jax(f)(*args[:i], x, *args[i + 1 :])

    _, back = jax.vjp(of_one, jnp.asarray(args[i]))
    return np.asarray(back(jnp.asarray(dout))[0])


@pytest.mark.parametrize("r,i", tcs._rows(sf.ROWS))
def test_vjp_is_jaxs(r, i):
    args, dout = tcs._vjp_case(r, i, r.id + str(i))
    got = vjp(r.func, wrt=i)(*args, dout)
    expected = _jax_vjp(r.func, args, i, dout)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-10)


def test_abs_squared_as_jax():
    assert complex(jax.grad(lambda z: abs(z) ** 2)(3.0 + 4.0j)) == grad(lambda z: abs(z) ** 2)(
        3 + 4j
    )


def test_programs_as_jax():
    rng = np.random.default_rng(3)
    u0 = rng.standard_normal(16)
    k = 2 * np.pi * np.fft.rfftfreq(16, 1.0 / 16)
    expected = jax.grad(_in_jax(tcs.heat))(u0, k, 3, 0.01, 0.5)
    np.testing.assert_allclose(grad(tcs.heat)(u0, k, 3, 0.01, 0.5), expected, rtol=1e-7)
    rest = tcs._two_qubits(rng)
    angles = rng.uniform(-np.pi, np.pi, (3, 2))
    expected = jax.grad(_in_jax(tcs.circuit))(angles, *rest)
    np.testing.assert_allclose(grad(tcs.circuit)(angles, *rest), expected, rtol=1e-7)
