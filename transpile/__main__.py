"""Command line: print the generated gradient of a function in a file.

python -m transpile path/to/file.py:func [--wrt a,b] [--mode grad|vjp] [--dump STAGE]
python -m transpile path/to/file.py:func --explain     (why each line has an adjoint or none)
python -m transpile path/to/file.py:func -o out.py     (the gradient as a module: export)
python -m transpile --demo
python -m transpile --rules
"""

import argparse
import importlib.util
import sys
from pathlib import Path

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


def _load(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _stage_names():
    from transpile.pipeline import STAGE_NAMES

    return STAGE_NAMES


def _wrt(text):
    if text is None:
        return 0
    items = [int(t) if t.lstrip("-").isdigit() else t for t in text.split(",") if t]
    return items[0] if len(items) == 1 else tuple(items)


def demo() -> int:
    """Transpile the demo loss, print its gradient source, and check it numerically."""
    import tempfile

    import numpy as np

    from transpile import grad, source
    from transpile_runtime.structure import flatten

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo_loss.py"
        path.write_text(DEMO)
        module = _load(str(path))
        print("# the function, from", path.name)
        print(DEMO)
        dloss = grad(module.loss, wrt=("w", "b"))
        print("# its generated gradient, grad(loss, wrt=('w', 'b'))")
        print(source(dloss))
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
    """Print the rule table, the optional scipy rules included where scipy is installed."""
    import importlib

    for optional in ("scipy.special", "scipy.stats"):
        try:
            importlib.import_module(optional)  # its rules load once it is imported
        except ImportError:
            pass
    from transpile.rules import listing, registry

    print(listing.table(registry()))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transpile",
        description=__doc__.strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", nargs="?", help="path/to/file.py:function")
    parser.add_argument("--wrt", help="comma-separated parameter names or indices")
    parser.add_argument("--mode", choices=("grad", "value_and_grad", "vjp"), default="grad")
    parser.add_argument(
        "--dump",
        metavar="STAGE",
        choices=_stage_names(),
        help="print the function after one stage of the compiler instead: "
        + ", ".join(_stage_names()),
    )
    parser.add_argument(
        "--stages", action="store_true", help="list the compiler's stages, in order"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="say for every line whether it has an adjoint, and if not, why",
    )
    parser.add_argument(
        "-o", "--output", metavar="OUT.py", help="write the gradient as a module (export)"
    )
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="with -o: copy the runtime helpers in, so that the module needs numpy alone",
    )
    parser.add_argument(
        "--rules",
        action="store_true",
        help="list every function, method and operator with a derivative rule",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="print the gradient of a demo loss and check it numerically",
    )
    args = parser.parse_args(argv)
    if args.demo:
        return demo()
    if args.rules:
        return list_rules()
    if args.stages:
        from transpile.pipeline import STAGES

        width = max(len(s.name) for s in STAGES)
        for s in STAGES:
            print(f"{s.name:<{width}}  {s.does}")
        return 0
    if not args.target or ":" not in args.target:
        parser.error("give a target as path/to/file.py:function, or --demo")
    path, func_name = args.target.rsplit(":", 1)
    sys.path.insert(0, str(Path(path).resolve().parent))
    func = getattr(_load(path), func_name)
    from transpile import api, pipeline
    from transpile.errors import TranspileError
    from transpile.explain import explain
    from transpile.export import ExportError, export
    from transpile_runtime.structure import resolve_wrt

    try:
        if args.dump:
            indices, _ = resolve_wrt(func, _wrt(args.wrt))
            print(pipeline.dump(func, indices, args.dump))
        else:
            make = {"grad": api.grad, "value_and_grad": api.value_and_grad, "vjp": api.vjp}[
                args.mode
            ]
            made = make(func, wrt=_wrt(args.wrt), allow_unused=args.explain)
            if args.explain:
                print(explain(made), end="")
            if args.output:
                export(made, args.output, standalone=args.standalone)
                print(f"wrote {args.output}", file=sys.stderr)
            if not (args.explain or args.output):
                print(api.source(made))
    except (TranspileError, ExportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
