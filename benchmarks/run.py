"""Time generated gradients against hand-written numpy gradients.

Usage::

    python benchmarks/run.py [--quick] [--only NAME ...] [--baseline]

For each problem in ``problems.PROBLEMS`` this first checks correctness (the
hand-written gradient against central finite differences on a tiny instance,
and the generated gradient against the hand-written one, with rtol 1e-6, on the
tiny and the timed instance), then times both gradients in one process with
interleaved repeats and prints the medians and their ratio, and measures the peak
memory (``tracemalloc``) of one call of each. Where autograd is installed (it is
not a dependency), its gradient of the same function is timed and measured too.
The exit status is 0 only when every row is OK: time and memory within target.
"""

import argparse
import gc
import math
import platform
import sys
import time
import traceback
import tracemalloc
import types

import _path  # noqa: F401  (puts the checkout's root on sys.path)
import as_written
import numpy as np
import problems

# today's rows, then the same kinds of programs written as users also write them
PROBLEMS = [*problems.PROBLEMS, *as_written.PROBLEMS]

from transpile import grad

SEED = 0
RTOL = 1e-6  # generated vs hand-written
ATOL = 1e-10
FD_EPS = 1e-6  # central differences on the tiny instance
FD_RTOL = 1e-5
FD_ATOL = 1e-8


def numeric_grad(func, args, wrt):
    """Central finite differences of scalar ``func`` w.r.t. the arguments at ``wrt``."""
    grads = []
    for i in wrt:
        if np.ndim(args[i]) == 0:

            def shifted(delta, i=i):
                return func(*args[:i], args[i] + delta, *args[i + 1 :])

            grads.append((shifted(FD_EPS) - shifted(-FD_EPS)) / (2 * FD_EPS))
            continue
        g = np.zeros_like(args[i])
        for k in np.ndindex(g.shape):
            values = []
            for delta in (FD_EPS, -FD_EPS):
                a = args[i].copy()
                a[k] += delta
                values.append(func(*args[:i], a, *args[i + 1 :]))
            g[k] = (values[0] - values[1]) / (2 * FD_EPS)
        grads.append(g)
    return tuple(grads)


def mismatches(got, want, names, rtol, atol):
    """Describe each gradient in ``got`` that differs from ``want`` (empty if all agree)."""
    if not isinstance(got, tuple) or len(got) != len(want):
        got_len = f" of {len(got)}" if isinstance(got, tuple) else ""
        return [f"expected a tuple of {len(want)} gradients, got {type(got).__name__}{got_len}"]
    problems = []
    for name, g, w in zip(names, got, want):
        g = np.asarray(g)
        if g.shape != np.shape(w) or g.dtype != np.float64:
            problems.append(
                f"d{name}: shape {g.shape} dtype {g.dtype}, expected {np.shape(w)} float64"
            )
        elif not np.allclose(g, w, rtol=rtol, atol=atol):
            err = np.max(np.abs(g - w))
            problems.append(
                f"d{name}: max abs error {err:.3g} (max |expected| {np.max(np.abs(w)):.3g})"
            )
    return problems


def check_hand(problem):
    """Failures of the hand-written gradient against finite differences (tiny instance)."""
    wrt = tuple(problem.func.__code__.co_varnames.index(n) for n in problem.wrt)
    tiny = problem.tiny(np.random.default_rng(SEED))
    found = mismatches(
        problem.hand_grad(*tiny),
        numeric_grad(problem.func, tiny, wrt),
        problem.wrt,
        FD_RTOL,
        FD_ATOL,
    )
    return [f"hand-written vs finite differences: {m}" for m in found]


def check_generated(problem, generated):
    """Failures of the generated gradient against the hand-written one (both instances)."""
    failures = []
    for label, make in (("tiny", problem.tiny), ("timed", problem.make)):
        args = make(np.random.default_rng(SEED))
        want = problem.hand_grad(*args)
        # the first call with a signature runs the generic code, later ones may run a
        # variant specialized for these shapes: both are checked
        for call in ("first call", "second call"):
            found = mismatches(generated(*args), want, problem.wrt, RTOL, ATOL)
            failures += [f"generated vs hand-written ({label}, {call}): {m}" for m in found]
    return failures


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]  # --clock cpu: this process's CPU time (a wait for a core is not)


def per_call(func, args, loops):
    """Seconds per call of ``func(*args)``, averaged over ``loops`` calls."""
    start = clock()
    for _ in range(loops):
        func(*args)
    return (clock() - start) / loops


def time_pair(funcs, args, repeats, min_sample):
    """Median seconds per call of each function in ``funcs``, timed interleaved.

    The loop count is chosen so that one sample of the faster function takes at
    least ``min_sample`` seconds; the order alternates each repeat so that drift
    in machine speed falls on both sides equally.
    """
    for f in funcs:  # warm up caches, allocator, lazy compilation
        per_call(f, args, 3)
    fastest = min(per_call(f, args, 5) for f in funcs)
    loops = max(1, math.ceil(min_sample / max(fastest, 1e-9)))
    samples = [[] for _ in funcs]
    gc.collect()
    gc.disable()
    try:
        for r in range(repeats):
            order = range(len(funcs)) if r % 2 == 0 else reversed(range(len(funcs)))
            for i in order:
                samples[i].append(per_call(funcs[i], args, loops))
    finally:
        gc.enable()
    return [float(np.median(s)) for s in samples]


def peak_memory(func, args):
    """Peak bytes allocated during one call of ``func(*args)`` (``tracemalloc``, which
    numpy reports its array buffers to), above what was allocated before the call.
    The call before it builds a shape variant where one is made."""
    func(*args)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        func(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def autograd_gradient(problem):
    """autograd's gradient of ``problem.func`` w.r.t. ``problem.wrt`` (the function run
    with ``np`` bound to ``autograd.numpy``), or None where autograd is not installed."""
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None
    func = problem.func
    rebound = types.FunctionType(func.__code__, {**func.__globals__, "np": anp})
    wrt = tuple(func.__code__.co_varnames.index(n) for n in problem.wrt)

    def gradient(*args):
        def of(params):
            merged = list(args)
            for i, p in zip(wrt, params):
                merged[i] = p
            return rebound(*merged)

        return tuple(autograd.grad(of)(tuple(args[i] for i in wrt)))

    return gradient


def jax_gradient(problem):
    """JAX's jitted gradient of ``problem.func`` w.r.t. ``problem.wrt`` (the function run
    with ``np`` bound to ``jax.numpy``, float64, integer arguments static), as a function
    of JAX arrays that waits for its result; None where JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    func = problem.func
    names = {**func.__globals__, "np": jnp, "stop_gradient": jax.lax.stop_gradient}
    rebound = types.FunctionType(func.__code__, names)
    wrt = tuple(func.__code__.co_varnames.index(n) for n in problem.wrt)
    made = {}

    def gradient(*args):
        static = tuple(i for i, a in enumerate(args) if type(a) is int)
        if static not in made:
            made[static] = jax.jit(jax.grad(rebound, argnums=wrt), static_argnums=static)
        return jax.block_until_ready(made[static](*args))

    return gradient


def autograd_installed():
    """Whether autograd can be imported (it is not a dependency of this project)."""
    try:
        import autograd  # noqa: F401
    except ImportError:
        return False
    return True


def numexpr_installed():
    """Whether numexpr, which ``grad(f, fuse=True)`` evaluates the chains it does not run
    in blocks with, is installed."""
    try:
        import numexpr  # noqa: F401
    except ImportError:
        return False
    return True


def fmt_bytes(n):
    """Format a byte count in kB or MB."""
    return f"{n / 1e6:.3g} MB" if n >= 1e6 else f"{n / 1e3:.3g} kB"


def fmt_time(seconds):
    """Format a duration with a unit that keeps three significant figures readable."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def generated_gradient(problem, args, notes):
    """The checked generated gradient (the hand-written one with ``--baseline``) and the
    row's status so far: None while nothing failed."""
    status = "HAND WRONG" if notes else None
    if problem.fuse and not args.baseline and not numexpr_installed():
        # blocks need numpy only; the chains left outside them stay numpy's
        notes.append("numexpr is not installed: fuse=True timed with blocks alone")
    if args.baseline:
        generated = problem.hand_grad
    else:
        try:
            generated = grad(problem.func, wrt=problem.wrt, fuse=problem.fuse)
        except Exception:  # noqa: BLE001  (any crash is reported, not raised)
            notes.append("grad() raised:\n" + traceback.format_exc(limit=-3))
            return None, status or "ERROR"
    try:
        wrong = check_generated(problem, generated)
    except Exception:  # noqa: BLE001
        wrong = ["the generated gradient raised:\n" + traceback.format_exc(limit=-3)]
        status = status or "ERROR"
    notes += wrong
    return generated, status or ("WRONG" if wrong else None)


def peer_cells(problem, inputs, hand, hand_memory, args):
    """The peers' cells of a row: autograd's time and memory ratios to the hand-written
    gradient, JAX's jitted time ratio (its memory is XLA's, which tracemalloc does not
    see), or ``-`` where one is not installed, ``failed`` where it fails."""
    if args.no_peers:
        return ["-", "-"]
    repeats, min_sample = (3, 0.005) if args.quick else (9, 0.02)
    cells = []
    peer = autograd_gradient(problem)
    try:
        if peer is None:
            cells.append("-")
        else:
            mismatches(peer(*inputs), problem.hand_grad(*inputs), problem.wrt, RTOL, ATOL)
            seconds = time_pair([peer], inputs, repeats, min_sample)[0]
            memory = peak_memory(peer, inputs)
            cells.append(f"{seconds / hand:.2f} / {memory / hand_memory:.2f}")
    except Exception:  # noqa: BLE001  (a peer's failure is noted in its cell)
        cells.append("failed")
    cells.append(_jax_cell(problem, inputs, hand, repeats, min_sample))
    return cells


def _jax_cell(problem, inputs, hand, repeats, min_sample):
    peer = jax_gradient(problem)
    if peer is None:
        return "-"
    try:
        import jax.numpy as jnp

        on_device = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs)
        got = tuple(np.asarray(g) for g in peer(*on_device))
        mismatches(got, problem.hand_grad(*inputs), problem.wrt, RTOL, ATOL)
        seconds = time_pair([peer], on_device, repeats, min_sample)[0]
    except Exception:  # noqa: BLE001
        return "failed"
    return f"{seconds / hand:.2f}"


def run_one(problem, args):
    """Check, time and measure one problem; return its table row and any failure notes."""
    notes = check_hand(problem)
    generated, status = generated_gradient(problem, args, notes)
    timed = [problem.hand_grad] if status else [generated, problem.hand_grad]
    inputs = problem.make(np.random.default_rng(SEED))
    repeats, min_sample = (9, 0.005) if args.quick else (41, 0.02)
    medians = time_pair(timed, inputs, repeats, min_sample)
    memories = [peak_memory(f, inputs) for f in timed]
    hand, hand_memory = medians[-1], memories[-1]
    cells = ["-"] * 4
    if status is None:
        ratio, memory_ratio = medians[0] / hand, memories[0] / hand_memory
        over = [
            what
            for what, r, target in (
                ("time", ratio, problem.target),
                ("memory", memory_ratio, problem.memory_target),
            )
            if r > target
        ]
        status = "over: " + ", ".join(over) if over else "OK"
        cells = [
            fmt_time(medians[0]),
            f"{ratio:.2f}",
            fmt_bytes(memories[0]),
            f"{memory_ratio:.2f}",
        ]
    row = [
        problem.name,
        problem.size,
        cells[0],
        fmt_time(hand),
        cells[1],
        f"<= {problem.target:g}",
        cells[2],
        fmt_bytes(hand_memory),
        cells[3],
        f"<= {problem.memory_target:g}",
        *peer_cells(problem, inputs, hand, hand_memory, args),
        status,
    ]
    return row, notes


def main(argv=None):
    """Parse options, run the selected benchmarks and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer repeats and shorter samples (noisier)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this benchmark (repeatable): "
        + ", ".join(dict.fromkeys(p.name for p in PROBLEMS)),
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="time the hand-written gradient against itself instead of the "
        "generated one (tests the harness; ratios should be near 1)",
    )
    parser.add_argument(
        "--no-peers", action="store_true", help="do not time autograd or JAX even where installed"
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="what a sample measures: wall time (the default) or this process's CPU time, "
        "steadier where other processes share the cores",
    )
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    unknown = set(args.only or ()) - {p.name for p in PROBLEMS}
    if unknown:
        parser.error(f"no benchmark named {', '.join(sorted(unknown))}")
    selected = [p for p in PROBLEMS if not args.only or p.name in args.only]

    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"{'quick' if args.quick else 'full'} run, {args.clock} clock"
        + (", BASELINE (hand vs hand)" if args.baseline else "")
    )
    header = [
        "benchmark",
        "size",
        "generated",
        "hand-written",
        "ratio",
        "target",
        "peak mem",
        "hand mem",
        "mem ratio",
        "target",
        "autograd",
        "jax.jit",
        "status",
    ]
    rows, all_notes = [], []
    for problem in selected:
        row, notes = run_one(problem, args)
        rows.append(row)
        if notes:
            all_notes.append((f"{problem.name} ({problem.size})", notes))
        print("  done:", " | ".join(row), file=sys.stderr, flush=True)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print(
        "\nratio = median time of the generated gradient / median time of the hand-written one"
        "\nmem ratio = peak memory of one call of the generated gradient / of the hand-written"
        " one (tracemalloc)\nautograd = its time ratio / memory ratio to the hand-written one"
        + ("" if autograd_installed() else " (autograd is not installed: -)")
        + "\njax.jit = the time ratio of JAX's jitted gradient (float64; - where not installed)"
    )
    for where, notes in all_notes:
        print(f"\n{where}:")
        for note in notes:
            print("  - " + note.rstrip().replace("\n", "\n    "))
    return 0 if all(r[-1] == "OK" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
