"""gast trees printed as Python source.

What the compiler emits (assignments, calls, arithmetic, subscripts, loops and
branches) is printed here, about three times faster than ``gast.unparse``, which prints
the rest (lambdas, comprehensions, f-strings, ``try``, ``with``...). The layout is
``gast.unparse``'s: four spaces a level, parentheses only where precedence needs
them, ``elif`` for an ``else`` holding one ``if``. One difference: a negative
number constant (made by constant folding) is a unary minus to the reader, so it
is parenthesized where a unary minus would be: ``(-2.0) ** x``, where
``gast.unparse`` writes ``-2.0 ** x``, which Python reads as ``-(2.0 ** x)``.
"""

import math
import sys

import gast

# binding strength, as in the grammar (and in ``gast.unparse``)
_TUPLE, _YIELD, _TEST, _OR, _AND, _NOT, _CMP = 2, 3, 4, 5, 6, 7, 8
_EXPR = _BOR = 9
_BXOR, _BAND, _SHIFT, _ARITH, _TERM, _FACTOR, _POWER, _ATOM = 10, 11, 12, 13, 14, 15, 16, 18

_BINARY = {
    gast.Add: ("+", _ARITH),
    gast.Sub: ("-", _ARITH),
    gast.Mult: ("*", _TERM),
    gast.MatMult: ("@", _TERM),
    gast.Div: ("/", _TERM),
    gast.Mod: ("%", _TERM),
    gast.FloorDiv: ("//", _TERM),
    gast.Pow: ("**", _POWER),
    gast.LShift: ("<<", _SHIFT),
    gast.RShift: (">>", _SHIFT),
    gast.BitOr: ("|", _BOR),
    gast.BitXor: ("^", _BXOR),
    gast.BitAnd: ("&", _BAND),
}
_UNARY = {
    gast.USub: ("-", _FACTOR),
    gast.UAdd: ("+", _FACTOR),
    gast.Invert: ("~", _FACTOR),
    gast.Not: ("not ", _NOT),
}
_COMPARE = {
    gast.Eq: " == ",
    gast.NotEq: " != ",
    gast.Lt: " < ",
    gast.LtE: " <= ",
    gast.Gt: " > ",
    gast.GtE: " >= ",
    gast.Is: " is ",
    gast.IsNot: " is not ",
    gast.In: " in ",
    gast.NotIn: " not in ",
}
_BOOL = {gast.And: (" and ", _AND), gast.Or: (" or ", _OR)}
_INFINITY = "1e" + repr(sys.float_info.max_10_exp + 1)  # reads back as inf


def source(node) -> str:
    """The source of a statement, a list of statements, or an expression (without a
    final newline)."""
    if node.__class__ is list:
        lines = []
        _block(node, "", lines)
        return "\n".join(lines)
    if isinstance(node, gast.stmt):
        lines = []
        _statement(node, "", lines)
        return "\n".join(lines)
    return expression(node)


class _Lines(list):
    """Printed lines, with the line number of the statement each statement's first
    line was printed from (``origins``: index of the line -> ``lineno``)."""

    __slots__ = ("origins",)


def source_and_origins(node):
    """``(source, origins)``: ``source(node)``, and for the index of each line that
    begins a statement with a line number, that number (line 1, the ``def`` itself,
    is left out: a statement made without a location may have been given it)."""
    lines = _Lines()
    lines.origins = {}
    _block(node if node.__class__ is list else [node], "", lines)
    return "\n".join(lines), lines.origins


def expression(node, context=_TEST) -> str:
    """The source of an expression, parenthesized if it binds less tightly than
    ``context`` (the precedence its place needs)."""
    return _EXPRESSIONS.get(node.__class__, _other)(node, context)


# -- expressions --


def _name(node, context):
    if node.annotation is None:
        return node.id
    return f"{node.id}: {expression(node.annotation)}"


def _constant(node, context):
    value = node.value
    cls = value.__class__
    if cls is float or cls is complex:
        text = repr(value).replace("inf", _INFINITY).replace("nan", f"({_INFINITY}-{_INFINITY})")
    elif cls is tuple:
        text = _tuple_literal(value)
        if text is None:
            return _other(node, context)
    elif value is Ellipsis:
        return _other(node, context)
    else:
        text = repr(value)
    if node.kind == "u":
        text = "u" + text
    if text[0] == "-" and context > _FACTOR:  # a negative number reads as a unary minus
        return f"({text})"
    return text


def _tuple_literal(value):
    """The source of a tuple of ints, names, finite floats and such tuples as
    ``gast.unparse`` writes it, or None for any other tuple: the probe's keys are such
    tuples, thousands of them, and ``gast.unparse`` is slow."""
    parts = []
    for v in value:
        cls = v.__class__
        if _plain_literal(v, cls):
            parts.append(repr(v))
        elif cls is tuple:
            inner = _tuple_literal(v)
            if inner is None:
                return None
            parts.append(inner)
        else:
            return None
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _plain_literal(v, cls):
    """Whether ``repr(v)`` is how ``gast.unparse`` writes ``v``."""
    if cls is int or cls is bool or v is None:
        return True
    return (cls is str and v.isidentifier()) or (cls is float and math.isfinite(v))


def _attribute(node, context):
    value = node.value
    text = expression(value, _ATOM)
    if value.__class__ is gast.Constant and value.value.__class__ is int and text[0] != "(":
        text += " "  # `1 .real`: `1.real` would read as a float
    return f"{text}.{node.attr}"


def _call(node, context):
    parts = [expression(a) for a in node.args]
    for k in node.keywords:
        value = expression(k.value)
        parts.append(f"**{value}" if k.arg is None else f"{k.arg}={value}")
    return f"{expression(node.func, _ATOM)}({', '.join(parts)})"


def _subscript(node, context):
    index = node.slice
    if index.__class__ is gast.Tuple and index.elts:
        inner = _items(index.elts)
    else:
        inner = expression(index)
    return f"{expression(node.value, _ATOM)}[{inner}]"


def _slice(node, context):
    lower = "" if node.lower is None else expression(node.lower)
    upper = "" if node.upper is None else expression(node.upper)
    if node.step is None:
        return f"{lower}:{upper}"
    return f"{lower}:{upper}:{expression(node.step)}"


def _items(elts):
    """Elements separated by commas; one element gets a trailing comma."""
    if len(elts) == 1:
        return expression(elts[0]) + ","
    return ", ".join([expression(e) for e in elts])


def _tuple(node, context):
    text = _items(node.elts)
    return f"({text})" if not node.elts or context > _TUPLE else text


def _list(node, context):
    return "[" + ", ".join([expression(e) for e in node.elts]) + "]"


def _dict(node, context):
    parts = [
        f"**{expression(v, _EXPR)}" if k is None else f"{expression(k)}: {expression(v)}"
        for k, v in zip(node.keys, node.values)
    ]
    return "{" + ", ".join(parts) + "}"


def _starred(node, context):
    return "*" + expression(node.value, _EXPR)


def _binary(node, context):
    symbol, own = _BINARY[node.op.__class__]
    if own == _POWER:  # right-associative
        left, right = expression(node.left, own + 1), expression(node.right, own)
    else:
        left, right = expression(node.left, own), expression(node.right, own + 1)
    text = f"{left} {symbol} {right}"
    return f"({text})" if context > own else text


def _unary(node, context):
    symbol, own = _UNARY[node.op.__class__]
    text = symbol + expression(node.operand, own)
    return f"({text})" if context > own else text


def _compare(node, context):
    parts = [expression(node.left, _CMP + 1)]
    for op, right in zip(node.ops, node.comparators):
        parts.append(_COMPARE[op.__class__])
        parts.append(expression(right, _CMP + 1))
    text = "".join(parts)
    return f"({text})" if context > _CMP else text


def _boolean(node, context):
    symbol, own = _BOOL[node.op.__class__]
    # each operand binds one step tighter than the one before, as gast.unparse has it
    text = symbol.join([expression(v, own + k) for k, v in enumerate(node.values, 1)])
    return f"({text})" if context > own else text


def _conditional(node, context):
    body, test = expression(node.body, _TEST + 1), expression(node.test, _TEST + 1)
    text = f"{body} if {test} else {expression(node.orelse, _TEST)}"
    return f"({text})" if context > _TEST else text


def _other(node, context):
    """Any other expression, by ``gast.unparse``; printed alone it binds at least as
    tightly as a conditional expression does."""
    text = gast.unparse(node).strip()
    return f"({text})" if context > _TEST else text


_EXPRESSIONS = {
    gast.Name: _name,
    gast.Constant: _constant,
    gast.Attribute: _attribute,
    gast.Call: _call,
    gast.Subscript: _subscript,
    gast.Slice: _slice,
    gast.Tuple: _tuple,
    gast.List: _list,
    gast.Dict: _dict,
    gast.Starred: _starred,
    gast.BinOp: _binary,
    gast.UnaryOp: _unary,
    gast.Compare: _compare,
    gast.BoolOp: _boolean,
    gast.IfExp: _conditional,
}


# -- statements --


def _block(stmts, indent, lines):
    for s in stmts:
        _statement(s, indent, lines)


def _statement(s, indent, lines):
    if lines.__class__ is _Lines:
        lineno = getattr(s, "lineno", None)
        if lineno is not None and lineno > 1:
            lines.origins[len(lines)] = lineno
    write = _STATEMENTS.get(s.__class__)
    if write is None or getattr(s, "type_comment", None) is not None:
        _statement_by_gast(s, indent, lines)
    else:
        write(s, indent, lines)


def _assign(s, indent, lines):
    targets = "".join([expression(t, _TUPLE) + " = " for t in s.targets])
    lines.append(f"{indent}{targets}{expression(s.value)}")


def _augmented(s, indent, lines):
    symbol = _BINARY[s.op.__class__][0]
    lines.append(f"{indent}{expression(s.target)} {symbol}= {expression(s.value)}")


def _expression_statement(s, indent, lines):
    lines.append(indent + expression(s.value, _YIELD))


def _return(s, indent, lines):
    value = "" if s.value is None else " " + expression(s.value)
    lines.append(f"{indent}return{value}")


def _keyword(word):
    return lambda s, indent, lines: lines.append(indent + word)


def _delete(s, indent, lines):
    lines.append(indent + "del " + ", ".join([expression(t) for t in s.targets]))


def _if(s, indent, lines):
    lines.append(f"{indent}if {expression(s.test)}:")
    _block(s.body, indent + "    ", lines)
    while len(s.orelse) == 1 and s.orelse[0].__class__ is gast.If:
        s = s.orelse[0]
        lines.append(f"{indent}elif {expression(s.test)}:")
        _block(s.body, indent + "    ", lines)
    _else(s.orelse, indent, lines)


def _for(s, indent, lines):
    target, iterated = expression(s.target, _TUPLE), expression(s.iter)
    lines.append(f"{indent}for {target} in {iterated}:")
    _block(s.body, indent + "    ", lines)
    _else(s.orelse, indent, lines)


def _while(s, indent, lines):
    lines.append(f"{indent}while {expression(s.test)}:")
    _block(s.body, indent + "    ", lines)
    _else(s.orelse, indent, lines)


def _try(s, indent, lines):
    lines.append(f"{indent}try:")
    _block(s.body, indent + "    ", lines)
    for h in s.handlers:
        caught = "" if h.type is None else " " + expression(h.type)
        held = "" if h.name is None else " as " + expression(h.name)
        lines.append(f"{indent}except{caught}{held}:")
        _block(h.body, indent + "    ", lines)
    _else(s.orelse, indent, lines)
    if s.finalbody:
        lines.append(f"{indent}finally:")
        _block(s.finalbody, indent + "    ", lines)


def _with(s, indent, lines):
    items = ", ".join(
        expression(i.context_expr)
        + ("" if i.optional_vars is None else " as " + expression(i.optional_vars))
        for i in s.items
    )
    lines.append(f"{indent}with {items}:")
    _block(s.body, indent + "    ", lines)


def _else(orelse, indent, lines):
    if orelse:
        lines.append(f"{indent}else:")
        _block(orelse, indent + "    ", lines)


def _function(s, indent, lines):
    if s.decorator_list or s.returns is not None or getattr(s, "type_params", None):
        _statement_by_gast(s, indent, lines)
        return
    lines.append(f"{indent}def {s.name}({_arguments(s.args)}):")
    _block(s.body, indent + "    ", lines)


def _statement_by_gast(s, indent, lines):
    _give_lines([s])
    text = gast.unparse(s).strip("\n")
    lines.extend(indent + line if line else line for line in text.split("\n"))


def _give_lines(stmts):
    """A line number on every statement: ``gast.unparse`` looks one up for type
    comments (of which there are none)."""
    for stmt in stmts:
        if getattr(stmt, "lineno", None) is None:
            stmt.lineno = 1
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if inner.__class__ is list:
                _give_lines(inner)


def _arguments(a):
    parts = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    for k, (arg, default) in enumerate(zip(positional, defaults), 1):
        parts.append(expression(arg) + ("" if default is None else "=" + expression(default)))
        if k == len(a.posonlyargs):
            parts.append("/")
    if a.vararg is not None:
        parts.append("*" + expression(a.vararg))
    elif a.kwonlyargs:
        parts.append("*")
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        parts.append(expression(arg) + ("" if default is None else "=" + expression(default)))
    if a.kwarg is not None:
        parts.append("**" + expression(a.kwarg))
    return ", ".join(parts)


_STATEMENTS = {
    gast.Assign: _assign,
    gast.AugAssign: _augmented,
    gast.Expr: _expression_statement,
    gast.Return: _return,
    gast.Pass: _keyword("pass"),
    gast.Break: _keyword("break"),
    gast.Continue: _keyword("continue"),
    gast.Delete: _delete,
    gast.If: _if,
    gast.For: _for,
    gast.While: _while,
    gast.Try: _try,
    gast.With: _with,
    gast.FunctionDef: _function,
}
