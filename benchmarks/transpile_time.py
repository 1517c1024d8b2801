"""Time the compiler: how long ``grad(f)`` plus the first call ``g(*args)`` take.

Usage::

    python benchmarks/transpile_time.py [--quick] [--sizes 30,300,...]

Each measurement runs in a fresh Python process (the compiler caches per
function and warms up as it runs; a fresh process is what a user sees): the
child imports numpy, ``transpile`` and the function's module, then times
``g = grad(f)`` followed by ``g(*args)``. The first call counts: for a
straight-line gradient it builds the variant specialized to the arguments'
shapes. The table shows the median over fresh processes (3 per row, 1 with
``--quick``; a row whose first run takes longer than ``--slow`` seconds is run
once).

Two kinds of rows:

1. scaling: generated elementwise numpy functions of 30, 300, 1,000 and 3,000
   statements, straight-line and the same statements as the body of a
   ``for t in range(3)`` loop that carries a value, against the targets
   (<= 2 ms per statement at 1,000 statements, growth exponent <= 1.25 between
   30 and 1,000 statements);
2. problems: each function of ``problems.py`` (on its tiny instance, so that
   the first call's arithmetic is negligible) against <= 20 ms for functions of
   at most 30 statements.

The exit status is 0 only when every row with a target meets it.
"""

import argparse
import ast
import inspect
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SIZES = (30, 300, 1000, 3000)
FAMILIES = ("straight", "loop")
LOOP_TRIPS = 3
SEED = 0
SHAPE = (4,)

TARGET_MS_PER_STMT = 2.0  # at 1,000 statements
TARGET_EXPONENT = 1.25  # growth between 30 and 1,000 statements
TARGET_SMALL_MS = 20.0  # first gradient of a problem of at most SMALL_STMTS statements
SMALL_STMTS = 30

# --------------------------------------------------------------------------
# Generated programs

# Each template keeps its result bounded by the largest of its inputs (or by 1),
# so thousands of statements neither overflow nor lose all gradient.
UNARY = [
    "np.tanh({a})",
    "np.sin({a})",
    "np.exp(-{a} * {a})",
    "0.9 * {a} * np.exp(-0.1 * {a} * {a})",
]
BINARY = [
    "{a} * np.tanh({b})",
    "0.5 * ({a} + {b})",
    "{a} / (1.5 + {b} * {b})",
    "np.tanh({a}) * np.sin({b})",
    "np.sin({a} - {b})",
]
TERNARY = [
    "np.tanh({a} + {b} * {c})",
    "0.5 * ({a} - {b}) / (1.5 + {c} * {c})",
    "0.7 * {a} * np.exp(-{b} * {b}) + 0.3 * {c}",
    "np.tanh({a}) * np.sin({b}) + 0.5 * ({c} - {a})",
    "({a} + {b} * np.tanh({c})) / (1.5 + {b} * {b})",
]


def _pick(rng, k, n_args):
    """An index into the names bound before statement ``k`` (args first): mostly recent."""
    available = n_args + k
    if rng.random() < 0.15:
        return rng.randrange(available)  # anywhere, so the graph has long edges
    back = min(int(rng.expovariate(0.35)), available - 1)
    return available - 1 - back


def statements(n, inputs, seed=SEED):
    """``n`` lines ``v{k} = <expr>`` of elementwise numpy, reading ``inputs`` and earlier ``v``s."""
    rng = random.Random(seed)
    names = list(inputs)
    lines = []
    for k in range(n):
        arity = rng.choices((1, 2, 3), weights=(3, 4, 3))[0]
        template = rng.choice({1: UNARY, 2: BINARY, 3: TERNARY}[arity])
        picked = []
        for _ in range(arity):
            i = _pick(rng, k, len(inputs))
            for _ in range(4):  # prefer distinct operands
                if i not in picked:
                    break
                i = _pick(rng, k, len(inputs))
            picked.append(i)
        operands = dict(zip("abc", (names[i] for i in picked)))
        lines.append(f"v{k} = " + template.format(**operands))
        names.append(f"v{k}")
    return lines


def program(family, n, seed=SEED):
    """Source of a module with ``f(x, y)`` of ``n`` generated statements (x, y: shape (4,)).

    ``straight``: the statements, then ``return np.sum(v[n-1] * v[n-2])``.
    ``loop``: ``h = x``, then ``for t in range(3):`` whose body is the same
    statements (reading ``h`` where the straight version reads ``x``) and
    ``h = 0.5 * (v[n-1] + v[n-2])``; then ``return np.sum(h * y)``.
    """
    if family == "straight":
        body = statements(n, ("x", "y"), seed)
        body.append(f"return np.sum(v{n - 1} * v{n - 2})")
    elif family == "loop":
        inner = statements(n, ("h", "y"), seed)
        inner.append(f"h = 0.5 * (v{n - 1} + v{n - 2})")
        body = ["h = x", f"for t in range({LOOP_TRIPS}):"]
        body += ["    " + line for line in inner]
        body.append("return np.sum(h * y)")
    else:
        raise ValueError(f"unknown family {family!r}")
    lines = ["import numpy as np", "", "", "def f(x, y):"]
    lines += ["    " + line for line in body]
    return "\n".join(lines) + "\n"


def program_args(seed=SEED):
    """The arguments ``(x, y)`` of a generated ``f``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return (rng.normal(size=SHAPE), rng.normal(size=SHAPE))


def count_statements(func):
    """Statements in ``func``'s body, nested ones included, the docstring not."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return sum(isinstance(node, ast.stmt) for stmt in body for node in ast.walk(stmt))


# --------------------------------------------------------------------------
# The child process: one measurement


def _load_generated(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f, program_args(), 0


def _load_problem(name):
    import numpy as np
    from problems import PROBLEMS

    problem = next(p for p in PROBLEMS if p.func.__name__ == name)
    return problem.func, problem.tiny(np.random.default_rng(SEED)), problem.wrt


def child(kind, what):
    """Time ``grad(f)`` and two calls in this (fresh) process; print them as JSON."""
    sys.path[:0] = [str(ROOT), str(HERE)]
    import numpy as np  # noqa: F401  (imported before the clock starts)

    from transpile import grad

    func, args, wrt = _load_generated(what) if kind == "gen" else _load_problem(what)
    start = time.perf_counter()
    g = grad(func, wrt=wrt)
    built = time.perf_counter()
    g(*args)
    first = time.perf_counter()
    g(*args)
    second = time.perf_counter()
    print(
        json.dumps(
            {"grad": built - start, "first": first - built, "second": second - first},
        )
    )


def measure(kind, what, timeout):
    """One fresh-process measurement: seconds for grad, first call and second call."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(what)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
        raise RuntimeError("\n".join(tail) or f"exit status {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_row(kind, what, runs, slow, timeout):
    """Median over fresh processes of (grad + first call) and of the second call.

    Returns (median total s, median second call s, number of runs, error or None).
    A first run slower than ``slow`` seconds is not repeated.
    """
    totals, seconds = [], []
    for r in range(runs):
        try:
            m = measure(kind, what, timeout)
        except subprocess.TimeoutExpired:
            return None, None, r, f"timed out after {timeout:g} s"
        except RuntimeError as exc:
            return None, None, r, str(exc)
        totals.append(m["grad"] + m["first"])
        seconds.append(m["second"])
        if totals[0] > slow:
            break
    return statistics.median(totals), statistics.median(seconds), len(totals), None


# --------------------------------------------------------------------------
# The report


def fmt_ms(seconds):
    """Milliseconds with three significant figures."""
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def table(header, rows):
    """Lines of a plain-text table with left-aligned columns."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
        for r in [header, ["-" * w for w in widths], *rows]
    ]


def scaling_rows(args, workdir, notes):
    """Measure every (family, size); return table rows, times and verdicts."""
    rows, times, verdicts = [], {}, []
    for family in FAMILIES:
        for n in args.sizes:
            source = program(family, n)
            path = Path(workdir) / f"gen_{family}_{n}.py"
            path.write_text(source)
            stmts = count_statements_source(source)
            total, second, runs, error = measure_row(
                "gen", path, args.runs, args.slow, args.timeout
            )
            if error is not None:
                notes.append(f"{family} {n}: {error}")
                target = f"<= {TARGET_MS_PER_STMT:g} ms/stmt" if n == 1000 else ""
                rows.append([family, f"{n:,}", stmts, "-", "-", "-", "-", runs, "ERROR", target])
                verdicts.append(False)
                continue
            times[family, n] = total
            per = total / n
            target, status = "", ""
            if n == 1000:
                target = f"<= {TARGET_MS_PER_STMT:g} ms/stmt"
                status = "OK" if per * 1e3 <= TARGET_MS_PER_STMT else "over"
                verdicts.append(status == "OK")
            rows.append(
                [
                    family,
                    f"{n:,}",
                    stmts,
                    fmt_ms(total),
                    f"{per * 1e3:.2f}",
                    f"{n / total:,.0f}",
                    fmt_ms(second),
                    runs,
                    status,
                    target,
                ]
            )
            print(f"  done: {family} {n}: {fmt_ms(total)} ({runs} runs)", file=sys.stderr)
    return rows, times, verdicts


def count_statements_source(source):
    """Statements in the body of the first function of ``source``."""
    func = ast.parse(source).body[-1]
    return sum(isinstance(node, ast.stmt) for stmt in func.body for node in ast.walk(stmt))


def exponent(times, family, small, large):
    """log(t_large / t_small) / log(large / small), or None if either was not measured."""
    if (family, small) not in times or (family, large) not in times:
        return None
    return math.log(times[family, large] / times[family, small]) / math.log(large / small)


def exponent_rows(times, verdicts):
    """Growth exponents per family: 30 -> 1,000 (the target) and 1,000 -> 3,000 (shown)."""
    rows = []
    for family in FAMILIES:
        e = exponent(times, family, 30, 1000)
        status = "n/a"
        if e is not None:
            status = "OK" if e <= TARGET_EXPONENT else "over"
            verdicts.append(status == "OK")
        later = exponent(times, family, 1000, 3000)
        rows.append(
            [
                family,
                "-" if e is None else f"{e:.2f}",
                status,
                f"<= {TARGET_EXPONENT:g}",
                "-" if later is None else f"{later:.2f}",
            ]
        )
    return rows


def problem_rows(args, notes, verdicts):
    """First-gradient time of each function of problems.py."""
    sys.path[:0] = [str(ROOT), str(HERE)]
    from problems import PROBLEMS

    rows = []
    for func in dict.fromkeys(p.func for p in PROBLEMS):
        stmts = count_statements(func)
        total, second, runs, error = measure_row(
            "problem", func.__name__, args.runs, args.slow, args.timeout
        )
        small = stmts <= SMALL_STMTS
        target = f"<= {TARGET_SMALL_MS:g} ms" if small else ""
        if error is not None:
            notes.append(f"{func.__name__}: {error}")
            rows.append([func.__name__, stmts, "-", "-", runs, "ERROR", target])
            verdicts.append(False)
            continue
        status = ""
        if small:
            status = "OK" if total * 1e3 <= TARGET_SMALL_MS else "over"
            verdicts.append(status == "OK")
        rows.append([func.__name__, stmts, fmt_ms(total), fmt_ms(second), runs, status, target])
        print(f"  done: {func.__name__}: {fmt_ms(total)} ({runs} runs)", file=sys.stderr)
    return rows


def main(argv=None):
    """Parse options, run the measurements and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one process per row, not three")
    parser.add_argument(
        "--sizes",
        type=lambda s: tuple(int(v) for v in s.split(",")),
        default=SIZES,
        help="statement counts of the generated functions (default 30,300,1000,3000)",
    )
    parser.add_argument(
        "--slow",
        type=float,
        default=15.0,
        help="a row whose first run takes longer than this many seconds is run once",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds allowed to one process"
    )
    parser.add_argument("--child", nargs=2, metavar=("KIND", "WHAT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    args.runs = 1 if args.quick else 3

    import numpy as np

    started = time.perf_counter()
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs, {'quick' if args.quick else 'full'} run: "
        f"median of {args.runs} fresh process{'es' if args.runs > 1 else ''} per row"
    )
    notes, verdicts = [], []
    with tempfile.TemporaryDirectory(prefix="transpile_time_") as workdir:
        rows, times, verdicts = scaling_rows(args, workdir, notes)
    print("\nGenerated elementwise functions (x, y of shape (4,)); time = grad(f) + first call")
    header = [
        "family",
        "n",
        "stmts",
        "time",
        "ms/stmt",
        "stmt/s",
        "2nd call",
        "runs",
        "status",
        "target",
    ]
    print("\n".join(table(header, rows)))
    print("\nGrowth exponent log(t_b / t_a) / log(b / a) of time in statements")
    header = ["family", "30 -> 1,000", "status", "target", "1,000 -> 3,000 (no target)"]
    print("\n".join(table(header, exponent_rows(times, verdicts))))

    print("\nbenchmarks/problems.py functions (tiny instance); time = grad(f) + first call")
    prows = problem_rows(args, notes, verdicts)
    header = ["function", "stmts", "time", "2nd call", "runs", "status", "target"]
    print("\n".join(table(header, prows)))
    print(
        "\nn: generated statements v_k = ...; stmts: all statements of f (n, the return, and"
        " for a loop\n  h = x, the for and the carry h = ...); time: grad(f) + first call,"
        " median over fresh\n  processes; ms/stmt: time / n; stmt/s: n / time; 2nd call: the"
        " next call of the same\n  gradient (not in time); runs: fresh processes (a first run"
        f" over {args.slow:g} s is not repeated)"
    )
    print(f"total wall time {time.perf_counter() - started:.0f} s")
    for note in notes:
        print("\n- " + note.replace("\n", "\n    "))
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
