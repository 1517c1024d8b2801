"""``gast.parse``, with its conversion from ``ast`` made cheaper.

gast converts each ``ast`` node through ``NodeTransformer.visit``: a method looked up
by name, then ``hasattr`` and ``getattr`` of the ``gast`` module, of every field and
attribute, per node; reading a function of a thousand statements spent more there
than Python spent parsing it, and the rule templates a small gradient reads on first use
cost it 2 to 5 ms of its first. ``parse`` builds the same tree (the same classes,
fields, locations, a new context object per name) with what gast looks up per node
looked up once per class. gast's own methods for the nodes it converts specially
(``Name``, ``arg``, ``ExceptHandler``, ``FunctionDef`` on the Python versions that need
it) still convert those, calling back into this converter for their children.
"""

import ast

import gast
from gast.ast3 import Ast3ToGAst

_ABSENT = object()
_new = ast.AST.__new__


def parse(source):
    """The gast ``Module`` of ``source``, as ``gast.parse(source)`` returns it."""
    converter = _Converter()
    try:
        return converter.visit(ast.parse(source))
    finally:
        # its table holds its own bound methods, and functions closing over them: a
        # reference cycle per parse (the compiler leaves none: gcpause)
        converter._visitors.clear()


class _Converter(Ast3ToGAst):
    def __init__(self):
        super().__init__()
        self._visitors = {}  # ast class -> the function converting its nodes

    def visit(self, node):
        visitor = self._visitors.get(node.__class__)
        if visitor is None:
            visitor = self._visitors[node.__class__] = self._visitor(node.__class__)
        return visitor(node)

    def _visitor(self, cls):
        if cls is ast.Name:
            return self._name
        special = getattr(self, "visit_" + cls.__name__, None)
        if special is not None and not _generic_in_ast(cls):
            return special
        return self._generic(cls)

    def _name(self, node):
        """gast's ``visit_Name`` (annotation and type comment None, its location
        copied), without ``copy_location``'s checks, which a parsed name passes."""
        new = _new(gast.Name)
        new.__dict__.update(
            id=node.id,
            ctx=self.visit(node.ctx),
            annotation=None,
            type_comment=None,
            lineno=node.lineno,
            col_offset=node.col_offset,
            end_lineno=node.end_lineno,
            end_col_offset=node.end_col_offset,
        )
        return new

    def generic_visit(self, node):
        return self._generic(node.__class__)(node)

    def _visit(self, node):
        if isinstance(node, ast.AST):
            return self.visit(node)
        if isinstance(node, list):
            return [self._visit(n) for n in node]
        return node

    def _generic(self, cls):
        """What ``AstToGAst.generic_visit`` does to a node of ``cls``, its lookups done."""
        target = getattr(gast, cls.__name__, None)
        if target is None:  # not a node of gast's: dropped, as gast drops it
            return _dropped
        fields, attributes, visit, ast_type = cls._fields, cls._attributes, self.visit, ast.AST
        if not fields and not attributes:  # a context or an operator: a new one per node
            return lambda node: _new(target)

        def generic(node):
            values = {}
            for field in fields:
                value = getattr(node, field, _ABSENT)
                if value.__class__ is list:  # of nodes, or of names (Global), never of lists
                    values[field] = [visit(v) if isinstance(v, ast_type) else v for v in value]
                elif isinstance(value, ast_type):
                    values[field] = visit(value)
                elif value is not _ABSENT:
                    values[field] = value
            for attr in attributes:
                value = getattr(node, attr, _ABSENT)
                if value is not _ABSENT:
                    values[attr] = value
            new = _new(target)  # gast's __init__ only sets the fields it is given
            new.__dict__.update(values)
            return new

        return generic


def _generic_in_ast(cls):
    """Whether the ``visit_`` method ``NodeVisitor`` finds for ``cls`` is ``ast``'s own
    (``visit_Constant``, which only routes to the deprecated ``visit_Num`` and the like
    that gast does not define on this Python) rather than one of gast's."""
    method = getattr(Ast3ToGAst, "visit_" + cls.__name__)
    return getattr(method, "__module__", None) == "ast"


def _dropped(node):
    return None
