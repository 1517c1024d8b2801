"""Regions of elementwise lines of a shape variant evaluated a block of entries at a
time (``grad(f, fuse=True)``; ``fuse.chains`` then fuses what is left with numexpr).

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
"""

import math

import gast
import numpy as np

from transpile.backend.fuse import (
    _OPERATORS,
    MIN_OPERATIONS,
    _loads,
    _reads,
    _single_name,
    _target,
    _written,
)
from transpile.cleanup import buffers
from transpile.core.ir import COMMENT, Annotation, annotate, annotation, strip_annotations
from transpile.core.nodes import assign, const, descendants, function_def, name
from transpile.rules import registry
from transpile_runtime import ops
from transpile_runtime.blocks import in_blocks

BLOCK = 16384  # entries per block of a blocked region: its values stay in the caches
MIN_BLOCKED = 1 << 16  # entries: a smaller region is left to numexpr's chains and numpy


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
