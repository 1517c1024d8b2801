"""Complex numbers in JAX's convention and the discrete Fourier transforms
(``transpile/rules/complex_numbers.py``, ``spectral.py``, ``scipy_fft.py``), against
central differences in the real and the imaginary direction of every entry.

JAX's convention: the gradient of a real ``f`` with respect to ``z = x + iy`` is
``df/dx - i df/dy``, and the vjp of ``f`` with the cotangent ``c`` is the gradient of
``Re(sum(c * f(...)))``; so each row's vjp with a random complex ``dout`` is checked
against central differences of that real function (an inner-product check of the
adjoint, in both directions of each complex entry), on a first call and a later one.
"""

import copy
import threading

import numpy as np
import pytest
import spectral_funcs as sf
from strict_array import StrictArray, strict, to_numpy

from transpile import grad, hvp, jvp, source, value_and_grad, vjp
from transpile.rules import complex_numbers, declarations, optional_families
from transpile.rules import spectral as spectral_rules

STEP = 1e-4


def _rng(key):
    return np.random.default_rng(abs(hash(key)) % 2**32 if False else len(key) * 7919 + 17)


def _draw(r, key):
    rng = np.random.default_rng(sum(map(ord, key)) * 31 + len(key))
    return [make(rng) for make in r.args], rng


def _like(rng, value):
    """A random value of ``value``'s shape, complex where it is."""
    shape = np.shape(value)
    if np.iscomplexobj(value):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return rng.standard_normal(shape)


def _richardson(phi):
    def d(h):
        return (phi(h) - phi(-h)) / (2 * h)

    return (4 * d(STEP / 2) - d(STEP)) / 3


def _numeric_vjp(f, args, i, dout):
    """The gradient of ``Re(sum(dout * f(*args)))`` in ``args[i]``: ``d/dx - i d/dy``."""
    x = np.asarray(args[i])
    out = np.zeros(x.shape, dtype=x.dtype if np.iscomplexobj(x) else np.float64)
    directions = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
    for k in np.ndindex(x.shape):
        for unit in directions:

            def phi(h, k=k, unit=unit):
                moved = list(copy.deepcopy(args))
                moved[i] = x.astype(complex if unit == 1j else x.dtype, copy=True)
                moved[i][k] += h * unit
                return np.real(np.sum(dout * f(*moved)))

            slope = _richardson(phi)
            out[k] += slope if unit == 1.0 else -1j * slope
    return out


def _numeric_jvp(f, args, i, tangent):
    def phi(h):
        moved = list(copy.deepcopy(args))
        moved[i] = moved[i] + h * tangent
        return f(*moved)

    return _richardson(phi)


def _rows(rows):
    return [pytest.param(r, i, id=f"{r.id}-wrt{i}") for r in rows for i in r.wrt]


def _vjp_case(r, i, key):
    args, rng = _draw(r, key)
    out = r.func(*copy.deepcopy(args))
    dout = _like(rng, out)
    return args, dout


@pytest.mark.parametrize("r,i", _rows(sf.ROWS))
def test_vjp_against_central_differences(r, i):
    args, dout = _vjp_case(r, i, r.id + str(i))
    pristine = copy.deepcopy(args)
    g = vjp(r.func, wrt=i)
    first = g(*args, dout)
    later = g(*args, dout)
    for a, p in zip(args, pristine):
        np.testing.assert_array_equal(a, p)  # the arguments are not modified
    expected = _numeric_vjp(r.func, args, i, dout)
    for got in (first, later):
        assert np.shape(got) == np.shape(args[i])
        assert np.iscomplexobj(got) == np.iscomplexobj(args[i]), got.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("r,i", _rows([r for r in sf.ROWS if r.jvp]))
def test_jvp_against_central_differences(r, i):
    args, rng = _draw(r, r.id + "jvp" + str(i))
    tangent = _like(rng, args[i])
    h = jvp(r.func, wrt=i)
    for _ in range(2):  # a first call and a later one
        out, tout = h(*args, tangent)
        np.testing.assert_allclose(out, r.func(*args), rtol=1e-12, atol=1e-12)
        expected = _numeric_jvp(r.func, args, i, tangent)
        np.testing.assert_allclose(tout, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("r,i", _rows([r for r in sf.ROWS if r.strict]))
def test_vjp_on_the_strict_array_double(r, i):
    """Each rule runs where the arrays are not numpy's (cupy's stand-in), and agrees."""
    args, dout = _vjp_case(r, i, r.id + str(i))
    expected = vjp(r.func, wrt=i)(*args, dout)
    g = vjp(r.func, wrt=i)
    for _ in range(2):
        got = g(*strict(args), strict(np.asarray(dout)))
        assert isinstance(got, StrictArray), type(got)
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-10, atol=1e-12)


SINGLE = [
    r
    for r in sf.ROWS
    if r.func
    in (
        sf.c_abs,
        sf.c_holomorphic,
        sf.f_fft,
        sf.f_rfft,
        sf.f_irfft,
        sf.f_fft2,
        sf.f_irfftn,
        sf.c_vdot,
    )
]


@pytest.mark.parametrize("r,i", _rows(SINGLE))
def test_complex64_in_complex64_out(r, i):
    args, dout = _vjp_case(r, i, r.id + str(i))
    low = [a.astype(np.complex64 if np.iscomplexobj(a) else np.float32) for a in args]
    dout = dout.astype(np.complex64 if np.iscomplexobj(dout) else np.float32)
    got = vjp(r.func, wrt=i)(*low, dout)
    assert got.dtype == low[i].dtype, (got.dtype, low[i].dtype)
    expected = _numeric_vjp(r.func, args, i, dout.astype(np.complex128))
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)


# --------------------------------------------------------------------------
# JAX's values


def test_abs_squared_is_jaxs_gradient():
    g = grad(lambda z: abs(z) ** 2)
    assert g(3 + 4j) == 6 - 8j
    assert g(3 + 4j) == 6 - 8j  # a later call
    assert np.conj(g(3 + 4j)) == 6 + 8j  # the direction of steepest ascent


def test_real_part_of_a_holomorphic_function():
    # Re(z^2) = x^2 - y^2: d/dx - i d/dy = 2x + 2iy = 2z, as jax.grad gives
    def f(z):
        return np.real(z * z)

    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    np.testing.assert_allclose(grad(lambda w: np.sum(f(w)))(z), 2 * z)


def test_a_real_arguments_gradient_is_real():
    h = np.array([[1.0, 2.0j], [-2.0j, 3.0]])

    def energy(x):
        return np.sum(np.abs(h @ x) ** 2)

    x = np.array([1.0, 2.0])
    for _ in range(2):
        g = grad(energy)(x)
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, 2 * np.real(np.conj(h).T @ h @ x), rtol=1e-12)


def test_a_complex_cotangent_of_a_real_output_is_refused():
    with pytest.raises(TypeError, match="real output's cotangent is real"):
        vjp(sf.c_abs)(np.array([1.0 + 1.0j]), np.array([1.0 + 0.5j]))


def test_grad_of_a_complex_output_is_refused():
    with pytest.raises(TypeError, match="real scalar"):
        grad(lambda z: z * z)(1.0 + 1.0j)


# --------------------------------------------------------------------------
# Programs


def heat(u0, k, steps, dt, nu):
    """The 1-D heat equation on a periodic grid, integrated exactly in Fourier space
    (``k``: the wavenumbers, ``2 pi np.fft.rfftfreq(n, 1 / n)``)."""
    n = u0.shape[0]
    u = u0
    for _ in range(steps):
        u = np.fft.irfft(np.fft.rfft(u) * np.exp(-nu * k**2 * dt), n=n)
    return np.sum((u - np.sin(u0)) ** 2)


def circuit(angles, h, psi0, cnot):
    """<psi|H|psi> of a two-qubit state made by rotations and CNOTs."""
    psi = psi0
    for layer in range(angles.shape[0]):
        c0, s0 = np.cos(angles[layer, 0] / 2), np.sin(angles[layer, 0] / 2)
        c1, s1 = np.cos(angles[layer, 1] / 2), np.sin(angles[layer, 1] / 2)
        rx = np.stack([np.stack([c0 + 0j, -1j * s0]), np.stack([-1j * s0, c0 + 0j])])
        ry = np.stack([np.stack([c1, -s1]), np.stack([s1, c1])])
        psi = cnot @ (np.kron(rx, ry) @ psi)
    return np.real(np.vdot(psi, h @ psi))


def _central(f, x, *rest):
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = 1.0
        out[k] = _richardson(lambda s: f(x + s * e, *rest))
    return out


def test_heat_equation_in_its_initial_condition():
    rng = np.random.default_rng(3)
    u0 = rng.standard_normal(16)
    k = 2 * np.pi * np.fft.rfftfreq(16, 1.0 / 16)
    g = grad(heat)
    expected = _central(heat, u0, k, 3, 0.01, 0.5)
    for _ in range(2):
        got = g(u0, k, 3, 0.01, 0.5)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    for _ in range(2):
        strict_got = g(strict(u0), strict(k), 3, 0.01, 0.5)
        assert isinstance(strict_got, StrictArray)
        np.testing.assert_allclose(to_numpy(strict_got), expected, rtol=1e-6, atol=1e-9)
    assert "spectral.unrfft(" in source(g) and "spectral.unirfft(" in source(g)


def _two_qubits(rng):
    b = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    psi0 = np.array([1.0 + 0j, 0, 0, 0])
    cnot = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=complex)
    return b + np.conj(b).T, psi0, cnot


def test_quantum_circuit_expectation_in_its_angles():
    rng = np.random.default_rng(5)
    rest = _two_qubits(rng)
    angles = rng.uniform(-np.pi, np.pi, (3, 2))
    g = value_and_grad(circuit)
    expected = _central(circuit, angles, *rest)
    for _ in range(2):
        value, got = g(angles, *rest)
        np.testing.assert_allclose(value, circuit(angles, *rest), rtol=1e-12)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    for _ in range(2):
        _, strict_got = g(strict(angles), *strict(list(rest)))
        assert isinstance(strict_got, StrictArray)
        np.testing.assert_allclose(to_numpy(strict_got), expected, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# Coverage: every rule of these families has a row, and the rows exercise their targets


def test_every_complex_and_spectral_rule_has_a_row():
    families = [complex_numbers, spectral_rules]
    families += [f for f in optional_families() if f.__name__.endswith("scipy_fft")]
    targets = [t for r in sf.ROWS for t in r.targets]
    missing = []
    for family in families:
        for decl, _ in declarations(family):
            missing += [repr(o) for o in decl.objects if not any(t is o for t in targets)]
            missing += [m for m in decl.methods if m not in targets]
            missing += ["." + a for a in decl.attributes if "." + a not in targets]
    assert not missing, f"rules without a row: {missing}"


@pytest.mark.parametrize(
    "f,what",
    [
        (lambda a: np.sum(np.linalg.svd(a, compute_uv=False)), "np.linalg.svd"),
        (lambda a: np.sum(np.abs(np.linalg.qr(a)[1])), "np.linalg.qr"),
        (lambda a: np.sum(np.abs(np.linalg.cholesky(a @ np.conj(a).T))), "np.linalg.cholesky"),
    ],
    ids=["svd", "qr", "cholesky"],
)
def test_a_rule_without_a_complex_form_is_refused_by_name(f, what):
    a = np.eye(2) * (1.0 + 1.0j) + 0.1
    with pytest.raises(NotImplementedError, match=what.replace(".", r"\.")):
        grad(f)(a)
    with pytest.raises(NotImplementedError, match=what.replace(".", r"\.")):
        jvp(f)(a, np.ones_like(a))


def _absolute_energy(x, h):
    return np.sum(np.abs(x) ** 3) + np.real(np.vdot(h @ x, h @ x))


def test_second_order_through_abs_and_vdot():
    """hvp through the complex helpers' own rules (runtime_complex.py), on real x."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(3)
    h = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    v = rng.standard_normal(3)
    g = grad(_absolute_energy)
    expected = _richardson(lambda s: g(x + s * v, h))
    product = hvp(_absolute_energy)
    for _ in range(2):
        np.testing.assert_allclose(product(x, h, v), expected, rtol=1e-6, atol=1e-8)


def test_abs_adjoint_in_a_shape_variant_real_and_complex():
    """A shape variant writes np.abs's adjoint of a real x as g * np.sign(x); of a
    complex z it stays conj(z) / |z| (JAX's convention), on every call."""

    def f(x):
        return np.sum(np.abs(x) * 3.0)

    g = grad(f)
    x = np.array([-1.5, 0.5, 2.0])
    z = np.array([3 + 4j, -1 + 1j, 2j])
    for _ in range(3):  # the first call (the probe) and the variants after it
        np.testing.assert_allclose(g(x), 3.0 * np.sign(x))
        np.testing.assert_allclose(g(z), 3.0 * np.conj(z) / np.abs(z))
    assert "np.sign(x)" in source(g, x) and "ops.unabs" not in source(g, x)


def test_real_argument_gradient_stays_real_on_the_variant_routes():
    """The routes of real signatures skip the realness check; a signature with a
    complex argument keeps it: x's gradient is real (2 x |z|^2) on every call."""

    def f(x, z):
        return np.sum(np.abs(x * z) ** 2)

    g = grad(f, wrt=0)
    x = np.array([0.5, -1.0, 2.0])
    z = np.array([1 + 2j, -0.5j, 3.0 + 0j])
    for _ in range(4):  # the probe, then the variants, for the complex and the real z
        got = g(x, z)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, 2.0 * x * np.abs(z) ** 2)
        np.testing.assert_allclose(g(x, z.real), 2.0 * x * z.real**2)


def test_complex_arguments_first_calls_racing_in_threads():
    """Threads making the first calls of one gradient with complex arguments: each gets
    JAX's gradient (conj(z) / |z| * 3), and a complex output raises in every thread."""

    def f(z):
        return np.sum(np.abs(z) * 3.0)

    def complex_out(z):
        return np.sum(z * z)

    g, h = grad(f), grad(complex_out)
    z = np.array([3 + 4j, -1 + 1j, 2j])
    results, refused = [], []

    def work():
        for _ in range(3):
            results.append(g(z))
            try:
                h(z)
            except TypeError as e:
                refused.append("real scalar" in str(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 12 and refused == [True] * 12
    for got in results:
        np.testing.assert_allclose(got, 3.0 * np.conj(z) / np.abs(z))
