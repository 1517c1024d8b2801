"""Functions for the convolution rule tests (``tests/test_convolution.py``): each applies
one rule (``transpile/rules/convolution.py``, ``scipy_signal.py``, and the ``np.diff`` and
``np.trapezoid`` rules they sit beside) and returns its array result; ``ROWS`` (numpy) and
``SCIPY_ROWS`` list them with the domains of their arguments, the arguments
differentiated and the callables they exercise. The programs at the end (a matched
filter, a small convolutional network) return numbers.
"""

from dataclasses import dataclass

import numpy as np

try:
    from scipy import signal
except ImportError:  # the scipy rows are skipped
    signal = None


# --------------------------------------------------------------------------
# Domains: make(rng) -> value


def normal(*shape):
    def make(rng):
        return rng.standard_normal(shape)

    make.label = f"normal{list(shape)}".replace(" ", "")
    return make


def number(value):
    def make(rng):
        return value

    make.label = repr(value)
    return make


KNOTS = np.array([0.0, 1.0, 2.2, 3.0, 4.5, 5.0])


def knots():
    def make(rng):
        return KNOTS.copy()

    make.label = "knots"
    return make


def between_knots(n, outside=True):
    """Query points at least 0.1 from every knot (the slope's kinks); some outside the
    range ``[0, 5]`` where ``outside``."""

    def make(rng):
        seg = rng.integers(0, len(KNOTS) - 1, n)
        lo, hi = KNOTS[seg], KNOTS[seg + 1]
        x = lo + 0.1 + rng.uniform(0, 1, n) * (hi - lo - 0.2)
        if outside:
            x[:2] = [-0.7, 5.6]
        return x

    make.label = f"between_knots[{n}]"
    return make


@dataclass
class Row:
    func: object
    args: tuple
    targets: tuple
    wrt: tuple = (0,)
    f32: bool = True

    @property
    def id(self):
        return f"{self.func.__name__}({','.join(a.label for a in self.args)})"


ROWS = []
SCIPY_ROWS = []


def row(func, *args, targets, wrt=(0,), f32=True, table=ROWS):
    table.append(Row(func, args, tuple(targets), wrt, f32))


# --------------------------------------------------------------------------
# np.convolve and np.correlate, every mode, both arguments, either longer


def convolve_full(a, v):
    return np.convolve(a, v)


def convolve_same(a, v):
    return np.convolve(a, v, "same")


def convolve_valid(a, v):
    return np.convolve(a, v, mode="valid")


def correlate_valid(a, v):
    return np.correlate(a, v)


def correlate_same(a, v):
    return np.correlate(a, v, mode="same")


def correlate_full(a, v):
    return np.correlate(a, v, "full")


for fn, target in [
    (convolve_full, np.convolve),
    (convolve_same, np.convolve),
    (convolve_valid, np.convolve),
    (correlate_valid, np.correlate),
    (correlate_same, np.correlate),
    (correlate_full, np.correlate),
]:
    for n, m in [(6, 3), (3, 6), (4, 4), (5, 2)]:
        row(fn, normal(n), normal(m), targets=[target], wrt=(0, 1))


# --------------------------------------------------------------------------
# np.interp in x and fp (xp, left, right constant), np.polyval in p and x


def interp(x, xp, fp):
    return np.interp(x, xp, fp)


def interp_ends(x, xp, fp):
    return np.interp(x, xp, fp, left=-1.5, right=2.0)


def interp_number(x, xp, fp):
    return np.interp(x, xp, fp) * np.ones_like(xp[:2])


for fn in (interp, interp_ends):
    row(fn, between_knots(9), knots(), normal(6), targets=[np.interp], wrt=(0, 2))
row(interp_number, number(2.7), knots(), normal(6), targets=[np.interp], wrt=(0, 2), f32=False)


def polyval(p, x):
    return np.polyval(p, x)


def polyval_number(p, x):
    return np.polyval(p, x) * np.ones_like(p)


row(polyval, normal(4), normal(2, 3), targets=[np.polyval], wrt=(0, 1))
row(polyval, normal(1), normal(3), targets=[np.polyval], wrt=(0, 1))
row(polyval_number, normal(3), number(0.7), targets=[np.polyval], wrt=(0, 1), f32=False)


# --------------------------------------------------------------------------
# np.gradient with numbers for spacing; np.diff with n, prepend, append; np.trapezoid


def gradient_1d(f):
    return np.gradient(f)


def gradient_2d(f):
    gx, gy = np.gradient(f, 0.5)
    return gx * 2.0 + gy


def gradient_spacings(f):
    gx, gy = np.gradient(f, 0.5, 2.0, edge_order=2)
    return gx - gy


def gradient_axis(f):
    return np.gradient(f, 0.3, axis=1, edge_order=2)


def gradient_axes(f):
    g0, g2 = np.gradient(f, axis=(0, -1))
    return g0 * g2


row(gradient_1d, normal(6), targets=[np.gradient])
row(gradient_1d, normal(2), targets=[np.gradient])
row(gradient_2d, normal(4, 5), targets=[np.gradient])
row(gradient_spacings, normal(3, 4), targets=[np.gradient])
row(gradient_axis, normal(3, 5), targets=[np.gradient])
row(gradient_axes, normal(3, 2, 4), targets=[np.gradient])


def diff_ends(x, p, q):
    return np.diff(x, n=2, prepend=p, append=q)


def diff_axis(x, p):
    return np.diff(x, 3, axis=0, prepend=p)


def trapezoid_x(y, x):
    return np.trapezoid(y, x) * np.ones_like(y[:2])


row(diff_ends, normal(5), normal(2), normal(1), targets=[np.diff], wrt=(0, 1, 2))
row(diff_axis, normal(4, 3), normal(2, 3), targets=[np.diff], wrt=(0, 1))
row(trapezoid_x, normal(6), normal(6), targets=[np.trapezoid], wrt=(0, 1))


# --------------------------------------------------------------------------
# Programs


def matched_filter_peak(template, signal_):
    """A smooth maximum (log-sum-exp) of the correlation of a signal with a template."""
    r = np.correlate(signal_, template, "valid")
    return np.log(np.sum(np.exp(4.0 * r))) / 4.0


def conv_net_loss(k1, k2, x, target):
    """conv -> tanh -> conv -> mean squared error, in the kernels."""
    h = np.tanh(np.convolve(x, k1, "same"))
    out = np.convolve(h, k2, "valid")
    return np.mean((out - target) ** 2)


def smooth_profile(fp, x, xp):
    """A piecewise-linear profile, its polynomial trend, and their derivative's energy."""
    y = np.interp(x, xp, fp)
    trend = np.polyval(fp[:3], x)
    slope = np.gradient(y - trend, 0.25)
    return np.sum(slope**2) + np.trapezoid(y**2, x)


def gradient_1d_coordinates(f, x):
    """Coordinates for np.gradient's spacing: refused (``test_convolution``)."""
    return np.sum(np.gradient(f, x))


# --------------------------------------------------------------------------
# scipy.signal.convolve and correlate, n-D, every mode (SCIPY_ROWS)


def sig_convolve(a, v, mode):
    return signal.convolve(a, v, mode)


def sig_correlate(a, v, mode):
    return signal.correlate(a, v, mode=mode)


if signal is not None:
    for fn, target in [(sig_convolve, signal.convolve), (sig_correlate, signal.correlate)]:
        for sa, sv in [((6,), (3,)), ((3,), (6,)), ((4, 5), (2, 3)), ((2, 3), (4, 5))]:
            for mode in ("full", "same", "valid"):
                row(
                    fn,
                    normal(*sa),
                    normal(*sv),
                    number(mode),
                    targets=[target],
                    wrt=(0, 1),
                    table=SCIPY_ROWS,
                )


def sig_fftconvolve(a, v, mode):
    return signal.fftconvolve(a, v, mode)


def sig_fftconvolve_axes(a, v, mode):
    return signal.fftconvolve(a, v, mode, axes=1)


if signal is not None:
    for sa, sv in [((6,), (3,)), ((4, 5), (2, 3)), ((2, 3), (4, 5))]:
        for mode in ("full", "same", "valid"):
            row(
                sig_fftconvolve,
                normal(*sa),
                normal(*sv),
                number(mode),
                targets=[signal.fftconvolve],
                wrt=(0, 1),
                table=SCIPY_ROWS,
            )
    for sa, sv, modes in [
        ((3, 5), (3, 2), ("full", "same", "valid")),
        ((1, 5), (3, 2), ("full", "valid")),  # "same" is refused (test_convolution)
        ((3, 2), (1, 4), ("full", "same", "valid")),
    ]:
        for mode in modes:
            row(
                sig_fftconvolve_axes,
                normal(*sa),
                normal(*sv),
                number(mode),
                targets=[signal.fftconvolve],
                wrt=(0, 1),
                table=SCIPY_ROWS,
            )


def sig_convolve2d(a, v, mode):
    return signal.convolve2d(a, v, mode)


def sig_convolve2d_wrap(a, v, mode):
    return signal.convolve2d(a, v, mode, boundary="wrap")


if signal is not None:
    for sa, sv in [((4, 5), (2, 3)), ((2, 3), (4, 5)), ((3, 3), (3, 2))]:
        for mode in ("full", "same", "valid"):
            row(
                sig_convolve2d,
                normal(*sa),
                normal(*sv),
                number(mode),
                targets=[signal.convolve2d],
                wrt=(0, 1),
                table=SCIPY_ROWS,
            )


# --------------------------------------------------------------------------
# Complex values through the convolutions (COMPLEX_ROWS, COMPLEX_SCIPY_ROWS;
# tests/test_complex_convolution.py): complex in both arguments, either longer, and a
# real argument next to a complex one, in every mode


def complex_normal(*shape):
    def make(rng):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    make.label = f"complex{list(shape)}".replace(" ", "")
    return make


COMPLEX_ROWS = []
COMPLEX_SCIPY_ROWS = []

for fn, target in [
    (convolve_full, np.convolve),
    (convolve_same, np.convolve),
    (convolve_valid, np.convolve),
    (correlate_valid, np.correlate),
    (correlate_same, np.correlate),
    (correlate_full, np.correlate),
]:
    for first, second in [
        (complex_normal(5), complex_normal(3)),
        (complex_normal(3), complex_normal(5)),
        (normal(5), complex_normal(3)),
        (complex_normal(3), normal(5)),
    ]:
        row(fn, first, second, targets=[target], wrt=(0, 1), table=COMPLEX_ROWS)

if signal is not None:
    for fn, target in [(sig_convolve, signal.convolve), (sig_correlate, signal.correlate)]:
        for mode in ("full", "same", "valid"):
            for first, second in [
                (complex_normal(3, 4), complex_normal(2, 3)),
                (complex_normal(2, 3), complex_normal(3, 4)),
            ]:
                args = (first, second, number(mode))
                row(fn, *args, targets=[target], wrt=(0, 1), table=COMPLEX_SCIPY_ROWS)
        for first, second in [(normal(4), complex_normal(3)), (complex_normal(3, 2), normal(2, 2))]:
            args = (first, second, number("same"))
            row(fn, *args, targets=[target], wrt=(0, 1), table=COMPLEX_SCIPY_ROWS)
    for fn, first, second, mode in [
        (sig_fftconvolve, complex_normal(3, 4), complex_normal(2, 3), "full"),
        (sig_fftconvolve, complex_normal(2, 3), complex_normal(3, 4), "same"),
        (sig_fftconvolve, complex_normal(5), normal(3), "valid"),
        (sig_fftconvolve_axes, complex_normal(3, 5), complex_normal(3, 2), "same"),
        (sig_fftconvolve_axes, normal(3, 2), complex_normal(1, 4), "full"),
        (sig_convolve2d, complex_normal(4, 5), complex_normal(2, 3), "full"),
        (sig_convolve2d, complex_normal(2, 3), complex_normal(4, 5), "same"),
        (sig_convolve2d, normal(3, 3), complex_normal(3, 2), "valid"),
    ]:
        target = signal.convolve2d if fn is sig_convolve2d else signal.fftconvolve
        args = (first, second, number(mode))
        row(fn, *args, targets=[target], wrt=(0, 1), table=COMPLEX_SCIPY_ROWS)
