"""Every statement and expression type gast has is either lowered by the front end or
refused by ``fence``, at its line, before any other stage sees it.

Each type gets a small function that uses it. An accepted one is differentiated and
checked against central differences on a first and a later call; a refused one must
raise ``TranspileError`` from the ``fence`` stage (the stages after it may assume the
subset it lets through) naming the line of the construct. A type this Python cannot
write (Python 2's ``Print``, 3.14's template strings on an older Python) must still be
outside what ``fence`` accepts, so that a newer parser cannot slip it past.
"""

import importlib.util
import inspect
import sys
import textwrap

import fd
import gast
import numpy as np
import pytest

from transpile import grad, pipeline
from transpile.core.errors import TranspileError
from transpile.core.ir import Context
from transpile.front import fence

ACCEPTED = {
    "AnnAssign": "y: float = x * 2.0\nreturn np.sum(y)",
    "Assert": "assert x.ndim == 1\nreturn np.sum(x * x)",
    "Assign": "y = x * 2.0\nreturn np.sum(y)",
    "AugAssign": "y = x * 1.0\ny += x\nreturn np.sum(y * y)",
    "Break": "s = 0.0\nfor i in range(3):\n    if i == 2:\n        break\n    s = s + np.sum(x) * i\nreturn s",
    "Continue": "s = 0.0\nfor i in range(3):\n    if i == 1:\n        continue\n    s = s + np.sum(x * x) * i\nreturn s",
    "Expr": "np.sum(x)\nreturn np.sum(x * x)",
    "For": "s = 0.0\nfor v in x:\n    s = s + v * v\nreturn s",
    "FunctionDef": "def sq(v):\n    return v * v\nreturn np.sum(sq(x))",
    "If": "if x[0] > 0:\n    y = x * 2.0\nelse:\n    y = x * 3.0\nreturn np.sum(y * x)",
    "Pass": "pass\nreturn np.sum(x * x)",
    "Raise": "if x.ndim != 1:\n    raise ValueError('1-d')\nreturn np.sum(x * x)",
    "Return": "return np.sum(np.sin(x))",
    "Try": "try:\n    y = x * 2.0\nexcept ValueError:\n    y = x\nreturn np.sum(y * x)",
    "While": "s = 0.0\ni = 0\nwhile i < 2:\n    s = s + np.sum(x * x)\n    i += 1\nreturn s",
    "Attribute": "return np.sum(x.T * x)",
    "BinOp": "return np.sum(x * x)",
    "BoolOp": "c = (x[0] > 0) and (x[1] > 0)\nreturn np.sum(x * x) if c else np.sum(x)",
    "Call": "return np.sum(np.sin(x))",
    "Compare": "return np.sum(x * x) if x[0] < 1 else 0.0",
    "Constant": "return np.sum(x * x) + 1.0",
    "Dict": "d = {'a': x}\nreturn np.sum(d['a'] ** 3)",
    "DictComp": "d = {k: x * k for k in (1.0, 2.0)}\nreturn np.sum(d[2.0] * x)",
    "FormattedValue": "s = f'{x[0]}'\nreturn np.sum(x * x)",
    "GeneratorExp": "return sum(np.sum(x * x * k) for k in (1.0, 2.0))",
    "IfExp": "return np.sum(x * x) if x[0] > 0 else np.sum(2.0 * x)",
    "JoinedStr": "s = f'a{1}'\nreturn np.sum(x * x)",
    "Lambda": "f = lambda v: v * v\nreturn np.sum(f(x))",
    "List": "ys = [x, x * x]\nreturn np.sum(ys[1])",
    "ListComp": "ys = [x * k for k in (1.0, 2.0)]\nreturn np.sum(ys[1] * x)",
    "Name": "return np.sum(x)",
    "SetComp": "s = {k for k in (1, 2)}\nreturn np.sum(x * x) * len(s)",
    "Starred": "a, *b = x\nreturn a * np.sum(x)",
    "Subscript": "return x[0] * x[1]",
    "Tuple": "a, b = x[0], x[1]\nreturn a * b",
    "UnaryOp": "return np.sum(-x * x)",
    "With": "with np.errstate(divide='ignore'):\n    y = x * 2.0\nreturn np.sum(y * x)",
}
# the construct, and the line of the snippet (from 1) the refusal must name
REFUSED = {
    "AsyncFunctionDef": ("async def g():\n    pass\nreturn np.sum(x)", 1),
    "AsyncFor": ("async def g():\n    async for v in x:\n        pass\nreturn np.sum(x)", 1),
    "AsyncWith": ("async def g():\n    async with x:\n        pass\nreturn np.sum(x)", 1),
    "Await": ("async def g():\n    await x\nreturn np.sum(x)", 1),
    "ClassDef": ("class C:\n    pass\nreturn np.sum(x)", 1),
    "Delete": ("y = x * 2.0\ndel y\nreturn np.sum(x)", 2),
    "Global": ("global G\nreturn np.sum(x)", 1),
    "Nonlocal": ("y = x\ndef g():\n    nonlocal y\n    y = y * 2.0\ng()\nreturn np.sum(y)", 3),
    "Import": ("import math\nreturn np.sum(x)", 1),
    "ImportFrom": ("from math import pi\nreturn np.sum(x)", 1),
    "Match": ("match 1:\n    case 1:\n        y = x\nreturn np.sum(y)", 1),
    "TryStar": ("try:\n    y = x * 2.0\nexcept* ValueError:\n    y = x\nreturn np.sum(y)", 1),
    "TypeAlias": ("type T = int\nreturn np.sum(x)", 1),  # Python 3.12+
    "NamedExpr": ("if (y := x * 2.0) is not None:\n    pass\nreturn np.sum(y)", 1),
    "Set": ("s = {1, 2}\nreturn np.sum(x) * len(s)", 1),
    "Yield": ("yield x\nreturn np.sum(x)", 1),
    "YieldFrom": ("yield from x\nreturn np.sum(x)", 1),
    "TemplateStr": ("s = t'{x}'\nreturn np.sum(x)", 1),  # Python 3.14+
    "Interpolation": ("s = t'{x}'\nreturn np.sum(x)", 1),
}
PYTHON2_ONLY = {"Exec", "Print", "Repr"}


def _gast_types(base):
    return sorted(
        n
        for n, c in vars(gast).items()
        if inspect.isclass(c) and issubclass(c, base) and c is not base
    )


STATEMENTS, EXPRESSIONS = _gast_types(gast.stmt), _gast_types(gast.expr)


def test_every_gast_type_is_listed_here_once():
    listed = [*ACCEPTED, *REFUSED, *PYTHON2_ONLY]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(STATEMENTS + EXPRESSIONS)
    assert {getattr(gast, n) for n in ACCEPTED} == (
        fence.ACCEPTED_STATEMENTS | fence.ACCEPTED_EXPRESSIONS
    )


def _function(tmp_path, name, body):
    """``f(x)`` with ``body``, defined in a file of its own (its source is read)."""
    path = tmp_path / f"syntax_{name}.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n" + textwrap.indent(body, "    ") + "\n")
    spec = importlib.util.spec_from_file_location(f"syntax_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f, path


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_an_accepted_type_is_differentiated(name, tmp_path):
    f, _ = _function(tmp_path, name, ACCEPTED[name])
    x = np.array([0.5, 1.5, 2.0])
    g = grad(f)
    for _ in range(2):  # the first call and a later one
        (want,) = fd.numeric_grad(f, (x,), (0,))
        np.testing.assert_allclose(g(x), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_type_stops_at_the_fence_at_its_line(name, tmp_path):
    body, line = REFUSED[name]
    try:
        f, path = _function(tmp_path, name, body)
    except SyntaxError:
        assert (
            getattr(gast, name, None) not in fence.ACCEPTED_STATEMENTS | fence.ACCEPTED_EXPRESSIONS
        )
        pytest.skip(f"Python {sys.version.split()[0]} cannot write {name}")
    ctx = Context(f, (0,), "grad", transpile=pipeline.transpile)
    with pytest.raises(
        TranspileError, match="not supported in (a|the) (function )?differentiated"
    ) as info:
        pipeline.run(ctx, until="fence")
    assert info.value.filename == str(path)
    assert info.value.lineno == 4 + line  # the def is line 4 of the file
    with pytest.raises(TranspileError):
        grad(f)(np.ones(3))
