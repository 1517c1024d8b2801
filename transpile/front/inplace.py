"""Refuses augmented assignment that numpy would apply to an array another name sees.

The transpiler treats ``z -= 1.0`` as ``z = z - 1.0``: a new value bound to ``z``.
numpy instead updates ``z``'s array in place, so every other way of reaching that
array changes too: ``y`` after ``z = y``, a view ``r = z[0]``, a list that holds it,
the caller's array when ``z`` is a parameter of a helper. Where such a difference
could be seen, ``check`` raises a located ``TranspileError`` instead of letting the
derivative be computed for a program numpy does not run.

How: a forward, flow-sensitive may-points-to analysis of the function in A-normal
form (``stage``, right after ``normalize``, which remembers which statement does each
augmented assignment's update: ``fn.augmented``; messages quote the assignment as
written and name temporaries by what they hold), or of a function as written (a
helper before ``helpers`` inlines it, and the user functions a call analyses:
``summary``). Every value is a set of abstract objects: a parameter, a
module-level value, or the expression that allocated it (``x * 2.0``, ``np.zeros``);
an empty set is a value no statement can update in place (numbers, strings, tuples of
them, shapes). ``a = b`` and views (``b[i]``, ``b.T``, ``for r in b``) share ``b``'s
objects; what a library call or an array's method hands back is what its declaration
says (``rules.declare.memory``, the model every pass reads: ``np.ravel(b)``,
``b.reshape(...)``, ``b.astype(t, copy=False)`` may be ``b``); containers record what
they hold. ``n op= v`` on a name whose objects are ``O`` leaves ``n`` with ``O`` (in
numpy and, as a new value, in the derivative) and turns every *other* reference to
``O`` stale; reading a stale reference afterwards is refused. Loops are iterated to a
fixed point, so a read earlier in the body sees an update from the previous
iteration. An allocation inside a loop makes a new object each iteration
(the previous one is kept apart), so a fresh array updated in place each iteration
is not confused with last iteration's array.

Also refused: updating in place a module-level or closure array (it would persist
across calls), and, in a helper (``is_helper=True``: a user function the
differentiated function calls), updating the caller's array through a parameter.
A top-level parameter updated in place with no other name sharing it is allowed: the
function's value is the same as with rebinding.

A value from outside (a parameter, a module-level value) may be an array or a list:
its items are a separate object ``("items", value)``, so ``x + b`` of two parameters
holds their items (list concatenation) without being taken for ``x`` itself.

What is assumed rather than proved: parameters of the top-level function do not share
memory with each other. A parameter is never provably a number, so ``t = s;
t += 1.0`` with a float parameter ``s`` read afterwards is refused (``s`` might be an
array). The analysis is per function, not per path: an alias on one branch counts on
all. Updates by other means than augmented assignment (``np.add(a, b, out=a)``,
``a.sort()``, ``a.fill(0)``) are not followed here.
"""

import builtins
import dis
import inspect
from dataclasses import dataclass

import gast
import numpy as np

from transpile.core import printer
from transpile.core.errors import at
from transpile.core.ir import MISSING
from transpile.core.nodes import clone, descendants, walked_fields
from transpile.front import parse
from transpile.rules import registry
from transpile.rules.declare import Memory, memory
from transpile_runtime import ops, stop_gradient

EMPTY = frozenset()

_OPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.FloorDiv: "//",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.MatMult: "@",
    gast.BitAnd: "&",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.LShift: "<<",
    gast.RShift: ">>",
}

_NUMPY_SCALAR = frozenset(
    [
        "shape",
        "ndim",
        "size",
        "isscalar",
        "iscomplexobj",
        "isrealobj",
        "result_type",
        "can_cast",
        "allclose",
        "array_equal",
        "array_equiv",
        "may_share_memory",
        "shares_memory",
    ]
)
_LIBRARY_ROOTS = frozenset(("numpy", "cupy", "cupyx", "scipy", "dask", "jax"))

# methods of containers and generators (the rules declare arrays' methods, and
# ``memory`` reads them): those that hand back what the object holds ...
_CONTAINER_VIEWS = frozenset(
    [
        "__array__",
        "__getitem__",
        "get",
        "pop",
        "popitem",
        "setdefault",
        "values",
        "items",
        "keys",
        "choice",
    ]
)
_SCALAR_METHODS = frozenset(["item", "count", "index", "__len__"])
# ... and those that make a new value, keeping no reference to their arguments: random
# draws, and array methods without a rule
_UNDECLARED_NEW = frozenset(
    [
        "round",
        "compress",
        "searchsorted",
        "ptp",
        "tolist",
        "tobytes",
        "nansum",
        "nanmean",
        "normal",
        "standard_normal",
        "uniform",
        "random",
        "integers",
        "permutation",
        "binomial",
        "poisson",
        "exponential",
        "gamma",
        "beta",
        "rand",
        "randn",
        "randint",
        "random_sample",
        "multivariate_normal",
        "lognormal",
        "laplace",
        "logistic",
        "gumbel",
        "standard_t",
        "chisquare",
        "dirichlet",
        "multinomial",
    ]
)
# methods that store their arguments into the object (and return None)
_STORE_METHODS = frozenset(["append", "extend", "insert", "add", "update", "__setitem__"])

_SCALAR_BUILTINS = frozenset(
    [
        "float",
        "int",
        "bool",
        "len",
        "str",
        "repr",
        "isinstance",
        "issubclass",
        "hasattr",
        "id",
        "hash",
        "callable",
        "print",
        "range",
        "complex",
        "ord",
        "chr",
        "format",
        "any",
        "all",
        "type",
    ]
)
_ARITH_BUILTINS = frozenset(["abs", "round", "pow", "divmod", "sum"])
_PICK_BUILTINS = frozenset(["min", "max", "next", "getattr"])
_CONTAINER_BUILTINS = frozenset(
    [
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "zip",
        "enumerate",
        "reversed",
        "sorted",
        "iter",
        "map",
        "filter",
    ]
)


def stage(fn, ctx):
    """Refuse an in-place update another name would see, on the A-normal form."""
    called = ctx.mode in ("split", "tangent")
    normalized = Normalized(fn.tree, fn.augmented, fn.namer)
    helper = called and not ctx.updates_followed
    fn.updates_followed = check(fn.parsed, helper, normalized=normalized)
    return fn


@dataclass(frozen=True)
class Normalized:
    """The function in A-normal form, as ``normalize`` left it: ``augmented`` maps
    id(the statement that does an augmented assignment's update) to (that statement,
    the assignment as written); ``namer`` knows the temporaries and versions, which messages show as
    the user wrote them."""

    tree: object
    augmented: dict
    namer: object


def check(parsed, is_helper: bool, nodes=None, normalized=None) -> frozenset:
    """Raise TranspileError for an augmented assignment whose in-place update is seen;
    return the user functions called whose updates of their parameters were followed
    here (a call updating the function's own array, read no more afterwards).

    The function read is ``parsed.tree`` as written (a helper before it is inlined),
    or ``normalized``, its A-normal form. With ``is_helper``, an update of an array
    the caller passed in is refused too. ``nodes``: the ``descendants`` of the tree
    read, where the caller has them.
    """
    tree = parsed.tree if normalized is None else normalized.tree
    if nodes is None:
        nodes = descendants(tree)
    if normalized is not None:
        updates = bool(normalized.augmented)
    else:
        updates = any(isinstance(node, gast.AugAssign) for node in nodes)
    if not updates and not _calls_updating(parsed, nodes):
        return frozenset()  # nothing updates in place here or in what it calls
    analysis = _Analysis(parsed, is_helper, True, {}, normalized=normalized, nodes=nodes)
    analysis.run()
    return frozenset(analysis.followed)


def _calls_updating(parsed, nodes):
    """Whether a function of the user's that ``nodes`` call has an augmented assignment
    (read from its code: ``+=`` compiles to an in-place operation)."""
    for node in nodes:
        if isinstance(node, gast.Call):
            func = parsed.resolve(node.func)
            if inspect.isfunction(func) and _library(func) is None and _updates(func.__code__):
                return True
    return False


def _updates(code):
    return any(
        i.opname == "BINARY_OP" and i.argrepr.endswith("=") for i in dis.get_instructions(code)
    )


class _State:
    """Name -> objects, and object -> objects it holds (list items, dict values)."""

    __slots__ = ("env", "held")

    def __init__(self, env, held):
        self.env = env
        self.held = held

    def copy(self):
        return _State(dict(self.env), dict(self.held))

    def __eq__(self, other):
        return self.env == other.env and self.held == other.held


def _join(states):
    states = [s for s in states if s is not None]
    if not states:
        return None
    out = states[0].copy()
    for s in states[1:]:
        for table, more in ((out.env, s.env), (out.held, s.held)):
            for key, objs in more.items():
                table[key] = table.get(key, EMPTY) | objs
    return out


def _immutable(obj):
    if obj is None or isinstance(obj, (int, float, complex, str, bytes, np.generic, np.dtype)):
        return True
    if isinstance(obj, (tuple, frozenset)):
        return all(_immutable(v) for v in obj)
    return isinstance(obj, (range, slice, type)) or callable(obj) or inspect.ismodule(obj)


def _library(obj):
    if isinstance(obj, np.ufunc):
        return "numpy"
    module = getattr(obj, "__module__", None) or ""
    root = module.split(".")[0]
    if root in _LIBRARY_ROOTS or root in ("math", "cmath"):
        return root
    return None


def _is_builtin(obj):
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and getattr(builtins, name, None) is obj


def _root_name(node):
    """The name a view-like expression is taken of: ``y`` in ``y[0].T``, ``np.ravel(y)``."""
    while True:
        if isinstance(node, gast.Name):
            return node.id
        if isinstance(node, (gast.Subscript, gast.Attribute)):
            node = node.value
        elif isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and not node.args:
                node = node.func.value
            elif node.args:
                node = node.args[0]
            else:
                return None
        else:
            return None


def _param_of(obj):
    """The parameter name whose value (or one of whose items) ``obj`` is, else None."""
    if obj[0] == "items":
        obj = obj[1]
    return obj[1] if obj[0] == "param" else None


def _outside(obj):
    """Whether ``obj`` is (an item of) a module-level value, or stale."""
    if obj[0] == "items":
        obj = obj[1]
    return obj[0] in ("free", "stale")


def _written(aug, text=None):
    """How messages quote the augmented assignment ``aug`` (``w[0] += v``): its target,
    the update as written, and the rebinding that would make a new array instead;
    ``text(node)`` prints a part (``_unparse``, or what names the user's names)."""
    text = text or _unparse
    target, op, rhs = text(aug.target), _OPS.get(type(aug.op), "?"), text(aug.value)
    return target, f"`{target} {op}= {rhs}`", f"`{target} = {target} {op} {rhs}`"


def _users_array_error(aug, n, callee, func, p):
    """A helper ``func`` updates in place, by ``aug``, the array its caller received."""
    _, update, rebind = _written(aug)
    which = f"parameter `{n}`" if n == p else f"parameter `{p}` (`{n}` shares its array)"
    return at(
        callee,
        aug,
        f"{update} in {func}() updates in place the array the caller passed as "
        f"{which}: numpy changes the caller's array as well, while the derivative would "
        f"treat the update as a new value local to {func}()",
        f"write {rebind} to make a new array (rebinding leaves the caller's array alone)",
    )


def _summary_of(callee):
    """``summary``'s tuple for an analysed user function (see ``_Analysis.summary``)."""
    direct, items = callee.returned, callee.returned_items
    same = frozenset(_param_of(o) for o in direct) - {None}
    held = frozenset(_param_of(o) for o in items) - {None}
    escapes = any(_outside(o) for o in direct | items)
    fresh = [o for o in direct if o[0] in ("site", "old")]
    holds = bool(held) or any(o[1] in callee.holders for o in fresh)
    updates = {p: (*u, callee.parsed) for p, u in callee.param_updates.items()}
    # a tuple or list made there (``return vx, vy``): its items are what it holds
    container = bool(fresh) and all(o[1] in callee.containers for o in fresh)
    stores = _stores_on_return(callee)
    return (same, held, escapes, bool(fresh), holds, stores, updates, container)


def _stores_on_return(callee):
    """parameter -> the parameters (``None``: a module-level value) whose objects it may
    hold when an analysed user function returns, that it did not hold on entry."""
    stores = {}
    for end in callee.exit_states:
        for p in callee.params:
            inner = callee.elements(end.held.get(("param", p), EMPTY), end)
            found = {_param_of(o) for o in inner} - {None, p}
            if any(_outside(o) for o in inner):
                found.add(None)
            if found:
                stores[p] = stores.get(p, frozenset()) | found
    return stores


def _statements_in(body):
    """The statements of ``body`` and of every block nested in them (a loop's, a nested
    def's, an except clause's): ``descendants``' statements, without walking the
    expressions, which hold none."""
    found, todo = [], list(body)
    for node in todo:  # a queue: the loop reads what it appends
        if isinstance(node, gast.stmt):
            found.append(node)
        for field in walked_fields(node.__class__):
            child = getattr(node, field, None)
            for c in child if child.__class__ is list else (child,):
                if isinstance(c, gast.AST) and not isinstance(c, gast.expr):
                    todo.append(c)
    return found


def _own_nodes(stmt):
    """Ids of the nodes a statement evaluates itself (not those of its nested blocks)."""
    if isinstance(stmt, (gast.If, gast.While)):
        parts = [stmt.test]
    elif isinstance(stmt, gast.For):
        parts = [stmt.iter, stmt.target]
    else:
        parts = [stmt]
    ids = {id(stmt)}
    for part in parts:
        ids.update(id(n) for n in descendants(part))
    return ids


def _postfix(value):
    """Whether ``value``'s text can be followed by ``[i]`` or ``.T`` as it is."""
    return not isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp, gast.IfExp))


def _unparse(node):
    try:
        return printer.source(node).strip()
    except Exception:  # noqa: BLE001 - only used for messages
        return "..."


class _Analysis:
    def __init__(self, parsed, is_helper, raising, summaries, normalized=None, nodes=None):
        self.parsed = parsed
        self.tree = parsed.tree if normalized is None else normalized.tree
        self.is_helper = is_helper
        self.raising = raising
        self.summaries = summaries  # function -> summary, shared with nested analyses
        self.locals = set(getattr(parsed, "local_names", ()) or ())
        self.augmented = {}  # id(statement) -> (it, the augmented assignment it does)
        self.versions = {}  # a version normalize made -> the user's name
        self.held_by = {}  # a temporary -> the value bound to it, which messages show
        self.temporaries = frozenset()
        self.loop_lines = set()  # in A-normal form, the lines of the ``for`` loops
        if normalized is not None:
            self.read_normalized(normalized, nodes)
        self.params = [a.id for a in self.tree.args.args if isinstance(a, gast.Name)]
        self.locals |= set(self.params)
        self.env_refs = {}  # object -> names (and loop iterators) that may refer to it
        self.held_refs = {}  # object -> objects that may hold it
        self.holders = set()  # allocation sites that may hold references (lists, dicts, ...)
        self.containers = set()  # ... and those that are certainly not arrays
        self.updates = {}  # id(aug-assign node) -> (node, target name)
        self.origins = {}  # name -> [(source name, value)] of `a = <view of b>`
        self.loops = []  # (breaks, continues) state lists of the enclosing loops
        self.returned = EMPTY  # the objects a return statement may return
        self.returned_items = EMPTY  # ... and those they may hold
        self.exit_states = []  # states at the returns (for what parameters hold after)
        self.param_updates = {}  # parameter -> (update, name) changing its array in place
        self.followed = set()  # user functions whose updates of their parameters were followed
        self.made_in_loop = {}  # id(statement in a loop) -> ids of the nodes it evaluates
        self.rules = registry()  # looked up once: each lookup checks the modules imported
        self.allocated = set()  # the keys of the expressions ``alloc`` made an object for
        for node in _statements_in(self.tree.body):
            if isinstance(node, (gast.For, gast.While)):
                for inner in _statements_in(node.body):
                    self.made_in_loop[id(inner)] = _own_nodes(inner)
                if isinstance(node, gast.While):
                    self.made_in_loop.setdefault(id(node), set()).update(
                        id(n) for n in descendants(node.test)
                    )

    def read_normalized(self, normalized, walked=None):
        """What the A-normal form adds: the updates ``normalize`` remembered, the names
        it made (locals of the function, shown in messages as the user's) and the lines
        of its loops, where each iteration reads its items. ``walked``: the tree's
        ``descendants``, where the caller has them."""
        self.augmented = normalized.augmented
        self.versions = normalized.namer.version_of
        self.temporaries = normalized.namer.temporaries
        if walked is None:
            walked = descendants(self.tree)
        self.locals |= {
            n.id for n in walked if n.__class__ is gast.Name and isinstance(n.ctx, gast.Store)
        }
        self.loop_lines = {n.lineno for n in walked if n.__class__ is gast.For}

    def run(self):
        start = _State({}, {})
        for p in self.params:
            self.put(start, p, self.unknown(("param", p), start))
        end = self.block(self.tree.body, start)
        if end is not None:
            self.exit_states.append(end)
        return self.returned

    # objects ---------------------------------------------------------------------
    def holds_refs(self, obj):
        kind = obj[0]
        if kind in ("param", "free", "items"):
            return True
        return kind in ("site", "old") and obj[1] in self.holders

    def alloc(self, node, st, holds=False, held=EMPTY, container=False):
        """The object the expression ``node`` makes (one per execution of ``node``);
        ``container``: certainly a list, tuple, dict or set, never an array."""
        key = id(node)
        obj = ("site", key)
        self.allocated.add(key)
        if holds or container:
            self.holders.add(key)
        if container:
            self.containers.add(key)
        if held:
            self.hold(st, obj, frozenset(held))
        else:
            st.held.pop(obj, None)
        return frozenset({obj})

    def unknown(self, obj, st):
        """A value made outside this function (a parameter, a module-level value): an
        array, or a list, tuple or dict whose items are ``("items", obj)``."""
        items = ("items", obj)
        if items not in st.held.get(obj, EMPTY):
            self.hold(st, obj, st.held.get(obj, EMPTY) | {items})
        return frozenset({obj})

    def sequence_items(self, objs, st):
        """What ``lst += v`` adds to a list for each object ``v`` may be: a list's items,
        an array's rows (views of it), an unknown value's items."""
        out = set()
        for o in objs:
            if o[0] in ("param", "free"):
                out.add(("items", o))
            elif o[0] == "items" or (o[0] in ("site", "old") and o[1] in self.containers):
                out |= self.items({o}, st)
            else:
                out |= self.elements({o}, st)
        return frozenset(out)

    # Every write of a state goes through put/hold, which index the entries that may
    # mention an object (a superset over all states), so that aging and updating visit
    # only those entries rather than the whole state.
    def put(self, st, name, objs):
        st.env[name] = objs
        for o in objs:
            self.env_refs.setdefault(o, set()).add(name)

    def hold(self, st, obj, objs):
        st.held[obj] = objs
        for o in objs:
            self.held_refs.setdefault(o, set()).add(obj)

    def age(self, st, keys):
        """Before a statement in a loop runs again, the objects its expressions made in
        earlier iterations become ``("old", key)``: distinct from the ones it makes now
        (only those of the expressions that made one, ``allocated``: the others' keys
        name no object; which key goes first changes nothing)."""
        for key in keys & self.allocated:
            new, old = ("site", key), ("old", key)
            if new in st.held:
                self.hold(st, old, st.held.get(old, EMPTY) | st.held.pop(new))
            for name in self.env_refs.get(new, ()):
                objs = st.env.get(name)
                if objs is not None and new in objs:
                    self.put(st, name, (objs - {new}) | {old})
            for holder in self.held_refs.get(new, ()):
                objs = st.held.get(holder)
                if objs is not None and new in objs:
                    self.hold(st, holder, (objs - {new}) | {old})

    @staticmethod
    def elements(objs, st):
        """The objects themselves and everything they (transitively) hold."""
        seen = set(objs)
        todo = list(objs)
        while todo:
            for inner in st.held.get(todo.pop(), EMPTY):
                if inner not in seen:
                    seen.add(inner)
                    todo.append(inner)
        return frozenset(seen)

    def items(self, objs, st):
        """What an element read (``b[i]``, ``for r in b``, unpacking) may give: an array's
        element is a view of it; a container's, one of the objects it holds."""
        out = set()
        for o in objs:
            if o[0] in ("site", "old") and o[1] in self.containers:
                out |= self.elements(st.held.get(o, EMPTY), st)
            else:
                out |= self.elements({o}, st)
        return frozenset(out)

    def store_into(self, targets, objs, st):
        if not objs:
            return
        for t in targets:
            if self.holds_refs(t):
                self.hold(st, t, st.held.get(t, EMPTY) | objs)

    # reads -------------------------------------------------------------------------
    def observe(self, objs, st, node, label, loop=False):
        """A read of ``objs`` (through ``label``) at ``node``: refused if it may see an
        array that an augmented assignment updated in place for another name."""
        stale = [o for o in self.elements(objs, st) if o[0] == "stale"]
        if not stale or not self.raising:
            return
        # in A-normal form a loop reads its items where it starts each iteration
        loop = loop or getattr(node, "lineno", None) in self.loop_lines
        update = min((self.updates[o[1]] for o in stale), key=lambda u: u[0].lineno)
        shares = any(o[0] == "stale" for o in objs)
        if len(update) > 2:  # made by a function of the user's called here
            raise self.helper_alias_error(update, label, node, shares)
        aug, target = update
        raise self.alias_error(aug, target, label, node, shares, loop)

    def written(self, value):
        """The text of ``value`` as the user wrote it: the temporaries it reads shown by
        what they hold, the versions by the user's names (made for a message only)."""
        if not self.held_by and not self.versions:
            return _unparse(value)
        value = clone(value)
        for n in descendants(value):
            if n.__class__ is gast.Name:
                held = self.held_by.get(n.id)
                text = self.show(n.id)
                n.id = text if held is None or _postfix(held) else f"({text})"
        return _unparse(value)

    def show(self, label):
        """How messages name ``label``: a temporary by what it holds (``z.T``), a
        version by the user's name."""
        held = self.held_by.get(label)
        return self.written(held) if held is not None else self.versions.get(label, label)

    def helper_alias_error(self, update, m, read, shares):
        aug, n, callee, func, p = update
        m = self.show(m)
        _, update, rebind = _written(aug)
        which = f"parameter `{n}`" if n == p else f"parameter `{p}` (`{n}` shares its array)"
        line = getattr(read, "lineno", 0) + self.parsed.line_offset
        how = "shares" if shares else "holds"
        return at(
            callee,
            aug,
            f"{update} in {func}() updates in place the array the caller passed as "
            f"{which}, and `{m}` {how} that array and is read afterwards "
            f"({self.parsed.filename}:{line}): numpy changes `{m}` as well, while the "
            f"derivative would treat the update as a new value local to {func}()",
            f"write {rebind} in {func}() to make a new array, or bind what "
            f"{func}() returns instead of reading `{m}` again",
        )

    def alias_error(self, aug, n, m, read, shares, loop=False):
        target, update, rebind = _written(aug, self.written)
        shown = self.show(m)
        line = getattr(read, "lineno", 0) + self.parsed.line_offset
        if loop:
            what = (
                f"{update} updates the array of `{target}` in place, and that array "
                f"belongs to `{shown}`, which the loop at line {line} goes on reading: numpy "
                f"changes `{shown}` as well, while the derivative would treat the update as "
                f"a new value of `{target}` only"
            )
            hint = (
                f"write {rebind} to make a new array; to change the elements "
                f"of `{shown}`, assign them by index (`{shown}[i] = ...`)"
            )
            return at(self.parsed, aug, what, hint)
        how = "shares" if shares else "holds"
        what = (
            f"{update} updates the array of `{target}` in place, and `{shown}` {how} that "
            f"array and is read afterwards (line {line}): numpy changes `{shown}` as well, "
            f"while the derivative would treat the update as a new value of `{target}` only"
        )
        copy = None
        for name_, other in ((n, m), (m, n)):
            for src, value in self.origins.get(name_, ()):
                if src == other and copy is None:
                    copy = f"`{self.show(name_)} = {self.written(value)}.copy()`"
        copy = copy or "`.copy()` where the two names start sharing one array"
        hint = f"write {rebind} to make a new array, or take a copy: {copy}"
        return at(self.parsed, aug, what, hint)

    # statements --------------------------------------------------------------------
    def block(self, stmts, st):
        for s in stmts:
            if st is None:
                return None
            st = self.stmt(s, st)
        return st

    def stmt(self, s, st):
        if id(s) in self.made_in_loop and not isinstance(s, gast.While):
            self.age(st, self.made_in_loop[id(s)])
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            for child in gast.iter_child_nodes(s):
                if isinstance(child, gast.expr):
                    self.expr(child, st)
            return st
        return method(s, st)

    def stmt_Pass(self, s, st):
        return st

    def stmt_Expr(self, s, st):
        self.expr(s.value, st)
        return st

    def stmt_Assert(self, s, st):
        self.expr(s.test, st)
        self.expr(s.msg, st)
        return st

    def stmt_Raise(self, s, st):
        self.expr(s.exc, st)
        self.expr(s.cause, st)

    def stmt_Return(self, s, st):
        objs = self.expr(s.value, st)
        self.returned |= objs
        self.returned_items |= self.elements(objs, st) - objs
        self.exit_states.append(st)

    def stmt_Break(self, s, st):
        if self.loops:
            self.loops[-1][0].append(st)

    def stmt_Continue(self, s, st):
        if self.loops:
            self.loops[-1][1].append(st)

    def stmt_AnnAssign(self, s, st):
        if s.value is not None:
            self.assign([s.target], s.value, st)
        return st

    def stmt_Assign(self, s, st):
        marked = self.augmented.get(id(s))
        if marked is not None and marked[0] is s:
            return self.augmented_assign(s, marked[1], st)
        self.assign(s.targets, s.value, st)
        return st

    def augmented_assign(self, s, aug, st):
        """``s`` does the update of the augmented assignment ``aug`` (``normalize``):
        for a name, ``t = z OP v`` (``t`` is ``z``, a version of it or a temporary):
        numpy updates ``z``'s array in place, and ``t`` is that array; for
        ``w[i] OP= v``, the write into ``w`` after the item ``w[i]`` was updated."""
        target = s.targets[0]
        if isinstance(target, gast.Name):
            updated = s.value.left
            self.update_name(aug, updated.id, self.expr(s.value.right, st), st, site=s)
            self.put(st, target.id, st.env.get(updated.id, EMPTY))
            return st
        base = self.expr(target.value, st)
        self.expr(target.slice, st)
        if isinstance(aug.target.value, gast.Name):  # w[i] OP= v, not w[i][j] OP= v
            self.update_slot(aug, target.value.id, base, st)
        self.store_into(base, self.expr(s.value, st), st)
        return st

    def assign(self, targets, value, st):
        if (
            len(targets) == 1
            and isinstance(targets[0], (gast.Tuple, gast.List))
            and isinstance(value, (gast.Tuple, gast.List))
            and len(targets[0].elts) == len(value.elts)
            and not any(isinstance(e, gast.Starred) for e in targets[0].elts + value.elts)
        ):
            parts = [self.expr(v, st) for v in value.elts]
            for t, v, objs in zip(targets[0].elts, value.elts, parts):
                self.bind(t, objs, st, v)
            return
        objs = self.expr(value, st)
        for t in targets:
            self.bind(t, objs, st, value)

    def bind(self, target, objs, st, value=None):
        if isinstance(target, gast.Name):
            self.put(st, target.id, objs)
            if target.id in self.temporaries and value is not None:
                self.held_by.setdefault(target.id, value)
            root = _root_name(value) if value is not None else None
            if root is not None and root != target.id and objs:
                entry = (root, value)
                known = self.origins.setdefault(target.id, [])
                if entry not in known:
                    known.append(entry)
        elif isinstance(target, (gast.Tuple, gast.List)):
            inner = self.items(objs, st)
            for t in target.elts:
                self.bind(t, inner, st)
        elif isinstance(target, gast.Starred):
            self.bind(target.value, objs, st)
        elif isinstance(target, (gast.Subscript, gast.Attribute)):
            base = self.expr(target.value, st)
            if isinstance(target, gast.Subscript):
                self.expr(target.slice, st)
            self.store_into(base, objs, st)

    def stmt_AugAssign(self, s, st):
        value = self.expr(s.value, st)
        target = s.target
        if isinstance(target, gast.Name):
            self.update_name(s, target.id, value, st)
            return st
        base = self.expr(target.value, st)
        if isinstance(target, gast.Subscript):
            self.expr(target.slice, st)
            if isinstance(target.value, gast.Name):
                self.update_slot(s, target.value.id, base, st)
        if isinstance(s.op, gast.Add):  # lst[i] += [h] when lst[i] is a list
            self.store_into(base, self.sequence_items(value, st), st)
        return st

    def update_slot(self, s, n, base, st):
        """A list slot of ``n`` (objects ``base``) updated in place by ``s`` changes the
        array it holds."""
        items = set()
        for o in base:
            if o[0] in ("site", "old") and o[1] in self.holders:
                items |= st.held.get(o, EMPTY)
        if items:
            self.updated(s, n, frozenset(items), st, keep=base)

    def update_name(self, s, n, value, st, site=None):
        """``s`` updates ``n`` in place with a value of objects ``value``; ``site``: the
        statement that does it, where it is not ``s`` (A-normal form)."""
        objs = st.env.get(n, EMPTY)
        self.observe(objs, st, s, n)
        if not objs:  # a number, a string, a shape: the update rebinds the name
            self.put(st, n, self.alloc(site or s, st) if value else EMPTY)
            return
        self.updated(s, n, objs, st)
        if isinstance(s.op, gast.Add):  # lst += [h]: h is in lst now
            self.store_into(objs, self.sequence_items(value, st), st)

    def updated(self, s, n, objs, st, keep=EMPTY):
        """``objs`` (reached through name ``n``) are updated in place by ``s``."""
        for o in objs:
            p = _param_of(o)
            if p is not None:
                self.param_updates.setdefault(p, (s, n))
        if self.raising:
            self.refuse_escape(s, n, objs)
        self.updates[id(s)] = (s, n)
        stale = ("stale", id(s))
        keep = keep | objs  # what the updated objects hold of themselves stays theirs
        for o in objs:
            for name in self.env_refs.get(o, ()):
                refs = st.env.get(name)
                if name != n and refs is not None and o in refs:
                    self.put(st, name, (refs - objs) | {stale})
            for holder in self.held_refs.get(o, ()):
                refs = st.held.get(holder)
                if holder not in keep and refs is not None and o in refs:
                    self.hold(st, holder, (refs - objs) | {stale})

    def updated_by_call(self, e, func, p, update, objs, st):
        """The call ``e`` of ``func`` updates in place the arrays ``objs`` passed as its
        parameter ``p``: refused if they are the caller's or module-level ones; else
        every name of this function that reaches them is stale from here on (what the
        call returns is bound after)."""
        aug, n, callee = update
        if self.raising and any(_param_of(o) or _outside(o) and o[0] != "stale" for o in objs):
            raise _users_array_error(aug, n, callee, func.__name__, p)
        if self.raising:
            self.followed.add(func)
        self.updates[(id(e), p)] = (aug, n, callee, func.__name__, p)
        self.make_stale(objs, ("stale", (id(e), p)), st)

    def make_stale(self, objs, stale, st):
        """Every reference to ``objs`` of this function now reaches ``stale``."""
        for o in objs:
            for name in self.env_refs.get(o, ()):
                refs = st.env.get(name)
                if refs is not None and o in refs:
                    self.put(st, name, (refs - objs) | {stale})
            for holder in self.held_refs.get(o, ()):
                refs = st.held.get(holder)
                if refs is not None and o in refs and holder not in objs:
                    self.hold(st, holder, (refs - objs) | {stale})

    def refuse_escape(self, s, n, objs):
        _, update, rebind = _written(s, self.written)
        for o in sorted(objs, key=repr):
            if o[0] == "items":
                o = o[1]  # an item of a list the caller passed is the caller's
            if o[0] == "free":
                raise at(
                    self.parsed,
                    s,
                    f"{update} updates in place the module-level array `{o[1]}` that `{n}` "
                    "refers to: numpy keeps the change for later calls, while the "
                    f"derivative would treat the update as a new value of `{n}` only",
                    f"write {rebind} to make a new array",
                )
            if o[0] == "param" and self.is_helper:
                func = self.tree.name
                which = (
                    f"parameter `{n}`"
                    if n == o[1]
                    else f"parameter `{o[1]}` (`{n}` shares its array)"
                )
                raise at(
                    self.parsed,
                    s,
                    f"{update} in {func}() updates in place the array the caller passed as "
                    f"{which}: numpy changes the caller's array as well, while the "
                    f"derivative would treat the update as a new value local to {func}()",
                    f"write {rebind} to make a new array (rebinding leaves the caller's "
                    "array alone)",
                )

    def stmt_If(self, s, st):
        self.expr(s.test, st)
        then = self.block(s.body, st.copy())
        other = self.block(s.orelse, st)
        return _join([then, other])

    def stmt_Try(self, s, st):
        """An except clause may start from any point of the try block: from the join of
        the states there (the block is straight-line, ``exceptions.check``)."""
        states = [st.copy()]
        for b in s.body:
            states.append(self.stmt(b, states[-1].copy()) if states[-1] is not None else None)
        entry = _join(states)
        ends = [self.block(h.body, entry.copy()) for h in s.handlers]
        done = states[-1]
        ends.append(self.block(s.orelse, done) if done is not None else None)
        after = _join(ends)
        return self.block(s.finalbody, after) if after is not None else None

    def stmt_With(self, s, st):
        for item in s.items:
            self.expr(item.context_expr, st)
        return self.block(s.body, st)

    def stmt_While(self, s, st):
        head = st
        while True:
            body = head.copy()
            if id(s) in self.made_in_loop:
                self.age(body, self.made_in_loop[id(s)])
            self.expr(s.test, body)
            after_test = body.copy()
            self.loops.append(([], []))
            end = self.block(s.body, body)
            breaks, continues = self.loops.pop()
            new = _join([head, end, *continues])
            if new == head:
                return _join([after_test, *breaks])
            head = new

    def stmt_For(self, s, st):
        kind, parts = self.iteration(s.iter, st)
        keys = [("iter", id(s), i) for i in range(len(parts))]
        for k, objs in zip(keys, parts):
            self.put(st, k, objs)
        label = _unparse(s.iter)
        head = st
        while True:
            body = head.copy()
            current = [body.env.get(k, EMPTY) for k in keys]
            for objs in current:
                self.observe(objs, body, s, label, loop=True)  # each iteration reads it
            self.bind_loop_target(s.target, kind, current, body)
            self.loops.append(([], []))
            end = self.block(s.body, body)
            breaks, continues = self.loops.pop()
            new = _join([head, end, *continues])
            if new == head:
                out = _join([head, *breaks])
                for k in keys:
                    out.env.pop(k, None)
                return out
            head = new

    def iteration(self, node, st):
        if isinstance(node, gast.Call) and not node.keywords:
            obj = self.resolve(node.func)
            if obj is range or obj is enumerate or obj is zip:
                parts = [self.expr(a, st) for a in node.args]
                if obj is range:
                    return "range", [EMPTY]
                if obj is enumerate and len(parts) >= 1:
                    return "enumerate", [EMPTY, parts[0]]
                return "zip", parts
        return "plain", [self.expr(node, st)]

    def bind_loop_target(self, target, kind, parts, st):
        items = [self.items(p, st) for p in parts]
        if (
            kind in ("enumerate", "zip")
            and isinstance(target, (gast.Tuple, gast.List))
            and len(target.elts) == len(items)
        ):
            for t, objs in zip(target.elts, items):
                self.bind(t, objs, st)
            return
        everything = frozenset().union(*items) if items else EMPTY
        self.bind(target, everything, st)

    # expressions -------------------------------------------------------------------
    def resolve(self, node):
        if isinstance(node, gast.Name) and node.id in self.locals:
            return MISSING
        if isinstance(node, (gast.Name, gast.Attribute)):
            try:
                return self.parsed.resolve(node)
            except Exception:  # noqa: BLE001 - a property that raises: treat as unknown
                return MISSING
        return MISSING

    def free(self, node, st):
        """Objects of a free name or attribute chain (a module-level value)."""
        obj = self.resolve(node)
        if obj is MISSING or _immutable(obj):
            return EMPTY
        return self.unknown(("free", _unparse(node)), st)

    def expr(self, e, st):
        if e is None:
            return EMPTY
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is not None:
            return method(e, st)
        # anything else (inside stop_gradient: lambdas, comprehensions): may hold all it reads
        inner = EMPTY
        for child in gast.iter_child_nodes(e):
            if isinstance(child, gast.expr):
                inner |= self.elements(self.expr(child, st), st)
            elif isinstance(child, gast.comprehension):
                inner |= self.elements(self.expr(child.iter, st), st)
        return self.alloc(e, st, holds=True, held=inner) | inner

    def expr_Constant(self, e, st):
        return EMPTY

    def expr_Name(self, e, st):
        if e.id in st.env:
            objs = st.env[e.id]
        elif e.id in self.locals:
            objs = EMPTY  # not bound on any path that reaches here
        else:
            return self.free(e, st)
        self.observe(objs, st, e, e.id)
        return objs

    def shallow(self, e, st):
        """Evaluate ``e`` where its values are not looked at: ``hs`` in ``hs.append(h)``,
        ``x`` in ``x.shape`` or ``len(x)`` (an update in place changes no shape)."""
        if isinstance(e, gast.Name) and e.id in self.locals:
            return st.env.get(e.id, EMPTY)
        return self.expr(e, st)

    def expr_Attribute(self, e, st):
        if self.resolve(e) is not MISSING:
            return self.free(e, st)
        declared = self.rules.attribute_declaration(e.attr)
        if declared is not None and memory(declared) in (Memory.NEW, Memory.FRESH):
            self.shallow(e.value, st)  # x.shape, x.dtype: a new value
            return EMPTY
        return self.elements(self.expr(e.value, st), st)  # .T, .real, an object's attribute

    def expr_Subscript(self, e, st):
        base = self.expr(e.value, st)
        self.expr(e.slice, st)
        if isinstance(e.slice, gast.List) and base:  # fancy indexing copies
            return self.alloc(e, st)
        if isinstance(e.slice, gast.Slice) and all(
            o[0] in ("site", "old") and o[1] in self.containers for o in base
        ):  # lst[1:]: a new list of the same items
            return self.alloc(e, st, container=True, held=self.items(base, st))
        return self.items(base, st)

    def expr_Slice(self, e, st):
        self.expr(e.lower, st)
        self.expr(e.upper, st)
        self.expr(e.step, st)
        return EMPTY

    def expr_Starred(self, e, st):
        return self.elements(self.expr(e.value, st), st)

    def expr_Tuple(self, e, st):
        parts = [self.expr(v, st) for v in e.elts]
        held = frozenset().union(*parts) if parts else EMPTY
        if isinstance(e, gast.Tuple) and not held:
            return EMPTY
        return self.alloc(e, st, container=True, held=held)

    expr_List = expr_Tuple
    expr_Set = expr_Tuple

    def expr_Dict(self, e, st):
        held = EMPTY
        for k in e.keys:
            held |= self.expr(k, st)
        for v in e.values:
            held |= self.expr(v, st)
        return self.alloc(e, st, container=True, held=held)

    def expr_BinOp(self, e, st):
        left = self.expr(e.left, st)
        right = self.expr(e.right, st)
        if not left and not right:
            return EMPTY
        if self.may_concatenate(e, left, right):
            # list or tuple concatenation or repetition: a new object holding the items
            held = set()
            for o in left | right:
                held |= self.items({o}, st) if o[0] == "items" else st.held.get(o, EMPTY)
            every_side = all(self.known_container(objs) for objs in (left, right) if objs)
            return self.alloc(e, st, container=every_side, holds=True, held=held)
        return self.alloc(e, st)

    def known_container(self, objs):
        return any(o[0] in ("site", "old") and o[1] in self.containers for o in objs)

    def may_concatenate(self, e, left, right):
        """Whether ``left op right`` may be list or tuple ``+`` or ``*`` (not arithmetic):
        then the result holds the operands' items, not the operands."""
        sides = [objs for objs in (left, right) if objs]
        if not all(self.holds_refs(o) for objs in sides for o in objs):
            return False  # an array operand makes an array
        other = e.right if left else e.left  # the operand that cannot change, if one
        if isinstance(e.op, gast.Add):  # list + list, tuple + tuple; not x + 1.0
            return len(sides) == 2 or isinstance(other, gast.Tuple)
        if isinstance(e.op, gast.Mult) and len(sides) == 1:  # [h] * 3; not x * 2.0
            return not (isinstance(other, gast.Constant) and isinstance(other.value, float))
        return False

    def expr_UnaryOp(self, e, st):
        operand = self.expr(e.operand, st)
        if not operand or isinstance(e.op, gast.Not):
            return EMPTY
        return self.alloc(e, st)

    def expr_Compare(self, e, st):
        objs = self.expr(e.left, st)
        for c in e.comparators:
            objs |= self.expr(c, st)
        identity = (gast.Is, gast.IsNot, gast.In, gast.NotIn)
        if not objs or all(isinstance(op, identity) for op in e.ops):
            return EMPTY  # a bool
        return self.alloc(e, st)

    def expr_BoolOp(self, e, st):
        objs = EMPTY
        for v in e.values:
            objs |= self.expr(v, st)
        return objs

    def expr_IfExp(self, e, st):
        self.expr(e.test, st)
        return self.expr(e.body, st) | self.expr(e.orelse, st)

    def expr_JoinedStr(self, e, st):
        for v in e.values:
            self.expr(v, st)
        return EMPTY

    def expr_FormattedValue(self, e, st):
        self.expr(e.value, st)
        self.expr(e.format_spec, st)
        return EMPTY

    def expr_Lambda(self, e, st):
        self.expr(e.body, st)
        return EMPTY

    # calls -------------------------------------------------------------------------
    def expr_Call(self, e, st):
        obj = self.resolve(e.func)
        receiver = self.receiver(e.func, obj, st)
        evaluate = self.shallow if obj is len or obj is np.shape else self.expr
        args = [evaluate(a, st) for a in e.args]
        keywords = {k.arg: self.expr(k.value, st) for k in e.keywords}
        every = args + list(keywords.values())
        if "out" in keywords:
            return self.elements(keywords["out"], st)
        if receiver is not None:
            return self.method(e, e.func.attr, receiver, every, st)
        if obj is MISSING:
            return self.unknown_call(e, every, st)
        return self.known_call(e, obj, args, keywords, every, st)

    def receiver(self, func, obj, st):
        """The objects of the value whose method ``func`` names, or None when ``func`` is
        not a method of a value. An unknown callee is evaluated for its effects."""
        if isinstance(func, gast.Attribute):
            owner = self.resolve(func.value)
            if obj is MISSING or not (inspect.ismodule(owner) or inspect.isclass(owner)):
                # a method of a value (a local, or a module-level array): not np.f
                store = func.attr in _STORE_METHODS
                return (self.shallow if store else self.expr)(func.value, st)
        elif obj is MISSING:
            self.expr(func, st)
        return None

    def known_call(self, e, obj, args, keywords, every, st):
        """A call of the function ``obj`` the callee resolves to: a builtin, a library
        function, or a user function analysed for a summary."""
        if obj is stop_gradient:
            return args[0] if args else EMPTY
        declared = getattr(obj, "declared", None)
        if isinstance(declared, ops.Helper):
            return self.helper_call(e, declared, args, keywords, st)
        if _is_builtin(obj):
            return self.builtin_call(e, obj.__name__, every, st)
        library = _library(obj)
        if library in ("math", "cmath"):
            return EMPTY
        if library is not None:
            return self.library_call(e, obj, args, keywords, st)
        summary = self.summary(obj) if inspect.isfunction(obj) else None
        if summary is not None:
            by_node = {id(a): objs for a, objs in zip(e.args, args)}
            by_node.update({id(k.value): keywords[k.arg] for k in e.keywords})
            return self.user_call(e, obj, summary, by_node, every, st)
        return self.unknown_call(e, every, st)

    def helper_call(self, e, declared, args, keywords, st):
        """A runtime helper (``ops.unbroadcast``, called by a gradient differentiated
        again), as it declares itself: a new array, its first argument, or any argument."""
        kind = memory(declared)
        if kind is Memory.FIRST:
            return self.everything(args[:1], st)
        if kind is Memory.ANY:
            return self.everything(args + list(keywords.values()), st)
        return self.alloc(e, st)

    def everything(self, objs_list, st):
        out = EMPTY
        for objs in objs_list:
            out |= self.elements(objs, st)
        return out

    def unknown_call(self, e, every, st):
        """A call we know nothing about: its result may be or hold any argument, and it
        may store any argument into any other."""
        inner = self.everything(every, st)
        for objs in every:
            self.store_into(objs, inner, st)
        return self.alloc(e, st, holds=True, held=inner) | inner

    def builtin_call(self, e, name, every, st):
        if name in _SCALAR_BUILTINS:
            return EMPTY
        if name in _ARITH_BUILTINS:
            return self.alloc(e, st) if any(every) else EMPTY
        if name in _PICK_BUILTINS:
            return self.everything(every, st)
        if name in _CONTAINER_BUILTINS:  # list(b), zip(a, b): hold the items of b
            inner = EMPTY
            for objs in every:
                inner |= self.items(objs, st)
            return self.alloc(e, st, container=True, held=inner)
        return self.unknown_call(e, every, st)

    def library_call(self, e, obj, args, keywords, st):
        if getattr(obj, "__name__", "") in _NUMPY_SCALAR:
            return EMPTY
        declared = self.rules.declaration(obj)
        reduces = isinstance(obj, np.ufunc) or (declared is not None and declared.reduces)
        if reduces and not any(args) and not any(keywords.values()):
            return EMPTY  # of Python numbers: a numpy scalar, which cannot change in place
        if declared is None:  # a library function the rules do not know: a new array
            return self.alloc(e, st)
        kind = memory(declared, e.keywords)
        if kind is Memory.FIRST:
            first = args[:1] or list(keywords.values())
            return self.everything(first, st)
        if kind in (Memory.DATA, Memory.ANY):
            return self.everything(args + list(keywords.values()), st)
        return self.alloc(e, st)

    def method(self, e, attr, base, every, st):
        if attr in _SCALAR_METHODS:
            return EMPTY
        if attr in _STORE_METHODS:
            self.store_into(base, self.everything(every, st), st)
            return EMPTY
        declared = self.rules.method_declaration(attr)
        if declared is not None:
            if memory(declared, e.keywords) in (Memory.FRESH, Memory.NEW):
                return self.new_value(e, attr, base, st)
            return self.elements(base, st) | self.everything(every, st)
        if attr in _CONTAINER_VIEWS:
            return self.elements(base, st) | self.everything(every, st)
        if attr in _UNDECLARED_NEW:
            return self.alloc(e, st)
        return self.unknown_call(e, [base, *every], st)

    def new_value(self, e, attr, base, st):
        held = set()
        for o in base:
            held |= st.held.get(o, EMPTY)
        if attr == "copy" and held:  # a shallow copy holds the same items
            return self.alloc(e, st, holds=True, held=held)
        return self.alloc(e, st)

    # user functions ------------------------------------------------------------------
    def summary(self, func):
        """What a call to the user function ``func`` does, or None if unknown: the
        parameters whose objects the result may be (``same``) or hold (``held``),
        whether it may be or hold a module-level value, whether it may be a new object
        and whether that may hold references, and what each parameter may hold on
        return that it did not before (``stores``: parameter -> parameters, and
        ``None`` for a module-level value)."""
        if func in self.summaries:
            return self.summaries[func]
        self.summaries[func] = None  # a recursive call: unknown
        try:
            callee = _Analysis(parse.run(func), True, raising=False, summaries=self.summaries)
            callee.run()
        except Exception:  # noqa: BLE001 - no source, or not analysable: assume the worst
            return None
        summary = _summary_of(callee)
        self.summaries[func] = summary
        return summary

    def user_call(self, e, func, summary, by_node, every, st):
        same, held, escapes, fresh, holds, stores, updates, container = summary
        try:
            bound = inspect.signature(func).bind(*e.args, **{k.arg: k.value for k in e.keywords})
        except (TypeError, ValueError):
            return self.unknown_call(e, every, st)

        def of(pnames):
            out = EMPTY
            for pname in pnames:
                if pname is None:
                    out |= self.unknown(("free", f"{func.__name__}()"), st)
                    continue
                node = bound.arguments.get(pname)
                if node is None:  # its default value: shared by every call
                    out |= self.unknown(("free", f"{func.__name__}.{pname}"), st)
                else:
                    for n in node if isinstance(node, tuple) else (node,):
                        out |= self.elements(by_node.get(id(n), EMPTY), st)
            return out

        for pname, sources in stores.items():  # hs.append(h) inside the callee
            self.store_into(of([pname]), of(sources), st)
        result = of(same)
        passed = {pname: of([pname]) for pname in updates}  # before any is made stale
        for pname, update in updates.items():  # vx -= ... inside the callee
            self.updated_by_call(e, func, pname, update, passed[pname], st)
        if escapes:
            result |= self.unknown(("free", f"{func.__name__}()"), st)
        if fresh or held:
            result |= self.alloc(e, st, holds=holds, held=of(held), container=container)
        return result
