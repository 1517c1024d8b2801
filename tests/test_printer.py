"""The source printer: what it prints reads back as the tree it printed.

Checked by round trips (print, parse with Python, compare the trees) on random
expressions that mix every precedence level, on statements of every kind the
compiler emits and of kinds it leaves to ``gast.unparse``, and on the gradient
of a negative base raised to a power, which ``gast.unparse`` printed wrongly.
"""

import textwrap

import gast
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from transpile import grad
from transpile.core import printer


def _normal(node):
    """``-2.0`` read back is a minus applied to ``2.0``: fold it into the constant, as
    the compiler's trees hold it."""

    class Fold(gast.NodeTransformer):
        def visit_UnaryOp(self, n):
            self.generic_visit(n)
            if (
                isinstance(n.op, gast.USub)
                and isinstance(n.operand, gast.Constant)
                and type(n.operand.value) in (int, float)
            ):
                return gast.Constant(value=-n.operand.value, kind=None)
            return n

    return gast.dump(Fold().visit(node))


def _load(id_):
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


_NUMBERS = st.one_of(
    st.integers(-5, 5),
    st.floats(-3.0, 3.0, allow_nan=False, width=32),
    st.sampled_from([float("inf"), -float("inf"), 1e300, -0.0, 2.5e-8]),
)
_LEAVES = st.one_of(
    st.sampled_from(["a", "b", "np"]).map(_load),
    _NUMBERS.map(lambda v: gast.Constant(value=v, kind=None)),
    st.sampled_from([True, None, "s'q", 'd"q']).map(lambda v: gast.Constant(value=v, kind=None)),
)
_BINARY = [
    gast.Add,
    gast.Sub,
    gast.Mult,
    gast.MatMult,
    gast.Div,
    gast.Mod,
    gast.FloorDiv,
    gast.Pow,
    gast.LShift,
    gast.RShift,
    gast.BitOr,
    gast.BitXor,
    gast.BitAnd,
]
_COMPARE = [gast.Eq, gast.Lt, gast.Is, gast.IsNot, gast.In, gast.NotIn]


def _compound(inner):
    return st.one_of(
        st.builds(
            lambda left, op, right: gast.BinOp(left=left, op=op(), right=right),
            inner,
            st.sampled_from(_BINARY),
            inner,
        ),
        st.builds(
            lambda op, operand: gast.UnaryOp(op=op(), operand=operand),
            st.sampled_from([gast.USub, gast.UAdd, gast.Invert, gast.Not]),
            inner,
        ),
        st.builds(
            lambda left, ops, rights: gast.Compare(
                left=left, ops=[o() for o in ops[: len(rights)]], comparators=rights
            ),
            inner,
            st.lists(st.sampled_from(_COMPARE), min_size=2, max_size=2),
            st.lists(inner, min_size=1, max_size=2),
        ),
        st.builds(
            lambda op, values: gast.BoolOp(op=op(), values=values),
            st.sampled_from([gast.And, gast.Or]),
            st.lists(inner, min_size=2, max_size=3),
        ),
        st.builds(lambda b, t, o: gast.IfExp(test=t, body=b, orelse=o), inner, inner, inner),
        st.builds(
            lambda f, args, kw: gast.Call(
                func=f,
                args=args,
                keywords=[gast.keyword(arg="axis", value=kw)] if kw is not None else [],
            ),
            inner,
            st.lists(inner, max_size=2),
            st.none() | inner,
        ),
        st.builds(lambda v: gast.Attribute(value=v, attr="real", ctx=gast.Load()), inner),
        st.builds(
            lambda v, i: gast.Subscript(value=v, slice=i, ctx=gast.Load()),
            inner,
            st.one_of(
                inner,
                st.builds(lambda lo, up: gast.Slice(lower=lo, upper=up, step=None), inner, inner),
                st.lists(inner, min_size=1, max_size=2).map(
                    lambda e: gast.Tuple(elts=e, ctx=gast.Load())
                ),
            ),
        ),
        st.lists(inner, max_size=3).map(lambda e: gast.Tuple(elts=e, ctx=gast.Load())),
        st.lists(inner, max_size=2).map(lambda e: gast.List(elts=e, ctx=gast.Load())),
    )


_EXPRESSIONS = st.recursive(_LEAVES, _compound, max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_EXPRESSIONS)
def test_random_expressions_read_back_as_printed(tree):
    text = printer.expression(tree)
    assert _normal(gast.parse(text, mode="eval").body) == _normal(tree), text


_STATEMENTS = """
def f(a, b=2.0, /, c=-1, *args, d, e=(1, 2), **kw):
    x = y = a * (b + c) ** -2
    p, q = divmod(a, b)
    p[1:, ::2] += -(q @ q.T)
    del x, y
    for i, j in zip(args, kw):
        if i:
            continue
        elif j is not None:
            break
        else:
            pass
    else:
        a = [v for v in range(3) if v]
    while not a and b or c:
        b = lambda t, u=1: t if u else -t
    else:
        c = {**kw, "k": f"{a!r:>{b}}"}
    try:
        assert a, "message"
    except ValueError as err:
        raise TypeError("t") from err
    with open(a) as h:
        h.write(b)
    def inner(z: float = 0.5) -> float:
        return z
    return (a, -1.5 ** 2, (-1.5) ** 2, (-1) .real, 1 .real, {1, 2}, {}, ())
"""


def test_statements_read_back_as_printed():
    tree = gast.parse(textwrap.dedent(_STATEMENTS))
    text = printer.source(tree.body)
    assert _normal(gast.parse(text)) == _normal(tree), text


def test_negative_base_power_gradient():
    """``(-2.0) ** 2`` folds to the constant ``-2.0`` raised to 2, which must print with
    its parentheses: ``-2.0 ** 2`` is ``-4.0``, and the gradient came out wrong."""

    def f(x):
        return np.sum((-2.0) ** 2 * x + (-1.5) ** 3 * x * x)

    x = np.array([1.0, -2.0, 0.5])
    expected = 4.0 + 2.0 * (-3.375) * x  # d/dx of 4 x - 3.375 x^2
    np.testing.assert_allclose(grad(f)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(grad(f)(x), expected, rtol=1e-12)  # the shape variant too


def test_every_pair_of_operators_nests_as_printed():
    """Each binary operator inside each other one, on either side, and each unary
    operator on either side and around: the cases where precedence and
    associativity decide the parentheses."""
    a, b, c = _load("a"), _load("b"), _load("c")
    trees = []
    for outer in _BINARY:
        for inner in _BINARY:
            nested = gast.BinOp(left=a, op=inner(), right=b)
            trees.append(gast.BinOp(left=nested, op=outer(), right=c))
            trees.append(gast.BinOp(left=c, op=outer(), right=nested))
        for unary in (gast.USub, gast.Not, gast.Invert):
            operand = gast.UnaryOp(op=unary(), operand=a)
            trees.append(gast.BinOp(left=operand, op=outer(), right=b))
            trees.append(gast.BinOp(left=b, op=outer(), right=operand))
            trees.append(gast.UnaryOp(op=unary(), operand=gast.BinOp(left=a, op=outer(), right=b)))
        for number in (-2.0, -3, 2.0):
            base = gast.Constant(value=number, kind=None)
            trees.append(gast.BinOp(left=base, op=outer(), right=a))
            trees.append(gast.BinOp(left=a, op=outer(), right=base))
    for tree in trees:
        text = printer.expression(tree)
        assert _normal(gast.parse(text, mode="eval").body) == _normal(tree), text
