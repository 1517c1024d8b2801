"""``record.needed_after`` (what the tape needs once ``recompute`` changed the adjoint,
from the first pass) gives what ``record.needed`` finds reading the changed adjoint
again, for every loop of ``recompute_funcs`` and for changed loops nested in a loop or
a branch, and two changed loops in one top-level statement."""

import types

import numpy as np
import pytest
import recompute_funcs as R
from test_recompute import _args

from transpile import grad
from transpile.reverse import recompute, record


def two_inner_loops(W, ys):
    """Two reverse loops changed inside one top-level loop."""
    h = np.zeros((ys.shape[1], W.shape[0]))
    loss = 0.0
    for t in range(ys.shape[0]):
        for _ in range(2):
            h = np.tanh(h @ W + 0.5)
            d = h - ys[t]
            loss = loss + np.sum(d * d)
        e = h * 2.0
        loss = loss + np.sum(np.sin(e))
    return loss


def loop_in_branch(W, ys):
    """A changed loop in a branch in a loop."""
    h = np.zeros((ys.shape[1], W.shape[0]))
    loss = 0.0
    for t in range(ys.shape[0]):
        if t > 0:
            for _ in range(2):
                h = np.tanh(h @ W + 0.5)
                d = h - ys[t]
                loss = loss + np.sum(d * d)
    return loss


def two_loops(W, ys):
    """Two top-level loops, each changed."""
    h = np.zeros((ys.shape[1], W.shape[0]))
    loss = 0.0
    for t in range(ys.shape[0]):
        h = np.tanh(h @ W + 0.5)
        d = h - ys[t]
        loss = loss + np.sum(d * d)
    g = h
    for t in range(ys.shape[0]):
        g = np.sin(g) + 0.3
        e = g * 1.5
        loss = loss + np.sum(np.sin(e)) if t > 1 else loss + np.sum(np.cos(e))
    return loss


LOCAL = {f.__name__: f for f in (two_inner_loops, loop_in_branch, two_loops)}
NAMES = [n for n in dir(R) if not n.startswith("_") and callable(getattr(R, n))]


@pytest.mark.parametrize("name", NAMES + sorted(LOCAL))
def test_needed_after_recompute_is_needed_read_again(name, monkeypatch):
    first_pass = record._wanted
    checked = []

    def compared(fn, loads, attempted):
        wanted, shape_only = first_pass(fn, loads, attempted)
        if fn.emitted.restores:
            view_of = record._views(
                fn.primal, recompute.assigned_sources(fn.primal, fn.parsed.resolve)
            )
            again = record.needed(fn.adjoint, fn.adjoint_names, view_of, record.HeaderLoads())
            assert wanted == again
            checked.append(fn)
        return wanted, shape_only

    monkeypatch.setattr(record, "_wanted", compared)
    f = LOCAL.get(name) or getattr(R, name)
    # a new function object: none of the gradients other tests made of it is reused
    f = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    rng = np.random.default_rng(0)
    if name in LOCAL:
        args = (rng.normal(scale=0.4, size=(3, 3)), rng.normal(size=(4, 2, 3)))
    elif name == "scalar_residual":
        args = (0.3,)
    else:
        args = _args(name, rng)
    grad(f)(*args)
    # (calls_loop's loop is its helper's, whose gradient an earlier test may have made)
    assert checked or name == "calls_loop"
