"""Long simulations differentiated with and without checkpointed loops: peak memory and time.

Usage::

    python benchmarks/checkpointing.py            # the full sizes (a few minutes)
    python benchmarks/checkpointing.py --quick    # small sizes: a smoke run
    python benchmarks/checkpointing.py --no-peers # without autograd and JAX

Two problems, each differentiated with respect to its initial state:

* ``heat``: an explicit 1-D heat equation with a cubic reaction term,
  ``u = u + k * (roll(u, 1) - 2 u + roll(u, -1)) - 0.01 * u**3``, on 10^4 points over
  10,000 steps (quick: 2,000 points, 1,000 steps); loss ``sum(u**2)``.
* ``fluid``: 2-D viscous Burgers flow (a velocity field ``(u, v)`` advected by itself
  and diffused, periodic), 128 x 128 over 1,000 steps (quick: 32 x 32, 200 steps);
  loss its kinetic energy.

Rows: the function itself (the forward's own peak and time), its gradient as
written (every step's values on the tape) and with ``checkpointed(range(T),
snapshots=20)``. Peak memory is tracemalloc's (numpy reports its arrays to it), in
megabytes and in loop states beyond the forward's own peak; times are the best of
``--repeat`` runs without tracemalloc. The checkpointed gradient is checked against
the plain one (relative 1e-12). Bounds (issue 24): with 20 snapshots, peak at most 25
loop states beyond the forward's, and time at most 3 times the plain gradient's; the
script exits 1 where a row misses one.

Where installed (neither is a dependency): autograd's ``grad`` of the same function
written with ``autograd.numpy`` (it keeps every step), and JAX's ``grad`` of a jitted
``lax.scan`` with and without ``jax.checkpoint`` on the step (time only: XLA's buffers
are not seen by tracemalloc).
"""

import argparse
import time
import tracemalloc

import _path  # noqa: F401  (puts the checkout's root on sys.path)
import numpy as np

from transpile import checkpointed, grad

SNAPSHOTS = 20


def heat(u, k, steps):
    for _ in range(steps):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + k * lap - 0.01 * u**3
    return np.sum(u**2)


def heat_checkpointed(u, k, steps):
    for _ in checkpointed(range(steps), snapshots=SNAPSHOTS):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + k * lap - 0.01 * u**3
    return np.sum(u**2)


def _burgers_step(u, v, nu, dt):
    ux = 0.5 * (np.roll(u, -1, axis=1) - np.roll(u, 1, axis=1))
    uy = 0.5 * (np.roll(u, -1, axis=0) - np.roll(u, 1, axis=0))
    vx = 0.5 * (np.roll(v, -1, axis=1) - np.roll(v, 1, axis=1))
    vy = 0.5 * (np.roll(v, -1, axis=0) - np.roll(v, 1, axis=0))
    lu = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4.0 * u
    lv = np.roll(v, 1, 0) + np.roll(v, -1, 0) + np.roll(v, 1, 1) + np.roll(v, -1, 1) - 4.0 * v
    u2 = u + dt * (nu * lu - u * ux - v * uy)
    v2 = v + dt * (nu * lv - u * vx - v * vy)
    return u2, v2


def fluid(u, v, nu, dt, steps):
    for _ in range(steps):
        u, v = _burgers_step(u, v, nu, dt)
    return 0.5 * np.sum(u * u + v * v)


def fluid_checkpointed(u, v, nu, dt, steps):
    for _ in checkpointed(range(steps), snapshots=SNAPSHOTS):
        u, v = _burgers_step(u, v, nu, dt)
    return 0.5 * np.sum(u * u + v * v)


def _heat_case(quick):
    n, steps = (2_000, 1_000) if quick else (10_000, 10_000)
    x = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    u = np.sin(x) + 0.5 * np.cos(3.0 * x)
    return "heat", heat, heat_checkpointed, (u, 0.25, steps), (0,), u.nbytes


def _fluid_case(quick):
    n, steps = (32, 200) if quick else (128, 1_000)
    x = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    u = 0.5 * np.sin(x)[None, :] * np.cos(x)[:, None]
    v = -0.5 * np.cos(x)[None, :] * np.sin(x)[:, None]
    return "fluid", fluid, fluid_checkpointed, (u, v, 0.1, 0.2, steps), (0, 1), 2 * u.nbytes


def _peak(func, args):
    tracemalloc.start()
    try:
        func(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _best(func, args, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func(*args)
        best = min(best, time.perf_counter() - start)
    return best


def _measure(func, args, repeat):
    func(*args)  # compiled and specialized before measuring
    return _best(func, args, repeat), _peak(func, args)


def _peers(name, args, wrt, repeat):
    """Rows of autograd and JAX, where installed."""
    rows = []
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        autograd = None
    if autograd is not None:
        g = autograd.grad(_autograd_version(name, anp), wrt[0] if len(wrt) == 1 else tuple(wrt))
        t, peak = _measure(g, args, repeat)
        rows.append(("autograd grad", t, peak))
    try:
        import jax
    except ImportError:
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        for remat in (False, True):
            g = _jax_gradient(jax, name, args, wrt, remat)
            g(*args[: len(wrt)])[0].block_until_ready()
            t = _best(lambda *a, g=g: g(*a)[0].block_until_ready(), args[: len(wrt)], repeat)
            rows.append((f"JAX lax.scan{' + checkpoint' if remat else ''}", t, None))
    return rows


def _autograd_version(name, anp):
    if name == "heat":

        def f(u, k, steps):
            for _ in range(steps):
                lap = anp.roll(u, 1) - 2.0 * u + anp.roll(u, -1)
                u = u + k * lap - 0.01 * u**3
            return anp.sum(u**2)

        return f

    def step(u, v, nu, dt):
        r = anp.roll
        ux, uy = (
            0.5 * (r(u, -1, axis=1) - r(u, 1, axis=1)),
            0.5 * (r(u, -1, axis=0) - r(u, 1, axis=0)),
        )
        vx, vy = (
            0.5 * (r(v, -1, axis=1) - r(v, 1, axis=1)),
            0.5 * (r(v, -1, axis=0) - r(v, 1, axis=0)),
        )
        lu = r(u, 1, 0) + r(u, -1, 0) + r(u, 1, 1) + r(u, -1, 1) - 4.0 * u
        lv = r(v, 1, 0) + r(v, -1, 0) + r(v, 1, 1) + r(v, -1, 1) - 4.0 * v
        return u + dt * (nu * lu - u * ux - v * uy), v + dt * (nu * lv - u * vx - v * vy)

    def g(u, v, nu, dt, steps):
        for _ in range(steps):
            u, v = step(u, v, nu, dt)
        return 0.5 * anp.sum(u * u + v * v)

    return g


def _jax_gradient(jax, name, args, wrt, remat):
    jnp = jax.numpy
    rest = args[len(wrt) : -1]
    steps = args[-1]
    if name == "heat":

        def step(u, _):
            lap = jnp.roll(u, 1) - 2.0 * u + jnp.roll(u, -1)
            return u + rest[0] * lap - 0.01 * u**3, None

        def loss(u):
            u, _ = jax.lax.scan(jax.checkpoint(step) if remat else step, u, None, length=steps)
            return jnp.sum(u**2)

    else:
        nu, dt = rest

        def step(state, _):
            u, v = state
            r = jnp.roll
            ux, uy = 0.5 * (r(u, -1, 1) - r(u, 1, 1)), 0.5 * (r(u, -1, 0) - r(u, 1, 0))
            vx, vy = 0.5 * (r(v, -1, 1) - r(v, 1, 1)), 0.5 * (r(v, -1, 0) - r(v, 1, 0))
            lu = r(u, 1, 0) + r(u, -1, 0) + r(u, 1, 1) + r(u, -1, 1) - 4.0 * u
            lv = r(v, 1, 0) + r(v, -1, 0) + r(v, 1, 1) + r(v, -1, 1) - 4.0 * v
            return (
                u + dt * (nu * lu - u * ux - v * uy),
                v + dt * (nu * lv - u * vx - v * vy),
            ), None

        def loss(u, v):
            (u, v), _ = jax.lax.scan(
                jax.checkpoint(step) if remat else step, (u, v), None, length=steps
            )
            return 0.5 * jnp.sum(u * u + v * v)

    g = jax.jit(jax.grad(loss, argnums=tuple(range(len(wrt)))))
    return lambda *a: g(*a)


def run_case(case, repeat, peers):
    name, plain, marked, args, wrt, state = case
    forward_time, forward_peak = _measure(plain, args, repeat)
    g_plain = grad(plain, wrt=wrt)
    g_marked = grad(marked, wrt=wrt)
    for a, b in zip(g_marked(*args), g_plain(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    rows = [("function", forward_time, forward_peak)]
    rows.append(("grad, every step taped", *_measure(g_plain, args, repeat)))
    rows.append((f"grad, checkpointed({SNAPSHOTS})", *_measure(g_marked, args, repeat)))
    if peers:
        rows += _peers(name, args, wrt, repeat)
    print(f"\n{name}: {args[-1]} steps, state {state / 1e6:.2f} MB")
    print(f"{'':32} {'time s':>9} {'peak MB':>9} {'states beyond forward':>22}")
    for label, t, peak in rows:
        beyond = "" if peak is None else f"{(peak - forward_peak) / state:22.1f}"
        mb = "" if peak is None else f"{peak / 1e6:9.1f}"
        print(f"{label:32} {t:9.3f} {mb:>9} {beyond}")
    states = (rows[2][2] - forward_peak) / state
    ratio = rows[2][1] / rows[1][1]
    ok = states <= 25 and ratio <= 3.0
    print(
        f"checkpointed: {states:.1f} states beyond the forward's peak (bound 25), "
        f"{ratio:.2f} x the plain gradient's time (bound 3): {'OK' if ok else 'OVER'}"
    )
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--no-peers", action="store_true", help="without autograd and JAX")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per row")
    options = parser.parse_args(argv)
    repeat = options.repeat or (3 if options.quick else 1)
    results = [
        run_case(make(options.quick), repeat, not options.no_peers)
        for make in (_heat_case, _fluid_case)
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
