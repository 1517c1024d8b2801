"""The complex helpers that generated code calls (``transpile_runtime.complex_ops``), as
rules, so a gradient through them is differentiated again (``hvp``, ``grad(grad(f))``).

Each is linear in the adjoint flowing in; ``unabs`` and ``abs_tangent`` are each
other's transposes; how each changes with ``x`` is ``abs_curvature`` (zero where ``x``
is real: ``sign(x)`` is a step there, constant a.e.); ``unreal`` is its
own transpose, ``unimag`` and ``reimag`` are each other's; ``unvdot_a`` and
``unvdot_b`` are bilinear.
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import VARIES, rule
from transpile_runtime import complex_ops


@rule(complex_ops.unabs, shape=VARIES, fresh=True)
def unabs(y, g, x):
    d[g] += complex_ops.abs_tangent(d[y], x)
    d[x] += complex_ops.abs_curvature(g, d[y], x)
    t[y] += complex_ops.unabs(t[g], x)
    t[y] += complex_ops.abs_curvature(g, t[x], x)


@rule(complex_ops.abs_tangent, shape=VARIES, fresh=True)
def abs_tangent(y, g, x):
    d[g] += complex_ops.unabs(d[y], x)
    d[x] += complex_ops.abs_curvature(d[y], g, x)
    t[y] += complex_ops.abs_tangent(t[g], x)
    t[y] += np.real(g * complex_ops.abs_curvature(1.0, t[x], x))


@rule(complex_ops.unreal, shape=VARIES, fresh=True)
def unreal(y, g, _x):
    d[g] += complex_ops.unreal(d[y], _x)
    t[y] += complex_ops.unreal(t[g], _x)


@rule(complex_ops.unimag, shape=VARIES, fresh=True)
def unimag(y, g, _x):
    d[g] += complex_ops.reimag(d[y], _x)
    t[y] += complex_ops.unimag(t[g], _x)


@rule(complex_ops.reimag, shape=VARIES, fresh=True)
def reimag(y, h, _x):
    d[h] += complex_ops.unimag(d[y], _x)
    t[y] += complex_ops.reimag(t[h], _x)


@rule(complex_ops.unvdot_a, shape=VARIES, fresh=True)
def unvdot_a(y, g, _a, b):
    d[g] += np.vdot(d[y], b)
    d[b] += complex_ops.unvdot_b(g, d[y], b)
    t[y] += complex_ops.unvdot_a(t[g], _a, b)
    t[y] += complex_ops.unvdot_a(g, _a, t[b])


@rule(complex_ops.unvdot_b, shape=VARIES, fresh=True)
def unvdot_b(y, g, a, _b):
    d[g] += np.vdot(a, d[y])
    d[a] += complex_ops.unvdot_a(g, a, d[y])
    t[y] += complex_ops.unvdot_b(t[g], a, _b)
    t[y] += complex_ops.unvdot_b(g, t[a], _b)
