"""Command line: print the generated gradient of a function in a file.

transpile path/to/file.py:func [--wrt a,b] [--mode grad|value_and_grad|vjp|jvp|hvp]
transpile path/to/file.py:func --dump STAGE [--args "np.ones(3), 2.0"]
transpile path/to/file.py:func --explain     (why each line has an adjoint or none)
transpile path/to/file.py:func -o out.py     (the gradient as a module: export)
transpile --demo | --rules | --stages | --version

(python -m transpile is the same command.)
"""

import argparse
import importlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from transpile import __version__, api, pipeline, second_order
from transpile.core.errors import TranspileError
from transpile.explain import explain
from transpile.export import ExportError, export
from transpile.rules import listing, registry
from transpile_runtime.structure import flatten, resolve_wrt

# --mode: the transform whose generated source is printed
MODES = {
    "grad": api.grad,
    "value_and_grad": api.value_and_grad,
    "vjp": api.vjp,
    "jvp": api.jvp,
    "hvp": second_order.hvp,
}

DEMO = """\
import numpy as np
from transpile import stop_gradient


def predict(w, x):
    return np.tanh(x @ w)


def loss(w, b, x, y):
    p = predict(w, x) + b
    baseline = stop_gradient(np.mean(p))   # a constant to differentiation
    return np.mean((p - y) ** 2) + 0.1 * np.sum((p - baseline) ** 2)
"""


class UsageError(Exception):
    """A target that names no readable file or no function in it: exit status 2."""


def _load(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _target(text: str):
    """The function that ``path/to/file.py:function`` names."""
    path, _, func_name = text.rpartition(":")
    if not path or not func_name:
        raise UsageError(f"{text!r} is not path/to/file.py:function")
    if not Path(path).is_file():
        raise UsageError(f"{path}: no such file")
    sys.path.insert(0, str(Path(path).resolve().parent))  # the file's own imports
    func = getattr(_load(path), func_name, None)
    if func is None:
        raise UsageError(f"{path} has no function {func_name!r}")
    if not callable(func):
        raise UsageError(f"{path}: {func_name!r} is not a function")
    return func


def _wrt(text):
    if text is None:
        return 0
    items = [int(t) if t.lstrip("-").isdigit() else t for t in text.split(",") if t]
    return items[0] if len(items) == 1 else tuple(items)


def demo() -> int:
    """Transpile the demo loss, print its gradient source, and check it numerically."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo_loss.py"
        path.write_text(DEMO)
        module = _load(str(path))
        print("# the function, from", path.name)
        print(DEMO)
        dloss = api.grad(module.loss, wrt=("w", "b"))
        print("# its generated gradient, grad(loss, wrt=('w', 'b'))")
        print(api.source(dloss))
        rng = np.random.default_rng(0)
        w, b = rng.normal(size=5), 0.3
        x, y = rng.normal(size=(32, 5)), rng.normal(size=32)
        dw, db = dloss(w, b, x, y)
        worst = 0.0
        for i, analytic in ((0, dw), (1, db)):
            args = [w, b, x, y]
            flat = np.array(args[i], dtype=float).ravel()
            numeric = np.zeros_like(flat)
            for k in range(flat.size):
                h = 1e-6 * max(1.0, abs(flat[k]))
                up, down = flat.copy(), flat.copy()
                up[k] += h
                down[k] -= h
                shape = np.shape(args[i])
                args[i] = up.reshape(shape) if shape else float(up[0])
                f_up = module.loss(*args)
                args[i] = down.reshape(shape) if shape else float(down[0])
                f_down = module.loss(*args)
                numeric[k] = (f_up - f_down) / (2 * h)
            got = np.ravel(flatten(analytic)[0])
            worst = max(worst, float(np.max(np.abs(got - numeric) / (1e-8 + np.abs(numeric)))))
        ok = worst < 1e-5
        print(
            f"# generated vs central finite differences: max relative error {worst:.2e} "
            f"-> {'OK' if ok else 'MISMATCH'}"
        )
        return 0 if ok else 1


def list_rules() -> int:
    """Print the rule table, one rule per line, the optional scipy rules included where
    scipy is installed."""
    for optional in ("scipy.special", "scipy.stats", "scipy.fft", "scipy.signal"):
        try:
            importlib.import_module(optional)  # its rules load once it is imported
        except ImportError:
            pass
    print(listing.table(registry()))
    return 0


def list_stages() -> int:
    width = max(len(s.name) for s in pipeline.STAGES + pipeline.VARIANT_STAGES)
    for s in pipeline.STAGES:
        print(f"{s.name:<{width}}  {s.does}")
    print("\n# a shape variant, made by the entry for the arguments of a call (--args)")
    for s in pipeline.VARIANT_STAGES:
        print(f"{s.name:<{width}}  {s.does}")
    return 0


def _example_args(expression, func):
    """The arguments ``--args`` gives, evaluated where ``func`` was defined (``np`` is
    numpy there if the module has no ``np``): a tuple, or one value."""
    if expression is None:
        return None
    try:
        value = eval(expression, {"np": np, **func.__globals__})  # the user's own command line
    except Exception as exc:  # noqa: BLE001 - any error in the expression is the user's
        raise UsageError(f"--args {expression!r}: {type(exc).__name__}: {exc}") from None
    return value if isinstance(value, tuple) else (value,)


def print_source(args) -> int:
    func = _target(args.target)
    example = _example_args(args.args, func)
    try:
        if args.dump:
            indices, _ = resolve_wrt(func, _wrt(args.wrt))
            mode = args.mode if args.mode in ("grad", "value_and_grad", "vjp") else "jvp"
            print(pipeline.dump(func, indices, args.dump, mode=mode, args=example))
        else:
            options = {"allow_unused": True} if args.explain else {}  # it says which
            made = MODES[args.mode](func, wrt=_wrt(args.wrt), **options)
            if args.explain:
                print(explain(made, *(example or ())), end="")
            if args.output:
                export(made, args.output, standalone=args.standalone, args=example)
                print(f"wrote {args.output}", file=sys.stderr)
            if not (args.explain or args.output):
                print(api.source(made, *(example or ())))
    except (TranspileError, ExportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _prog() -> str:
    """``transpile`` as the console script, ``python -m transpile`` as a module."""
    return "python -m transpile" if Path(sys.argv[0]).name == "__main__.py" else "transpile"


def parser(prog: str = "transpile") -> argparse.ArgumentParser:
    """The command's arguments: one ``add_argument`` per option."""
    p = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", nargs="?", help="path/to/file.py:function")
    p.add_argument("--wrt", help="comma-separated parameter names or indices")
    p.add_argument(
        "--mode", choices=tuple(MODES), default="grad", help="the transform (default: grad)"
    )
    p.add_argument(
        "--dump",
        metavar="STAGE",
        choices=pipeline.STAGE_NAMES + pipeline.VARIANT_STAGE_NAMES,
        help="print the function after one stage of the compiler instead: "
        + ", ".join(pipeline.STAGE_NAMES)
        + "; or, with --args, of the shape variant for those arguments: "
        + ", ".join(pipeline.VARIANT_STAGE_NAMES),
    )
    p.add_argument(
        "--args",
        metavar="EXPR",
        help="example arguments, a Python expression evaluated in the file's module "
        "(np is numpy): the source printed is the shape variant for them",
    )
    p.add_argument("--stages", action="store_true", help="list the compiler's stages, in order")
    p.add_argument(
        "--explain",
        action="store_true",
        help="say for every line whether it has an adjoint, and if not, why",
    )
    p.add_argument(
        "-o", "--output", metavar="OUT.py", help="write the gradient as a module (export)"
    )
    p.add_argument(
        "--standalone",
        action="store_true",
        help="with -o: copy the runtime helpers in, so that the module needs numpy alone",
    )
    p.add_argument(
        "--rules",
        action="store_true",
        help="list every function, method and operator with a derivative rule, one a line",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="print the gradient of a demo loss and check it numerically",
    )
    p.add_argument("--version", action="version", version=f"transpile {__version__}")
    return p


def run(args, p: argparse.ArgumentParser) -> int:
    if args.demo:
        return demo()
    if args.rules:
        return list_rules()
    if args.stages:
        return list_stages()
    if not args.target:
        p.error("give a target as path/to/file.py:function, or --demo")
    return print_source(args)


def main(argv=None, prog: str | None = None) -> int:
    p = parser(prog or _prog())
    args = p.parse_args(argv)
    try:
        status = run(args, p)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except UsageError as exc:
        print(f"{p.prog}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # transpile --rules | head: the reader has gone
        # what remains to be flushed at exit would raise again: send it nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a tool the signal ends
    return status


if __name__ == "__main__":
    sys.exit(main())
