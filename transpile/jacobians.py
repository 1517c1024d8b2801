"""The full Jacobian, ``jacobian(f, wrt, mode)``: stacked jvps (forward mode, one per
entry of the argument) or stacked vjps (reverse mode, one per entry of the output),
whichever makes fewer calls unless ``mode`` says."""

import functools

import numpy as np

from transpile import api, higher
from transpile_runtime.structure import resolve_wrt

MODES = ("forward", "reverse")


def jacobian(f=None, wrt=0, mode=None):
    """The Jacobian of ``f`` with respect to argument ``wrt``: ``jacobian(f, wrt)(*args)``
    is an array of shape ``out.shape + x.shape`` (a tuple ``wrt`` gives a tuple of such
    blocks, one per argument). ``mode="forward"`` stacks one ``jvp`` per entry of ``x``,
    ``"reverse"`` one ``vjp`` per entry of the output; by default, forward when ``x`` has
    fewer entries than the output. The arguments differentiated are numbers or arrays."""
    if f is None:
        return lambda g: jacobian(g, wrt=wrt, mode=mode)
    if mode not in (None, *MODES):
        raise ValueError(f"mode must be 'forward', 'reverse' or None, not {mode!r}")
    f = higher.differentiable(f)
    indices, as_tuple = resolve_wrt(f, wrt)
    wrt = tuple(indices) if as_tuple else indices[0]
    forward, reverse = api.jvp(f, wrt=wrt), api.vjp(f, wrt=wrt)

    @functools.wraps(f)
    def jacobian_of(*args):
        xs = [args[i] for i in indices]
        out = f(*args)
        size_in = sum(int(np.size(x)) for x in xs)
        use = mode or ("forward" if size_in < np.size(out) else "reverse")
        if use == "forward":
            blocks = _forward(forward, args, xs, np.shape(out), as_tuple)
        else:
            blocks = _reverse(reverse, args, xs, np.shape(out), as_tuple)
        return tuple(blocks) if as_tuple else blocks[0]

    del jacobian_of.__wrapped__
    return jacobian_of


def _basis(shape, k):
    e = np.zeros(int(np.prod(shape)))
    e[k] = 1.0
    return e.reshape(shape) if shape else 1.0


def _forward(jvp_fn, args, xs, out_shape, as_tuple):
    """One block per argument: the tangents of its basis vectors, as columns."""
    blocks = []
    for j, x in enumerate(xs):
        shape = np.shape(x)
        columns = []
        for k in range(int(np.prod(shape))):
            v = _basis(shape, k)
            if as_tuple:
                v = tuple(v if i == j else np.zeros(np.shape(y)) for i, y in enumerate(xs))
            columns.append(np.asarray(jvp_fn(*args, v)[1], dtype=float))
        stacked = np.stack(columns, axis=-1) if columns else np.zeros(out_shape + (0,))
        blocks.append(stacked.reshape(out_shape + shape))
    return blocks


def _reverse(vjp_fn, args, xs, out_shape, as_tuple):
    """One block per argument: the cotangents of the output's basis vectors, as rows."""
    rows = [[] for _ in xs]
    for k in range(int(np.prod(out_shape))):
        dout = _basis(out_shape, k)
        grads = vjp_fn(*args, np.asarray(dout) if out_shape else dout)
        for j, g in enumerate(grads if as_tuple else (grads,)):
            rows[j].append(np.asarray(g, dtype=float))
    return [
        np.stack(r).reshape(out_shape + np.shape(x)) if r else np.zeros(out_shape + np.shape(x))
        for r, x in zip(rows, xs)
    ]
