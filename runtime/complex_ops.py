"""Complex numbers in JAX's convention: the helpers of the rules whose complex form is not
the real formula read with complex numbers (``np.real``, ``np.imag``, ``np.abs``,
``np.angle``, ``np.vdot``, ``np.linalg.eigh``), the check of a complex ``dout``, and the
real part that a real argument's gradient keeps.

The convention (JAX's): a complex ``z = x + iy`` is the pair ``(x, y)``; the cotangent
``c`` of a value is paired with its tangent ``t`` by ``Re(c * t)`` (no conjugate), so
that the adjoint of a holomorphic function is its real formula read with complex numbers
(``d[x] += d[y] * f'(x)``, ``g @ b.T``: transposes, never conjugates), and the gradient of
a real ``f`` is ``df/dx - i df/dy`` (``grad(lambda z: abs(z) ** 2)(3 + 4j) == 6 - 8j``);
its conjugate is the direction of steepest ascent.

A real value used with complex ones may have an adjoint with an imaginary part that means
nothing (only its real part pairs with a real tangent); every rule that takes a real value
from a complex one (``np.real``, ``np.abs``, ...) reads the real part of its adjoint, and
a real argument's gradient is the real part (``real_gradient``).
"""

import numpy as np

from . import forward_ops
from .ops import cotangent, helper, unabs  # noqa: F401  (kept here by name: np.abs's adjoint, a vjp's check)
from .ops import uneigh as uneigh_real
from .ops import uneigvalsh as uneigvalsh_real


def is_complex(x) -> bool:
    """Whether ``x`` is a complex number or an array of complex numbers."""
    return isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", "") == "c"


def real_gradient(g, x):
    """``g``, the gradient of the argument ``x``: its real part where ``x`` is real (a
    real argument's gradient is real; its imaginary part pairs with no tangent), and
    complex where ``x`` is (as JAX's, whose gradient has its argument's dtype)."""
    if is_complex(g) and not is_complex(x):
        return g.real.copy() if hasattr(g, "real") and hasattr(g, "copy") else np.real(g)
    if is_complex(x) and not is_complex(g) and g is not None:
        if isinstance(x, complex):
            return complex(g)
        return g.astype(x.dtype) if hasattr(g, "astype") else x.dtype.type(g)
    return g


@helper(fresh=True, linear=True)
def unreal(g, x):
    """Adjoint of ``x`` in ``np.real(x)``: the real part of ``g`` (of a real ``x``,
    ``g``)."""
    return _as_complex(np.real(g), x) if is_complex(x) else g


def _as_complex(g, x):
    """The real ``g`` as a complex value of ``x``'s precision."""
    dtype = getattr(x, "dtype", None) or np.dtype(np.complex128)
    return g.astype(dtype) if hasattr(g, "astype") else dtype.type(g)


@helper(fresh=True, linear=True)
def unimag(g, x):
    """Adjoint of ``x`` in ``np.imag(x)``: ``-i Re(g)`` (of a real ``x``, whose imaginary
    part is the constant 0: zero)."""
    if is_complex(x):
        return -1j * np.real(g)
    return np.zeros_like(np.real(g))


@helper(fresh=True, linear=True)
def reimag(h, x):
    """The transpose of ``unimag``: ``Im(h)`` where ``x`` is complex, zero where it is
    real (``unimag`` of a real ``x`` is zero), for a gradient differentiated again."""
    if is_complex(x):
        return np.imag(h)
    return np.zeros_like(np.real(h))


@helper(fresh=True, linear=True)
def abs_tangent(t, x):
    """Tangent of ``np.abs(x)``: ``Re(conj(x) t) / |x|``."""
    if is_complex(x):
        return np.real(np.conj(np.sign(x)) * t)
    if type(x) in (int, float):  # stays a Python number, weak (np.sign makes a float64)
        return (0.0 if x == 0 else 1.0 if x > 0 else -1.0 if x < 0 else x) * t
    return np.sign(x) * t


@helper(fresh=True)
def abs_curvature(g, h, x):
    """How ``unabs(g, x)`` changes with ``x``, paired with ``h``: the cotangent of ``x``
    in ``Re(sum(unabs(g, x) * h))``, ``Re(g) (conj(h) - Re(conj(s) h) conj(s)) / |x|``
    with ``s = sign(x)``, which is also the tangent of ``unabs(g, x)`` along ``h``. Zero
    where ``x`` is real (``sign`` is a step) or 0 (where it has no derivative)."""
    if not is_complex(x):
        return np.zeros_like(np.real(h))
    r = np.abs(x)
    safe = np.where(r > 0, r, 1.0)
    s = np.conj(np.sign(x))
    out = np.real(g) * (np.conj(h) - np.real(s * h) * s) / safe
    return np.where(r > 0, out, 0.0)


@helper(fresh=True, linear=True)
def unangle(g, x, deg=False):
    """Adjoint of ``x`` in ``np.angle(x)``: ``-i Re(g) / x`` (0 at 0); for a real ``x``
    (whose angle is 0 or pi, a step) zero."""
    scale = 180.0 / np.pi if deg else 1.0
    if not is_complex(x):
        return np.zeros_like(np.real(g))
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 0.0, -1j * scale * np.real(g) / safe)


@helper(fresh=True, linear=True)
def angle_tangent(t, x, deg=False):
    """Tangent of ``np.angle(x)``: ``Im(t / x)``."""
    scale = 180.0 / np.pi if deg else 1.0
    if not is_complex(x):
        return np.zeros_like(np.real(t))
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 0.0, scale * np.imag(t / safe))


@helper(fresh=True, linear=True)
def unvdot_a(g, a, b):
    """Adjoint of ``a`` in ``np.vdot(a, b) = sum(conj(a) * b)`` (flattened): ``conj(g b)``,
    shaped like ``a``."""
    return np.reshape(np.conj(g * np.ravel(b)), np.shape(a))


@helper(fresh=True, linear=True)
def unvdot_b(g, a, b):
    """Adjoint of ``b`` in ``np.vdot(a, b)``: ``g conj(a)``, shaped like ``b``."""
    return np.reshape(g * np.conj(np.ravel(a)), np.shape(b))


@helper(fresh=True, linear=True)
def uneigh_any(g, y, a, UPLO="L"):
    """Adjoint of ``a`` in ``np.linalg.eigh(a)``: of a real symmetric ``a``, the real
    rule's (its lower triangle, as numpy reads it); of a complex one, ``uneigh``."""
    if is_complex(a):
        return uneigh(g, y, a)
    return uneigh_real(g, y, UPLO)


@helper(fresh=True, linear=True)
def uneigvalsh_any(g, w, a, UPLO="L"):
    """Adjoint of ``a`` in ``np.linalg.eigvalsh(a)``, real or complex Hermitian."""
    if is_complex(a):
        return uneigh((g, 0.0), np.linalg.eigh(a), a)
    return uneigvalsh_real(g, a, UPLO)


def uneigh(g, y, a):
    """Adjoint of a Hermitian ``a`` in ``w, v = np.linalg.eigh(a)`` (JAX's, which reads
    ``(a + a^H) / 2``): ``conj(v (diag(Re gw) + F * (v^H gv~ ...)) v^H)`` with ``F`` the
    inverse eigenvalue gaps; where an adjoint of ``v`` is given, its gauge part (a phase
    per eigenvector) must be zero, as for any function of the eigenvectors' projectors."""
    gw, gv = g
    w, v = y
    vh = np.conj(np.swapaxes(v, -1, -2))
    inner = np.zeros_like(v) if not np.any(gw) else _diag_matrix(np.real(gw) + 0j * w, v)
    if np.any(gv):
        # in JAX's pairing, the cotangent of v pairs with dv as Re(sum(gv * dv)); the
        # Hermitian-pairing form is conj(gv)
        gvh = np.conj(gv)
        gap = w[..., None, :] - w[..., :, None]
        eye = _eye(w.shape[-1], w)
        f = np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, gap))
        inner = inner + f * (vh @ gvh)
    out = v @ inner @ vh
    # the symmetrized input (a + a^H) / 2
    herm = (out + np.conj(np.swapaxes(out, -1, -2))) / 2
    return np.conj(herm)


def _eye(n, like):
    """The boolean identity of size ``n`` in the array library of ``like``."""
    other = type(like) is not np.ndarray and hasattr(like, "__array_function__")
    return np.eye(n, dtype=bool, like=like if other else None)


def _diag_matrix(d, like):
    n = d.shape[-1]
    out = np.zeros_like(like, shape=d.shape + (n,))
    idx = np.arange(n)
    out[..., idx, idx] = d
    return out


def eigh_tangent(y, ta, a, UPLO="L"):
    """Tangent of ``np.linalg.eigh(a)``: the real rule's for a real ``a``; for a complex
    Hermitian one (JAX's, of ``(a + a^H) / 2``), ``dw = Re(diag(m))``, ``dv = v (F * m)``
    with ``m = v^H ta~ v`` and ``F`` the inverse eigenvalue gaps."""
    if not is_complex(a):
        return forward_ops.eigh(y, ta, UPLO)
    w, v = y
    vh = np.conj(np.swapaxes(v, -1, -2))
    m = vh @ ((ta + np.conj(np.swapaxes(ta, -1, -2))) / 2) @ v
    gap = w[..., None, :] - w[..., :, None]
    eye = _eye(w.shape[-1], w)
    f = np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, gap))
    return (np.real(np.diagonal(m, 0, -2, -1)), v @ (f * m))


def eigvalsh_tangent(a, ta, UPLO="L"):
    """Tangent of ``np.linalg.eigvalsh(a)``, real or complex Hermitian."""
    if not is_complex(a):
        return forward_ops.eigvalsh(a, ta, UPLO)
    return eigh_tangent(np.linalg.eigh(a), ta, a)[0]


@helper(passes=True, linear=True)
def real_like(g, buf, index=None):
    """``g``, to be added into the adjoint buffer ``buf`` at ``index``: its real part where
    that entry is real (the adjoint of a real value, whose imaginary part pairs with no
    tangent). In a list, tuple or dict buffer each entry has its own dtype."""
    if isinstance(buf, (list, tuple, dict)):
        return g if index is None else _real_like_entries(g, buf[index])
    if is_complex(g) and not is_complex(buf):
        return np.real(g)
    return g


def _real_like_entries(g, entry):
    if isinstance(entry, (list, tuple)) and isinstance(g, (list, tuple)):
        return [_real_like_entries(a, b) for a, b in zip(g, entry)]
    if isinstance(entry, dict) and isinstance(g, dict):
        return {k: _real_like_entries(v, entry[k]) for k, v in g.items()}
    return real_like(g, entry)


@helper(passes=True, checks=True)
def real_only(x, what):
    """``x`` itself, where it is real; for a complex ``x``, the ``NotImplementedError``
    of a rule (``what``) that has no complex form yet."""
    if is_complex(x):
        raise NotImplementedError(
            f"the derivative of {what} is not implemented for complex arguments (its rule "
            "is for real ones); differentiate a real formulation, or write the rule with "
            "transpile.defvjp"
        )
    return x
