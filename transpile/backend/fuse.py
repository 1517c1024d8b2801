"""Chains of elementwise operations of a shape variant evaluated by one
``numexpr.evaluate`` call each (``grad(f, fuse=True)``): what ``blocks`` left outside
its regions (``dispatch.Dispatcher.build`` runs both after specialization, copy
propagation and dead code removal, before ``tidy``, buffer reuse and ``inline``).

Chains
------

numpy evaluates ``np.cos(np.sin(x) * x + 1.0)`` one operation at a time, each reading
and writing whole arrays; numexpr evaluates the same expression in one pass over
cache-sized blocks, on several threads. ``chains`` rewrites what ``blocks`` left:

* A statement *fuses* when it assigns to a name elementwise arithmetic (``+ - * / **``,
  unary ``-``) and calls of the numpy ufuncs in ``FUNCTIONS``, of names and finite
  numbers, and the specializer recorded its result as a float64 or float32 array of at
  least ``MIN_SIZE`` elements. A name it reads that the body made must be an array of
  the result's dtype. In float32, the names the body did not make (arguments, globals)
  are passed as ``np.float32(k)`` (``k`` itself for a float32 array; numexpr would
  compute with a Python float in float64) and numbers must be integers; in float64
  they are read as they come (an argument of another precision inside a float64
  statement is then computed in float64 where numpy would round to float32 first).
* A fusing statement whose name exactly one later fusing statement of the same shape
  reads, once, is inlined into it, where nothing between it and the end of its chain
  rebinds a name it reads or may write into an array (only comments, and assignments
  to names of arithmetic and numpy calls without ``out=``, are passed); a value read
  twice, or by anything else, stays a name: a chain of its own.
* A chain of ``MIN_OPERATIONS`` (3) operations or more becomes ``t =
  numexpr.evaluate("...", local_dict={...})`` under one comment listing the statements
  it replaces (the compiler's temporaries shown inline); a shorter one is left as it
  was. A temporary that fused code names (a value it reads, a chain's result) is
  renamed (``_t4`` is ``v4``) so that ``inline`` does not renumber it away from the
  comment and the expression. numexpr computes each operation in the kind numpy
  would where it can tell: a float stays a float literal in float64 (``n * 2.0`` of an
  integer array is a float), an integer in float32 and as a divisor (``x / 3`` is a
  division, ``x / 3.0`` numexpr's product with 1/3).

The values equal numpy's to the bit where numexpr's functions do (those in
``FUNCTIONS`` here; ``**`` of an integer becomes products), else within a few units in
the last place. numexpr raises no
floating-point warnings (``np.errstate`` does not reach it) and writes into no
argument: each call makes a new array. Without numexpr installed, ``chains`` warns
once and changes nothing (the blocks are made all the same). Loops and branches are not fused (a specialized loop's body
has no recorded shapes). On cupy the same chains would become ``cupy.fuse`` kernels:
not done (cupy arrays are not recorded as numpy arrays, so nothing fuses there).
"""

import bisect
import math

import gast
import numpy as np

from transpile.cleanup import buffers
from transpile.core import printer, user_warnings
from transpile.core.ir import COMMENT, Annotation, annotate, annotation
from transpile.core.nodes import const, descendants, name, transform

MIN_SIZE = buffers.REUSE_SIZE  # elements: below this a chain is left to numpy
# operations: numpy writes a shorter chain into an operand nothing reads again
# (``buffers``), where numexpr makes a new array, which costs more than it saves
MIN_OPERATIONS = 3

# The numpy ufuncs a chain evaluates with numexpr, by numexpr's name (numpy's
# ``absolute`` is numexpr's ``abs``): those numexpr computes about as fast per element
# as numpy does (``sin`` and ``cos`` call the C library per element in both; ``sqrt``,
# ``abs`` and ``sign`` cost little next to reading memory), so that fusing gains the
# passes over memory and numexpr's threads. numexpr also has ``LEFT_TO_NUMPY``, but
# numpy's vectorized loops compute those 3 to 9 times faster than numexpr's calls of the
# C library (numpy 2.4 on an AVX-512 x86-64; where numpy has no such loops, on another
# CPU or build, adding them to ``FUNCTIONS`` may pay): a chain stops at them.
FUNCTIONS = frozenset({"sin", "cos", "sqrt", "abs", "sign"})
LEFT_TO_NUMPY = frozenset(
    {
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "arcsinh",
        "arccosh",
        "arctanh",
        "exp",
        "expm1",
        "log",
        "log1p",
        "log10",
    }
)
_FLOAT64_ONLY = frozenset({"sign"})  # numexpr computes these in float64 for any float
_KIND_KEEPING = frozenset({"abs", "sign"})  # and these of an int as an int
_NUMEXPR_NAME = {"absolute": "abs"}  # a numpy ufunc's name -> numexpr's, where they differ
_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))
_MAX_OPERANDS = 30  # arrays per numexpr call (numpy's iterator takes 64 at most)
_MAX_OPERATIONS = 100  # per numexpr call: its registers are numbered below 256
_MAX_DEPTH = 16  # statements inlined one into another


def chains(body, names, namer):
    """``(body, bound)``: the body with its chains fused, and the objects the fused
    code reads by name (numexpr), to bind into the variant's namespace."""
    numexpr = _numexpr()
    if numexpr is None:
        return body, {}
    plan = _Plan(body, names["np"])
    found = plan.chains()
    if not found:
        return body, {}
    _rename_temporaries(body, plan, found, names, namer)
    module = names.get("numexpr")
    if module is None:  # kept with the other runtime names: every variant says the same
        module = names["numexpr"] = namer.fresh("numexpr")
    own = getattr(getattr(numexpr, "expressions", None), "functions", ())
    reserved = frozenset(own) | FUNCTIONS | LEFT_TO_NUMPY
    inlined = {m for members in found.values() for m in members}
    out = []
    for k, s in enumerate(body):
        if k in found:
            out += plan.fused(k, found[k], module, reserved, namer)
        elif k not in inlined:
            out.append(s)
    return out, {module: numexpr}


def _numexpr():
    """The numexpr module, or None (with a warning, shown once) where it is missing."""
    try:
        import numexpr
    except ImportError:
        user_warnings.warn(
            "grad(..., fuse=True): numexpr is not installed, so elementwise chains are "
            "not fused (pip install numexpr, or the transpile[fuse] extra)",
            RuntimeWarning,
        )
        return None
    return numexpr


class _Plan:
    """The straight-line top level of a body: where each name read was written, which
    statements fuse, and which of them are inlined into which."""

    def __init__(self, body, np_name):
        self.body = body
        self.np = np_name
        self.reaching = {}  # id(Name read) -> position of the write it reads, None: outside
        self.readers = {}  # position -> the positions of the statements reading its write
        self.writes = {}  # name -> positions writing it, in order
        self.barrier = []  # position -> the last position up to it that nothing may pass
        self._index()
        self.kinds = {}  # position of a fusing statement -> (shape, dtype) of its result
        for k, s in enumerate(body):
            info = self._fusing(s)
            if info is not None:
                self.kinds[k] = info
        self.into = {}  # position -> the fusing statement it is inlined into
        for k, info in self.kinds.items():
            readers = self.readers.get(k, ())
            if len(readers) == 1 and self.kinds.get(readers[0], (None,))[0] == info[0]:
                self.into[k] = readers[0]
        self._bound_depth()

    def _bound_depth(self):
        """No more than ``_MAX_DEPTH`` statements inlined one into the next: a longer
        run is cut into chains (numexpr parses at most 200 nested parentheses)."""
        feeds = {}
        for k, j in self.into.items():
            feeds.setdefault(j, []).append(k)
        depth = {}
        for k in sorted(self.kinds):  # a statement comes after those inlined into it
            depth[k] = 1 + max((depth[c] for c in feeds.get(k, ()) if c in self.into), default=0)
            if depth[k] >= _MAX_DEPTH:
                self.into.pop(k, None)

    def _index(self):
        current = {}
        last = -1
        for j, s in enumerate(self.body):
            for n in _reads(s):
                d = current.get(n.id)
                self.reaching[id(n)] = d
                if d is not None:
                    self.readers.setdefault(d, []).append(j)
            for n in _written(s):
                current[n] = j
                self.writes.setdefault(n, []).append(j)
            if not _passable(s, self.np):
                last = j
            self.barrier.append(last)

    # -- which statements fuse --
    def _fusing(self, s):
        """``(shape, dtype)`` of the array ``s`` assigns if it fuses, else None."""
        if not (isinstance(s, gast.Assign) and _single_name(s)):
            return None
        info = annotation(s, Annotation.ARRAY)
        if info is None or info[1] not in _FLOATS or math.prod(info[0]) < MIN_SIZE:
            return None
        return info if self._elementwise(s.value, info[1]) else None

    def _elementwise(self, node, dtype):
        if isinstance(node, gast.Name):
            return self._readable(node, dtype)
        if isinstance(node, gast.Constant):
            return _number(node.value, dtype)
        if isinstance(node, gast.BinOp):
            return self._arithmetic(node, dtype)
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, gast.USub) and self._elementwise(node.operand, dtype)
        if isinstance(node, gast.Call) and self.function(node) is not None:
            if dtype == np.float32 and self.function(node) in _FLOAT64_ONLY:
                return False
            return all(self._elementwise(a, dtype) for a in node.args)
        return False

    def _arithmetic(self, node, dtype):
        if not isinstance(node.op, _OPERATORS):
            return False
        # numexpr writes x ** 2.0 as x * x, an int for an int x, where numpy's is a float
        power = isinstance(node.op, gast.Pow) and _float_number(node.right)
        if power and not self._float_kind(node.left, dtype):
            return False
        return self._elementwise(node.left, dtype) and self._elementwise(node.right, dtype)

    def _readable(self, node, dtype):
        """Whether a fusing statement of ``dtype`` may read the name ``node``: not an
        array the body made of another dtype."""
        typed = self._typed(self.reaching.get(id(node)))
        return typed is None or typed == dtype

    def function(self, call):
        """numexpr's name of the numpy ufunc ``call`` calls, or None."""
        f = call.func
        if call.keywords or not (
            isinstance(f, gast.Attribute)
            and isinstance(f.value, gast.Name)
            and f.value.id == self.np
        ):
            return None
        ufunc = getattr(np, f.attr, None)
        if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.nin != len(call.args):
            return None
        found = _NUMEXPR_NAME.get(ufunc.__name__, ufunc.__name__)
        return found if found in FUNCTIONS else None

    # -- chains --
    def chains(self):
        """Position of each chain's last statement -> the positions inlined into it,
        for the chains worth a numexpr call."""
        found = {}
        work = [k for k in self.kinds if k not in self.into]
        while work:
            r = work.pop()
            members = self.members(r)
            inside = set(members)
            stuck = [m for m in members if not self._movable(m, r, inside)]
            for m in stuck:  # evaluated where it stands, as a chain of its own
                del self.into[m]
            if stuck:
                work += [r, *stuck]
            elif self._worth_it(r, members):
                found[r] = members
        return found

    def members(self, r):
        """The statements inlined into ``r``, directly or through one another, in order."""
        out, todo = [], [r]
        while todo:
            k = todo.pop()
            for n in _loads(self.body[k].value):
                d = self.reaching[id(n)]
                if d is not None and self.into.get(d) == k:
                    out.append(d)
                    todo.append(d)
        return sorted(out)

    def _movable(self, m, r, inside):
        """Whether statement ``m``'s value may be evaluated at ``r`` instead: nothing
        between may write into an array, or rebind a name it reads that is not inlined
        (the chain's own statements are gone from between)."""
        if self.barrier[r - 1] > m:
            return False
        for n in _loads(self.body[m].value):
            if self.reaching[id(n)] in inside:
                continue
            writes = self.writes.get(n.id, ())
            i = bisect.bisect_right(writes, m)
            while i < len(writes) and writes[i] < r:
                if writes[i] not in inside:
                    return False
                i += 1
        return True

    def _worth_it(self, r, members):
        """Whether chain ``r`` has ``MIN_OPERATIONS`` or more (a product with 1 is
        none), and no more operations and operands than one numexpr call takes."""
        operations = sum(
            _operation(n) for k in (*members, r) for n in descendants(self.body[k].value)
        )
        return (
            MIN_OPERATIONS <= operations <= _MAX_OPERATIONS
            and len(self.leaves(r, members)) <= _MAX_OPERANDS
        )

    def leaves(self, r, members):
        """The names chain ``r`` reads from outside it, in order of first reading, each
        with the position of the statement that wrote what it reads (None: outside)."""
        found, inside = {}, set(members)
        for k in (*members, r):
            for n in _loads(self.body[k].value):
                d = self.reaching[id(n)]
                if d not in inside and n.id != self.np:
                    found.setdefault(n.id, d)
        return found

    def _typed(self, d):
        """The dtype of the array statement ``d`` made, None where the body does not
        say (``d`` None: a name from outside the body)."""
        info = None if d is None else annotation(self.body[d], Annotation.ARRAY)
        return None if info is None else info[1]

    def _operand(self, leaf, d, dtype):
        """What a chain of ``dtype`` passes numexpr for ``leaf``: in float32, a name the
        body did not type as ``np.float32(k)`` (numexpr would take a Python float for
        float64), which is ``k`` itself for a float32 array."""
        if dtype == np.float64 or self._typed(d) is not None:
            return name(leaf)
        f32 = gast.Attribute(value=name(self.np), attr="float32", ctx=gast.Load())
        return gast.Call(func=f32, args=[name(leaf)], keywords=[])

    # -- the fused statement --
    def fused(self, r, members, module, reserved, namer):
        """The comment and the ``numexpr.evaluate`` assignment that replace chain ``r``."""
        root = self.body[r]
        temporaries = {m for m in members if _target(self.body[m]) in namer.temporaries}
        shown = [
            f"{_target(self.body[k])} = {printer.expression(self.expanded(k, temporaries))}"
            for k in (*members, r)
            if k not in temporaries
        ]
        comment = gast.Expr(value=const(COMMENT + "fused: " + "; ".join(shown)))
        leaves = self.leaves(r, members)
        keys = _keys(list(leaves), reserved)
        dtype = annotation(root, Annotation.ARRAY)[1]
        operands = [self._operand(n, d, dtype) for n, d in leaves.items()]
        text = printer.expression(self.numexpr_form(self.expanded(r, set(members)), keys, dtype))
        call = gast.Call(
            func=gast.Attribute(value=name(module), attr="evaluate", ctx=gast.Load()),
            args=[const(text)],
            keywords=[
                gast.keyword(
                    arg="local_dict",
                    value=gast.Dict(keys=[const(keys[n]) for n in leaves], values=operands),
                )
            ],
        )
        new = gast.Assign(targets=root.targets, value=call, type_comment=None)
        annotate(new, Annotation.ARRAY, annotation(root, Annotation.ARRAY))
        return [gast.copy_location(comment, root), gast.copy_location(new, root)]

    def numexpr_form(self, node, keys, dtype, divisor=False):
        """``node`` (numpy code) as numexpr reads it: ``np.sin(x)`` is ``sin(x)``, names
        are their keys, a whole number is an integer where numexpr then computes as
        numpy does (in float32, where every operand is float32; and a divisor: ``x / 3``
        stays a division, which ``x / 3.0`` would not), and products with 1 (the seed's
        ``1.0 * g``) are left out where that keeps the kind of the other factor."""
        if isinstance(node, gast.Name):
            return name(keys[node.id])
        if isinstance(node, gast.Constant):
            return _literal(node.value, dtype == np.float32 or divisor)
        if isinstance(node, gast.Call):
            args = [self.numexpr_form(a, keys, dtype) for a in node.args]
            return gast.Call(func=name(self.function(node)), args=args, keywords=[])
        if isinstance(node, gast.UnaryOp):
            return gast.UnaryOp(op=node.op, operand=self.numexpr_form(node.operand, keys, dtype))
        div = isinstance(node.op, gast.Div)
        left = self.numexpr_form(node.left, keys, dtype)
        right = self.numexpr_form(node.right, keys, dtype, divisor=div)
        product = isinstance(node.op, gast.Mult)
        # x * 1.0 and x / 1.0 are x, to the bit, for a float x
        if _is_one(node.right) and (div or product) and self._float_kind(node.left, dtype):
            return left
        if _is_one(node.left) and product and self._float_kind(node.right, dtype):
            return right
        return gast.BinOp(left=left, op=node.op, right=right)

    def _float_kind(self, node, dtype):
        """Whether numexpr surely computes ``node`` as a float (not an int, as it would
        an argument of integers): in float32 every operand is; in float64 an array the
        body made, a float literal, a quotient, a function (but ``abs`` and ``sign``,
        which keep an int an int), or anything computed with one of these."""
        if dtype == np.float32:
            return True
        if isinstance(node, gast.Name):
            return self._typed(self.reaching.get(id(node))) is not None
        if isinstance(node, gast.Constant):
            return isinstance(node.value, float)
        if isinstance(node, gast.Call):
            keeps_int = self.function(node) in _KIND_KEEPING
            return not keeps_int or any(self._float_kind(a, dtype) for a in node.args)
        if isinstance(node, gast.UnaryOp):
            return self._float_kind(node.operand, dtype)
        if isinstance(node.op, gast.Div):
            return True
        return self._float_kind(node.left, dtype) or self._float_kind(node.right, dtype)

    def expanded(self, k, inline):
        """A copy of statement ``k``'s value with the values of the statements in
        ``inline`` written in place of the names they assign (the names read are the
        body's own nodes: ``reaching`` knows them)."""

        def substitute(node):
            d = self.reaching.get(id(node))
            return self.expanded(d, inline) if d in inline else node

        return transform(_copy(self.body[k].value), {gast.Name: substitute})


def _copy(node):
    """A copy of an expression whose names are the original name nodes (their
    positions in ``_Plan.reaching`` stay valid); every other node is new."""
    if isinstance(node, gast.Name) or not isinstance(node, gast.AST) or not node._fields:
        return node
    new = node.__class__.__new__(node.__class__)
    for key, value in node.__dict__.items():
        if value.__class__ is list:
            value = [_copy(v) for v in value]
        elif isinstance(value, gast.AST):
            value = _copy(value)
        new.__dict__[key] = value
    return new


def _operation(node):
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
        return not (_is_one(node.right) or isinstance(node.op, gast.Mult) and _is_one(node.left))
    return isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Call))


def _float_number(node):
    if isinstance(node, gast.UnaryOp):
        return _float_number(node.operand)
    return isinstance(node, gast.Constant) and isinstance(node.value, float)


def _is_one(node):
    return isinstance(node, gast.Constant) and node.value == 1


def _literal(value, whole):
    if whole and isinstance(value, float) and _whole(value):
        value = int(value)
    if value < 0:  # a negative literal under ** would read as -(1.0 ** 2)
        return gast.UnaryOp(op=gast.USub(), operand=const(-value))
    return const(value)


def _keys(leaves, reserved):
    """leaf name -> the name numexpr reads it by: itself, unless numexpr would take it
    for one of its own (``sin`` is then read as ``sin_``) or refuse it (``__x__``)."""
    keys, taken = {}, set(leaves)
    for n in leaves:
        key = n
        if _unreadable(key, reserved):
            key = (n.strip("_") or "v") + "_"
            while key in taken or _unreadable(key, reserved):
                key += "_"
            taken.add(key)
        keys[n] = key
    return keys


def _unreadable(key, reserved):
    dunder = key.startswith("__") and key.endswith("__")  # numexpr refuses those
    return key in reserved or key in ("None", "True", "False") or dunder


def _rename_temporaries(body, plan, found, names, namer):
    """Give every compiler temporary that fused code names (a value a chain reads, or
    a chain's result) a name ``inline`` leaves alone: ``_t4`` is ``t4``, in every variant
    alike, unless the body or a runtime name has ``t4`` already."""
    named = set()
    for r, members in found.items():
        named.add(_target(plan.body[r]))
        named.update(plan.leaves(r, members))  # (the names: a dict's keys)
    temporaries = sorted(named & namer.temporaries)
    if not temporaries:
        return
    taken = {n.id for s in body for n in descendants(s) if isinstance(n, gast.Name)}
    taken.update(names.values())
    new = {}
    for t in temporaries:
        readable = t.replace("_t", "v").replace("_", "")
        new[t] = namer.fresh(readable) if readable in taken else readable
    for s in body:
        for n in descendants(s):
            if isinstance(n, gast.Name) and n.id in new:
                n.id = new[n.id]


def _number(value, dtype):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if not math.isfinite(value):
        return False
    return dtype == np.float64 or _whole(value)


def _whole(value):
    """Whether numexpr may read ``value`` as an int: whole, within 32 bits (a larger
    one would be int64), and not -0.0 (an int has no sign of zero)."""
    whole = float(value).is_integer() and abs(value) < 2**31
    return whole and (value != 0 or math.copysign(1.0, value) > 0)


def _single_name(s):
    return len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)


def _target(s):
    return s.targets[0].id


def _loads(node):
    return [
        n for n in descendants(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    ]


def _reads(s):
    """The names statement ``s`` reads (an update ``x += y`` reads ``x``)."""
    found = _loads(s)
    if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
        found.append(s.target)
    return found


def _written(s):
    return {
        n.id for n in descendants(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }


def _passable(s, np_name):
    """Whether a value may be evaluated after ``s`` instead of before it when ``s``
    rebinds none of the names it reads: ``s`` writes into no array (a comment, or an
    assignment to names of arithmetic and numpy calls without ``out=``)."""
    if isinstance(s, gast.Expr):
        return isinstance(s.value, gast.Constant)
    if not (isinstance(s, gast.Assign) and all(isinstance(t, gast.Name) for t in s.targets)):
        return False
    for n in descendants(s.value):
        if isinstance(n, gast.Call) and not _numpy_call(n, np_name):
            return False
    return True


def _numpy_call(call, np_name):
    """``np.f(...)`` or ``np.f.g(...)`` without ``out=``."""
    if any(k.arg == "out" for k in call.keywords):
        return False
    root = call.func
    while isinstance(root, gast.Attribute):
        root = root.value
    return isinstance(root, gast.Name) and root.id == np_name and root is not call.func


# --------------------------------------------------------------------------
