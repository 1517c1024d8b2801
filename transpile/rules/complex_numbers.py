"""Complex numbers, in JAX's convention (``transpile_runtime.complex_ops``): the rules of
the functions that are not holomorphic (``np.real``, ``np.imag``, ``np.conj``, ``np.abs``,
``np.angle``, ``np.vdot``, ``np.linalg.eigh`` of a Hermitian matrix). Every holomorphic
rule elsewhere (``exp``, ``sin``, ``@``, ``solve``, ``inv``, ``det``, ...) is its real
formula read with complex numbers, which is JAX's adjoint as it stands.

Each takes a real value from a complex one, or conjugates: its reverse line reads the
real part of a real result's adjoint, and its forward line is its own (the reverse line
read forwards would conjugate where the tangent must not be).
"""

import builtins

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import ALL_DATA, ELEMENTWISE, FIRST_DATA, rule
from transpile_runtime import complex_ops, ops


# of a real x: x itself
@rule(np.real, attributes=("real",), shape=ALL_DATA, passes=True, complex_values=True)
def real(y, val):
    d[val] += complex_ops.unreal(d[y], val)
    t[y] += np.real(t[val])


# of a real x: a read-only zero
@rule(np.imag, attributes=("imag",), shape=ALL_DATA, shares=True, complex_values=True)
def imag(y, val):
    d[val] += complex_ops.unimag(d[y], val)
    t[y] += np.imag(t[val])


# the method, of a real array, returns the array itself (the ufunc makes a new one)
@rule(methods=("conj", "conjugate"), shape=ELEMENTWISE, passes=True, complex_values=True)
@rule(np.conjugate, shape=ELEMENTWISE, complex_values=True)
def conj(y, val):
    d[val] += np.conj(d[y])
    t[y] += np.conj(t[val])


@rule(np.abs, np.absolute, builtins.abs, shape=ELEMENTWISE)
def abs_(y, x):
    d[x] += ops.unabs(d[y], x)
    t[y] += complex_ops.abs_tangent(t[x], x)


@rule(np.angle, shape=FIRST_DATA, complex_values=True)
def angle(y, z, _deg=False):
    d[z] += complex_ops.unangle(d[y], z, _deg)
    t[y] += complex_ops.angle_tangent(t[z], z, _deg)


@rule(np.vdot, shape=ALL_DATA, complex_values=True)  # sum(conj(a) * b), flattened
def vdot(y, a, b):
    d[a] += complex_ops.unvdot_a(d[y], a, b)
    d[b] += complex_ops.unvdot_b(d[y], a, b)
    t[y] += np.vdot(t[a], b)
    t[y] += np.vdot(a, t[b])


@rule(np.linalg.eigh, shape=FIRST_DATA, sequence_result=True)
def eigh(y, a, _UPLO="L"):
    d[a] += complex_ops.uneigh_any(d[y], y, a, _UPLO)
    t[y] += complex_ops.eigh_tangent(y, t[a], a, _UPLO)


@rule(np.linalg.eigvalsh, shape=FIRST_DATA)
def eigvalsh(w, a, _UPLO="L"):
    d[a] += complex_ops.uneigvalsh_any(d[w], w, a, _UPLO)
    t[w] += complex_ops.eigvalsh_tangent(a, t[a], _UPLO)
