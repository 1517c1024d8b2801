"""The Fourier transform and convolution rules on chunked dask arrays.

``dask.array.fft`` transforms only along axes held in one chunk (dask's own
requirement, which ``np.fft.*`` of a dask array inherits): each row of
``tests/spectral_funcs.py``'s ``np.fft`` transforms runs with its transformed axes in
one chunk and its other axes in two, and its vjp and jvp must be lazy dask arrays,
computing nothing while they run, equal to numpy's once computed, on a first call and
a later one. With a transformed axis in two chunks the gradient raises dask's own
``ValueError`` naming the axis, as the function does.

What dask does not implement (``np.convolve``, ``np.correlate``, ``np.interp``,
``np.polyval`` fall back to numpy, computing their arguments; ``scipy.fft`` and
``scipy.signal`` convert them to numpy), and what it implements with conditions of its
own (``np.gradient`` wants chunks longer than ``edge_order + 1``): every row of
``tests/convolution_funcs.py`` and ``spectral_funcs``' ``scipy.fft`` rows, in about two
chunks per axis, gives the gradient that numpy gives where the function runs, and
raises the function's own error where it does not: a right number or a clear error,
never a wrong number.
"""

import contextlib
import copy
import warnings
import zlib

import convolution_funcs as cf
import numpy as np
import pytest
import spectral_funcs as sf
from test_complex_spectral import _like

from transpile import jvp, vjp

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from dask_support import Computes as _Computes
from dask_support import no_fallback as _no_fallback
from dask_support import threaded_scheduler  # noqa: F401 (an autouse fixture)


@contextlib.contextmanager
def _fallback_allowed():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The `numpy", FutureWarning)
        yield


def _chunked(value, single=()):
    """A dask array of a copy of ``value``, the axes ``single`` in one chunk and the
    others in about two; anything else as it is."""
    if not isinstance(value, np.ndarray):
        return value
    ndim = value.ndim
    single = {a % ndim for a in single} if single != "all" else set(range(ndim))
    blocks = tuple(n if a in single else max(1, (n + 1) // 2) for a, n in enumerate(value.shape))
    return da.from_array(value.copy(), chunks=blocks)


def _cases(rows):
    return [pytest.param(r, i, id=f"{r.id}-wrt{i}") for r in rows for i in r.wrt]


def _draw(r, key):
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    args = [make(rng) for make in r.args]
    return args, _like(rng, r.func(*copy.deepcopy(args))), rng


# the axes each transform row leaves alone: two chunks there, one along the others
_UNTRANSFORMED = {
    sf.f_fft_n_crop: (1,),
    sf.f_ifft: (1,),
    sf.f_rfft_crop: (1,),
    sf.f_irfft_pad: (1,),
    sf.f_ifft2: (1,),
    sf.f_fftn: (1,),
    sf.f_fftn_s: (0,),
    sf.f_rfftn_axes: (1,),
    sf.f_irfftn_axes: (1,),
}
_SHIFTS = (sf.f_fftshift, sf.f_fftshift_axes, sf.f_ifftshift)  # any chunks
FFT_ROWS = [r for r in sf.ROWS if r.func.__name__.startswith("f_")]
TRANSFORM_ROWS = [r for r in FFT_ROWS if r.func not in _SHIFTS]


def _single_axes(r, value):
    if r.func in _SHIFTS:
        return ()
    return tuple(a for a in range(np.ndim(value)) if a not in _UNTRANSFORMED.get(r.func, ()))


def _lazy_and_right(make, dask_args, want, where):
    """``make(*dask_args)``: a dask array, computing nothing, equal to ``want``."""
    with _no_fallback(), _Computes() as counter:
        got = make(*dask_args)
    assert counter.count == 0, f"{where}: {counter.count} computes while the gradient ran"
    assert isinstance(got, da.Array), f"{where}: a {type(got).__name__}, not a dask array"
    assert got.shape == np.shape(want) and got.dtype == want.dtype, (got.dtype, got.shape)
    np.testing.assert_allclose(got.compute(), want, rtol=1e-10, atol=1e-12, err_msg=where)


@pytest.mark.parametrize("r,i", _cases(FFT_ROWS))
def test_transforms_with_single_chunk_axes(r, i):
    args, dout, rng = _draw(r, f"{r.id} {i}")
    tangent = _like(rng, args[i])
    want = vjp(r.func, wrt=i)(*args, dout)
    want_tangent = jvp(r.func, wrt=i)(*args, tangent)[1]
    dask_args = [_chunked(a, _single_axes(r, a)) for a in args]
    pristine = [a.compute() for a in dask_args]
    dout_, tangent_ = (_chunked(v, _single_axes(r, v)) for v in (dout, tangent))
    back, forward = vjp(r.func, wrt=i), jvp(r.func, wrt=i)
    for call in ("first call", "later call"):
        _lazy_and_right(back, dask_args + [dout_], want, f"vjp, {call}")
        _lazy_and_right(lambda *a: forward(*a)[1], dask_args + [tangent_], want_tangent, call)
    for a, p in zip(dask_args, pristine):
        np.testing.assert_array_equal(a.compute(), p)


def _split(r):
    """The row's arguments with every axis in two chunks (the transformed ones too)."""
    args, dout, rng = _draw(r, f"split {r.id}")
    return [_chunked(a) for a in args], _chunked(dout), _chunked(_like(rng, args[0]))


@pytest.mark.parametrize("r", TRANSFORM_ROWS, ids=[r.id for r in TRANSFORM_ROWS])
def test_a_transformed_axis_in_two_chunks_is_dasks_clear_error(r):
    """dask's message: "Dask array only supports taking an FFT along an axis that has a
    single chunk. An FFT operation was tried on axis ... which has chunks ..."."""
    dask_args, dout, tangent = _split(r)
    refusal = r"single chunk\..*tried on axis"
    with pytest.raises(ValueError, match=refusal):
        r.func(*dask_args)
    with pytest.raises(ValueError, match=refusal):
        vjp(r.func)(*dask_args, dout)
    with pytest.raises(ValueError, match=refusal):
        jvp(r.func)(*dask_args, tangent)


# --------------------------------------------------------------------------
# What dask does not implement, or implements with conditions: the function's own
# outcome, a right number or its error


def _one(value):
    """dask's ``np.gradient`` of one axis is a list of one array (numpy's an array)."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _computed(value):
    value = _one(value)
    return value.compute() if hasattr(value, "compute") else value


def _outcome(fn):
    """What ``fn()`` computes to, or the error it raises."""
    try:
        with _fallback_allowed():
            return _computed(fn()), None
    except Exception as error:  # the error is the outcome compared
        return None, error


# np.convolve and np.correlate fall back to numpy whatever the lengths, and scipy.signal
# converts its arguments in every mode: either argument longer, and the "same" rows
_CONVOLUTIONS = (cf.convolve_full, cf.convolve_same, cf.convolve_valid)
_CONVOLUTIONS += (cf.correlate_full, cf.correlate_same, cf.correlate_valid)
OTHER_ROWS = [
    r
    for r in cf.ROWS
    if r.func not in _CONVOLUTIONS
    or r.id.endswith(("(normal[6],normal[3])", "(normal[3],normal[6])"))
]
OTHER_ROWS += [r for r in cf.SCIPY_ROWS if r.args[2].label == repr("same")]


@pytest.mark.parametrize("r,i", _cases(OTHER_ROWS))
def test_the_gradient_works_where_the_function_does_and_fails_as_it_does(r, i):
    args, dout, rng = _draw(r, f"other {r.id} {i}")
    tangent = _like(rng, args[i]) if np.shape(args[i]) else 0.4
    dask_args = [_chunked(a) for a in args]
    value, forward_error = _outcome(lambda: r.func(*dask_args))
    with _fallback_allowed():
        structure = None if forward_error else r.func(*dask_args)
    dout_ = [_chunked(dout)] if isinstance(structure, list) else _chunked(dout)
    tangent_ = _chunked(tangent)
    for made, extra, want in [
        (vjp(r.func, wrt=i), dout_, vjp(r.func, wrt=i)(*args, dout)),
        (lambda *a: jvp(r.func, wrt=i)(*a)[1], tangent_, jvp(r.func, wrt=i)(*args, tangent)[1]),
    ]:
        for _ in range(2):  # a first call and a later one
            got, error = _outcome(lambda made=made, extra=extra: made(*dask_args, extra))
            if forward_error is not None:
                assert type(error) is type(forward_error), (error, forward_error)
                assert str(error) == str(forward_error)
            else:
                assert error is None, f"the function runs on dask, its gradient raises {error!r}"
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if forward_error is None:
        np.testing.assert_allclose(value, r.func(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("r,i", _cases(sf.SCIPY_ROWS))
def test_scipy_fft_on_dask_needs_single_chunk_axes_in_its_gradient(r, i):
    """scipy.fft computes a dask argument into numpy, in any chunks; its gradient's
    transforms (``np.fft`` of the dask cotangent) are dask's: right with every axis in
    one chunk, dask's clear error with a transformed axis in two."""
    args, dout, rng = _draw(r, f"scipy {r.id} {i}")
    tangent = _like(rng, args[i])
    want = vjp(r.func, wrt=i)(*args, dout)
    want_tangent = jvp(r.func, wrt=i)(*args, tangent)[1]
    whole = [_chunked(v, "all") for v in (*args, dout, tangent)]
    for _ in range(2):  # a first call and a later one
        got = vjp(r.func, wrt=i)(*whole[:-1])
        np.testing.assert_allclose(_computed(got), want, rtol=1e-10, atol=1e-12)
        got = jvp(r.func, wrt=i)(*whole[:-2], whole[-1])[1]
        np.testing.assert_allclose(_computed(got), want_tangent, rtol=1e-10, atol=1e-12)
    split = [_chunked(v) for v in (*args, dout, tangent)]
    if r.func is not sf.s_shifts:  # shifts: no transform, any chunks
        with pytest.raises(ValueError, match=r"single chunk\..*tried on axis"):
            _computed(vjp(r.func, wrt=i)(*split[:-1]))


LAZY_ROWS = [r for r in cf.ROWS if r.func in (cf.diff_ends, cf.diff_axis, cf.gradient_2d)]
LAZY_ROWS += [r for r in cf.ROWS if r.id == "gradient_1d(normal[6])"]


@pytest.mark.parametrize("r,i", _cases(LAZY_ROWS))
def test_what_dask_implements_stays_lazy(r, i):
    """np.diff and np.gradient are dask's own: the gradient is a dask array (a list of
    one for dask's np.gradient of one axis, as its result is) and computes only what the
    function computes (dask's np.diff computes its prepend and append into numpy): the
    vjp as much as the function, the jvp twice that (its tangent is an np.diff too)."""
    args, dout, rng = _draw(r, f"lazy {r.id} {i}")
    dask_args = [_chunked(a) for a in args]
    with _no_fallback(), _Computes() as counter:
        out = r.func(*dask_args)
    allowed = counter.count
    dout_ = [_chunked(dout)] if isinstance(out, list) else _chunked(dout)
    tangent = _chunked(_like(rng, args[i]))
    for made, extra, most in [
        (vjp(r.func, wrt=i), dout_, allowed),
        (jvp(r.func, wrt=i), tangent, 2 * allowed),
    ]:
        for call in ("first call", "later call"):
            with _no_fallback(), _Computes() as counter:
                got = made(*dask_args, extra)
            assert counter.count <= most, f"{call}: {counter.count} computes, not {most}"
            got = _one(got[1] if isinstance(got, tuple) else got)
            assert isinstance(got, da.Array), f"{call}: a {type(got).__name__}"
