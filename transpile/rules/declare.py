"""Rule declarations: what the passes may assume of each function, written beside its rule.

A template is declared with the ``rule`` decorator, next to its one line::

    @rule(np.tanh, math.tanh, shape=ELEMENTWISE)
    def tanh(y, x):
        d[x] += d[y] * (1.0 - y * y)

``nondiff(...)`` declares a function that ends differentiation (``np.argmax``) and
``no_rule(...)`` one the passes know but cannot differentiate yet (an active use is
an error, as for any unknown function). Each makes a frozen ``Declaration``;
nothing is registered on import: ``rules.build_registry`` reads the family modules.

Runtime helpers (``transpile_runtime.ops``) declare their own properties with
``transpile_runtime.ops.helper``; ``helper_of`` reads them here.
"""

import enum
from dataclasses import dataclass

import gast

from transpile_runtime import ops


class Shape(enum.Enum):
    """How a call's result shape follows from its arguments. Data arguments may be
    arrays; static ones (axes, shapes, counts) must be constants, shapes or integer
    parameters for a shape-specialized variant (``fixed_shapes``)."""

    ELEMENTWISE = (
        "every positional argument is data; the result has their broadcast shape and "
        "the dtype they promote to (a predicate with a bool result is ALL_DATA)"
    )
    ALL_DATA = "every positional argument is data; their shapes fix the result's shape"
    FIRST_DATA = "the first positional argument is data, the others static (axis, shape)"
    TWO_DATA = "the first two positional arguments are data, the others static"
    SEQUENCE_FIRST = "a list or tuple of arrays first (data), the others static"
    SUBSCRIPTS_FIRST = "static einsum subscripts first, then data operands"
    FILL = "a static shape first, then data (np.full(shape, value), np.zeros(shape))"
    STATIC = "every argument static: their values fix the result's shape (np.eye(n))"
    STATIC_RESULT = "every argument is data; the result is a shape or a size, static itself"
    VARIES = "the result's shape depends on values: a body calling it is never specialized"


ELEMENTWISE = Shape.ELEMENTWISE
ALL_DATA = Shape.ALL_DATA
FIRST_DATA = Shape.FIRST_DATA
TWO_DATA = Shape.TWO_DATA
SEQUENCE_FIRST = Shape.SEQUENCE_FIRST
SUBSCRIPTS_FIRST = Shape.SUBSCRIPTS_FIRST
FILL = Shape.FILL
STATIC = Shape.STATIC
STATIC_RESULT = Shape.STATIC_RESULT
VARIES = Shape.VARIES


class Kind(enum.Enum):
    RULE = "differentiated by the template the declaration is attached to"
    NONDIFF = "a constant to differentiation: it ends variedness"
    NO_RULE = "known to the passes, not differentiable yet: an active use is an error"


@dataclass(frozen=True)
class Declaration:
    """The properties of one rule (or of a function without one), for the passes.

    objects: the callables it covers (a numpy function, a builtin, ``math.exp``);
    methods, attributes: the names of the methods (``x.sum()``) and attributes
    (``x.T``) it covers; operators: the gast operator classes (``gast.Add``), on
    lists and tuples (concatenation, repetition) where ``sequences``.
    shape: how the result's shape follows from the arguments (``Shape``).
    reduces: called with the array alone, it reduces to a scalar (``np.sum(x)``).
    fresh: an allocation or a copy, whose result the user's function may write into
    (``np.zeros``, ``np.copy``, ``x.copy()``; other new arrays, such as ufunc results,
    are not declared so: ``reverse`` refuses writes into them).
    passes: the result may be the first argument itself or a writable view of it
    (``np.reshape``, ``x.T``). shares: the result may share memory with an argument
    in another way, or be read-only (``np.broadcast_to``, the builtin ``max``); the
    result of a call declared neither is a new value.
    sequence_result: the result is, or may be, a list or tuple of arrays (``np.split``,
    ``scipy.linalg.cho_factor``, ``np.atleast_1d(a, b)``), so its adjoint is one too,
    added entry by entry.
    copy_keyword: a ``copy=`` keyword other than ``True`` lets the result be the first
    argument itself (``np.array(x, copy=False)``, ``x.astype(t, copy=False)``); without
    one, the call is as declared otherwise.
    pointwise: each entry of the result depends only on the entries of the (broadcast)
    arguments at its position, as for an elementwise function whose result's dtype
    is its own (``scipy.stats.norm.logpdf``): its reverse lines, read forwards, are its
    forward lines (``Template.forward``), as an ``ELEMENTWISE`` rule's are.
    complex_values: it takes complex values apart or makes them (``np.real``,
    ``np.fft.fft``): a function that calls it may compute with complex numbers
    (``complex_use``).
    """

    kind: Kind
    objects: tuple
    shape: Shape
    methods: tuple = ()
    attributes: tuple = ()
    operators: tuple = ()
    sequences: bool = False
    reduces: bool = False
    fresh: bool = False
    passes: bool = False
    shares: bool = False
    copy_keyword: bool = False
    sequence_result: bool = False
    pointwise: bool = False
    complex_values: bool = False

    @property
    def is_pointwise(self) -> bool:
        return self.pointwise or self.shape is Shape.ELEMENTWISE

    def __post_init__(self):
        if not isinstance(self.shape, Shape):
            raise TypeError(f"shape must be a declare.Shape, not {self.shape!r}")
        if self.fresh + self.passes + self.shares > 1:
            raise ValueError("at most one of fresh, passes and shares")


class Memory(enum.Enum):
    """What memory a call's result has, as its declaration says: the one answer that
    every pass asking what shares memory reads (``memory``)."""

    FRESH = "a new array the function may write into: an allocation or a copy"
    NEW = "a new value, not declared writable (a ufunc's result, a reduction)"
    FIRST = "the first argument itself, or a view of it"
    DATA = "any data argument itself, or a view of it (np.atleast_1d(a, b))"
    ANY = "memory shared with any argument, maybe read-only; or not declared"


def memory(declaration, keywords=()) -> Memory:
    """The ``Memory`` of a call to what ``declaration`` declares (a ``Declaration``, an
    ``ops`` helper's, or None: not declared), with the call's gast ``keywords`` (a
    ``copy=`` among them may keep the argument)."""
    if declaration is None or declaration.shares:
        return Memory.ANY
    if declaration.passes:
        every = getattr(declaration, "shape", None) is Shape.ALL_DATA
        return Memory.DATA if every else Memory.FIRST
    if getattr(declaration, "copy_keyword", False) and _copy_declined(keywords):
        return Memory.FIRST
    return Memory.FRESH if declaration.fresh else Memory.NEW


def _copy_declined(keywords):
    for k in keywords:
        if k.arg == "copy":
            return not (isinstance(k.value, gast.Constant) and k.value.value is True)
    return False


def _declaration(kind, objects, shape, **properties):
    for key in ("methods", "attributes", "operators"):
        properties[key] = tuple(properties.get(key, ()))
    return Declaration(kind, tuple(objects), shape, **properties)


def rule(*objects, shape, **properties):
    """Declare the template below as the rule of ``objects`` (and of the methods,
    attributes and operators named in ``properties``); decorators may be stacked
    where objects sharing one template differ in a property."""
    declaration = _declaration(Kind.RULE, objects, shape, **properties)

    def attach(template):
        template.declarations = (declaration, *getattr(template, "declarations", ()))
        return template

    return attach


def nondiff(*objects, shape, **properties) -> Declaration:
    """Declare ``objects`` (and methods, attributes) non-differentiable."""
    return _declaration(Kind.NONDIFF, objects, shape, **properties)


def no_rule(*objects, shape, **properties) -> Declaration:
    """Declare what the passes may assume of ``objects``, which have no rule yet."""
    return _declaration(Kind.NO_RULE, objects, shape, **properties)


# the compiler's entry points ("vjp", "jvp") that a template binds into generated code,
# registered by ``api`` when it is imported: a rule family importing ``api`` would point
# up, from the rules to the compiler built on them
ENTRIES = {}


def binds(**objects):
    """Let the template below read ``objects`` by these names (odeint's rule reads
    ``vjp``, a callable of the compiler that no runtime module may import): each is
    bound into the generated code's namespace under a name chosen against the user's."""

    def attach(template):
        template.binds = {**getattr(template, "binds", {}), **objects}
        return template

    return attach


def helper_of(name: str):
    """The declaration (``transpile_runtime.ops.Helper``) of the ``ops`` helper ``name``, or None."""
    return getattr(getattr(ops, name, None), "declared", None)
