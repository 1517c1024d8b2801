"""Gradient checks along random directions, as JAX's ``check_grads`` makes them: the
cost is a few calls of ``f`` per direction, whatever the size of the arguments.

Along a direction ``v`` (standard normal entries, in the structure of the arguments
differentiated), the derivative of ``t -> f(x + t v)`` at 0 is estimated by central
differences with one Richardson step (error of order ``h**4``), and compared with
``<grad f(x), v>`` (reverse mode), with the tangent ``jvp`` returns (forward mode), and,
for second order, ``H v`` with the central difference of the gradient along ``v``.
Everything numeric is computed in float64 on copies; the caller's arrays are never
written to.
"""

import numpy as np

from .structure import flatten, resolve_wrt, unflatten

# step of the first central difference, relative to the largest entry of x (at least 1)
# over the largest of v; with one Richardson step the error is about h**4 |f^(5)| (a
# function's scale of change may be far below x's: tanh(x @ W) with 100 columns) plus
# eps_machine |f| / h. JAX's numerical checks step 1e-4 in float64 too.
STEP = 1e-4


def directions(f, args, wrt, n, seed):
    """``(indices, as_tuple, [v_1, ..., v_n])``: ``n`` random directions in the structure
    of the arguments ``wrt`` names (a tuple of them for a tuple ``wrt``)."""
    indices, as_tuple = resolve_wrt(f, wrt)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        parts = []
        for i in indices:
            leaves, treedef = flatten(args[i])
            drawn = [
                rng.standard_normal(np.shape(leaf))
                if np.ndim(leaf)
                else float(rng.standard_normal())
                for leaf in leaves
            ]
            parts.append(unflatten(treedef, drawn))
        out.append(tuple(parts) if as_tuple else parts[0])
    return indices, as_tuple, out


def _leaves(tree, as_tuple):
    trees = tree if as_tuple else (tree,)
    return [leaf for t in trees for leaf in flatten(t)[0]]


def inner(a, b, as_tuple):
    """``<a, b>`` over every leaf of two structures alike (a tuple of them for a tuple)."""
    return float(
        sum(
            np.sum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64))
            for x, y in zip(_leaves(a, as_tuple), _leaves(b, as_tuple), strict=True)
        )
    )


def _moved(args, indices, as_tuple, v, t):
    """``args`` with the arguments differentiated moved by ``t v`` (float64 copies)."""
    moved = list(args)
    parts = v if as_tuple else (v,)
    for i, part in zip(indices, parts, strict=True):
        x_leaves, treedef = flatten(args[i])
        v_leaves = flatten(part)[0]
        moved[i] = unflatten(
            treedef,
            [
                np.asarray(x, dtype=np.float64) + t * dv if np.ndim(x) else float(x) + t * dv
                for x, dv in zip(x_leaves, v_leaves, strict=True)
            ],
        )
    return moved


def _step(args, indices, as_tuple, v, base):
    def largest(trees):
        return max((float(np.max(np.abs(leaf))) for leaf in trees if np.size(leaf)), default=0.0)

    x_size = largest([leaf for i in indices for leaf in flatten(args[i])[0]])
    v_size = largest(_leaves(v, as_tuple))
    return base * max(1.0, x_size) / max(v_size, 1e-300)


def derivative(g, args, indices, as_tuple, v, base=STEP):
    """The derivative at 0 of ``t -> g(*args moved by t v)``: a number, or a structure of
    leaves (``g`` a gradient), by central differences at ``h`` and ``h / 2`` combined
    (Richardson: ``(4 D(h/2) - D(h)) / 3``)."""
    h = _step(args, indices, as_tuple, v, base)

    def central(step):
        up = g(*_moved(args, indices, as_tuple, v, step))
        down = g(*_moved(args, indices, as_tuple, v, -step))
        return _combine(lambda a, b: (a - b) / (2 * step), up, down, as_tuple)

    coarse, fine = central(h), central(h / 2)
    return _combine(lambda c, f: (4 * f - c) / 3, coarse, fine, as_tuple)


def _combine(op, a, b, as_tuple):
    """``op`` leaf by leaf over two results alike: numbers, or gradient structures."""
    if np.ndim(a) == 0 and not isinstance(a, (tuple, list, dict)) and not hasattr(a, "__dict__"):
        return op(float(a), float(b))
    trees_a, trees_b = (a, b) if as_tuple else ((a,), (b,))
    out = []
    for ta, tb in zip(trees_a, trees_b, strict=True):
        la, treedef = flatten(ta)
        lb = flatten(tb)[0]
        out.append(
            unflatten(
                treedef,
                [
                    op(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
                    for x, y in zip(la, lb, strict=True)
                ],
            )
        )
    return tuple(out) if as_tuple else out[0]
