"""What the stages pass each other: the function being built, its context, markers.

``pipeline.STAGES`` runs ``stage(fn, ctx) -> fn`` for each stage in turn. ``Context``
is fixed for one transpilation (what to differentiate, and how); ``Function``
accumulates what the stages make (the normalized tree, the analyses' facts, the
primal and adjoint sweeps, the functions to compile). Analyses keep their facts in
tables of their own; the few facts that must travel *on* nodes through rewrites
use ``annotate``/``annotation`` with an ``Annotation`` key, nothing else.

The raw adjoint uses three markers that later stages resolve:

    dx = __zero__(x)        ZERO: dx is zero here (folded away, or made an array)
    __restore__(x)          RESTORE: x was overwritten in a branch or loop; if the
                            adjoint reads it, the tape restores it here
    "__comment__ grad of: ..."  COMMENT: printed as a ``# grad of: <line>`` comment
"""

import enum
from dataclasses import dataclass, field

ZERO = "__zero__"
RESTORE = "__restore__"
COMMENT = "__comment__ "
GRAD_HOOK = "__grad_hook__"  # __grad_hook__(x, "dx", "<block>"): insert_grad_of's block


class Annotation(enum.Enum):
    """Facts carried on nodes; the value documents each."""

    SITE = "the number of a shape-helper call, to match it with what a probe recorded"
    NAME = "the name a constant stood for before the specializer wrote the number itself"
    ARRAY = "(shape, dtype) of a statement's numpy result, for buffer reuse"
    CONSTANT = "a lambda whose result only orders (the key sorted() is desugared with)"


_PREFIX = "_transpile_"


def annotate(node, key: Annotation, value):
    setattr(node, _PREFIX + key.name, value)


def annotation(node, key: Annotation, default=None):
    return getattr(node, _PREFIX + key.name, default)


def has_annotation(node, key: Annotation) -> bool:
    return hasattr(node, _PREFIX + key.name)


def strip_annotations(node):
    for key in Annotation:
        node.__dict__.pop(_PREFIX + key.name, None)


@dataclass(frozen=True)
class Context:
    """What one transpilation is asked to make; fixed while the stages run."""

    func: object  # the user's function
    wrt: tuple  # indices of the differentiated parameters
    mode: str  # grad, value_and_grad, vjp, or split (forward + adjoint of a callee)
    as_tuple: bool = False  # a tuple of gradients even for one wrt
    sequences: frozenset = frozenset()  # parameters known to hold lists or tuples
    functions: tuple = ()  # (parameter, the function it holds): bound_functions
    varargs: object = None  # how *args (a count) or **kwargs (varargs.Spread) are spread
    stack: tuple = ()  # recursion.Frame of the transpilations in progress, this one last
    transpile: object = None  # pipeline.transpile, for the user functions it calls
    classes: tuple = ()  # (parameter, object_args.Layout): user objects passed (objects)
    fuse: bool = False  # shape variants evaluate elementwise chains with numexpr (fuse)
    has_aux: bool = False  # the function returns (value, aux): value is differentiated
    checkpoint: object = None  # snapshots for every loop of the body; False: no markers


@dataclass
class Generated:
    """A compiled function and its source (for split mode, the forward function, with
    the adjoint function as ``extra``)."""

    function: object
    source: str
    name: str
    callees: list = field(default_factory=list)  # Generated of the callees' fwd/bwd
    extra: object = None
    code_reads: tuple = ()  # assumptions.Read that must still hold, callees' included
    data_reads: tuple = ()  # assumptions.Read of global data the function reads
    cuts: tuple = ()  # cuts.Unreached: wrt parameters with no path to the output
    recipe: object = None  # pipeline.Recipe: how to make it again (explain, export)


@dataclass
class Output:
    """One function to compile: its name, parameters (a gast ``arguments``) and body."""

    name: str
    args: object
    body: list
    anf: list = None  # the body one operation per line, before ``inline`` compacts it


@dataclass
class Function:
    """The function being built. Each stage reads what earlier stages made and adds."""

    parsed: object = None  # parse.Parsed: the user's source, and what its names denote
    namer: object = None  # naming.Namer: every new name comes from here
    names: dict = field(default_factory=dict)  # np, ops, Tape, tape -> names in the code
    namespace: dict = field(default_factory=dict)  # generated name -> the object it binds
    tree: object = None  # the user's FunctionDef; normalized from the "anf" stage on
    kinds: object = None  # kinds.Kinds
    activity: object = None  # activity.Activity
    emitted: object = None  # reverse.Emitted: primal sweep, raw adjoint, restores
    adjoint_names: set = field(default_factory=set)  # names of adjoints
    containers: set = field(default_factory=set)  # adjoints that may hold lists or dicts
    d_result: str = None  # the adjoint of the returned value
    whole_result: str = None  # has_aux: the (value, aux) pair returned (auxiliary)
    extra_args: list = field(default_factory=list)  # dout, for vjp
    primal: list = field(default_factory=list)  # the primal sweep
    adjoint: list = field(default_factory=list)  # the adjoint sweep, ending in its return
    outputs: list = field(default_factory=list)  # Output: what the back end compiles
    callees: list = field(default_factory=list)  # Generated of the user functions called
    static: frozenset = None  # parameters that must be ints in shape variants; None: no variants
    callee_names: dict = field(default_factory=dict)  # id(Generated) -> (fwd, bwd) names
    cuts: tuple = ()  # cuts.Unreached of the wrt parameters with no path to the output
    objects: dict = field(default_factory=dict)  # local name -> Layout of its object (objects)
    generated: object = None  # pipeline.Generated, once compiled

    @property
    def params(self):
        return [a.id for a in self.tree.args.args]
