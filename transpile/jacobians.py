"""The full Jacobian, ``jacobian(f, wrt, mode)``: stacked jvps (forward mode, one per
entry of the argument) or stacked vjps (reverse mode, one per entry of the output),
whichever makes fewer calls unless ``mode`` says.

Arguments and outputs may be structures (dicts, lists, tuples of arrays and numbers):
the Jacobian is then, as JAX gives it, the output's structure with each leaf replaced
by the argument's structure of blocks ``out_leaf.shape + x_leaf.shape``. A tuple
``wrt`` counts as one more level of structure: a tuple of blocks, one per argument.
"""

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from transpile import api
from transpile.front import callables, higher
from transpile_runtime.structure import Wrt, flatten, resolve_wrt, unflatten

MODES = ("forward", "reverse")


def jacobian(
    f: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    mode: str | None = None,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``f`` with respect to argument ``wrt``: ``jacobian(f, wrt)(*args)``
    is an array of shape ``out.shape + x.shape`` (a tuple ``wrt`` gives a tuple of such
    blocks, one per argument; structured arguments and outputs give structures of
    blocks). ``mode="forward"`` stacks one ``jvp`` per entry of ``x``, ``"reverse"``
    one ``vjp`` per entry of the output; by default, forward when ``x`` has fewer
    entries than the output. Complex arguments or outputs need ``holomorphic=True``
    (JAX's rule): the Jacobian of a holomorphic ``f`` is then its complex derivative
    ``df/dz``; a function that is not holomorphic has no complex Jacobian (use ``vjp``
    or ``jvp``, JAX's convention, or real and imaginary parts)."""
    if f is None:
        return lambda g: jacobian(g, wrt=wrt, mode=mode, holomorphic=holomorphic)
    if mode not in (None, *MODES):
        raise ValueError(f"mode must be 'forward', 'reverse' or None, not {mode!r}")
    f = higher.differentiable(callables.plain(f))
    indices, as_tuple = resolve_wrt(f, wrt)
    wrt = tuple(indices) if as_tuple else indices[0]
    # only the mode used is made: a function forward mode refuses (recursion, *args)
    # still has its Jacobian by vjps, and the other way round
    made = {}

    def products(use):
        if use not in made:
            made[use] = (api.jvp if use == "forward" else api.vjp)(f, wrt=wrt)
        return made[use]

    if mode is not None:
        products(mode)  # a refusal is raised here, as for jvp and vjp themselves

    @functools.wraps(f)
    def jacobian_of(*args):
        x = tuple(args[i] for i in indices) if as_tuple else args[indices[0]]
        out = f(*args)
        x_leaves, x_def = flatten(x)
        out_leaves, out_def = flatten(out)
        _check_complex(x_leaves, out_leaves, holomorphic)
        size_in = sum(int(np.size(leaf)) for leaf in x_leaves)
        size_out = sum(int(np.size(leaf)) for leaf in out_leaves)
        use = mode or ("forward" if size_in < size_out else "reverse")
        if use == "forward":
            product = lambda v: products("forward")(*args, v)[1]
            blocks = _forward(product, x_leaves, x_def, out_leaves)
        else:
            product = lambda dout: products("reverse")(*args, dout)
            blocks = _reverse(product, x_leaves, x_def, out_leaves, out_def)
        return nest(blocks, out_def, x_def)

    del jacobian_of.__wrapped__
    return jacobian_of


def nest(blocks, outer_def, inner_def):
    """``blocks[i][j]`` as ``outer_def``'s structure of ``inner_def``'s structures."""
    return unflatten(outer_def, [unflatten(inner_def, row) for row in blocks])


def basis(leaves, treedef, j, k):
    """The structure of ``leaves`` with zeros everywhere but entry ``k`` of leaf ``j``,
    which is 1 (a float for a number leaf)."""
    parts = []
    for i, leaf in enumerate(leaves):
        shape = np.shape(leaf)
        e = np.zeros(int(np.prod(shape)), dtype=precision(leaf))
        if i == j:
            e[k] = 1.0
        parts.append(e.reshape(shape) if shape else float(e[0]) if e.size else 0.0)
    return unflatten(treedef, parts)


def _forward(product, x_leaves, x_def, out_leaves):
    """``blocks[i][j]``: the tangents of output leaf ``i`` along the basis of argument
    leaf ``j``, as columns."""
    columns = [[[] for _ in x_leaves] for _ in out_leaves]
    for j, leaf in enumerate(x_leaves):
        for k in range(int(np.size(leaf))):
            tangent, _ = flatten(product(basis(x_leaves, x_def, j, k)))
            for i, t in enumerate(tangent):
                columns[i][j].append(np.asarray(t, dtype=precision(out_leaves[i], leaf)))
    return [
        [_stacked(columns[i][j], o, x, -1) for j, x in enumerate(x_leaves)]
        for i, o in enumerate(out_leaves)
    ]


def _reverse(product, x_leaves, x_def, out_leaves, out_def):
    """``blocks[i][j]``: the cotangents in argument leaf ``j`` of the basis of output
    leaf ``i``, as rows."""
    blocks = []
    for i, leaf in enumerate(out_leaves):
        rows = [[] for _ in x_leaves]
        for k in range(int(np.size(leaf))):
            dout = basis(out_leaves, out_def, i, k)
            grads, _ = flatten(product(dout))
            for j, g in enumerate(grads):
                rows[j].append(np.asarray(g, dtype=precision(leaf, x_leaves[j])))
        blocks.append([_stacked(rows[j], leaf, x, 0) for j, x in enumerate(x_leaves)])
    return blocks


def _check_complex(x_leaves, out_leaves, holomorphic):
    """Refuse, as JAX does, a complex argument or output without ``holomorphic=True``,
    and ``holomorphic=True`` where an argument or the output is real."""
    complex_in = [np.iscomplexobj(leaf) for leaf in x_leaves]
    complex_out = [np.iscomplexobj(leaf) for leaf in out_leaves]
    if holomorphic and not (all(complex_in) and all(complex_out)):
        raise TypeError(
            "jacobian with holomorphic=True needs complex arguments and a complex output "
            "(pass complex arrays, e.g. x.astype(complex))"
        )
    if not holomorphic and (any(complex_in) or any(complex_out)):
        raise TypeError(
            "jacobian of a function with complex arguments or outputs needs "
            "holomorphic=True (its complex derivative, for a holomorphic function); for "
            "one that is not holomorphic use vjp or jvp (JAX's convention)"
        )


def precision(*leaves):
    """The dtype of a block between ``leaves``: float32 where they are all float32
    (float32 in, float32 out), float64 where any is a Python number, an integer or
    float64; complex (of that precision) where any is complex."""
    kinds = [
        leaf.dtype
        if getattr(leaf, "dtype", None) is not None and leaf.dtype.kind in "fc"
        else complex
        if isinstance(leaf, complex)
        else float
        for leaf in leaves
    ]
    return np.result_type(*kinds)


def _stacked(parts, out_leaf, x_leaf, axis):
    """One block of shape ``out.shape + x.shape``: ``parts`` (one per entry of the
    argument, ``axis=-1``, or of the output, ``axis=0``) stacked."""
    shape = np.shape(out_leaf) + np.shape(x_leaf)
    if not parts:
        return np.zeros(shape, dtype=precision(out_leaf, x_leaf))
    return np.stack(parts, axis=axis).reshape(shape)
