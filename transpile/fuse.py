"""What ``grad(f, fuse=True)`` does to a shape variant: regions of elementwise lines
over one large shape evaluated a block of entries at a time (``blocks``, numpy only),
then chains of elementwise operations left outside them evaluated by one
``numexpr.evaluate`` call each (``chains``). ``run`` rewrites a shape-specialized
variant's body with both (``dispatch.Dispatcher.build``: after specialization, copy
propagation and dead code removal, before ``tidy``, buffer reuse and ``inline``).

Blocks
------

numpy evaluates a gradient one operation at a time over whole arrays: on 10**6 entries
every value is a new 8 MB array, written to memory (its pages faulted in) and read
back. ``blocks`` evaluates each *region*, consecutive top-level lines elementwise over
one shape of at least ``MIN_BLOCKED`` entries, ``BLOCK`` entries at a time, so that its
values stay in the caches::

    dx = np.empty((1000000,), np.float64)

    def block(i, x, dx):
        # entries i to i + 16384 of the 1000000; in_blocks calls this for each block
        xb = x[i:i + 16384]
        a = np.sin(xb)
        ...                                 # the region's lines, one per line
        dx[i:i + 16384] = dxb
    in_blocks(block, 1000000, 16384, x, dx)

* A *member* assigns to a name arithmetic (``+ - * / **``, unary ``-``) and calls of
  numpy ufuncs (``isinstance(np.<name>, np.ufunc)``, one result, no keywords, no core
  dimensions: not ``np.matmul``) of numbers and of names that hold arrays of the shape
  or 0-d values, and the specializer recorded its result as an array of that shape. A
  name's shape is the one recorded for the line that wrote it, the probe's for an
  argument (``metas``), or ``()`` for a scalar: a number, a full reduction (a function
  declared ``reduces``, ``np.add.reduce`` over every axis), the seed of a scalar
  output, scalar arithmetic. A global's is unknown: a line reading one is no member.
* Comments between members stay in the block function, and a number computed between
  them (a *passenger*, of numbers and scalars) is computed once, before the blocks,
  where no member before it reads or writes its name (the region ends there
  otherwise). A region of fewer than ``MIN_OPERATIONS`` operations is left as it was.
* The block function's parameters are the block's start and what it reads: the arrays
  of the region's shape (sliced at its top; flattened first, once, for a shape of
  several dimensions: ``x.reshape(-1)`` is a view of a contiguous array, a copy of
  another), the numbers, and the arrays it fills: every name the region leaves an array
  in that a later line reads is made ``np.empty(shape, dtype)`` before the blocks and
  filled block by block (its value in a block is ``dxb``); a name the region reads and
  also fills is read under another name (``a_0 = a``). Passed as parameters, never
  read from the enclosing function, the values a block reads stay computed once:
  ``inline`` does not move a line into the block function. A block's own values are
  written into operands nothing reads again (``buffers.reuse_buffers``).
* ``in_blocks`` calls the block function for each block, in order, or on two threads
  where the region has ``MIN_THREADED`` entries or more and two CPUs are ours (numpy
  releases the GIL in its ufunc loops; each thread takes the next block when it is
  done with one). The helper thread runs in a copy of the caller's context
  (``np.errstate`` reaches it) and an exception in either thread is raised to the
  caller.

Every entry is computed by the same numpy operations on the same values as without
blocks (numpy's loops give a slice's entries the values they give the whole array's),
so the results are equal to the bit; no sum is split. No argument is written (a block
reads slices of the arguments; the arrays it fills are new). On the benchmark's chain
of 14 ufuncs on 10**6 entries the gradient takes 0.34-0.38 of the hand-written one's
time on two idle cores, 0.52-0.56 on one; numexpr's chains alone took 0.71-0.74 (its
sine and exponential are slower than numpy's). The lines of a region are no chains for
numexpr: they are in the block function.

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
import contextvars
import math
import os
import threading
import warnings

import gast
import numpy as np

from transpile import buffers
from transpile.ir import COMMENT, Annotation, annotate, annotation, strip_annotations
from transpile.nodes import assign, const, descendants, function_def, name, transform
from transpile.rules import registry
from transpile_runtime import ops

MIN_SIZE = buffers.REUSE_SIZE  # elements: below this a chain is left to numpy
# operations: numpy writes a shorter chain into an operand nothing reads again
# (``buffers``), where numexpr makes a new array, which costs more than it saves
MIN_OPERATIONS = 3
BLOCK = 16384  # entries per block of a blocked region: its values stay in the caches
MIN_BLOCKED = 1 << 16  # entries: a smaller region is left to numexpr's chains and numpy
MIN_THREADED = 1 << 18  # entries: a smaller region runs its blocks on one thread

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
        warnings.warn(
            "grad(..., fuse=True): numexpr is not installed, so elementwise chains are "
            "not fused (pip install numexpr, or the transpile[fuse] extra)",
            RuntimeWarning,
            stacklevel=2,
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
            f"{_target(self.body[k])} = {gast.unparse(self.expanded(k, temporaries))}"
            for k in (*members, r)
            if k not in temporaries
        ]
        comment = gast.Expr(value=const(COMMENT + "fused: " + "; ".join(shown)))
        leaves = self.leaves(r, members)
        keys = _keys(list(leaves), reserved)
        dtype = annotation(root, Annotation.ARRAY)[1]
        operands = [self._operand(n, d, dtype) for n, d in leaves.items()]
        text = gast.unparse(self.numexpr_form(self.expanded(r, set(members)), keys, dtype))
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
# Blocks: regions of elementwise statements evaluated a cache-sized slice at a time


def run(body, names, namer, metas):
    """``(body, bound)``: the body with its elementwise regions evaluated in blocks
    (``blocks``, numpy only), then what is left fused into numexpr chains (``chains``),
    and the objects the new code reads by name; ``metas``: the probe's ``(kind, shape,
    dtype, type)`` of each parameter."""
    body, bound = blocks(body, names, namer, metas)
    body, more = chains(body, names, namer)
    return body, {**bound, **more}


def blocks(body, names, namer, metas):
    """``(body, bound)``: each region of consecutive elementwise statements over one
    shape of at least ``MIN_BLOCKED`` entries evaluated by a function of one block of
    ``BLOCK`` entries, which keeps the statements one per line, called by
    ``in_blocks`` for every block; ``bound``: ``in_blocks`` under its name."""
    regions = _Regions(body, names, metas)
    found = regions.found()
    if not found:
        return body, {}
    for key in ("in_blocks", "block", "i"):  # the same in every variant
        if key not in names:
            names[key] = namer.fresh(key)
    fresh = _Fresh.of(body, names, metas)
    out, last = [], 0
    for start, end, shape in found:
        out += body[last:start]
        out += _Block(regions, (start, end), shape, namer, fresh).statements(names)
        last = end
    return out + body[last:], {names["in_blocks"]: in_blocks}


def in_blocks(block, size, step, *args):
    """Call ``block(i, *args)`` for each ``i`` in ``range(0, size, step)``: on two threads
    (each takes the next block when it is done with one) where ``size`` is at least
    ``MIN_THREADED`` and two CPUs are ours, else in order. numpy releases the GIL
    while a ufunc computes; the blocks write disjoint entries, so the results are
    those of one thread. The helper thread runs in a copy of the caller's context
    (``np.errstate``), and an exception in either thread is raised here."""
    starts = iter(range(0, size, step))
    if size < MIN_THREADED or _cpus() < 2:
        for i in starts:
            block(i, *args)
        return
    errors = []

    def work():
        try:
            for i in starts:
                block(i, *args)
        except BaseException as error:  # noqa: BLE001  (raised by the caller's thread)
            errors.append(error)
            for _ in starts:  # the other thread stops at its next block
                pass

    helper = threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True)
    helper.start()
    work()
    helper.join()
    if errors:
        raise errors[0]


def _cpus():
    """How many CPUs this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


class _Flow:
    """Where each name a top-level statement reads was written: ``reaching`` maps the
    read (its node) to the position of the statement whose write it reads, None for a
    name from outside the body (a parameter, a global); a loop's reads count as read
    before its writes."""

    def __init__(self, body):
        self.reaching = {}
        self.reads = []  # position -> the names the statement reads
        current = {}
        for j, s in enumerate(body):
            found = _reads(s)
            for n in found:
                self.reaching[id(n)] = current.get(n.id)
            self.reads.append(found)
            for n in _written(s):
                current[n] = j


class _Regions:
    """The shapes a body's names hold where the specializer recorded them, and the
    regions of its statements that are elementwise over one large shape."""

    def __init__(self, body, names, metas):
        self.body = body
        self.np, self.ops = names["np"], names["ops"]
        self.metas = metas
        self.flow = _Flow(body)
        self.shapes = {}  # position -> the shape of what it assigns (() a scalar), if known
        for j, s in enumerate(body):
            if isinstance(s, gast.Assign) and _single_name(s):
                info = annotation(s, Annotation.ARRAY)
                shape = tuple(info[0]) if info is not None else self.scalar_shape(s.value)
                if shape is not None:
                    self.shapes[j] = shape

    def of(self, node):
        """The shape of the value the name ``node`` reads, or None where unknown: a
        global's, or a parameter's other than a number, a numpy array or scalar."""
        d = self.flow.reaching.get(id(node))
        if d is not None:
            return self.shapes.get(d)
        m = self.metas.get(node.id)
        if m is not None and m[0] in ("float", "int"):
            return ()
        if m is not None and m[0] == "array" and (m[1] == () or m[3] is np.ndarray):
            return tuple(m[1])
        return None

    def scalar_shape(self, node):
        """``()`` where ``node`` surely gives a number or a 0-d value: numbers, scalar
        names, elementwise operations of them, full reductions, the seed of a scalar
        output and a vjp's cotangent of one; else None."""
        if self.elementwise(node, ()) or self.full_reduction(node):
            return ()
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)):
            return None
        f = node.func
        helper = getattr(ops, f.attr, None) if getattr(f.value, "id", None) == self.ops else None
        if helper is ops.seed:  # a 0-d value, or an error
            return ()
        scalar_output = len(node.args) == 2 and self.elementwise(node.args[1], ())
        return () if helper is ops.cotangent and scalar_output else None

    def full_reduction(self, node):
        """``np.sum(v)`` (a function declared to reduce its one argument to a scalar),
        or ``np.add.reduce(v)`` over all of ``v``'s axes."""
        if not isinstance(node, gast.Call) or len(node.args) != 1:
            return False
        f = node.func
        if _numpy_attribute(f, self.np):
            declared = registry().declaration(getattr(np, f.attr, None))
            return not node.keywords and declared is not None and declared.reduces
        ufunc = None
        if (
            isinstance(f, gast.Attribute)
            and f.attr == "reduce"
            and _numpy_attribute(f.value, self.np)
        ):
            ufunc = getattr(np, f.value.attr, None)
        v = node.args[0]
        shape = self.of(v) if isinstance(v, gast.Name) else None
        if not isinstance(ufunc, np.ufunc) or shape is None:
            return False
        return _all_axes(node.keywords, len(shape))

    def ufunc(self, call):
        """The numpy ufunc ``call`` calls with its one result (no keywords), or None."""
        f = call.func
        if call.keywords or not _numpy_attribute(f, self.np):
            return None
        found = getattr(np, f.attr, None)
        if not isinstance(found, np.ufunc) or found.signature is not None:
            return None  # (np.matmul is a generalized ufunc)
        return found if found.nout == 1 and found.nin == len(call.args) else None

    def elementwise(self, node, shape):
        """Whether ``node`` computes entry by entry from names of ``shape`` or 0-d ones
        and numbers (arithmetic and numpy ufuncs)."""
        if isinstance(node, gast.Name):
            return self.of(node) in (shape, ())
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex))
        if isinstance(node, gast.BinOp):
            parts = [node.left, node.right] if isinstance(node.op, _OPERATORS) else None
        elif isinstance(node, gast.UnaryOp):
            parts = [node.operand] if isinstance(node.op, (gast.USub, gast.UAdd)) else None
        else:
            parts = node.args if isinstance(node, gast.Call) and self.ufunc(node) else None
        return parts is not None and all(self.elementwise(p, shape) for p in parts)

    def member(self, j):
        """The shape of the large elementwise array statement ``j`` assigns, or None."""
        s = self.body[j]
        info = annotation(s, Annotation.ARRAY)
        if info is None or not isinstance(s, gast.Assign) or not _single_name(s):
            return None
        shape = tuple(info[0])
        large = len(shape) >= 1 and math.prod(shape) >= MIN_BLOCKED
        if not large or info[1].kind not in "biufc":
            return None
        return shape if self.elementwise(s.value, shape) else None

    def passenger(self, j, touched):
        """Whether statement ``j``, no member, may stand in a region: a comment (kept in
        the block), or a number of numbers whose name no member before it (``touched``)
        reads or writes (evaluated once, before the blocks)."""
        s = self.body[j]
        if _is_comment(s):
            return True
        if not (isinstance(s, gast.Assign) and _single_name(s)):
            return False
        scalar = self.shapes.get(j) == () and self.elementwise(s.value, ())
        return scalar and _target(s) not in touched

    def found(self):
        """``(start, end, shape)`` of each region worth blocks: consecutive members of
        one shape, with passengers between them, and ``MIN_OPERATIONS`` operations."""
        out, k, free = [], 0, 0  # free: where the region found last ends
        while k < len(self.body):
            shape = self.member(k)
            if shape is None:
                k += 1
                continue
            start = k
            while start > free and _is_comment(self.body[start - 1]):
                start -= 1  # the comments that head the first member go with it
            last, touched = k, set()
            for j in range(k, len(self.body)):
                if self.member(j) == shape:
                    last = j
                    touched.update(n.id for n in _loads(self.body[j]))
                    touched.update(_written(self.body[j]))
                elif not self.passenger(j, touched):
                    break
            operations = sum(
                isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Call))
                for j in range(k, last + 1)
                if self.member(j)
                for n in descendants(self.body[j].value)
            )
            if operations >= MIN_OPERATIONS:
                out.append((start, last + 1, shape))
                free = last + 1
            k = last + 1
        return out


class _Block:
    """The statements that evaluate one region ``[start, end)`` of ``shape``: its
    passengers, then a function of one block of its members and comments, called for
    every block."""

    def __init__(self, regions, span, shape, namer, fresh):
        self.regions, self.np, self.namer = regions, regions.np, namer
        self.fresh, self.local = fresh, fresh.inner()  # names outside it, names in it
        (start, end), self.span, self.shape = span, span, shape
        self.flat = len(shape) > 1  # (a block of a 1-d array is a slice of it)
        body, inside = regions.body, range(start, end)
        self.made = {j for j in inside if regions.member(j)}  # positions of the members
        kept = [j for j in inside if j in self.made or _is_comment(body[j])]
        self.members = [body[j] for j in kept]  # the members and the comments among them
        self.passengers = [body[j] for j in inside if j not in kept]
        self.inputs = {}  # name -> its reads in the members of what no member wrote
        for s in self.members:
            for n in _loads(s):
                if regions.flow.reaching[id(n)] not in self.made and n.id != self.np:
                    self.inputs.setdefault(n.id, []).append(n)
        self.outputs = self.read_after()

    def read_after(self):
        """name -> the dtype of the array of the region's shape that the region leaves
        in it, for the names read after the region."""
        regions, inside = self.regions, range(self.span[0], self.span[1])
        reaching = regions.flow.reaching
        last = {n: j for j in inside for n in _written(regions.body[j])}
        later = {
            n.id for r in regions.flow.reads[self.span[1] :] for n in r if reaching[id(n)] in inside
        }
        return {
            n: annotation(regions.body[last[n]], Annotation.ARRAY)[1]
            for n in sorted(later)
            if regions.shapes.get(last[n]) == self.shape
        }

    def statements(self, names):
        """The passengers, the aliases and arrays made before the blocks, the function
        of one block (``names["block"]``), whose parameters are the block's start and
        the arrays and numbers it reads, and the call of ``in_blocks`` that runs it."""
        size = math.prod(self.shape)
        self.i, function, helper = names["i"], names["block"], names["in_blocks"]
        before, top, params = self.read_inputs()
        bottom = []
        for n, dtype in self.outputs.items():
            block = self.new_name(n, "b", self.local)
            self.rename_writes(n, block)
            new = assign(n, self.empty(dtype), self.members[0])
            annotate(new, Annotation.ARRAY, (self.shape, dtype))
            before.append(new)
            params.append(n)
            target = self.entries(self.flattened(n), gast.Store())
            bottom.append(gast.Assign(targets=[target], value=name(block), type_comment=None))
        for s in self.members:  # a block's values, for buffer reuse inside the block
            info = annotation(s, Annotation.ARRAY)
            if info is not None:
                annotate(s, Annotation.ARRAY, ((BLOCK,), info[1]))
        body = buffers.reuse_buffers(top + self.members + bottom, self.np, min_size=1)
        for s in body:
            strip_annotations(s)
        comment = f"entries {self.i} to {self.i} + {BLOCK} of the {size}; {helper} calls this"
        body.insert(0, gast.Expr(value=const(COMMENT + comment + " for each block")))
        args = gast.arguments(
            args=[name(p, gast.Param()) for p in (self.i, *params)],
            posonlyargs=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        run = gast.Call(
            func=name(helper),
            args=[name(function), const(size), const(BLOCK), *(name(p) for p in params)],
            keywords=[],
        )
        new = [*self.passengers, *before, function_def(function, args, body), gast.Expr(value=run)]
        return [gast.copy_location(s, self.members[0]) for s in new]

    def read_inputs(self):
        """``(before, top, params)``: the aliases made before the blocks (a flat view
        of a many-dimensional array; a value whose name the region's new array takes,
        as it was), each block's slices of the arrays, and the names the block reads."""
        before, top, params = [], [], []
        for n, nodes in self.inputs.items():
            array = self.regions.of(nodes[0]) == self.shape
            source = n
            if n in self.outputs or array and self.flat:
                source = self.new_name(n, "_flat" if array and self.flat else "_0", self.fresh)
                value = self.flattened(n) if array else name(n)
                before.append(assign(source, value, self.members[0]))
            params.append(source)
            if array:
                block = self.new_name(n, "b", self.local)
                top.append(assign(block, self.entries(name(source)), self.members[0]))
                source = block
            _rename(nodes, source)
        return before, top, params

    def new_name(self, n, suffix, fresh):
        """A new name for a value of ``n``: ``n`` and ``suffix`` (``xb``, ``x_flat``), a
        temporary for a temporary (``inline`` numbers them afresh)."""
        if n in self.namer.temporaries:
            return self.namer.temp()
        return fresh(n + suffix)

    def flattened(self, n):
        """``n.reshape(-1)`` for a many-dimensional region (a view of a contiguous
        array, else a copy made once), ``n`` itself for a 1-d one."""
        if not self.flat:
            return name(n)
        reshape = gast.Attribute(value=name(n), attr="reshape", ctx=gast.Load())
        return gast.Call(func=reshape, args=[const(-1)], keywords=[])

    def entries(self, array, ctx=None):
        """``array[i:i + BLOCK]``."""
        upper = gast.BinOp(left=name(self.i), op=gast.Add(), right=const(BLOCK))
        return gast.Subscript(
            value=array,
            slice=gast.Slice(lower=name(self.i), upper=upper, step=None),
            ctx=ctx or gast.Load(),
        )

    def empty(self, dtype):
        """``np.empty(shape, np.float64)``."""
        if getattr(np, dtype.name, None) is dtype.type:
            kind = gast.Attribute(value=name(self.np), attr=dtype.name, ctx=gast.Load())
        else:
            make = gast.Attribute(value=name(self.np), attr="dtype", ctx=gast.Load())
            kind = gast.Call(func=make, args=[const(dtype.str)], keywords=[])
        func = gast.Attribute(value=name(self.np), attr="empty", ctx=gast.Load())
        return gast.Call(func=func, args=[const(self.shape), kind], keywords=[])

    def rename_writes(self, n, block):
        """Every write of ``n`` in the region, and every read of such a write, names
        ``block`` instead."""
        reaching = self.regions.flow.reaching
        for s in self.members:
            for node in descendants(s):
                if not isinstance(node, gast.Name) or node.id != n:
                    continue
                if isinstance(node.ctx, gast.Store) or reaching.get(id(node)) in self.made:
                    node.id = block


def _all_axes(keywords, ndim):
    """Whether a ufunc's ``reduce`` with these keywords reduces all ``ndim`` axes (its
    default axis is 0) to a scalar."""
    options = {k.arg: k.value for k in keywords}
    axis = options.pop("axis", const(0))
    if options or not isinstance(axis, gast.Constant):
        return False
    axes = range(ndim) if axis.value is None else np.atleast_1d(axis.value)
    return sorted(int(a) % max(ndim, 1) for a in axes) == list(range(ndim))


class _Fresh:
    """Names that no statement of a body reads or writes, nor the runtime nor a
    parameter: ``base``, else ``base_1``, ``base_2``, ...; ``inner()`` hands out the
    local names of one block function (those of another may be the same)."""

    def __init__(self, taken, outer=None):
        self.taken, self.outer = set(taken), outer

    @classmethod
    def of(cls, body, names, params):
        taken = {n.id for s in body for n in descendants(s) if isinstance(n, gast.Name)}
        return cls(taken | set(names.values()) | set(params))

    def inner(self):
        return _Fresh((), self)

    def __call__(self, base):
        new, k = base, 0
        while new in self.taken or self.outer is not None and new in self.outer.taken:
            k += 1
            new = f"{base}_{k}"
        self.taken.add(new)
        return new


def _is_comment(s):
    return isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant)


def _rename(nodes, new):
    for n in nodes:
        n.id = new


def _numpy_attribute(node, np_name):
    """Whether ``node`` is ``np.<name>``."""
    return (
        isinstance(node, gast.Attribute)
        and isinstance(node.value, gast.Name)
        and node.value.id == np_name
    )
