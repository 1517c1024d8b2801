"""Central finite differences in float64, and a structure-aware closeness check.

This is the test suite's own reference for gradients, kept independent of the
compiler and of ``runtime.gradcheck``. Arguments may be Python floats, float
arrays, or nests of dicts, lists and tuples of those; gradients come back in
the same structure.

Each derivative is a Richardson-extrapolated central difference
``(4 D(h/2) - D(h)) / 3`` with ``D(h) = (f(x + h) - f(x - h)) / 2h`` and a
per-entry step ``h = step * max(1, |x|)``. Truncation error is O(h^4) and
round-off about ``1e-11 * |f|`` at the default step, so a float64 gradient can
be checked to ``rtol=1e-6``. float32 inputs are promoted to float64 before
differencing; the reference is always float64.
"""

import copy

import numpy as np

DEFAULT_STEP = 1e-5


# --------------------------------------------------------------------------
# Structures


def _is_container(node):
    return isinstance(node, (dict, list, tuple))


def flatten(tree):
    """Return ``(leaves, rebuild)`` where ``rebuild(new_leaves)`` makes a like structure."""
    leaves = []

    def walk(node):
        if isinstance(node, dict):
            keys = list(node)
            subs = [walk(node[k]) for k in keys]
            return lambda it: {k: s(it) for k, s in zip(keys, subs)}
        if isinstance(node, (list, tuple)):
            kind = type(node)
            subs = [walk(v) for v in node]
            return lambda it: kind(s(it) for s in subs)
        leaves.append(node)
        return lambda it: next(it)

    builder = walk(tree)
    return leaves, lambda new_leaves: builder(iter(new_leaves))


def _promote(node):
    """Copy ``node`` with every float32/float16 leaf promoted to float64."""
    leaves, rebuild = flatten(node)
    out = []
    for leaf in leaves:
        if isinstance(leaf, (np.ndarray, np.floating)) and leaf.dtype in (np.float32, np.float16):
            out.append(np.asarray(leaf, dtype=np.float64).copy())
        else:
            out.append(copy.deepcopy(leaf))
    return rebuild(out)


def _scalar(value):
    arr = np.asarray(value)
    if arr.size != 1:
        raise ValueError(f"numeric_grad needs a scalar-valued function, got shape {arr.shape}")
    return float(arr.reshape(()))


def _is_float_leaf(leaf):
    if isinstance(leaf, bool):
        return False
    if isinstance(leaf, float):
        return True
    return isinstance(leaf, (np.ndarray, np.floating)) and np.issubdtype(leaf.dtype, np.floating)


# --------------------------------------------------------------------------
# Differencing


def _richardson(phi, h):
    """Derivative at 0 of the scalar or array function ``phi(t)``."""
    d1 = (phi(h) - phi(-h)) / (2.0 * h)
    d2 = (phi(h / 2.0) - phi(-h / 2.0)) / h
    return (4.0 * d2 - d1) / 3.0


def numeric_grad(f, args, wrt_indices, *, step=DEFAULT_STEP):
    """Gradient of scalar ``f(*args)`` w.r.t. ``args[i]`` for each ``i`` in ``wrt_indices``.

    Returns a tuple, one gradient per index, each shaped like its argument (a
    Python float for a float leaf, a float64 array for an array leaf). ``f`` is
    always called on fresh copies, so it may not disturb the caller's values.
    """
    base = [_promote(a) for a in args]
    grads = []
    for index in wrt_indices:
        leaves, rebuild = flatten(base[index])
        leaf_grads = []
        for k, leaf in enumerate(leaves):
            if not _is_float_leaf(leaf):
                raise TypeError(
                    f"argument {index}: leaf {k} is {type(leaf).__name__}, not a float or array"
                )

            def call(new_leaf, k=k):
                new_leaves = list(leaves)
                new_leaves[k] = new_leaf
                trial = [copy.deepcopy(a) for a in base]
                trial[index] = rebuild(copy.deepcopy(new_leaves))
                return _scalar(f(*trial))

            if not isinstance(leaf, np.ndarray):
                x0 = float(leaf)
                h = step * max(1.0, abs(x0))
                leaf_grads.append(float(_richardson(lambda t: call(x0 + t), h)))
                continue
            x0 = np.array(leaf, dtype=np.float64)
            g = np.zeros_like(x0)
            for pos in np.ndindex(x0.shape):
                h = step * max(1.0, abs(x0[pos]))

                def phi(t, pos=pos):
                    x = x0.copy()
                    x[pos] += t
                    return call(x)

                g[pos] = _richardson(phi, h)
            leaf_grads.append(g)
        grads.append(rebuild(leaf_grads))
    return tuple(grads)


def numeric_jvp(f, args, wrt_indices, tangents, *, step=DEFAULT_STEP):
    """Directional derivative of ``f(*args)`` (any array output) along ``tangents``.

    ``tangents`` has one entry per index in ``wrt_indices``, structured like the
    argument. The tangent is scaled so that the step is ``step`` relative to the
    size of the moved arguments.
    """
    base = [_promote(a) for a in args]
    moved = [flatten(base[i]) for i in wrt_indices]
    dirs = [flatten(_promote(t))[0] for t in tangents]
    size = max([1.0] + [float(np.max(np.abs(leaf))) for leaves, _ in moved for leaf in leaves])
    h = step * size

    def phi(t):
        trial = [copy.deepcopy(a) for a in base]
        for index, (leaves, rebuild), d in zip(wrt_indices, moved, dirs):
            trial[index] = rebuild(
                [_like(x, np.asarray(x, np.float64) + t * np.asarray(v)) for x, v in zip(leaves, d)]
            )
        return np.asarray(f(*trial), dtype=np.float64)

    return _richardson(phi, h)


def _like(orig, value):
    """``value`` as a Python float when ``orig`` was one, else as an array."""
    if isinstance(orig, float):
        return float(value)
    return np.asarray(value)


def inner(a, b):
    """Sum over all leaves of the elementwise products of two like structures."""
    la, _ = flatten(a)
    lb, _ = flatten(b)
    if len(la) != len(lb):
        raise ValueError(f"structures differ: {len(la)} leaves vs {len(lb)}")
    return float(
        sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)) for x, y in zip(la, lb))
    )


# --------------------------------------------------------------------------
# Comparison


def assert_close(actual, expected, rtol=1e-5, atol=1e-7, path="grad"):
    """Assert that two like structures agree: ``|a - e| <= atol + rtol * |e|`` everywhere.

    Dicts must have the same keys, lists and tuples the same type and length,
    leaves the same shape. The message names the path of the offending leaf,
    its worst entry, and the number of mismatches.
    """
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected a dict, got {type(actual).__name__}"
        assert set(actual) == set(expected), (
            f"{path}: keys differ: got {sorted(actual)}, expected {sorted(expected)}"
        )
        for key in expected:
            assert_close(actual[key], expected[key], rtol, atol, f"{path}[{key!r}]")
        return
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected), (
            f"{path}: expected a {type(expected).__name__}, got {type(actual).__name__}"
        )
        assert len(actual) == len(expected), (
            f"{path}: expected length {len(expected)}, got {len(actual)}"
        )
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, f"{path}[{i}]")
        return
    assert actual is not None, f"{path}: got None"
    assert not _is_container(actual), f"{path}: expected a leaf, got {type(actual).__name__}"
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"{path}: shape {a.shape}, expected {e.shape}"
    a64 = a.astype(np.float64)
    e64 = e.astype(np.float64)
    err = np.abs(a64 - e64)
    bad = ~(err <= atol + rtol * np.abs(e64))  # NaN counts as bad
    if not bad.any():
        return
    excess = np.where(bad, np.nan_to_num(err / (atol + rtol * np.abs(e64)), nan=np.inf), -1.0)
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), e.shape))
    lines = [
        f"{path}: {int(bad.sum())} of {e.size} entries differ (rtol={rtol}, atol={atol}),"
        f" shape {e.shape}, dtype {a.dtype}",
        f"  worst at {worst}: got {float(a64[worst])!r}, expected {float(e64[worst])!r},"
        f" abs err {float(err[worst]):.3g}",
    ]
    if e.size <= 12:
        lines.append("  got      " + np.array2string(a64.ravel(), precision=8))
        lines.append("  expected " + np.array2string(e64.ravel(), precision=8))
    raise AssertionError("\n".join(lines))


def assert_same(actual, expected, path="arg"):
    """Assert two like structures are identical: same types, shapes, dtypes and values."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), f"{path}: keys changed"
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}[{key!r}]")
        return
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected), (
            f"{path}: container changed"
        )
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]")
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{path}: no longer an array"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} -> {expected.dtype}"
        assert np.array_equal(actual, expected, equal_nan=True), f"{path}: values were modified"
        return
    assert actual == expected or (actual != actual and expected != expected), (
        f"{path}: {expected!r} became {actual!r}"
    )
