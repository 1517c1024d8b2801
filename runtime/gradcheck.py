"""Numeric gradients by central differences, and reports comparing them with others.

``numeric_grad`` estimates a gradient the slow, independent way: it nudges one
entry of one argument up and down and looks at the change of the (scalar)
output. It returns the same structure as ``transpile.grad`` would, so the two
can be compared leaf by leaf; for an object of the user's class (plain or
dataclass, a model holding a list of layers), a new instance whose float fields
hold their gradients, compared field by field (``model.layers[0].W``). ``check_grad`` does that comparison against a
gradient function (at this level it must be given; ``transpile.check_grad``
fills in the generated one) and returns a ``GradReport`` that prints as a
plain-text table and renders as an HTML table in Jupyter. ``assert_grad_close``
raises with that table when the gradients disagree.

Central differences are approximations: the error of a step ``h`` is about
``h**2 * |f'''| / 6`` (truncation) plus ``eps_machine * |f| / h`` (round-off),
smallest near ``h ~ cbrt(eps_machine)``, which is the default here, scaled to
the size of each entry. Everything is computed in float64 on copies; the
caller's arrays are never written to.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import directions, progress
from .structure import Wrt, flatten, is_object, object_fields, resolve_wrt, unflatten

DEFAULT_STEP = float(np.finfo(np.float64).eps) ** (1.0 / 3.0)  # about 6.06e-6


# ---------------------------------------------------------------- numeric_grad


def numeric_grad(f: Callable[..., Any], *args: Any, wrt: Wrt = 0, eps: float | None = None) -> Any:
    """Central-difference gradient of scalar-valued ``f`` at ``args``.

    ``wrt`` is a parameter index, a parameter name, or a tuple of them (a tuple
    gives a tuple of gradients). Each differentiated argument may be a number,
    an array of any shape (0-d included) or a nest of dicts, lists and tuples
    of those; its gradient has the same structure: a ``float`` for a number, a
    float64 array of the argument's shape for an array. Entry ``x_i`` is
    stepped by ``h_i = eps * max(1, |x_i|)``, with ``eps`` defaulting to
    ``cbrt(machine epsilon)`` (about 6e-6). Costs two calls of ``f`` per entry.
    """
    indices, as_tuple = resolve_wrt(f, wrt)
    base = DEFAULT_STEP if eps is None else float(eps)
    if not base > 0:
        raise ValueError(f"eps must be a positive step, got {eps!r}")
    grads = tuple(_numeric_grad_arg(f, args, i, base) for i in indices)
    return grads if as_tuple else grads[0]


def _numeric_grad_arg(f, args, index, base):
    """The numeric gradient with respect to ``args[index]`` (any structure)."""
    if index >= len(args):
        raise TypeError(
            f"wrt names positional argument {index}, but only {len(args)} arguments were passed"
        )
    leaves, treedef = flatten(args[index])
    work = [_float64_copy(leaf, _arg_name(f, index)) for leaf in leaves]
    call_args = list(args)

    def evaluate():
        call_args[index] = unflatten(treedef, work)
        return _scalar_output(f(*call_args))

    grads = []
    total = sum(leaf.size if isinstance(leaf, np.ndarray) else 1 for leaf in work)
    counter = progress.Counter(f"the numeric gradient of {_name(f)}", total)
    for k, leaf in enumerate(work):
        if isinstance(leaf, np.ndarray):
            g = np.zeros(leaf.shape, dtype=np.float64)
            for pos in np.ndindex(leaf.shape):
                x = float(leaf[pos])
                h = base * max(1.0, abs(x))
                leaf[pos] = x + h
                up = evaluate()
                leaf[pos] = x - h
                down = evaluate()
                leaf[pos] = x
                g[pos] = (up - down) / ((x + h) - (x - h))
                counter.step()
            grads.append(g)
        else:
            x = leaf
            h = base * max(1.0, abs(x))
            work[k] = x + h
            up = evaluate()
            work[k] = x - h
            down = evaluate()
            work[k] = x
            grads.append((up - down) / ((x + h) - (x - h)))
            counter.step()
    counter.finish()
    return unflatten(treedef, grads)


def _name(f):
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


def _float64_copy(leaf, name):
    """A float64 copy of a leaf: an ndarray stays an ndarray, a scalar becomes float."""
    if isinstance(leaf, np.ndarray):
        if not (np.issubdtype(leaf.dtype, np.number) or leaf.dtype == np.bool_):
            raise TypeError(
                f"cannot differentiate with respect to {name}: an array of "
                f"dtype {leaf.dtype} is not numeric"
            )
        if np.iscomplexobj(leaf):
            raise TypeError(f"numeric_grad supports real arguments only; {name} is complex")
        return np.array(leaf, dtype=np.float64, copy=True)
    if isinstance(leaf, (bool, np.bool_)) or not isinstance(leaf, (int, float, np.number)):
        raise TypeError(
            f"cannot differentiate with respect to {name}: it holds a "
            f"{type(leaf).__name__} leaf, not a number or array"
        )
    if isinstance(leaf, complex) or np.iscomplexobj(leaf):
        raise TypeError(f"numeric_grad supports real arguments only; {name} is complex")
    return float(leaf)


def _scalar_output(out):
    """``out`` as a Python float, or a clear error if ``f`` is not scalar-valued."""
    if np.ndim(out) != 0:
        raise ValueError(
            f"the function must return a scalar to be differentiated; "
            f"it returned shape {np.shape(out)}"
        )
    if np.iscomplexobj(out):
        raise ValueError("the function must return a real scalar; it returned a complex one")
    return float(out)


def _arg_name(f, index):
    """The name of positional parameter ``index`` of ``f`` (or ``arg<index>``)."""
    try:
        params = [
            p.name
            for p in inspect.signature(f).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return params[index] if index < len(params) else f"arg{index}"


# ------------------------------------------------------------------- reports


@dataclass(frozen=True)
class GradRow:
    """One leaf of one differentiated argument: how far the gradients are apart."""

    path: str
    shape: tuple | None
    max_abs_err: float
    max_rel_err: float
    passed: bool
    note: str = ""


@dataclass(frozen=True, repr=False)
class GradReport:
    """The result of ``check_grad``: one row per leaf plus the overall verdict.

    ``str(report)`` (and ``repr``) is a plain-text table, ``report._repr_html_()``
    an HTML one, and ``bool(report)`` is ``report.passed``. ``analytic`` and
    ``numeric`` hold the two gradients that were compared.
    """

    name: str
    rows: tuple
    rtol: float
    atol: float
    analytic: Any = field(default=None)
    numeric: Any = field(default=None)

    @property
    def passed(self) -> bool:
        """True when every leaf matches within ``atol + rtol * |numeric|``."""
        return all(r.passed for r in self.rows)

    @property
    def max_abs_err(self) -> float:
        """The largest absolute error over all leaves (inf on a shape mismatch)."""
        return max((r.max_abs_err for r in self.rows), default=0.0)

    @property
    def max_rel_err(self) -> float:
        """The largest relative error ``|a - n| / max(|a|, |n|)`` over all leaves."""
        return max((r.max_rel_err for r in self.rows), default=0.0)

    def __bool__(self) -> bool:
        return self.passed

    def _cells(self):
        head = ["argument", "shape", "max abs err", "max rel err", "result", "note"]
        body = [
            [
                r.path,
                _fmt_shape(r.shape),
                _fmt_err(r.max_abs_err),
                _fmt_err(r.max_rel_err),
                "ok" if r.passed else "FAIL",
                r.note,
            ]
            for r in self.rows
        ]
        total = [
            "overall",
            "",
            _fmt_err(self.max_abs_err),
            _fmt_err(self.max_rel_err),
            "PASSED" if self.passed else "FAILED",
            "",
        ]
        return head, body, total

    def _title(self):
        verdict = "PASSED" if self.passed else "FAILED"
        return (
            f"check_grad({self.name}): {verdict}  "
            f"(pass if |analytic - numeric| <= {self.atol:g} + {self.rtol:g} * |numeric|)"
        )

    def __repr__(self) -> str:
        return self.__str__()

    def __str__(self) -> str:
        head, body, total = self._cells()
        table = [head] + body + [total]
        widths = [max(len(row[c]) for row in table) for c in range(len(head))]

        def line(row):
            return "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()

        rule = "-" * len(line(["-" * w for w in widths]))
        return "\n".join(
            [self._title(), line(head), rule] + [line(r) for r in body] + [rule, line(total)]
        )

    def _repr_html_(self) -> str:
        head, body, total = self._cells()
        esc = html.escape

        def tr(row, tag="td", color=""):
            style = f' style="background:{color}"' if color else ""
            cells = "".join(f"<{tag}>{esc(c)}</{tag}>" for c in row)
            return f"<tr{style}>{cells}</tr>"

        rows = [tr(r, color="" if r[4] == "ok" else "#fdd") for r in body]
        foot = tr(total, "th", "#dfd" if self.passed else "#fdd")
        return (
            f"<table><caption>{esc(self._title())}</caption>"
            f"<thead>{tr(head, 'th')}</thead><tbody>{''.join(rows)}</tbody>"
            f"<tfoot>{foot}</tfoot></table>"
        )


def _fmt_err(x):
    return "-" if x is None else ("inf" if x == np.inf else f"{x:.2e}")


def _fmt_shape(shape):
    return "?" if shape is None else str(shape)


# ------------------------------------------------------------ check / assert


def check_grad(
    f: Callable[..., Any],
    *args: Any,
    wrt: Wrt = 0,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    grad_fn: Callable[..., Any] | None = None,
    eps: float | None = None,
) -> GradReport:
    """Compare ``grad_fn(*args)`` with ``numeric_grad(f, *args, wrt=wrt)``.

    ``grad_fn`` returns the gradient in the structure ``numeric_grad`` does
    (a tuple for a tuple ``wrt``). Entries agree when
    ``|analytic - numeric| <= atol + rtol * |numeric|``, as in
    ``numpy.allclose``; a shape or structure mismatch fails its row. Use
    ``transpile.check_grad`` to check the generated gradient, which it passes
    as ``grad_fn``.
    """
    if grad_fn is None:
        raise TypeError(
            "check_grad needs grad_fn, the gradient function to check; "
            "use transpile.check_grad, which fills it in with transpile.grad(f, wrt)"
        )
    indices, as_tuple = resolve_wrt(f, wrt)
    numeric = numeric_grad(f, *args, wrt=wrt, eps=eps)
    analytic = grad_fn(*args)
    names = [_arg_name(f, i) for i in indices]
    if as_tuple:
        if not isinstance(analytic, (tuple, list)) or len(analytic) != len(indices):
            got = (
                f"a {type(analytic).__name__} of length {len(analytic)}"
                if isinstance(analytic, (tuple, list))
                else type(analytic).__name__
            )
            row = GradRow(
                ", ".join(names),
                None,
                np.inf,
                np.inf,
                False,
                f"grad_fn returned {got}; expected a tuple of {len(indices)} gradients",
            )
            rows = [row]
        else:
            rows = [
                r
                for name, a, n in zip(names, analytic, numeric)
                for r in _compare_tree(name, a, n, rtol, atol)
            ]
    else:
        rows = _compare_tree(names[0], analytic, numeric, rtol, atol)
    name = getattr(f, "__name__", type(f).__name__)
    return GradReport(f"{name}, wrt={wrt!r}", tuple(rows), rtol, atol, analytic, numeric)


def check_entries(
    f: Callable[..., Any],
    *args: Any,
    grad_fn: Callable[..., Any],
    entries: int,
    wrt: Wrt = 0,
    seed: int = 0,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    eps: float | None = None,
) -> GradReport:
    """``check_grad`` on ``entries`` entries drawn at random (seeded by ``seed``, without
    replacement) from every entry of the arguments ``wrt`` names: two calls of ``f``
    per entry drawn. One row per leaf drawn from, its path saying how many of its
    entries were compared; a failing row names the worst entry by its own index."""
    if entries < 1:
        raise ValueError(f"entries is the number of entries to check, at least 1; got {entries}")
    indices, as_tuple = resolve_wrt(f, wrt)
    base = DEFAULT_STEP if eps is None else float(eps)
    name = getattr(f, "__name__", type(f).__name__)
    analytic = grad_fn(*args)
    parts = analytic if as_tuple else (analytic,)
    leaves, mismatch = _entry_leaves(f, args, indices, parts)
    if mismatch is not None:
        return GradReport(f"{name}, wrt={wrt!r}", (mismatch,), rtol, atol, analytic)
    sizes = [int(np.size(x)) for *_, x, _ in leaves]
    rng = np.random.default_rng(seed)
    drawn = np.sort(rng.choice(sum(sizes), size=min(entries, sum(sizes)), replace=False))
    starts = np.cumsum([0, *sizes])
    rows = []
    for j, leaf in enumerate(leaves):
        mine = drawn[(drawn >= starts[j]) & (drawn < starts[j + 1])] - starts[j]
        if mine.size:
            rows.append(_entries_row(f, args, leaf, mine, base, rtol, atol))
    title = f"{name}, wrt={wrt!r}, {len(drawn)} entries drawn (seed {seed})"
    return GradReport(title, tuple(rows), rtol, atol, analytic, None)


def _entry_leaves(f, args, indices, parts):
    """``(leaves, None)``, each leaf ``(argument index, leaf position, path, argument
    leaf, analytic leaf)``; or ``(None, row)`` with the row of an argument whose
    gradient has another structure."""
    leaves = []
    for i, part in zip(indices, parts, strict=True):
        x_paths = _leaf_paths(args[i], _arg_name(f, i))
        a_leaves = flatten(part)[0]
        if len(a_leaves) != len(x_paths):
            row = GradRow(_arg_name(f, i), None, np.inf, np.inf, False, "structure mismatch")
            return None, row
        for k, (path, x) in enumerate(x_paths.items()):
            leaves.append((i, k, path, x, a_leaves[k]))
    return leaves, None


def _entries_row(f, args, leaf, mine, base, rtol, atol):
    """The row of one leaf, compared on its entries ``mine`` (flat indices) drawn."""
    i, k, path, x, a = leaf
    positions = [np.unravel_index(int(m), np.shape(x)) for m in mine]
    numeric = np.array([_numeric_entry(f, args, i, k, pos, base) for pos in positions])
    a = np.asarray(a, dtype=np.float64)
    if a.shape != np.shape(x):
        return _compare_leaf(path, a, np.zeros(np.shape(x)), rtol, atol)
    got = np.array([a[pos] for pos in positions])
    row = _compare_leaf(f"{path} ({mine.size} of {np.size(x)})", got, numeric, rtol, atol)
    note = row.note
    if not row.passed and np.ndim(x) and np.isfinite(row.max_abs_err):
        worst = int(np.argmax(np.abs(got - numeric) - rtol * np.abs(numeric)))
        where = tuple(int(p) for p in positions[worst])  # the entry's own index
        note = f"worst at index {where}: analytic {got[worst]:.6g}, numeric {numeric[worst]:.6g}"
    return dataclasses.replace(row, shape=np.shape(x), note=note)


def _numeric_entry(f, args, index, k, pos, base):
    """The central difference of ``f`` in entry ``pos`` of leaf ``k`` of ``args[index]``."""
    leaves, treedef = flatten(args[index])
    work = [_float64_copy(leaf, _arg_name(f, index)) for leaf in leaves]
    call_args = list(args)
    array = isinstance(work[k], np.ndarray)
    x = float(work[k][pos]) if array else work[k]
    h = base * max(1.0, abs(x))
    values = []
    for moved in (x + h, x - h):
        if array:
            work[k][pos] = moved
        else:
            work[k] = moved
        call_args[index] = unflatten(treedef, work)
        values.append(_scalar_output(f(*call_args)))
    return (values[0] - values[1]) / ((x + h) - (x - h))


def check_directions(
    f: Callable[..., Any],
    *args: Any,
    grad_fn: Callable[..., Any],
    jvp_fn: Callable[..., Any] | None = None,
    hvp_fn: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    n: int = 8,
    seed: int = 0,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    eps: float | None = None,
) -> GradReport:
    """Compare directional derivatives along ``n`` random directions ``v`` (seeded by
    ``seed``) with central differences of ``f`` along them (``directions.py``):
    ``<grad_fn(*args), v>`` (reverse mode), the tangent of ``jvp_fn(*args, v)``
    (forward mode, where given) and ``hvp_fn(*args, v)`` against the central
    difference of ``grad_fn`` along ``v`` (second order, where given). Costs about
    four calls of ``f`` (and of ``grad_fn`` for second order) per direction, whatever
    the size of the arguments; one row per direction and mode. ``eps``: the relative
    step (``directions.STEP``, 1e-4, by default)."""
    if n < 1:
        raise ValueError(f"n is the number of random directions to check, at least 1; got {n}")
    indices, as_tuple, vs = directions.directions(f, args, wrt, n, seed)
    base = directions.STEP if eps is None else float(eps)
    gradient = grad_fn(*args)

    def value(*moved):
        return _scalar_output(f(*moved))

    rows = []
    for k, v in enumerate(vs):
        numeric = directions.derivative(value, args, indices, as_tuple, v, base)
        reverse = directions.inner(gradient, v, as_tuple)
        rows.append(_compare_leaf(f"v{k}: reverse", reverse, numeric, rtol, atol))
        if jvp_fn is not None:
            tangent = jvp_fn(*args, v)[1]
            rows.append(_compare_leaf(f"v{k}: forward", tangent, numeric, rtol, atol))
        if hvp_fn is not None:
            expected = directions.derivative(grad_fn, args, indices, as_tuple, v, base)
            got = hvp_fn(*args, v)
            names = [f"v{k}: second order, {_arg_name(f, i)}" for i in indices]
            pairs = zip(names, got, expected) if as_tuple else [(names[0], got, expected)]
            rows += [r for name, a, e in pairs for r in _compare_tree(name, a, e, rtol, atol)]
    name = getattr(f, "__name__", type(f).__name__)
    title = f"{name}, wrt={wrt!r}, {n} random directions (seed {seed})"
    return GradReport(title, tuple(rows), rtol, atol, gradient, None)


def assert_grad_close(
    f: Callable[..., Any],
    *args: Any,
    wrt: Wrt = 0,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    grad_fn: Callable[..., Any] | None = None,
    eps: float | None = None,
) -> GradReport:
    """Run ``check_grad`` and raise ``AssertionError`` with its table if it fails."""
    report = check_grad(f, *args, wrt=wrt, rtol=rtol, atol=atol, grad_fn=grad_fn, eps=eps)
    if not report.passed:
        raise AssertionError("gradients disagree\n" + str(report))
    return report


def _leaf_paths(tree, prefix, guide=None):
    """``{path: leaf}`` in ``flatten``'s order, paths like ``params['W1'][0]`` and
    ``model.layers[0].W``. An object's fields are those of ``guide`` (the numeric
    gradient, where the argument's float fields are) when it is one."""
    out = {}

    def walk(node, path, guide):
        if is_object(guide) and (is_object(node) or isinstance(node, dict)):
            fields = node if isinstance(node, dict) else vars(node)
            for key in object_fields(guide):
                walk(fields.get(key), f"{path}.{key}", vars(guide)[key])
        elif isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}[{key!r}]", _child(guide, key))
        elif isinstance(node, (list, tuple)):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]", _child(guide, i))
        elif is_object(node):
            for key in object_fields(node):
                walk(vars(node)[key], f"{path}.{key}", None)
        else:
            out[path] = node

    walk(tree, prefix, guide)
    return out


def _child(guide, key):
    try:
        return guide[key]
    except (TypeError, KeyError, IndexError):
        return None


def _passed_by(diff, n, rtol, atol):
    """Which part of ``atol + rtol * |numeric|`` passed a leaf: a max rel err above
    ``rtol`` beside "ok" then says that ``atol`` let it through."""
    if np.all(diff <= rtol * np.abs(n)):
        return f"by rtol={rtol:g}"
    if np.all(diff <= atol):
        return f"by atol={atol:g}: rel err above rtol={rtol:g}"
    return f"by atol + rtol: neither atol={atol:g} nor rtol={rtol:g} alone"


def _compare_tree(name, analytic, numeric, rtol, atol):
    """Rows comparing two gradient structures of one argument, leaf by leaf."""
    got, want = _leaf_paths(analytic, name, numeric), _leaf_paths(numeric, name)
    rows = [
        _compare_leaf(path, got[path], n, rtol, atol)
        if path in got
        else GradRow(path, np.shape(n), np.inf, np.inf, False, "missing from the analytic gradient")
        for path, n in want.items()
    ]
    rows += [
        GradRow(
            path, None, np.inf, np.inf, False, "in the analytic gradient but not in the argument"
        )
        for path in got
        if path not in want
    ]
    return rows


def _compare_leaf(path, a, n, rtol, atol):
    """One row: errors between analytic leaf ``a`` and numeric leaf ``n``."""
    n = np.asarray(n, dtype=np.float64)
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        return GradRow(
            path,
            n.shape,
            np.inf,
            np.inf,
            False,
            f"analytic gradient is a {type(a).__name__}, not numbers",
        )
    if a.shape != n.shape:
        return GradRow(
            path,
            n.shape,
            np.inf,
            np.inf,
            False,
            f"shape mismatch: analytic {a.shape}, numeric {n.shape}",
        )
    if a.size == 0:
        return GradRow(path, n.shape, 0.0, 0.0, True)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.abs(a - n)
        scale = np.maximum(np.abs(a), np.abs(n))
        rel = np.where(diff == 0, 0.0, diff / scale)
    finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(n)))
    ok = finite and bool(np.all(diff <= atol + rtol * np.abs(n)))
    note = "" if finite else "non-finite values"
    if ok:
        note = _passed_by(diff, n, rtol, atol)
    if finite and not ok:
        worst = np.unravel_index(np.argmax(diff - rtol * np.abs(n)), n.shape)
        where = f" at index {tuple(int(i) for i in worst)}" if n.ndim else ""
        note = f"worst{where}: analytic {a[worst]:.6g}, numeric {n[worst]:.6g}"
    max_abs = float(np.max(diff)) if finite else np.inf
    max_rel = float(np.max(rel)) if finite else np.inf
    return GradRow(path, n.shape, max_abs, max_rel, ok, note)
