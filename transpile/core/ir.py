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
import threading
from dataclasses import dataclass, field

ZERO = "__zero__"
RESTORE = "__restore__"
COMMENT = "__comment__ "
GRAD_HOOK = "__grad_hook__"  # __grad_hook__(x, "dx", "<block>"): insert_grad_of's block
MISSING = object()  # what a name resolves to when it denotes nothing (a local, unknown)
# try/except and with, lowered (``exceptions``) and printed back (``regions``):
TRY = "__try__"  # caught = __try__(k, E1, ...): the branch after it is try block k
CAUGHT = "__exception__"  # e = __exception__(k): what an except clause of try k caught
WITH = "__with__"  # [x =] __with__(k, cm): region k runs inside ``with cm [as x]``
REGION = "__region__"  # __region__(k): region k is a try block whose finally clause ...
FINALLY = "__finally__"  # __finally__(k): ... starts here
END = "__end__"  # __end__(k): region k ends here


class Annotation(enum.Enum):
    """Facts carried on nodes; the value documents each."""

    SITE = "the number of a shape-helper call, to match it with what a probe recorded"
    NAME = "the name a constant stood for before the specializer wrote the number itself"
    ARRAY = "(shape, dtype) of a statement's numpy result, for buffer reuse"
    CONSTANT = "a lambda whose result only orders (the key sorted() is desugared with)"


_PREFIX = "_transpile_"


# each key's attribute name, made once: the passes ask for annotations per node, and
# an enum member's ``name`` is a Python-level property
for _key in Annotation:
    _key.attribute = _PREFIX + _key.name
_ATTRIBUTES = tuple(key.attribute for key in Annotation)


def annotate(node, key: Annotation, value):
    setattr(node, key.attribute, value)


def annotation(node, key: Annotation, default=None):
    return getattr(node, key.attribute, default)


def has_annotation(node, key: Annotation) -> bool:
    return hasattr(node, key.attribute)


def strip_annotations(node):
    fields = node.__dict__
    for attribute in _ATTRIBUTES:
        fields.pop(attribute, None)


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
    variant_stages: tuple = ()  # pipeline.VARIANT_STAGES, run by the entry (dispatch)
    # a callee whose caller followed its in-place updates of its parameters (the
    # caller's own arrays, read no more there): ``inplace`` lets it make them
    updates_followed: bool = False
    checkpoint: object = None  # snapshots for every loop of the body; False: no markers
    # every output made as the stages run (a run stopped after a stage: --dump, explain,
    # export read them); else a gradient with shape variants is compacted, printed and
    # compiled when first needed (``inline``)
    eager: bool = False


@dataclass
class Generated:
    """A compiled function and its source (for split mode, the forward function, with
    the adjoint function as ``extra``). A gradient with shape variants is printed when
    its source is first read, and compiled when its entry first needs it (``inline``)."""

    function: object
    text: str  # its source; None until ``source`` is first read (then made by ``make``)
    name: str
    callees: list = field(default_factory=list)  # Generated of the callees' fwd/bwd
    extra: object = None
    code_reads: tuple = ()  # assumptions.Read that must still hold, callees' included
    data_reads: tuple = ()  # assumptions.Read of global data the function reads
    cuts: tuple = ()  # cuts.Unreached: wrt parameters with no path to the output
    recipe: object = None  # pipeline.Recipe: how to make it again (explain, export)
    # () -> the function, where emit left compiling it to the entry (``function`` None)
    compile: object = None
    make: object = None  # () -> the source, where ``text`` is None

    @property
    def source(self) -> str:
        if self.text is None:
            with _MAKING:  # (made once: two threads reading it get the same text)
                if self.text is None:
                    self.text = self.make()
        return self.text


_MAKING = threading.RLock()


@dataclass
class Output:
    """One function to compile: its name, parameters (a gast ``arguments``) and body."""

    name: str
    args: object
    body: list
    anf: list = None  # the body one operation per line, before ``inline`` compacts it
    # () -> the body compacted, where ``inline`` left that to the first read of the
    # source (``body`` is then None): a gradient with shape variants runs them instead
    compact: object = None


def fact(default, made_by: str, read_by: str, what: str):
    """A field of ``Function``: its default (a value, or a type made fresh per
    function), the stage that makes it, the stages that rely on it, what it is."""
    meta = {"made_by": made_by, "read_by": read_by, "what": what}
    if isinstance(default, type):
        return field(default_factory=default, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Function:
    """The function being built. Each stage reads what earlier stages made and adds.

    Each fact says which stage makes it (``made_by``; a later stage may rewrite it in
    place, as the economy stages rewrite ``adjoint``) and which stages rely on it
    (``read_by``); ``tests/test_stages.py`` checks that each is made where it says."""

    parsed: object = fact(
        None,
        "parse",
        "every later stage",
        "parse.Parsed: the user's source, and what its names denote",
    )
    namer: object = fact(
        None,
        "naming",
        "every stage that makes a name",
        "naming.Namer: every new name comes from here",
    )
    names: dict = fact(
        dict,
        "naming",
        "raw, tangents, emit, dispatch",
        "np, ops, Tape, tape -> their names in the generated code",
    )
    namespace: dict = fact(
        dict,
        "naming",
        "emit (callees, objects and tangents add)",
        "generated name -> the object it binds",
    )
    tree: object = fact(
        None,
        "normalize",
        "every analysis, raw, tangents",
        "the user's FunctionDef in A-normal form",
    )
    augmented: dict = fact(
        dict,
        "normalize",
        "inplace",
        "id(the statement an augmented assignment became, that does its update) -> (that "
        "statement, the assignment as written)",
    )
    kinds: object = fact(
        None,
        "kinds",
        "activity, raw, seeding, shapes, tangents",
        "kinds.Kinds: which names hold lists or tuples",
    )
    activity: object = fact(
        None,
        "activity",
        "cuts, aliasing, raw, record, tangents",
        "activity.Activity: varied and useful names",
    )
    emitted: object = fact(
        None,
        "raw",
        "seeding, zeros, record, dispatch",
        "raw.Emitted: primal sweep, raw adjoint, restores",
    )
    adjoint_names: set = fact(set, "seeding", "zeros, copies, dispatch", "names of adjoints")
    containers: set = fact(set, "seeding", "zeros", "adjoints that may hold lists or dicts")
    d_result: str = fact(None, "seeding", "zeros, assemble", "the adjoint of the returned value")
    whole_result: str = fact(
        None, "auxiliary", "seeding", "has_aux: the (value, aux) pair returned"
    )
    extra_args: list = fact(list, "seeding", "assemble", "dout, for vjp")
    primal: list = fact(list, "seeding", "record, assemble", "the primal sweep")
    adjoint: list = fact(
        list,
        "seeding",
        "zeros, copies, signs, record, assemble",
        "the adjoint sweep, ending in its return",
    )
    adjoint_index: object = fact(
        None,
        "copies",
        "signs",
        "copies.Written: the def-use index of adjoint as copies left it (signs uses it up)",
    )
    outputs: list = fact(list, "assemble", "deadcode to emit", "Output: the functions to compile")
    callees: list = fact(list, "raw", "emit", "Generated of the user functions called")
    static: frozenset = fact(
        None,
        "fixed_shapes",
        "dispatch",
        "parameters that must be ints in shape variants; None: no variants",
    )
    callee_names: dict = fact(
        dict, "raw", "emit", "id(Generated) -> the (fwd, bwd) names it is called by"
    )
    cuts: tuple = fact(
        tuple,
        "cuts",
        "api (CutGradientWarning), explain",
        "cuts.Unreached: wrt parameters with no path to the output",
    )
    objects: dict = fact(
        dict, "objects", "raw, tangents", "local name -> object_args.Layout of the object it holds"
    )
    updates_followed: frozenset = fact(
        frozenset,
        "inplace",
        "callees, tangents",
        "the user functions called whose in-place updates of their parameters inplace "
        "followed here: their transpilations may make them",
    )
    inlined: tuple = fact(
        tuple,
        "helpers",
        "emit",
        "assumptions.Read: the helpers inlined, by the names called, and what they read",
    )
    generated: object = fact(
        None, "emit", "dispatch, pipeline", "ir.Generated: the compiled function and its source"
    )

    @property
    def params(self):
        return [a.id for a in self.tree.args.args]


@dataclass
class Variant:
    """A shape variant of a gradient being built by ``pipeline.VARIANT_STAGES``: its
    body, one operation per line until ``compact``, then its source and function."""

    body: list
    fused: dict = field(default_factory=dict)  # names fused code reads, bound into it
    source: str = None
    function: object = None


@dataclass(frozen=True)
class VariantContext:
    """What one shape variant is made for: the entry's ``dispatch.EntrySpec``, the
    signature and what the probe observed of it (``probe``)."""

    spec: object  # dispatch.EntrySpec
    params: tuple  # the gradient's parameters
    metas: dict  # parameter -> probe.meta of its argument
    sites: dict  # helper call site -> the metas of its arguments
    seen: dict  # assignment -> what its values were seen to be
    label: str  # how compiled code and errors name the variant
    origins: object  # lines -> (the user's file, {generated line: user line})
