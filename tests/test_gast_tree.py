"""``front.gast_tree.parse`` builds the tree ``gast.parse`` builds: the same classes,
fields and locations, node by node, with a context object of its own per node."""

import ast
import pathlib

import gast
import pytest

from transpile.core import gast_tree

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "transpile").rglob("*.py")) + sorted((ROOT / "tests").glob("*_funcs.py"))

SNIPPETS = [
    "def f(x, *a, k=1, **kw):\n    pass\n    return x\n",
    "def f(x: int, /, y: 'str' = 2) -> float:\n    global g\n    del x\n",
    "async def f():\n    async with a as b:\n        await b\n    async for i in c:\n        break\n",
    "try:\n    pass\nexcept ValueError as e:\n    raise\nexcept:\n    continue\nfinally:\n    pass\n",
    "match x:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n"
    "    case Point(x=0) | None:\n        pass\n    case _:\n        pass\n",
    "class C(B, metaclass=M):\n    x: int = 1\n    def m(self):\n        return lambda a, *b: a\n",
    "y = [i for i in range(3) if i] + {k: v for k, v in d} + {*s}\n"
    "z = (w := 3) if a else f'{b!r:>{n}}'\nimport a.b as c\nfrom . import d\n",
    "try:\n    pass\nexcept* TypeError:\n    pass\n",
]


def _same(a, b, path="tree"):
    assert type(a) is type(b), path
    if isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, ast.AST):
        assert a is not b, path
        assert list(a.__dict__) == list(b.__dict__), path
        for k in a.__dict__:
            _same(a.__dict__[k], b.__dict__[k], f"{path}.{k}")
    else:
        assert a == b or (a != a and b != b), path


@pytest.mark.parametrize("source", SNIPPETS)
def test_snippets(source):
    _same(gast.parse(source), gast_tree.parse(source))


def test_sources():
    assert SOURCES
    for path in SOURCES:
        text = path.read_text()
        _same(gast.parse(text), gast_tree.parse(text), str(path))


def test_contexts_are_not_shared():
    tree = gast_tree.parse("a = b + b\n")
    contexts = [n.ctx for n in gast.walk(tree) if isinstance(n, gast.Name)]
    assert len({id(c) for c in contexts}) == len(contexts) == 3
