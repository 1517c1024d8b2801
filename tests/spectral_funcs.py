"""Functions for the complex and spectral rule tests (``tests/test_complex_spectral.py``):
each applies one rule (or two, where one alone has no complex input or output), and
``ROWS`` lists them with the domains of their arguments and the rules they exercise.

Their outputs may be complex: the tests take vjps with complex cotangents, jvps with
complex tangents, and gradients of ``Re(sum(dout * f(...)))``, all against central
differences in the real and the imaginary direction of every entry (JAX's convention).
"""

from dataclasses import dataclass

import numpy as np

try:
    from scipy import fft as sfft
except ImportError:  # the scipy rows are skipped
    sfft = None


# --------------------------------------------------------------------------
# Domains: make(rng) -> array


def real(*shape):
    def make(rng):
        return rng.standard_normal(shape)

    make.label = f"real{list(shape)}"
    return make


def cplx(*shape, margin=0.0):
    """Complex entries with modulus at least ``margin`` (away from abs's kink at 0)."""

    def make(rng):
        z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        if margin:
            z = z / np.abs(z) * (margin + np.abs(z))
        return z

    make.label = f"complex{list(shape)}"
    return make


def hermitian(n):
    """A Hermitian matrix with eigenvalues about 1.5 apart."""

    def make(rng):
        b = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))) * 0.2
        return b + np.conj(b).T + np.diag(np.arange(n) * 1.5 + 1.0)

    make.label = f"hermitian[{n}]"
    return make


def wellcond(n):
    def make(rng):
        a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
        return a * 0.3 + n * np.eye(n)

    make.label = f"wellcond[{n}]"
    return make


@dataclass
class Row:
    func: object
    args: tuple
    targets: tuple
    wrt: tuple = (0,)
    jvp: bool = True
    strict: bool = True  # runs on the strict array double (not scipy.fft, numpy's alone)

    @property
    def id(self):
        return f"{self.func.__name__}({','.join(a.label for a in self.args)})"


ROWS = []


def row(func, *args, targets, wrt=(0,), jvp=True, strict=True):
    ROWS.append(Row(func, args, tuple(targets), wrt, jvp, strict))


# --------------------------------------------------------------------------
# Complex parts, absolute values and angles


def c_real(z):
    return np.real(z)


def c_real_attr(z):
    return z.real * 1.0


def c_imag(z):
    return np.imag(z)


def c_imag_attr(z):
    return z.imag * 1.0


def c_conj(z):
    return np.conj(z)


def c_conj_method(z):
    return z.conj() * 1.0


def c_conjugate_method(z):
    return z.conjugate() * 1.0


def c_abs(z):
    return np.abs(z)


def c_absolute(z):
    return np.absolute(z)


def c_builtin_abs(z):
    return abs(z) ** 2


def c_angle(z):
    return np.angle(z)


def c_angle_deg(z):
    return np.angle(z, deg=True)


def c_vdot(a, b):
    return np.vdot(a, b)


def c_mixed(x, z):
    """A real argument meets a complex one: its gradient stays real."""
    return np.exp(x * z) / (1.0 + z * z)


def c_holomorphic(z):
    return np.sin(z) * np.exp(z) + np.sqrt(z) - np.log(z) + z**3 / np.cosh(z)


def c_matmul(a, b):
    return a @ b


def c_solve(a, b):
    return np.linalg.solve(a, b)


def c_inv(a):
    return np.linalg.inv(a)


def c_det(a):
    return np.linalg.det(a)


def c_eigvalsh(a):
    # JAX's eigh reads (a + a^H) / 2: the same here, so every direction is one
    return np.linalg.eigvalsh((a + np.conj(a).T) / 2)


def c_eigh_values(a):
    w, v = np.linalg.eigh((a + np.conj(a).T) / 2)
    return w


def c_eigh_projector(a):
    """A function of the eigenvectors that their phases do not change."""
    w, v = np.linalg.eigh((a + np.conj(a).T) / 2)
    return np.abs(v[0]) ** 2 + w


row(c_real, cplx(3), targets=[np.real])
row(c_real, real(3), targets=[np.real])
row(c_real_attr, cplx(2, 3), targets=[".real"])
row(c_imag, cplx(3), targets=[np.imag])
row(c_imag_attr, cplx(2, 3), targets=[".imag"])
row(c_conj, cplx(3), targets=[np.conjugate])
row(c_conj_method, cplx(3), targets=["conj"])
row(c_conjugate_method, cplx(3), targets=["conjugate"])
row(c_abs, cplx(4, margin=0.3), targets=[np.abs])
row(c_abs, real(4), targets=[np.abs])
row(c_absolute, cplx(4, margin=0.3), targets=[np.absolute])
row(c_builtin_abs, cplx(3, margin=0.3), targets=[abs])
row(c_angle, cplx(4, margin=0.3), targets=[np.angle])
row(c_angle_deg, cplx(4, margin=0.3), targets=[np.angle])
row(c_vdot, cplx(4), cplx(4), targets=[np.vdot], wrt=(0, 1))
row(c_vdot, cplx(2, 3), real(6), targets=[np.vdot], wrt=(0, 1))
row(c_mixed, real(3), cplx(3), targets=[], wrt=(0, 1))
row(c_holomorphic, cplx(3, margin=0.5), targets=[])
row(c_matmul, cplx(2, 3), cplx(3, 2), targets=[], wrt=(0, 1))
row(c_matmul, real(2, 3), cplx(3), targets=[], wrt=(0, 1))
row(c_solve, wellcond(3), cplx(3, 2), targets=[], wrt=(0, 1))
row(c_inv, wellcond(3), targets=[])
row(c_det, wellcond(3), targets=[])
row(c_eigvalsh, hermitian(3), targets=[np.linalg.eigvalsh])
row(c_eigh_values, hermitian(3), targets=[np.linalg.eigh])
row(c_eigh_projector, hermitian(3), targets=[np.linalg.eigh])


# --------------------------------------------------------------------------
# The discrete Fourier transforms


def f_fft(x):
    return np.fft.fft(x)


def f_fft_n_pad(x):
    return np.fft.fft(x, n=7, norm="ortho")


def f_fft_n_crop(x):
    return np.fft.fft(x, 3, 0, "forward")


def f_ifft(x):
    return np.fft.ifft(x, axis=0)


def f_ifft_n(x):
    return np.fft.ifft(x, n=6, norm="forward")


def f_rfft(x):
    return np.fft.rfft(x)


def f_rfft_odd(x):
    return np.fft.rfft(x, n=7, norm="ortho")


def f_rfft_crop(x):
    return np.fft.rfft(x, n=4, axis=0, norm="forward")


def f_irfft(y):
    return np.fft.irfft(y)


def f_irfft_odd(y):
    return np.fft.irfft(y, n=7, norm="ortho")


def f_irfft_pad(y):
    return np.fft.irfft(y, n=12, axis=0, norm="forward")


def f_irfft_crop(y):
    return np.fft.irfft(y, 4)


def f_fft2(x):
    return np.fft.fft2(x)


def f_fft2_s(x):
    return np.fft.fft2(x, s=(3, 5), norm="ortho")


def f_ifft2(x):
    return np.fft.ifft2(x, axes=(0, 2))


def f_rfft2(x):
    return np.fft.rfft2(x)


def f_rfft2_s(x):
    return np.fft.rfft2(x, s=(4, 5), norm="forward")


def f_irfft2(y):
    return np.fft.irfft2(y)


def f_irfft2_s(y):
    return np.fft.irfft2(y, s=(3, 5), norm="ortho")


def f_fftn(x):
    return np.fft.fftn(x, axes=(0, 2))


def f_fftn_s(x):
    return np.fft.fftn(x, s=(2, 5), axes=(1, 2), norm="forward")


def f_ifftn(x):
    return np.fft.ifftn(x)


def f_rfftn(x):
    return np.fft.rfftn(x)


def f_rfftn_axes(x):
    return np.fft.rfftn(x, s=(3, 6), axes=(2, 0), norm="ortho")


def f_irfftn(y):
    return np.fft.irfftn(y)


def f_irfftn_axes(y):
    return np.fft.irfftn(y, s=(5, 3), axes=(2, 0), norm="forward")


def f_fftshift(x):
    return np.fft.fftshift(x)


def f_fftshift_axes(x):
    return np.fft.fftshift(x, axes=1)


def f_ifftshift(x):
    return np.fft.ifftshift(x, axes=(0,))


def f_spectral_derivative(u):
    """d/dx of a periodic signal on [0, 2 pi): ik times its transform."""
    k = np.fft.fftfreq(u.shape[0], 1.0 / u.shape[0])
    return np.real(np.fft.ifft(1j * k * np.fft.fft(u)))


def f_rfftfreq(u):
    k = np.fft.rfftfreq(u.shape[0])
    return np.fft.irfft(np.fft.rfft(u) * np.exp(-k), n=u.shape[0])


for dom in (real(8), cplx(8), real(5)):
    row(f_fft, dom, targets=[np.fft.fft])
row(f_fft_n_pad, cplx(5), targets=[np.fft.fft])
row(f_fft_n_crop, real(5, 2), targets=[np.fft.fft])
row(f_ifft, cplx(4, 3), targets=[np.fft.ifft])
row(f_ifft_n, real(4), targets=[np.fft.ifft])
for dom in (real(8), real(7)):
    row(f_rfft, dom, targets=[np.fft.rfft])
row(f_rfft_odd, real(6), targets=[np.fft.rfft])
row(f_rfft_crop, real(6, 2), targets=[np.fft.rfft])
for dom in (cplx(5), cplx(4), real(5)):
    row(f_irfft, dom, targets=[np.fft.irfft])
row(f_irfft_odd, cplx(4), targets=[np.fft.irfft])
row(f_irfft_pad, cplx(4, 2), targets=[np.fft.irfft])
row(f_irfft_crop, cplx(5), targets=[np.fft.irfft])
row(f_fft2, cplx(3, 4), targets=[np.fft.fft2])
row(f_fft2_s, real(4, 4), targets=[np.fft.fft2])
row(f_ifft2, cplx(3, 2, 4), targets=[np.fft.ifft2])
row(f_rfft2, real(3, 4), targets=[np.fft.rfft2])
row(f_rfft2_s, real(3, 4), targets=[np.fft.rfft2])
row(f_irfft2, cplx(3, 3), targets=[np.fft.irfft2])
row(f_irfft2_s, cplx(4, 2), targets=[np.fft.irfft2])
row(f_fftn, cplx(2, 3, 4), targets=[np.fft.fftn])
row(f_fftn_s, real(2, 3, 4), targets=[np.fft.fftn])
row(f_ifftn, cplx(3, 4), targets=[np.fft.ifftn])
row(f_rfftn, real(2, 3, 4), targets=[np.fft.rfftn])
row(f_rfftn_axes, real(4, 2, 5), targets=[np.fft.rfftn])
row(f_irfftn, cplx(2, 3, 4), targets=[np.fft.irfftn])
row(f_irfftn_axes, cplx(4, 2, 3), targets=[np.fft.irfftn])
row(f_fftshift, cplx(3, 4), targets=[np.fft.fftshift])
row(f_fftshift_axes, real(3, 4), targets=[np.fft.fftshift])
row(f_ifftshift, cplx(5, 2), targets=[np.fft.ifftshift])
# np.fft.fftfreq makes a numpy array, which a cupy array does not mix with (cupy code
# calls cupy.fft.fftfreq): numpy only
row(f_spectral_derivative, real(8), targets=[np.fft.fftfreq], strict=False)
row(f_rfftfreq, real(6), targets=[np.fft.rfftfreq], strict=False)


# --------------------------------------------------------------------------
# scipy.fft, the same transforms


def s_fft(x):
    return sfft.fft(x, n=6, norm="ortho")


def s_ifft(x):
    return sfft.ifft(x, axis=0)


def s_rfft(x):
    return sfft.rfft(x, n=7)


def s_irfft(y):
    return sfft.irfft(y, n=6, norm="forward")


def s_fft2(x):
    return sfft.fft2(x)


def s_ifft2(x):
    return sfft.ifft2(x, s=(3, 3))


def s_rfft2(x):
    return sfft.rfft2(x)


def s_irfft2(y):
    return sfft.irfft2(y)


def s_fftn(x):
    return sfft.fftn(x, axes=(0,))


def s_ifftn(x):
    return sfft.ifftn(x, norm="ortho")


def s_rfftn(x):
    return sfft.rfftn(x, s=(3, 5))


def s_irfftn(y):
    return sfft.irfftn(y, s=(3, 5))


def s_shifts(x):
    return sfft.ifftshift(sfft.fftshift(x, axes=0) * np.arange(1.0, 4.0)[:, None])


def s_freqs(u):
    k = sfft.fftfreq(u.shape[0]) + sfft.rfftfreq(2 * u.shape[0] - 1)
    return sfft.ifft(sfft.fft(u) * k)


SCIPY_ROWS = []
if sfft is not None:
    start = len(ROWS)  # scipy.fft runs on numpy arrays alone (cupy: cupyx.scipy.fft)
    row(s_fft, cplx(4), targets=[sfft.fft])
    row(s_ifft, cplx(4, 2), targets=[sfft.ifft])
    row(s_rfft, real(6), targets=[sfft.rfft])
    row(s_irfft, cplx(4), targets=[sfft.irfft])
    row(s_fft2, real(3, 4), targets=[sfft.fft2])
    row(s_ifft2, cplx(2, 4), targets=[sfft.ifft2])
    row(s_rfft2, real(3, 4), targets=[sfft.rfft2])
    row(s_irfft2, cplx(3, 3), targets=[sfft.irfft2])
    row(s_fftn, cplx(3, 2), targets=[sfft.fftn])
    row(s_ifftn, cplx(3, 2), targets=[sfft.ifftn])
    row(s_rfftn, real(3, 4), targets=[sfft.rfftn])
    row(s_irfftn, cplx(3, 3), targets=[sfft.irfftn])
    row(s_shifts, cplx(3, 2), targets=[sfft.fftshift, sfft.ifftshift])
    row(s_freqs, cplx(4), targets=[sfft.fftfreq, sfft.rfftfreq])
    SCIPY_ROWS = ROWS[start:]
    for r in SCIPY_ROWS:
        r.strict = False


# --------------------------------------------------------------------------
# Rules whose complex form is the real one's conjugated (var, std, norm, vecdot)


def c_var(z):
    return np.var(z, axis=0, ddof=1)


def c_std(z):
    return np.std(z)


def c_norm(z):
    return np.linalg.norm(z)


def c_norm_ord(z):
    return np.linalg.norm(z, 3, axis=1)


def c_vecdot(a, b):
    return np.vecdot(a, b)


def c_linalg_vecdot(a, b):
    return np.linalg.vecdot(a, b)


row(c_var, cplx(4, 2), targets=[np.var])
row(c_std, cplx(5), targets=[np.std])
row(c_norm, cplx(3, 2), targets=[np.linalg.norm])
row(c_norm_ord, cplx(2, 3, margin=0.3), targets=[np.linalg.norm])
row(c_vecdot, cplx(2, 3), cplx(3), targets=[np.vecdot], wrt=(0, 1))
row(c_linalg_vecdot, cplx(3), real(2, 3), targets=[np.linalg.vecdot], wrt=(0, 1))
