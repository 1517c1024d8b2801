"""Adjoints of ``np.einsum``: ``uneinsum`` for plain subscripts, ``uneinsum_any`` for any
(``...``, an index repeated in one operand, an index only one operand has, axes of
length 1), and the two helpers its second derivatives call.
"""

import numpy as np

from .declare import helper
from .structures import replaced, zeros_like


@helper(shares=True)
def uneinsum(g, subscripts, operands, index):
    """Adjoint of operand ``index`` of ``np.einsum(subscripts, *operands)``: an einsum of
    the output's adjoint with the other operands, broadcast over indices that only this
    operand had (they were summed away)."""
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        raise NotImplementedError("the gradient of np.einsum with '...' is not supported")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = inputs.split(",")
    mine = terms[index]
    if len(set(mine)) != len(mine):
        raise NotImplementedError(
            f"the gradient of np.einsum({subscripts!r}) with a repeated index in one operand "
            "is not supported"
        )
    others = [t for k, t in enumerate(terms) if k != index]
    other_operands = [o for k, o in enumerate(operands) if k != index]
    reachable = set(output).union(*others)
    kept = "".join(c for c in mine if c in reachable)
    grad = np.einsum(",".join([output, *others]) + "->" + kept, g, *other_operands)
    if kept != mine:
        shape = np.shape(operands[index])
        grad = np.broadcast_to(
            np.reshape(grad, [shape[i] if c in kept else 1 for i, c in enumerate(mine)]), shape
        )
    return grad


def _einsum_spec(subscripts, operands):
    """The input terms and output of an einsum, with each ``...`` written out as letters
    (right-aligned, as numpy broadcasts them) and an implicit output made explicit."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    dots = [np.ndim(o) - len(t.replace("...", "")) for t, o in zip(terms, operands)]
    width = max([n for t, n in zip(terms, dots) if "..." in t], default=0)
    ellipsis = "".join(spare[:width])
    terms = [t.replace("...", ellipsis[width - n :]) for t, n in zip(terms, dots)]
    if not arrow:
        letters = "".join(terms)
        single = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis)
        output = ellipsis + "".join(single)
    return terms, output.replace("...", ellipsis)


@helper(shares=True)
def uneinsum_any(g, subscripts, operands, index):
    """Adjoint of operand ``index`` of ``np.einsum(subscripts, *operands)``, for any
    subscripts: ``...``, an index repeated in one operand (a trace or a diagonal: the
    adjoint lies on that diagonal), an index only this operand has (summed away:
    broadcast back), and axes of length 1 broadcast against the others."""
    terms, output = _einsum_spec(subscripts, operands)
    sizes = _letter_sizes(terms, operands)
    mine = terms[index]
    unique = "".join(dict.fromkeys(mine))
    others = [t for k, t in enumerate(terms) if k != index]
    rest = [o for k, o in enumerate(operands) if k != index]
    reachable = set(output).union(*others)
    kept = "".join(c for c in unique if c in reachable)
    grad = np.einsum(",".join([output, *others]) + "->" + kept, g, *rest)
    shape = np.shape(operands[index])
    grad = _to_own_axes(grad, kept, unique, sizes, dict(zip(mine, shape)))
    if unique == mine:
        return grad
    return _on_diagonal(grad, mine, unique, shape)


def _letter_sizes(terms, operands):
    """The length of each index letter of an einsum: the largest of its axes (an axis
    of length 1 broadcasts against the others)."""
    sizes = {}
    for t, o in zip(terms, operands):
        for c, n in zip(t, np.shape(o)):
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


def _to_own_axes(grad, kept, unique, sizes, own):
    """The adjoint ``grad`` over the letters ``kept`` made one over the operand's letters
    ``unique``, whose own lengths are ``own``: broadcast along the letters summed away
    (the same adjoint for every index), summed along the operand's axes of length 1
    that broadcast against the other operands."""
    if kept != unique:
        grad = np.reshape(grad, [sizes[c] if c in kept else 1 for c in unique])
        grad = np.broadcast_to(grad, [sizes[c] for c in unique])
    ones = tuple(i for i, c in enumerate(unique) if own[c] == 1 and sizes[c] != 1)
    if ones:
        grad = np.sum(grad, axis=ones, keepdims=True)
    return grad


def _on_diagonal(grad, mine, unique, shape):
    """Zeros of ``shape`` holding ``grad`` (indexed by the letters ``unique``) on the
    diagonal that the operand's repeated letters ``mine`` read."""
    own = dict(zip(mine, shape))
    out = np.zeros_like(grad, shape=shape)  # the diagonal, as indices of the unique letters
    axis = {c: i for i, c in enumerate(unique)}
    ranges = {
        c: np.reshape(np.arange(own[c]), [-1 if j == axis[c] else 1 for j in range(len(unique))])
        for c in unique
    }
    out[tuple(ranges[c] for c in mine)] = grad
    return out


@helper(fresh=True)
def uneinsum_others(h, g, subscripts, operands, index):
    """The adjoints of the operands in ``uneinsum_any(g, subscripts, operands, index)`` for
    the cotangent ``h``, a list: that function is linear in each operand but ``index``'s
    (read for its shape: its entry is zeros), ``<h, uneinsum_any(g, ...)>`` being
    ``<g, einsum(subscripts, ...)>`` with ``h`` for operand ``index``."""
    given = replaced(operands, index, h)
    return [
        zeros_like(o) if k == index else uneinsum_any(g, subscripts, given, k)
        for k, o in enumerate(operands)
    ]


@helper(fresh=True)
def uneinsum_tangent(g, subscripts, operands, tangents, index):
    """The tangent of ``uneinsum_any(g, subscripts, operands, index)`` along the operands'
    ``tangents`` (``index``'s own is read for its shape only)."""
    out = zeros_like(operands[index])
    for k, tk in enumerate(tangents):
        if k != index:
            out = out + uneinsum_any(g, subscripts, replaced(operands, k, tk), index)
    return out
