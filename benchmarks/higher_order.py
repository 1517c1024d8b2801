"""Time forward mode and Hessian-vector products against the function and its gradient.

Usage::

    python benchmarks/higher_order.py [--quick] [--no-peers]

For the logistic-regression and MLP problems of ``problems.PROBLEMS`` (differentiated
in their first parameter, ``w`` or ``W1``), this checks ``jvp`` against central
differences of the function and ``hvp`` against central differences of the generated
gradient, then times, side by side in one process:

* ``jvp(f)(*args, v)`` against ``f(*args)`` (theory: at most 3 times the function);
* ``hvp(f)(*args, v)`` (forward over reverse), ``hvp(f, has_grad=True)`` (the gradient
  with it) and ``hvp(f, mode="reverse")`` (reverse over reverse) against
  ``grad(f)(*args)`` (theory: at most 4).

Where autograd or JAX is installed (neither is a dependency), their own ratios are
printed next to these: autograd's ``make_jvp`` over its function time and its
``hessian_tensor_product`` over its ``grad``; JAX's jitted ``jvp`` over jitted ``f``,
and jitted forward-over-reverse hvp over jitted ``grad``. Each ratio compares a
system with itself; the absolute times are printed too.
"""

import argparse
import types

import _path  # noqa: F401  (puts the checkout's root on sys.path)
import numpy as np
from problems import PROBLEMS
from run import time_pair

from transpile import grad, hvp, jvp

ROWS = [("logreg", "small"), ("logreg", "large"), ("mlp", "small"), ("mlp", "large")]
EPS = 1e-6


def _problem(name, size):
    return next(p for p in PROBLEMS if p.name == name and p.size == size)


def _central(func, x, v):
    return (func(x + EPS * v) - func(x - EPS * v)) / (2 * EPS)


def check(problem, args, v):
    """jvp against differences of f, hvp against differences of the gradient."""
    f, rest = problem.func, args[1:]
    _, tangent = jvp(f)(*args, v)
    expected = _central(lambda x: f(x, *rest), args[0], v)
    assert np.isclose(tangent, expected, rtol=1e-5, atol=1e-8), (tangent, expected)
    g = grad(f)
    expected = _central(lambda x: g(x, *rest), args[0], v)
    product = hvp(f)(*args, v)
    assert np.allclose(product, expected, rtol=1e-4, atol=1e-7)
    gradient, product2 = hvp(f, has_grad=True)(*args, v)
    assert np.allclose(product2, product, rtol=1e-10, atol=1e-12)
    assert np.allclose(hvp(f, mode="reverse")(*args, v), product, rtol=1e-10, atol=1e-12)
    assert np.allclose(gradient, g(*args), rtol=1e-12, atol=1e-14)


def ours(problem, args, v, repeats, min_sample):
    f = problem.func
    forward, product, both, gradient = jvp(f), hvp(f), hvp(f, has_grad=True), grad(f)
    reverse = hvp(f, mode="reverse")
    t_f, t_jvp = time_pair([f, lambda *a: forward(*a, v)], args, repeats, min_sample)
    t_grad, t_hvp, t_both, t_rev = time_pair(
        [
            gradient,
            lambda *a: product(*a, v),
            lambda *a: both(*a, v),
            lambda *a: reverse(*a, v),
        ],
        args,
        repeats,
        min_sample,
    )
    return t_f, t_jvp, t_grad, t_hvp, t_both, t_rev


def _rebound(func, np_module, stop_gradient):
    globs = {**func.__globals__, "np": np_module, "stop_gradient": stop_gradient}
    return types.FunctionType(func.__code__, globs)


def autograd_ratios(problem, args, v, repeats, min_sample):
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None
    f = _rebound(problem.func, anp, lambda x: x)
    make_jvp = autograd.make_jvp(f)
    g = autograd.grad(f)
    hv = autograd.hessian_tensor_product(f)
    t_f, t_jvp = time_pair([f, lambda *a: make_jvp(*a)(v)], args, repeats, min_sample)
    t_grad, t_hvp = time_pair([g, lambda *a: hv(*a, v)], args, repeats, min_sample)
    return t_jvp / t_f, t_hvp / t_grad


def jax_ratios(problem, args, v, repeats, min_sample):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    f = _rebound(problem.func, jnp, jax.lax.stop_gradient)
    jf = jax.jit(f)
    jjvp = jax.jit(lambda *a: jax.jvp(lambda x: f(x, *a[1:-1]), (a[0],), (a[-1],)))
    jgrad = jax.jit(jax.grad(f))
    jhvp = jax.jit(lambda *a: jax.jvp(lambda x: jax.grad(f)(x, *a[1:-1]), (a[0],), (a[-1],))[1])
    jargs = tuple(jnp.asarray(a) for a in args)
    jv = jnp.asarray(v)

    def ready(fn):
        return lambda *a: jax.block_until_ready(fn(*a))

    t_f, t_jvp = time_pair([ready(jf), ready(lambda *a: jjvp(*a, jv))], jargs, repeats, min_sample)
    t_grad, t_hvp = time_pair(
        [ready(jgrad), ready(lambda *a: jhvp(*a, jv))], jargs, repeats, min_sample
    )
    return t_jvp / t_f, t_hvp / t_grad


def _fmt(seconds):
    return f"{seconds * 1e6:.0f} us" if seconds < 1e-2 else f"{seconds * 1e3:.1f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter samples")
    parser.add_argument("--no-peers", action="store_true", help="do not time autograd or JAX")
    opts = parser.parse_args(argv)
    repeats, min_sample = (3, 0.05) if opts.quick else (7, 0.2)
    header = (
        "problem        | f      | jvp    | jvp/f | grad   | hvp    | hvp/grad "
        "| (grad, hvp)/grad | rev-rev/grad | autograd jvp/f, hvp/grad | jax.jit jvp/f, hvp/grad"
    )
    print(header)
    print("-" * len(header))
    for name, size in ROWS:
        problem = _problem(name, size)
        rng = np.random.default_rng(0)
        args = problem.make(rng)
        v = rng.normal(size=np.shape(args[0]))
        check(problem, args, v)
        t_f, t_jvp, t_grad, t_hvp, t_both, t_rev = ours(problem, args, v, repeats, min_sample)
        peers = []
        for ratios in (autograd_ratios, jax_ratios):
            got = None if opts.no_peers else ratios(problem, args, v, repeats, min_sample)
            peers.append("-" if got is None else f"{got[0]:.2f}, {got[1]:.2f}")
        print(
            f"{name + ' ' + size:14} | {_fmt(t_f):6} | {_fmt(t_jvp):6} | {t_jvp / t_f:5.2f} "
            f"| {_fmt(t_grad):6} | {_fmt(t_hvp):6} | {t_hvp / t_grad:8.2f} "
            f"| {t_both / t_grad:16.2f} | {t_rev / t_grad:12.2f} | {peers[0]:24} | {peers[1]}"
        )


if __name__ == "__main__":
    main()
