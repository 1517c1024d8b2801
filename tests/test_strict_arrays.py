"""Generated gradients on a strict NEP-18 array type (``tests/strict_array.py``).

``StrictArray`` behaves as cupy does where it matters to portable code: no implicit
conversion to numpy, no mixing with numpy arrays, 0-d arrays from reductions, and
only the protocols (``__array_ufunc__``, ``__array_function__``). Every corpus case
whose forward function runs on it goes through ``grad``, ``value_and_grad`` and
``vjp``, on a first call (the generic gradient, recording shapes) and a later one
(the variant specialized for the signature): the results must be StrictArrays
(or Python numbers where the argument is one), equal to numpy's, fresh (sharing no
memory with an argument), and the arguments untouched. A case whose forward
function itself fails on the strict type is skipped, its reason given.
"""

import copy
import inspect
import zlib

import corpus_control
import corpus_straight
import numpy as np
import pytest
from strict_array import StrictArray, strict, to_numpy

from transpile import TranspileError, grad, hvp, jvp, source, value_and_grad, vjp
from transpile_runtime import backend, ops

ALL_CASES = corpus_straight.CASES + corpus_control.CASES + corpus_straight.VJP_CASES


def _rng(case):
    return np.random.default_rng(zlib.crc32(case.id.encode()))


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _check_leaf(got, want, where, tol):
    """``got`` (strict world) against ``want`` (numpy world)."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, StrictArray), f"{where}: a {type(got).__name__}, not a StrictArray"
        assert got.shape == want.shape and got.dtype == want.dtype, (
            f"{where}: {got.dtype}{got.shape}, numpy gives {want.dtype}{want.shape}"
        )
        got = got.get()
    elif isinstance(got, StrictArray):  # a number in numpy: a 0-d array is what cupy gives
        assert got.ndim == 0, f"{where}: shape {got.shape} where numpy gives a number"
        got = got.item()
    else:
        assert not isinstance(got, (np.ndarray, np.generic)), (
            f"{where}: a numpy {type(got).__name__} leaked out of the strict computation"
        )
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=where)


def _check_result(got, want, where, tol):
    assert type(got) is type(want) or not isinstance(want, (list, tuple, dict)), (
        f"{where}: a {type(got).__name__}, numpy gives a {type(want).__name__}"
    )
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert len(got_leaves) == len(want_leaves), f"{where}: structure differs"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        _check_leaf(g, w, f"{where}, leaf {i}", tol)


def _check_fresh(result, args, where):
    """No returned array shares memory with an argument or with another returned one."""
    arrays = [leaf._a for leaf in _leaves(result) if isinstance(leaf, StrictArray)]
    given = [leaf._a for leaf in _leaves(args) if isinstance(leaf, StrictArray)]
    for i, a in enumerate(arrays):
        for b in given + arrays[i + 1 :]:
            assert not np.shares_memory(a, b), f"{where}: a returned array shares memory"


def _tolerance(args):
    f32 = any(getattr(leaf, "dtype", None) == np.float32 for leaf in _leaves(args))
    return 2e-4 if f32 else 1e-9


_NUMPY_ONLY = ("reduce", "accumulate", "reduceat", "at")  # ufunc methods dask lacks


def _methods_called():
    return {k for k in StrictArray.calls if k.rpartition(".")[2] in _NUMPY_ONLY}


def _check_calls(where, allowed):
    """The gradient calls no ufunc method that only numpy (and cupy) has, unless the
    function itself does."""
    extra = _methods_called() - allowed
    assert not extra, f"{where}: the gradient calls {sorted(extra)} on StrictArrays"


def _forward_or_skip(case, args):
    if not any(isinstance(leaf, np.ndarray) for leaf in _leaves(args)):
        pytest.skip("no array argument: nothing runs on StrictArray")
    StrictArray.calls.clear()
    try:
        out = case.func(*copy.deepcopy(strict(args)))
    except Exception as error:  # the reason is reported as the skip
        pytest.skip(f"forward fails on StrictArray: {type(error).__name__}: {error}")
    return out


def _dout(case, args, rng):
    out = case.func(*copy.deepcopy(args))
    if np.ndim(out) == 0:
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(out)).astype(np.result_type(out))


def _run(make, args, strict_args, where, tol, allowed, forward=None):
    """numpy's result, then the strict one on a first and a later call, each checked;
    then numpy's again (each array type keeps its own variant)."""
    want = make(*copy.deepcopy(args))
    pristine = to_numpy(strict_args)
    for call in ("first call", "later call"):
        StrictArray.calls.clear()
        got = make(*strict_args)
        _check_calls(f"{where}, {call}", allowed)
        if forward is not None:  # the value is what the function returns on StrictArrays
            value, got, want_grad = got[0], got[1], want[1]
            assert type(value) is type(forward), f"{where}: value a {type(value).__name__}"
            np.testing.assert_allclose(to_numpy(value), to_numpy(forward), rtol=tol, atol=tol)
        else:
            want_grad = want
        _check_result(got, want_grad, f"{where}, {call}", tol)
        _check_fresh(got, strict_args, f"{where}, {call}")
        np.testing.assert_equal(to_numpy(strict_args), pristine, err_msg="argument changed")
    again = make(*copy.deepcopy(args))
    for i, (a, w) in enumerate(zip(_leaves(again), _leaves(want))):
        assert type(a) is type(w), f"{where}, numpy after, leaf {i}: {type(a).__name__}"
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=f"{where}, numpy after")


def _with_defaults(func, args):
    """``args`` followed by the defaults of the parameters they leave out, so that a
    vjp's ``dout`` is not taken for one of them."""
    params = list(inspect.signature(func).parameters.values())[len(args) :]
    return tuple(args) + tuple(p.default for p in params if p.default is not p.empty)


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_corpus_case_on_strict_arrays(case):
    rng = _rng(case)
    args = case.make_args(rng)
    forward = _forward_or_skip(case, args)
    allowed = _methods_called()
    tol = _tolerance(args)
    strict_args = strict(args)
    dout = _dout(case, args, rng)
    strict_dout = strict(dout)
    args = tuple(args)
    if np.ndim(case.func(*copy.deepcopy(args))) == 0:
        cut = case.allow_unused
        _run(
            grad(case.func, wrt=case.wrt, allow_unused=cut), args, strict_args, "grad", tol, allowed
        )
        _run(
            value_and_grad(case.func, wrt=case.wrt, allow_unused=cut),
            args,
            strict_args,
            "value_and_grad",
            tol,
            allowed,
            forward,
        )
    g = vjp(case.func, wrt=case.wrt, allow_unused=case.allow_unused)
    args, strict_args = _with_defaults(case.func, args), _with_defaults(case.func, strict_args)
    _run(g, args + (dout,), strict_args + (strict_dout,), "vjp", tol, allowed)


# --------------------------------------------------------------------------
# The double itself, and specialization keyed on the array type


def test_strict_array_refuses_what_cupy_refuses():
    x = StrictArray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    with pytest.raises(TypeError, match="does not mix"):
        x + np.ones(3)
    with pytest.raises(TypeError, match="does not mix"):
        np.concatenate([x, np.ones((1, 3))])
    with pytest.raises(TypeError, match="does not mix"):
        x[0] = np.ones(3)
    with pytest.raises(TypeError, match="out= must be"):
        np.add(x, 1.0, out=np.empty((2, 3)))
    assert not hasattr(x, "fill")


def test_strict_array_follows_the_protocols():
    x = StrictArray(np.arange(6.0).reshape(2, 3))
    total = np.sum(x)
    assert isinstance(total, StrictArray) and total.ndim == 0 and float(total) == 15.0
    assert isinstance(x[0, 1], StrictArray) and x[0, 1].ndim == 0
    assert isinstance(np.add.reduce(x, axis=0), StrictArray)
    assert isinstance(np.add.accumulate(x, axis=1), StrictArray)
    assert isinstance(np.multiply.outer(x[0], x[1]), StrictArray)
    y = np.zeros_like(x)
    np.add.at(y, (np.array([0, 0]), np.array([1, 1])), 1.0)
    assert y.get()[0, 1] == 2.0
    assert np.add(x, 1.0, out=y) is y and y.get()[1, 2] == 6.0
    y += x
    assert y.get()[1, 2] == 11.0
    assert isinstance(np.eye(2, like=x), StrictArray)
    assert x + np.float64(1.0) is not None and x * np.array(2.0) is not None
    assert np.shape(x) == (2, 3) and np.ndim(x) == 2


def _logreg(w, b, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def _logreg_args():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3))
    return rng.standard_normal(3), 0.1, x, (rng.random(16) < 0.5).astype(float)


def test_numpy_variant_never_runs_on_strict_arrays():
    args = _logreg_args()
    g = grad(_logreg, wrt=(0, 1))
    want = g(*args)
    want = g(*args)  # the numpy variant is made and runs
    assert "np.add.reduce" in source(g, *args)
    strict_args = strict(args)
    for _ in range(3):  # probe, then the strict variant, then the strict variant again
        dw, db = g(*strict_args)
        assert isinstance(dw, StrictArray)
        np.testing.assert_allclose(dw.get(), want[0], rtol=1e-12)
        np.testing.assert_allclose(float(db), want[1], rtol=1e-12)
    again = g(*args)
    assert isinstance(again[0], np.ndarray)


def test_strict_variant_calls_no_numpy_only_function():
    args = strict(_logreg_args())
    g = grad(_logreg, wrt=(0, 1))
    text = source(g, *args)
    assert "np.add.reduce" not in text and "out=" not in text


# --------------------------------------------------------------------------
# The runtime's portable forms, on StrictArrays


def test_scatter_add_sums_repeated_indices_without_ufunc_at():
    buf = StrictArray(np.zeros((3, 2)))
    StrictArray.calls.clear()
    backend.scatter_add(buf, (np.array([0, 2, 0]), slice(None)), StrictArray(np.ones((3, 2))))
    np.testing.assert_array_equal(buf.get(), [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]])
    assert not _methods_called()
    numpy_buf = np.zeros(3)
    backend.scatter_add(numpy_buf, [1, 1], 2.0)
    np.testing.assert_array_equal(numpy_buf, [0.0, 4.0, 0.0])


def test_numbers_and_lists_become_arrays_of_the_library_at_hand():
    x = StrictArray(np.arange(3.0))
    assert isinstance(backend.as_array([x, x]), StrictArray)
    assert isinstance(backend.as_array([1.0, 2.0], x), StrictArray)
    assert type(backend.as_array([1.0, 2.0], np.ones(2))) is np.ndarray
    cast = ops.cast_like(1.5, StrictArray(np.ones(2, np.float32)))
    assert isinstance(cast, StrictArray) and cast.dtype == np.float32


def test_a_recorded_shape_keeps_the_array_library():
    x = StrictArray(np.ones((2, 3), np.float32))
    recorded = ops.shape_of(x)
    assert recorded.shape == (2, 3) and recorded.dtype == np.float32
    spread = ops.unmean(1.0, recorded)
    assert isinstance(spread, StrictArray) and spread.dtype == np.float32
    np.testing.assert_allclose(spread.get(), np.full((2, 3), 1 / 6))
    assert ops.shape_of(np.ones((2, 3))) == (2, 3) and ops.shape_of(2.0) == 2.0
    assert ops.shape_of(ops.UNSET) == ()


def _random_like(rng, value):
    """A tangent structured like ``value``: its numbers and float arrays made random."""
    if isinstance(value, dict):
        return {k: _random_like(rng, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_random_like(rng, v) for v in value)
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape).astype(value.dtype)
    return float(rng.standard_normal())


def _tangent_for(case, args, rng):
    indices = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    params = list(inspect.signature(case.func).parameters)
    indices = [params.index(i) if isinstance(i, str) else i for i in indices]
    parts = tuple(_random_like(rng, args[i]) for i in indices)
    return parts if isinstance(case.wrt, tuple) else parts[0]


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_corpus_case_in_forward_mode_and_second_order_on_strict_arrays(case):
    rng = _rng(case)
    args = case.make_args(rng)
    out = _forward_or_skip(case, args)
    if any(isinstance(leaf, (np.ndarray, np.generic)) for leaf in _leaves(out)):
        pytest.skip("the function's own result is a numpy value (it builds a numpy array)")
    allowed = _methods_called()
    tol = _tolerance(args)
    args = _with_defaults(case.func, tuple(args))
    strict_args = strict(args)
    tangent = _tangent_for(case, args, rng)
    try:
        forward = jvp(case.func, wrt=case.wrt)
    except TranspileError as error:  # what forward mode refuses on numpy too
        pytest.skip(f"jvp refused: {error.what}")
    _run(
        lambda *a: forward(*a)[1],
        args + (tangent,),
        strict_args + (strict(tangent),),
        "jvp",
        tol,
        allowed,
    )
    if np.ndim(case.func(*copy.deepcopy(args))) == 0 and not isinstance(case.wrt, tuple):
        try:
            product = hvp(case.func, wrt=case.wrt)
            product(*copy.deepcopy(args), copy.deepcopy(tangent))
        except (TranspileError, TypeError) as error:  # refused on numpy: nothing to compare
            pytest.skip(f"hvp refused: {error}")
        _run(product, args + (tangent,), strict_args + (strict(tangent),), "hvp", tol, allowed)
