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

from transpile.core.template import d, t
from transpile.rules.declare import VARIES, rule
from transpile_runtime import spectral


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
