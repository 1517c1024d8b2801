"""The spectral helpers that generated code calls (``transpile_runtime.spectral``), as
rules, so a gradient through a transform or a convolution is differentiated again
(``hvp``, ``jacobian(grad(f))``).

Each adjoint of a transform is the transpose of a linear map (in the pairing
``Re(sum(c * t))`` of JAX's convention), so its own transpose is that map again: the
transform it is the adjoint of (``spectral.retransform``), with the same lengths, axes
and ``norm``. The array an adjoint takes for its shape and realness is read, never
differentiated. ``unmode`` sets a cotangent into the full convolution's length; its
transpose takes the window back (``spectral.window``).
"""

import numpy as np

from transpile.core.template import d, t
from transpile.rules.declare import VARIES, rule
from transpile_runtime import ops, spectral


@rule(spectral.unfft, shape=VARIES, fresh=True)
def unfft(y, g, _x, _n=None, _axis=-1, _norm=None, _inverse=False):
    d[g] += spectral.retransform(d[y], _n, _axis, _norm, _inverse, True)
    t[y] += spectral.unfft(t[g], _x, _n, _axis, _norm, _inverse)


@rule(spectral.unfftn, shape=VARIES, fresh=True)
def unfftn(y, g, _x, _s=None, _axes=None, _norm=None, _inverse=False, _one_axis=False):
    d[g] += spectral.retransform(d[y], _s, _axes, _norm, _inverse, _one_axis)
    t[y] += spectral.unfftn(t[g], _x, _s, _axes, _norm, _inverse, _one_axis)


@rule(spectral.unrfft, shape=VARIES, fresh=True)
def unrfft(y, g, _x, _n=None, _axis=-1, _norm=None):
    d[g] += spectral.retransform(d[y], _n, _axis, _norm, False, True, True)
    t[y] += spectral.unrfft(t[g], _x, _n, _axis, _norm)


@rule(spectral.unrfftn, shape=VARIES, fresh=True)
def unrfftn(y, g, _x, _s=None, _axes=None, _norm=None, _one_axis=False):
    d[g] += spectral.retransform(d[y], _s, _axes, _norm, False, _one_axis, True)
    t[y] += spectral.unrfftn(t[g], _x, _s, _axes, _norm, _one_axis)


@rule(spectral.unirfft, shape=VARIES, fresh=True)
def unirfft(y, g, _y, _n=None, _axis=-1, _norm=None):
    d[g] += spectral.retransform(d[y], _n, _axis, _norm, True, True, True)
    t[y] += spectral.unirfft(t[g], _y, _n, _axis, _norm)


@rule(spectral.unirfftn, shape=VARIES, fresh=True)
def unirfftn(y, g, _y, _s=None, _axes=None, _norm=None, _one_axis=False):
    d[g] += spectral.retransform(d[y], _s, _axes, _norm, True, _one_axis, True)
    t[y] += spectral.unirfftn(t[g], _y, _s, _axes, _norm, _one_axis)


@rule(spectral.unfftshift, shape=VARIES, fresh=True)
def unfftshift(y, g, _axes=None):
    d[g] += spectral.unifftshift(d[y], _axes)
    t[y] += spectral.unfftshift(t[g], _axes)


@rule(spectral.unifftshift, shape=VARIES, fresh=True)
def unifftshift(y, g, _axes=None):
    d[g] += spectral.unfftshift(d[y], _axes)
    t[y] += spectral.unifftshift(t[g], _axes)


@rule(spectral.retransform, shape=VARIES, fresh=True)
def retransform(
    y, h, _s=None, _axes=None, _norm=None, _inverse=False, _one_axis=False, _real=False
):
    d[h] += spectral.unretransform(d[y], h, _s, _axes, _norm, _inverse, _one_axis, _real)
    t[y] += spectral.retransform(t[h], _s, _axes, _norm, _inverse, _one_axis, _real)


@rule(spectral.unmode, shape=VARIES, fresh=True)
def unmode(y, g, _a, _v, _mode="full", _correlate=False):
    d[g] += spectral.window(d[y], _a, _v, _mode, _correlate)
    t[y] += spectral.unmode(t[g], _a, _v, _mode, _correlate)


@rule(spectral.window, shape=VARIES, fresh=True)
def window(y, h, _a, _v, _mode="full", _correlate=False):
    d[h] += spectral.unmode(d[y], _a, _v, _mode, _correlate)
    t[y] += spectral.window(t[h], _a, _v, _mode, _correlate)


@rule(spectral.polyder, shape=VARIES, fresh=True)
def polyder(y, p):
    d[p] += spectral.unpolyder(d[y], p)
    t[y] += spectral.polyder(t[p])


@rule(spectral.unpolyder, shape=VARIES, fresh=True)
def unpolyder(y, h, _p):
    d[h] += spectral.polyder(d[y])
    t[y] += spectral.unpolyder(t[h], _p)


# x ** (n - 1 - k) summed with weights g: the transpose in g evaluates a polynomial at x,
# and the change with x is the derivative's polynomial, weighted by g
@rule(spectral.unpolyval, shape=VARIES, fresh=True)
def unpolyval(y, g, _p, x):
    d[g] += ops.unbroadcast(np.polyval(d[y], x), g)
    d[x] += g * np.polyval(spectral.polyder(d[y]), x)
    t[y] += spectral.unpolyval(t[g], _p, x)
    t[y] += spectral.unpolyder(spectral.unpolyval(g * t[x], spectral.polyder(_p), x), _p)


@rule(spectral.unmode_nd, shape=VARIES, fresh=True)
def unmode_nd(y, g, _a, _v, _mode="full", _axes=None, _boundary="fill", _fillvalue=0):
    d[g] += spectral.window_nd(d[y], _a, _v, _mode, _axes)
    t[y] += spectral.unmode_nd(t[g], _a, _v, _mode, _axes, _boundary, _fillvalue)


@rule(spectral.window_nd, shape=VARIES, fresh=True)
def window_nd(y, h, _a, _v, _mode="full", _axes=None):
    d[h] += spectral.unmode_nd(d[y], _a, _v, _mode, _axes)
    t[y] += spectral.window_nd(t[h], _a, _v, _mode, _axes)


# np.interp's adjoints: linear in what flows in; the weights change with x inside a
# segment (by the segment's slope), the slope does not (a step at the knots); xp, left
# and right carry no derivative (an active one is refused)
@rule(spectral.uninterp, shape=VARIES, fresh=True)
def uninterp(y, g, x, xp, _fp, left=None, right=None, _period=None):
    d[g] += ops.unbroadcast(spectral.interp_tangent(d[y], x, xp, left, right, _period), g)
    d[x] += g * spectral.interp_slope(x, xp, d[y], _period)
    t[y] += spectral.uninterp(t[g], x, xp, _fp, left, right, _period)
    t[y] += spectral.uninterp_slope(g * t[x], x, xp, _fp, _period)


@rule(spectral.interp_tangent, shape=VARIES, fresh=True)
def interp_tangent(y, tfp, x, xp, left=None, right=None, _period=None):
    d[tfp] += spectral.uninterp(d[y], x, xp, tfp, left, right, _period)
    d[x] += d[y] * spectral.interp_slope(x, xp, tfp, _period)
    t[y] += spectral.interp_tangent(t[tfp], x, xp, left, right, _period)
    t[y] += t[x] * spectral.interp_slope(x, xp, tfp, _period)


@rule(spectral.interp_slope, shape=VARIES, fresh=True)
def interp_slope(y, _x, xp, fp, _period=None):
    d[fp] += spectral.uninterp_slope(d[y], _x, xp, fp, _period)
    t[y] += spectral.interp_slope(_x, xp, t[fp], _period)


@rule(spectral.uninterp_slope, shape=VARIES, fresh=True)
def uninterp_slope(y, g, _x, xp, _fp, _period=None):
    d[g] += ops.unbroadcast(spectral.interp_slope(_x, xp, d[y], _period), g)
    t[y] += spectral.uninterp_slope(t[g], _x, xp, _fp, _period)


# np.gradient's adjoint and tangent are each other's transposes (the spacing: numbers)
@rule(spectral.ungradient, shape=VARIES, fresh=True)
def ungradient(y, g, _f, _spacing=(), _axis=None, _edge_order=1):
    d[g] += spectral.gradient(d[y], _spacing, _axis, _edge_order)
    t[y] += spectral.ungradient(t[g], _f, _spacing, _axis, _edge_order)


@rule(spectral.gradient, shape=VARIES, fresh=True, sequence_result=True)
def gradient(y, v, _spacing=(), _axis=None, _edge_order=1):
    d[v] += spectral.ungradient(d[y], v, _spacing, _axis, _edge_order)
    t[y] += spectral.gradient(t[v], _spacing, _axis, _edge_order)
