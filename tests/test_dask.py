"""Generated gradients on chunked dask arrays: lazy results, right values, no hidden
``compute()``.

Every corpus case whose forward function runs on dask arrays (each numpy argument
cut into about two blocks per axis) goes through ``grad``, ``value_and_grad`` and
``vjp`` on a first call (the generic gradient) and a later one (the variant
specialized for the signature), with the threaded scheduler. A gradient must:

* give dask arrays where numpy gives arrays, and dask arrays or numbers where it
  gives numbers, equal to numpy's once computed;
* compute nothing while it runs that the function itself does not: a
  data-dependent ``if`` computes its test (once, as the function does), nothing
  else may (a numpy function dask does not implement falls back to numpy through a
  compute, with a ``FutureWarning``, which fails the case here);
* leave the arguments as they were.

A case whose forward function itself fails on dask arrays (or computes through a
numpy fallback) is skipped with its reason. One more test starts a real
``dask.distributed`` cluster of two worker processes and computes the gradient of a
logistic-regression loss over a chunked data set on it.
"""

import copy

import numpy as np
import pytest
from test_strict_arrays import ALL_CASES, _dout, _leaves, _rng, _with_defaults

from transpile import grad, value_and_grad, vjp

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from dask_support import Computes as _Computes
from dask_support import no_fallback as _no_fallback
from dask_support import threaded_scheduler  # noqa: F401 (an autouse fixture)


def _computes(fn, *args):
    """``fn(*args)`` and how many computes it ran; a numpy fallback raises."""
    with _no_fallback(), _Computes() as counter:
        result = fn(*args)
    return result, counter.count


def chunked(value):
    """``value`` with every numpy array inside dicts, lists and tuples made a dask
    array of a copy, in about two blocks along each axis."""
    if isinstance(value, dict):
        return {k: chunked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(chunked(v) for v in value)
    if isinstance(value, np.ndarray):
        blocks = tuple(max(1, (n + 1) // 2) for n in value.shape)
        return da.from_array(value.copy(), chunks=blocks)
    return value


def computed(value):
    """``value`` with every dask array inside computed (one compute for all); a numpy
    fallback inside a task (a nested compute) raises."""
    with _no_fallback():
        return dask.compute(value)[0]


def _check_leaf(got, value, want, where, tol):
    """``got`` (a dask array or number; ``value`` what it computes to) against ``want``."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, da.Array), f"{where}: a {type(got).__name__}, not a dask array"
        assert got.shape == want.shape and got.dtype == want.dtype, (
            f"{where}: {got.dtype}{got.shape}, numpy gives {want.dtype}{want.shape}"
        )
    elif isinstance(got, da.Array):  # a number in numpy: a 0-d dask array, still lazy
        assert got.ndim == 0, f"{where}: shape {got.shape} where numpy gives a number"
    else:
        assert not isinstance(got, np.ndarray), f"{where}: a numpy array, computed"
    np.testing.assert_allclose(np.asarray(value), want, rtol=tol, atol=tol, err_msg=where)


def _check_result(got, want, args, where, tol):
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert len(got_leaves) == len(want_leaves), f"{where}: structure differs"
    values = computed(got_leaves)  # one compute: the leaves share most of their graph
    for i, (g, v, w) in enumerate(zip(got_leaves, values, want_leaves)):
        _check_leaf(g, v, w, f"{where}, leaf {i}", tol)
    given = {id(leaf) for leaf in _leaves(args) if isinstance(leaf, da.Array)}
    assert not given & {id(leaf) for leaf in got_leaves}, f"{where}: an argument returned"


def _tolerance(args):
    f32 = any(getattr(leaf, "dtype", None) == np.float32 for leaf in _leaves(args))
    return 2e-4 if f32 else 1e-9


def _forward_or_skip(case, args):
    if not any(isinstance(leaf, np.ndarray) for leaf in _leaves(args)):
        pytest.skip("no array argument: nothing runs on dask")
    try:
        out, computes = _computes(case.func, *copy.deepcopy(chunked(args)))
        computed(out)
    except Exception as error:  # the reason is reported as the skip
        pytest.skip(f"forward fails on dask: {type(error).__name__}: {str(error)[:200]}")
    return out, computes


def _run(make, args, dask_args, where, tol, allowed, value=None):
    """numpy's result, then dask's on a first and a later call, each checked; then
    numpy's again (each array type keeps its own variant)."""
    want = make(*copy.deepcopy(args))
    pristine = computed(dask_args)
    for call in ("first call", "later call"):
        got, computes = _computes(make, *dask_args)
        assert computes <= allowed, (
            f"{where}, {call}: {computes} computes, the function itself runs {allowed}"
        )
        want_grad = want
        if value is not None:  # the value is what the function returns on dask arrays
            np.testing.assert_allclose(computed(got[0]), computed(value), rtol=tol, atol=tol)
            got, want_grad = got[1], want[1]
        _check_result(got, want_grad, dask_args, f"{where}, {call}", tol)
        np.testing.assert_equal(computed(dask_args), pristine, err_msg="argument changed")
    again = make(*copy.deepcopy(args))
    for i, (a, w) in enumerate(zip(_leaves(again), _leaves(want))):
        assert type(a) is type(w), f"{where}, numpy after, leaf {i}: {type(a).__name__}"
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=f"{where}, numpy after")


# A boolean mask of a dask array makes an array of unknown length (nan in its shape):
# the adjoint spreads over it lazily (ops.unreduce, backend.scatter_add), unchunked again.
_CASES = ALL_CASES


@pytest.mark.parametrize("case", _CASES, ids=lambda c: c.id)
def test_corpus_case_on_dask_arrays(case):
    rng = _rng(case)
    args = case.make_args(rng)
    forward, computes = _forward_or_skip(case, args)
    tol = _tolerance(args)
    dask_args = chunked(tuple(args))
    dout = _dout(case, args, rng)
    args = tuple(args)
    if np.ndim(forward) == 0:
        cut = case.allow_unused
        _run(
            grad(case.func, wrt=case.wrt, allow_unused=cut), args, dask_args, "grad", tol, computes
        )
        made = value_and_grad(case.func, wrt=case.wrt, allow_unused=cut)
        _run(made, args, dask_args, "value_and_grad", tol, computes, forward)
    g = vjp(case.func, wrt=case.wrt, allow_unused=case.allow_unused)
    args, dask_args = _with_defaults(case.func, args), _with_defaults(case.func, dask_args)
    _run(g, args + (dout,), dask_args + (chunked(dout),), "vjp", tol, computes)


# --------------------------------------------------------------------------
# A logistic regression, lazily, then on a cluster


def logistic_loss(w, b, x, y):
    z = x @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.01 * np.sum(w * w)


def _dataset(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = (x @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0).astype(float)
    return rng.standard_normal(d), 0.1, x, y


def test_gradient_of_a_loss_over_a_chunked_dataset_is_lazy():
    """70,000 rows: past the size where unreduce spreads a number as a broadcast view
    (the mean's adjoint is a lazy 0-d array there, never a fill value)."""
    w, b, x, y = _dataset(n=70_000)
    want = grad(logistic_loss, wrt=(0, 1))(w, b, x, y)
    dx, dy = da.from_array(x, chunks=(10_000, 5)), da.from_array(y, chunks=10_000)
    g = grad(logistic_loss, wrt=(0, 1))
    for _ in range(2):
        (dw, db), computes = _computes(g, w, b, dx, dy)
        assert computes == 0
        assert isinstance(dw, da.Array) and isinstance(db, da.Array)
        assert dw.shape == (5,) and db.ndim == 0
        dw, db = computed((dw, db))
        np.testing.assert_allclose(dw, want[0], rtol=1e-10)
        np.testing.assert_allclose(db, want[1], rtol=1e-10)


@pytest.mark.distributed
def test_gradient_on_a_local_distributed_cluster():
    """Two worker processes; the gradient's graph runs on them; ~5-15 s, mostly the
    start of the workers."""
    distributed = pytest.importorskip("distributed")
    w, b, x, y = _dataset(n=4000)
    want = grad(logistic_loss, wrt=(0, 1))(w, b, x, y)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        with distributed.Client(cluster) as client:
            dx = da.from_array(x, chunks=(500, 5))
            dy = da.from_array(y, chunks=500)
            dx, dy = client.persist([dx, dy])  # the data lives on the workers
            g = grad(logistic_loss, wrt=(0, 1))
            for _ in range(2):
                dw, db = g(w, b, dx, dy)
                assert isinstance(dw, da.Array)
                dw, db = client.compute([dw, db], sync=False)
                dw, db = dw.result(timeout=60), db.result(timeout=60)
                np.testing.assert_allclose(dw, want[0], rtol=1e-10)
                np.testing.assert_allclose(db, want[1], rtol=1e-10)
            assert len(client.scheduler_info()["workers"]) == 2
    finally:
        cluster.close()


# --------------------------------------------------------------------------
# The corpus on a cluster: the gradients' graphs run in worker processes


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.mark.slow  # about 90 s on 2 cores: run with -m slow
@pytest.mark.distributed
@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_corpus_gradient_on_a_local_distributed_cluster(case, cluster_client):
    """``grad`` (or ``vjp``) of each corpus case on chunked arrays, computed by two
    worker processes (what runs there is numpy and transpile_runtime, imported by
    reference), on a first and a later call, against numpy."""
    rng = _rng(case)
    args = tuple(case.make_args(rng))
    _forward_or_skip(case, args)
    tol = _tolerance(args)
    if np.ndim(case.func(*copy.deepcopy(args))) == 0:
        made = grad(case.func, wrt=case.wrt, allow_unused=case.allow_unused)
        extra, dask_extra = (), ()
    else:
        dout = _dout(case, args, rng)
        made = vjp(case.func, wrt=case.wrt, allow_unused=case.allow_unused)
        args = _with_defaults(case.func, args)
        extra, dask_extra = (dout,), (chunked(dout),)
    want = made(*copy.deepcopy(args), *extra)
    for call in ("first call", "later call"):
        got = made(*chunked(args), *dask_extra)
        values = cluster_client.compute(_leaves(got), sync=True)
        for i, (v, w) in enumerate(zip(values, _leaves(want))):
            np.testing.assert_allclose(np.asarray(v), w, rtol=tol, atol=tol, err_msg=f"{call} {i}")
