"""Desugaring and A-normal form.

After ``run``, a function body holds only these statement shapes, where an
*atom* is a ``Name`` or a ``Constant``:

    name = atom                          copy
    name = atom OP atom                  BinOp (+ - * / // % ** @)
    name = OP atom                       UnaryOp (- + not ~)
    name = atom CMP atom                 Compare, one comparison
    name = f(atom, ..., k=atom)          Call; f is a Name, an attribute chain of
                                         names (np.linalg.norm) or a method atom.m
    name = atom.attr                     Attribute read
    name = atom[index]                   Subscript read; index made of atoms,
                                         slices of atoms, None, Ellipsis, tuples
    name = (atom, ...) / [atom, ...]     Tuple / List display
    name = {atom: atom, ...}             Dict display
    name = <opaque>                      BoolOp, Lambda, JoinedStr: never differentiated
    name[index] = atom                   Subscript write (array or list slot)
    f(atom, ...)                         Call statement (hs.append(h), print)
    if atom: ... else: ...
    for name in atom: ...                atom is a range object computed before the loop
    while atom: ...                      the test atom is recomputed at the end of the body
    break / continue / raise / assert
    pass                                 only as the whole of a block that lowering
                                         emptied (``if c: continue``)
    return atom                          exactly one, the last statement of the body

Returns inside branches and loops are lowered to a single exit (``lower``); ``for`` over lists,
arrays, ``enumerate`` and ``zip`` becomes ``for i in range(...)`` plus element reads
(over a dict, of its keys: ``dict_loops``);
augmented assignment and tuple unpacking become plain assignments. Nodes keep the
line number of the user's statement they came from.
"""

import builtins
import functools

import gast

from transpile.core import printer
from transpile.core.errors import at
from transpile.core.ir import GRAD_HOOK, MISSING, TRY, Annotation, annotation
from transpile.core.nodes import (
    assign,
    call,
    calls_marker,
    clone,
    const,
    contains_jump,
    descendants,
    is_atom,
    located,
    name,
)
from transpile.front import desugar, dict_loops, fence, function_args, keyword_spread, lower, rename
from transpile_runtime import ops

_OPAQUE = (gast.BoolOp, gast.Lambda, gast.JoinedStr)


def stage(fn, ctx):
    """Single exit, A-normal form, jumps lowered, top-level re-assignments renamed."""
    fn.augmented = {}
    fn.tree = run(fn.parsed, fn.namer, fn.names.get("ops", "ops"), fn.augmented)
    return fn


def run(parsed, namer, ops_name="ops", augmented=None):
    """Normalize ``parsed.tree`` in place and return it; ``ops_name`` is the name the
    generated code calls the runtime helpers by (a loop over a dict reads its keys).
    ``augmented`` gets, for each augmented assignment, id(the statement that now does
    its update) -> (that statement, the assignment as written)."""
    tree = parsed.tree
    tree.body = lower.returns(parsed, namer, tree.body)
    normalizer = _Normalizer(parsed, namer, ops_name)
    tree.body = normalizer.block(tree.body)
    if augmented is not None:
        augmented.update(normalizer.augmented)
    tree.body = lower.jumps(tree.body, parsed, namer)
    return rename.run(tree, namer)


def _binding_facts(walked, tree):
    """In one pass over ``walked`` (the nodes of ``tree``): name -> how many times it is
    bound (as a target, a parameter or a def); the names of the functions made in the
    function (its defs and lambdas bound); the names of lowered try statements."""
    counts, defined, caught = {}, set(), set()
    for n in walked:
        kind = n.__class__
        if kind is gast.Name:
            if isinstance(n.ctx, (gast.Store, gast.Param)):
                counts[n.id] = counts.get(n.id, 0) + 1
        elif kind is gast.FunctionDef:
            if n is not tree:
                counts[n.name] = counts.get(n.name, 0) + 1
                defined.add(n.name)
        elif kind is gast.Assign:
            if isinstance(n.value, gast.Lambda):
                defined.update(t.id for t in n.targets if isinstance(t, gast.Name))
            if calls_marker(n, TRY):  # (``exceptions``)
                caught.add(n.targets[0].id)
    return counts, defined, caught


class _Normalizer:
    def __init__(self, parsed, namer, ops_name="ops"):
        self.parsed = parsed
        self.namer = namer
        self.ops_name = ops_name
        walked = descendants(parsed.tree)
        self.bound_to = dict_loops.bindings(walked)  # name -> the values assigned to it
        # the names of lowered try statements: ``caught``
        self.bindings, self.defined, self.caught = _binding_facts(walked, parsed.tree)
        self.helpers = set()  # the helpers being inlined, by id (function_args)
        self.values = desugar.used_as_values(walked, self._is_map, self._to_inline)
        self.locals = {}  # name -> desugar.Local, for the functions defined in the body
        self.partials = {}  # name -> (function, stored arguments, keywords) of a partial
        self.tuple_lengths = {}  # a name bound once to a tuple display -> its length
        self.dict_keys = {}  # a name bound once to a dict display of fixed keys -> them
        self.mutated_dicts = keyword_spread.mutated(walked, parsed.tree.body)
        self.inlining = []  # the local functions whose bodies are being inlined
        self.augmented = {}  # id(statement) -> (it, the augmented assignment it does)

    # statements -----------------------------------------------------------------
    def block(self, stmts):
        out = []
        for stmt in stmts:
            out.extend(self.stmt(stmt))
        return out

    def stmt(self, s):
        popped = keyword_spread.popped(s)
        if popped is not None and popped[0] in self.dict_keys:  # rng = kwargs.pop("rng")
            self.dict_keys[popped[0]] = tuple(
                k for k in self.dict_keys[popped[0]] if k != popped[1]
            )
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise at(self.parsed, s, f"{type(s).__name__} statements are not supported")
        return method(s)

    def stmt_Pass(self, s):
        return []

    def stmt_With(self, s):
        """``with insert_grad_of(x) as dx: block`` (the only ``with`` the fence lets
        through): a marker carrying the block's text, which the adjoint sweep runs."""
        x, dx = fence.grad_hook(self.parsed, s)
        text = "".join(printer.source(b) + "\n" for b in s.body)
        hook = gast.Call(func=name(GRAD_HOOK), args=[name(x), const(dx), const(text)], keywords=[])
        return [gast.copy_location(gast.Expr(value=hook), s)]

    def stmt_FunctionDef(self, s):
        if s.decorator_list:
            raise at(
                self.parsed,
                s,
                "a decorated function defined inside the differentiated function",
                "define it at module level, or call it undecorated",
            )
        return self.define(s.name, s)

    def define(self, fname, node):
        """Remember the local function ``node`` (a def or a lambda bound to ``fname``);
        its calls inline its body. Its defaults are computed here, as Python does."""
        what = f"`{fname}`, defined inside the differentiated function,"
        params, with_defaults = desugar.parameters(node)
        if params is None:
            raise at(
                self.parsed,
                node,
                f"{what} takes *args, **kwargs or keyword-only parameters",
                "give it plain positional parameters (with defaults if needed)",
            )
        if self.bindings.get(fname, 0) > 1:
            raise at(
                self.parsed,
                node,
                f"{what} is bound more than once",
                "give each local function its own name",
            )
        if fname in self.values:
            raise at(
                self.parsed,
                node,
                f"{what} is used as a value, not only called",
                "call it directly, or through map(...); or define it at module level",
            )
        pre, defaults = [], {}
        for p, default in zip(with_defaults, node.args.defaults):
            defaults[p] = self._frozen(self.atom(default, pre), pre, node)
        self.locals[fname] = desugar.Local(fname, node, defaults)
        return pre

    def stmt_Break(self, s):
        return [s]

    stmt_Continue = stmt_Break

    def stmt_Raise(self, s):
        return [s]

    def stmt_Assert(self, s):
        return [s]

    def stmt_Expr(self, s):
        if isinstance(s.value, gast.Constant):
            return []  # docstring or bare constant
        pre = []
        value = self.expr(s.value, pre, top=True)
        if isinstance(value, gast.Call):
            return pre + [gast.copy_location(gast.Expr(value=value), s)]
        return pre

    def stmt_Return(self, s):
        pre = []
        value = self.atom(s.value if s.value is not None else const(None), pre)
        return pre + [gast.copy_location(gast.Return(value=value), s)]

    def stmt_AnnAssign(self, s):
        if s.value is None:
            return []
        return self.stmt_Assign(
            gast.copy_location(gast.Assign(targets=[s.target], value=s.value, type_comment=None), s)
        )

    def stmt_AugAssign(self, s):
        """``z -= v`` becomes ``z = z - v``; the statement that does the update (for a
        name, the one computing ``z - v``, which ``rename`` may bind to a temporary or a
        version; for ``w[i] -= v``, the write into ``w``) is remembered with the
        assignment as written, for ``inplace``: numpy updates ``z``'s array in place."""
        written = clone(s)
        load_target = gast.copy_location(_as_load(s.target), s)  # its read: the user's line
        value = gast.copy_location(gast.BinOp(left=load_target, op=s.op, right=s.value), s)
        out = self.stmt_Assign(
            gast.copy_location(gast.Assign(targets=[s.target], value=value, type_comment=None), s)
        )
        if out and isinstance(s.target, (gast.Name, gast.Subscript)):
            # the statement itself is kept with it: its id names no other node later
            self.augmented[id(out[-1])] = (out[-1], written)
        return out

    def stmt_Assign(self, s):
        pre = []
        if len(s.targets) > 1:  # a = b = expr
            value = self.atom(s.value, pre)
            for target in s.targets:
                pre.extend(self.bind(target, value, s))
            return pre
        target = s.targets[0]
        if isinstance(target, gast.Name):
            return self.assign_name(target.id, s)
        unzipped = self._unzipped(target, s.value)
        if unzipped is not None:
            return self.stmt_Assign(
                gast.copy_location(
                    gast.Assign(targets=[target], value=unzipped, type_comment=None), s
                )
            )
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(
            s.value, (gast.Tuple, gast.List)
        ):
            target = self._gather_starred(target, s.value, s)
            if len(target.elts) != len(s.value.elts):
                raise at(self.parsed, s, "tuple unpacking with mismatched lengths")
            values = [self._display_or_atom(t, v, pre) for t, v in zip(target.elts, s.value.elts)]
            values = [self._copy_if_name(v, pre, s) for v in values]
            for t, v in zip(target.elts, values):
                if isinstance(v, (gast.List, gast.Dict)):  # out, i = [], 0: out is made here
                    pre.append(assign(t.id, v, s))
                else:
                    pre.extend(self.bind(t, v, s))
            return pre
        value = self.atom(s.value, pre)
        return pre + self.bind(target, value, s)

    def assign_name(self, target, s):
        """``target = value``: a lambda or partial is remembered for its calls."""
        if isinstance(s.value, gast.Lambda):
            return self.define(target, s.value)
        if self._is_partial(s.value):
            return self.define_partial(target, s.value, s)
        if isinstance(s.value, (gast.ListComp, gast.DictComp)) and not any(
            isinstance(n, gast.Name) and n.id == target for n in descendants(s.value)
        ):  # built in place: a key or item written into it later writes the function's own
            stmts, _ = desugar.comprehension(s.value, self.namer, self.parsed, into=target)
            return self.block(stmts)
        pre = []
        value = self.expr(s.value, pre, top=True)
        if isinstance(value, gast.Name) and value.id == target:
            return pre  # x = x changes nothing
        if isinstance(value, gast.Tuple) and self.bindings.get(target, 0) == 1:
            self.tuple_lengths[target] = len(value.elts)
        keys = keyword_spread.display_keys(value)
        fixed = self.bindings.get(target, 0) == 1 and target not in self.mutated_dicts
        if keys is not None and fixed:
            self.dict_keys[target] = keys
        return pre + [assign(target, value, s)]

    def _unzipped(self, target, value):
        """``xs, ys = zip(*pairs)``: the display ``(tuple([p[0] for p in pairs]), ...)``,
        one column per target; None for any other assignment."""
        if not (
            isinstance(target, (gast.Tuple, gast.List))
            and all(isinstance(t, gast.Name) for t in target.elts)
            and isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and self.parsed.resolve(value.func) is builtins.zip
            and len(value.args) == 1
            and isinstance(value.args[0], gast.Starred)
            and not value.keywords
        ):
            return None
        rows = value.args[0].value
        columns = []
        for k in range(len(target.elts)):
            row = name(desugar.unused_name("row", rows), gast.Store())
            gen = gast.comprehension(target=row, iter=clone(rows), ifs=[], is_async=0)
            item = gast.Subscript(value=name(row.id), slice=const(k), ctx=gast.Load())
            column = gast.ListComp(elt=item, generators=[gen])
            columns.append(gast.Call(func=name("tuple"), args=[column], keywords=[]))
        return located(gast.Tuple(elts=columns, ctx=gast.Load()), value)

    def _transposed(self, node):
        """``zip(*rows)`` read as a value (``pairs = zip(*rows)``, ``list(zip(*rows))``,
        ``for a, b in zip(*rows)``), as the items it gives: ``[tuple([row[j] for row in
        rows]) for j in range(min([len(row) for row in rows], default=0))]``; None for any
        other expression."""
        if not (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and self.parsed.resolve(node.func) is builtins.zip
            and len(node.args) == 1
            and isinstance(node.args[0], gast.Starred)
            and not node.keywords
        ):
            return None
        rows = node.args[0].value
        row, j = desugar.unused_name("row", rows), desugar.unused_name("j", rows)

        def over_rows(elt):
            store = name(row, gast.Store())
            gen = gast.comprehension(target=store, iter=clone(rows), ifs=[], is_async=0)
            return gast.ListComp(elt=elt, generators=[gen])

        item = gast.Subscript(value=name(row), slice=name(j), ctx=gast.Load())
        column = gast.Call(func=name("tuple"), args=[over_rows(item)], keywords=[])
        lengths = over_rows(gast.Call(func=name("len"), args=[name(row)], keywords=[]))
        shortest = gast.Call(
            func=name("min"),
            args=[lengths],
            keywords=[gast.keyword(arg="default", value=const(0))],
        )
        count = gast.Call(func=name("range"), args=[shortest], keywords=[])
        gen = gast.comprehension(target=name(j, gast.Store()), iter=count, ifs=[], is_async=0)
        return located(gast.ListComp(elt=column, generators=[gen]), node)

    def _gather_starred(self, target, value, origin):
        """``a, *rest = x, y, z`` as ``a, rest = x, [y, z]``: ``target`` with its starred
        name, and ``value`` (a display, edited) with the items it takes as a list."""
        starred = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if not starred:
            return target
        k, after = starred[0], len(target.elts) - starred[0] - 1
        if len(value.elts) < len(target.elts) - 1 or any(
            isinstance(e, gast.Starred) for e in value.elts
        ):
            raise at(self.parsed, origin, "tuple unpacking with mismatched lengths")
        middle = value.elts[k : len(value.elts) - after]
        value.elts = [
            *value.elts[:k],
            located(gast.List(elts=middle, ctx=gast.Load()), origin),
            *value.elts[len(value.elts) - after :],
        ]
        elts = list(target.elts)
        elts[k] = elts[k].value
        return gast.Tuple(elts=elts, ctx=gast.Store())

    def _frozen(self, v, pre, origin):
        """``v`` as it is now, for a later call: a copy of a name bound again later."""
        if isinstance(v, gast.Name) and self.bindings.get(v.id, 0) <= 1:
            return v
        return self._copy_if_name(v, pre, origin)

    def _display_or_atom(self, target, value, pre):
        """The empty list or dict display ``value`` itself where it is bound to the name
        ``target`` (a list the function makes, as ``out = []`` is); else its atom."""
        if isinstance(target, gast.Name) and isinstance(value, gast.List) and not value.elts:
            return located(gast.List(elts=[], ctx=gast.Load()), value)
        if isinstance(target, gast.Name) and isinstance(value, gast.Dict) and not value.keys:
            return located(gast.Dict(keys=[], values=[]), value)
        return self.atom(value, pre)

    def _copy_if_name(self, v, pre, origin):
        # a, b = b, a: read every value before any target is written
        if isinstance(v, gast.Name):
            t = self.namer.temp()
            pre.append(assign(t, v, origin))
            return name(t)
        return v

    def bind(self, target, value_atom, origin):
        """Statements that bind ``target`` (a name, tuple, or subscript) to an atom."""
        if isinstance(target, gast.Name):
            if isinstance(value_atom, gast.Name) and value_atom.id == target.id:
                return []  # x = x changes nothing
            return [assign(target.id, value_atom, origin)]
        if isinstance(target, (gast.Tuple, gast.List)):
            out = []
            for i, elt in enumerate(target.elts):
                item = _unpacked_item(target.elts, i, value_atom)
                if isinstance(elt, gast.Starred):
                    elt, part = elt.value, self.namer.temp()
                    out.append(assign(part, item, origin))  # one operation per line
                    item = call(name("list"), [name(part)], origin)
                if isinstance(elt, gast.Name):
                    out.append(assign(elt.id, item, origin))
                else:
                    t = self.namer.temp()
                    out.append(assign(t, item, origin))
                    out.extend(self.bind(elt, name(t), origin))
            return out
        if isinstance(target, gast.Subscript):
            pre = []
            base = target.value
            if not isinstance(base, gast.Name):
                base = self.atom(base, pre)
            index = self.index(target.slice, pre)
            node = gast.Assign(
                targets=[gast.Subscript(value=name(base.id), slice=index, ctx=gast.Store())],
                value=value_atom,
                type_comment=None,
            )
            return pre + [gast.copy_location(node, origin)]
        if isinstance(target, gast.Attribute):  # run as written: setattr(obj, "attr", v)
            pre = []
            owner = self.atom(target.value, pre)
            write = call(name("setattr"), [owner, const(target.attr), value_atom], origin)
            return pre + [located(gast.Expr(value=write), origin)]
        raise at(self.parsed, origin, f"cannot assign to {type(target).__name__}")

    def stmt_If(self, s):
        known = _known_truth(s.test, self.parsed.resolve)
        if known is not None:
            return self.block(s.body if known else s.orelse)
        pre = []
        test = self.truth(s.test, pre)
        node = gast.If(test=test, body=self.block(s.body), orelse=self.block(s.orelse))
        return pre + [gast.copy_location(node, s)]

    def stmt_While(self, s):
        pre = []
        test = self.truth(s.test, pre)
        again = []
        test_again = self.truth(clone(s.test), again)
        if isinstance(test, gast.Name) and isinstance(test_again, gast.Name):
            # the re-evaluated test writes the same variable
            again = _rename_target(again, test_again.id, test.id)
        elif not (isinstance(test, gast.Constant) and isinstance(test_again, gast.Constant)):
            raise at(self.parsed, s, "unsupported while-loop test")
        body = self.block(s.body)
        if contains_jump(body, gast.Continue):
            # what follows a continue moves into the branches it skips; the continue
            # then ends its path and falls through to the re-evaluated test
            loop = lower.jumps(
                [gast.While(test=test, body=body, orelse=[])], self.parsed, self.namer
            )
            body = lower.without_continues(loop[0].body)
        node = gast.While(test=test, body=body + again, orelse=[])
        return pre + [gast.copy_location(node, s)]

    def stmt_For(self, s):
        pre = []
        it = s.iter
        target = s.target
        if _is_call_to(self.parsed, it, builtins.range) and isinstance(target, gast.Name):
            args = [self.atom(a, pre) for a in it.args]
            rng = self.namer.temp()
            pre.append(assign(rng, call(name("range"), args, it), s))
            body = self.block(s.body)
            loop_var = target.id
            if self.bindings.get(loop_var, 0) > 1:
                # the name is bound elsewhere too: the reversed loop must not clobber it
                loop_var = self.namer.fresh(target.id)
                body = [assign(target.id, name(loop_var), s)] + body
            return pre + [
                gast.copy_location(
                    gast.For(
                        target=name(loop_var, gast.Store()),
                        iter=name(rng),
                        body=body,
                        orelse=[],
                        type_comment=None,
                    ),
                    s,
                )
            ]
        index = self.namer.fresh("i") if not isinstance(target, gast.Name) or True else None
        length, elements = self._elements(it, target, index, pre, s)
        rng = self.namer.temp()
        pre.append(assign(rng, call(name("range"), [length], it), s))
        head = []
        for tgt, elem in elements:
            head.extend(
                self.stmt(
                    gast.copy_location(gast.Assign(targets=[tgt], value=elem, type_comment=None), s)
                )
            )
        body = self.block(s.body)
        return pre + [
            gast.copy_location(
                gast.For(
                    target=name(index, gast.Store()),
                    iter=name(rng),
                    body=head + body,
                    orelse=[],
                    type_comment=None,
                ),
                s,
            )
        ]

    def _elements(self, it, target, index, pre, origin):
        """(length atom, [(target, element expression)]) for iterating ``it``."""
        if _is_call_to(self.parsed, it, builtins.enumerate):
            if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
                raise at(self.parsed, origin, "unpack enumerate(...) as `for i, x in ...`")
            length, elems = self._elements(it.args[0], target.elts[1], index, pre, origin)
            return length, [(target.elts[0], name(index))] + elems
        transposed = self._transposed(it)
        if transposed is not None:
            return self._sequence_elements(transposed, target, index, pre, origin)
        if _is_call_to(self.parsed, it, builtins.zip):
            if not (isinstance(target, gast.Tuple) and len(target.elts) == len(it.args)):
                raise at(self.parsed, origin, "unpack zip(...) into one name per sequence")
            lengths, elems = [], []
            for arg, tgt in zip(it.args, target.elts):
                length, e = self._elements(arg, tgt, index, pre, origin)
                lengths.append(length)
                elems.extend(e)
            if len(lengths) == 1:
                return lengths[0], elems
            t = self.namer.temp()
            pre.append(assign(t, call(name("min"), lengths, origin), origin))
            return name(t), elems
        if _is_call_to(self.parsed, it, builtins.reversed) and len(it.args) == 1:
            return self._reversed_elements(it.args[0], target, index, pre, origin)
        return self._sequence_elements(it, target, index, pre, origin)

    def _reversed_elements(self, it, target, index, pre, origin):
        """``_elements`` of ``reversed(it)``."""
        over_dict = self._dict_iterated(it)
        if over_dict is not None:
            return self._dict_elements(*over_dict, target, name(index), pre, origin, True)
        length, elems = self._elements(it, target, index, pre, origin)
        if not all(isinstance(e, gast.Subscript) for _, e in elems):
            raise at(self.parsed, origin, "reversed() of something that is not a sequence")
        # the k-th item of reversed(seq) is seq[-1 - k]
        back = gast.BinOp(left=const(-1), op=gast.Sub(), right=name(index))
        return length, [(tgt, _index_with(e, back)) for tgt, e in elems]

    def _sequence_elements(self, it, target, index, pre, origin):
        """``_elements`` of a loop over a dict's keys or a sequence's items."""
        over_dict = self._dict_iterated(it)
        if over_dict is not None:
            return self._dict_elements(*over_dict, target, name(index), pre, origin)
        seq = self.atom(it, pre)
        if self._may_be_dict(it):  # a dict goes over its keys, a sequence over its items
            iterated = self.namer.temp()
            pre.append(assign(iterated, call(self._ops("iterated"), [seq], origin), origin))
            seq = name(iterated)
        t = self.namer.temp()
        pre.append(assign(t, call(name("len"), [seq], origin), origin))
        elem = gast.Subscript(value=seq, slice=name(index), ctx=gast.Load())
        return name(t), [(target, elem)]

    def _ops(self, helper):
        """``ops.helper``, resolving for the stages after this one as in generated code."""
        self.parsed.bound[self.ops_name] = ops
        return gast.Attribute(value=name(self.ops_name), attr=helper, ctx=gast.Load())

    def _dict_iterated(self, it):
        """``(the dict, "keys" | "values" | "items")`` where a loop over ``it`` surely
        goes over a dict, else None."""
        return dict_loops.surely_dict(self.parsed, it, self.bound_to, ops.keys)

    def _may_be_dict(self, it):
        return dict_loops.may_be_dict(self.parsed, it, self.bound_to)

    def _dict_elements(self, base, kind, target, index, pre, origin, backwards=False):
        """``_elements`` of a loop over the keys, values or items of the dict ``base``,
        in its order (``backwards``: reversed): ``for k, v in d.items()`` reads
        ``k = keys[i]`` and ``v = d[k]``."""
        d = self.atom(base, pre)
        keys = self.namer.temp()
        pre.append(assign(keys, call(self._ops("keys"), [d], origin), origin))
        length = self.namer.temp()
        pre.append(assign(length, call(name("len"), [name(keys)], origin), origin))
        if backwards:  # the k-th key from the end
            index = gast.BinOp(left=const(-1), op=gast.Sub(), right=index)
        key = gast.Subscript(value=name(keys), slice=index, ctx=gast.Load())
        if kind == "keys":
            return name(length), [(target, key)]
        if kind == "values":
            return name(length), [(target, gast.Subscript(value=d, slice=key, ctx=gast.Load()))]
        if isinstance(target, gast.Tuple) and len(target.elts) == 2:
            k_target, v_target = target.elts
            read_key = name(k_target.id) if isinstance(k_target, gast.Name) else clone(key)
            value = gast.Subscript(value=clone(d), slice=read_key, ctx=gast.Load())
            return name(length), [(k_target, key), (v_target, value)]
        value = gast.Subscript(value=clone(d), slice=clone(key), ctx=gast.Load())
        return name(length), [(target, gast.Tuple(elts=[key, value], ctx=gast.Load()))]

    def truth(self, node, pre):
        """The test of a branch as a bool computed now: the adjoint replays the branch
        from it, after lists and arrays named in the test may have changed. A
        comparison is made a bool too: of lazy arrays (dask) it is an array, which
        every test would compute again, in the primal and once more in the adjoint;
        ``not`` gives a bool already."""
        if isinstance(node, gast.Name) and node.id in self.caught:
            return node  # set by its try statement: the adjoint reads it after the try
        test = self.atom(node, pre)
        made = pre[-1] if pre and isinstance(test, gast.Name) else None
        decided = (
            made is not None
            and made.targets[0].id == test.id
            and isinstance(made.value, gast.UnaryOp)
            and isinstance(made.value.op, gast.Not)
        )
        if isinstance(test, gast.Name) and not decided:
            t = self.namer.temp()
            pre.append(assign(t, call(name("bool"), [test], node), node))
            return name(t)
        return test

    # expressions ----------------------------------------------------------------
    def atom(self, node, pre):
        """Reduce ``node`` to an atom, appending the statements that compute it."""
        node = self.fold_constant(node)
        if is_atom(node):
            return node
        value = self.expr(node, pre, top=True)
        if is_atom(value):
            return value
        t = self.namer.temp()
        pre.append(assign(t, value, node))
        return name(t)

    def fold_constant(self, node):
        if (
            isinstance(node, gast.UnaryOp)
            and isinstance(node.op, (gast.USub, gast.UAdd))
            and isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float, complex))
            and not isinstance(node.operand.value, bool)
        ):
            v = node.operand.value
            return gast.copy_location(const(-v if isinstance(node.op, gast.USub) else v), node)
        if (
            isinstance(node, gast.BinOp)
            and isinstance(node.op, gast.Add)
            and all(
                isinstance(o, gast.Constant) and isinstance(o.value, str)
                for o in (node.left, node.right)
            )
        ):  # "W" + name, once an inlined call made name a string constant
            return gast.copy_location(const(node.left.value + node.right.value), node)
        return node

    def expr(self, node, pre, top=False):
        """One operation whose operands are atoms (the right-hand side of a statement)."""
        node = self.fold_constant(node)
        if is_atom(node) or isinstance(node, _OPAQUE):
            return node
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise at(
                self.parsed,
                node,
                f"{type(node).__name__} expressions are not supported",
                "compute the value with arrays, lists, tuples or dicts, or outside the "
                "differentiated function",
            )
        return method(node, pre)

    def expr_BinOp(self, node, pre):
        left, right = self.atom(node.left, pre), self.atom(node.right, pre)
        return located(gast.BinOp(left=left, op=node.op, right=right), node)

    def expr_UnaryOp(self, node, pre):
        return located(gast.UnaryOp(op=node.op, operand=self.atom(node.operand, pre)), node)

    def expr_Compare(self, node, pre):
        left = self.atom(node.left, pre)
        if len(node.ops) == 1:
            return located(
                gast.Compare(
                    left=left, ops=node.ops, comparators=[self.atom(node.comparators[0], pre)]
                ),
                node,
            )
        # a < b < c  ==>  (a < b) & (b < c), evaluated eagerly
        parts, prev = [], left
        for op, comp in zip(node.ops, node.comparators):
            right = self.atom(comp, pre)
            parts.append(self.atom(gast.Compare(left=prev, ops=[op], comparators=[right]), pre))
            prev = right
        result = parts[0]
        for p in parts[1:]:
            result = self.atom(gast.BinOp(left=result, op=gast.BitAnd(), right=p), pre)
        return result

    def expr_Call(self, node, pre):
        transposed = self._transposed(node)
        if transposed is not None:
            return self.expr(transposed, pre, top=True)
        view = dict_loops.view(self.parsed, node)
        if view is not None and isinstance(view[0], gast.Name):
            return self.expr(self._view_list(*view, node, pre), pre, top=True)
        return self.call(node, pre)

    def _view_list(self, base, kind, node, pre):
        """``d.values()`` read other than by a loop (``list(d.values())``,
        ``sum(d.values())``), as the list it holds in order: ``[d[k] for k in d]``,
        whose items are differentiated as any dict item is."""
        d = base
        keys = gast.Call(func=self._ops("keys"), args=[name(d.id)], keywords=[])
        if kind == "keys":
            return located(keys, node)
        key = desugar.unused_name("key", d)
        item = gast.Subscript(value=name(d.id), slice=name(key), ctx=gast.Load())
        if kind == "items":
            item = gast.Tuple(elts=[name(key), item], ctx=gast.Load())
        gen = gast.comprehension(target=name(key, gast.Store()), iter=keys, ifs=[], is_async=0)
        return located(gast.ListComp(elt=item, generators=[gen]), node)

    def expr_Attribute(self, node, pre):
        chain = self.parsed.resolve(node)
        if chain is not MISSING and _is_name_chain(node):
            return node  # a module attribute such as np.pi or np.newaxis
        return located(
            gast.Attribute(value=self.atom(node.value, pre), attr=node.attr, ctx=gast.Load()),
            node,
        )

    def expr_Subscript(self, node, pre):
        value, index = self.atom(node.value, pre), self.index(node.slice, pre)
        return located(gast.Subscript(value=value, slice=index, ctx=gast.Load()), node)

    def expr_Tuple(self, node, pre):
        cls = type(node)
        return located(cls(elts=[self.atom(e, pre) for e in node.elts], ctx=gast.Load()), node)

    expr_List = expr_Tuple

    def expr_Dict(self, node, pre):
        if any(k is None for k in node.keys):
            raise at(self.parsed, node, "dict unpacking (**) is not supported")
        return located(
            gast.Dict(
                keys=[self.atom(k, pre) for k in node.keys],
                values=[self.atom(v, pre) for v in node.values],
            ),
            node,
        )

    def expr_IfExp(self, node, pre):
        """``a if c else b`` becomes a branch assigning a temporary (or, where ``c`` is
        known here, the branch taken: ``act(out) if act is not None`` once an inlined
        call made ``act`` a function)."""
        known = _known_truth(node.test, self.parsed.resolve)
        if known is not None:
            return self.expr(node.body if known else node.orelse, pre, top=True)
        t = self.namer.temp()
        test = self.truth(node.test, pre)
        body, orelse = [], []
        body.append(assign(t, self.expr(node.body, body, top=True), node))
        orelse.append(assign(t, self.expr(node.orelse, orelse, top=True), node))
        pre.append(located(gast.If(test=test, body=body, orelse=orelse), node))
        return name(t)

    def expr_Slice(self, node, pre):
        raise at(self.parsed, node, "a slice outside a subscript is not supported")

    def expr_ListComp(self, node, pre):
        stmts, result = desugar.comprehension(node, self.namer, self.parsed)
        pre.extend(self.block(stmts))
        return self.expr(result, pre, top=True)

    expr_GeneratorExp = expr_DictComp = expr_SetComp = expr_ListComp

    def inline(self, local, node, pre):
        """The value of ``node``, a call of the local function ``local``, computed by its
        body inlined into ``pre``."""
        if local.node in self.inlining:
            raise at(
                self.parsed,
                node,
                f"`{local.name}` calls itself; a function defined inside the differentiated "
                "function is inlined, so it cannot recurse",
                "define the recursive function at module level",
            )
        node = self._arguments_first(node, pre)  # f(f(x)): the inner call is not recursion
        self.inlining.append(local.node)
        try:
            stmts, value = desugar.inline(local, node, self.namer, self.parsed)
            pre.extend(self.block(stmts))
            return self.expr(value, pre, top=True)
        finally:
            self.inlining.pop()

    def _arguments_first(self, node, pre):
        """``node`` with each argument that calls a local function computed into
        ``pre`` first (the others stay as written: the parameters they bind keep
        their names)."""

        def first(value):
            calls_local = any(
                isinstance(n, gast.Call)
                and isinstance(n.func, gast.Name)
                and n.func.id in self.locals
                for n in gast.walk(value)
            )
            passed = isinstance(value, (gast.Lambda, gast.Starred))  # inlined where called
            return self.atom(value, pre) if calls_local and not passed else value

        args = [first(a) for a in node.args]
        keywords = [
            gast.keyword(arg=k.arg, value=first(k.value)) if k.arg is not None else k
            for k in node.keywords
        ]
        return located(gast.Call(func=node.func, args=args, keywords=keywords), node)

    def _to_inline(self, node):
        """A call of a helper passed a function made here (``function_args``)."""
        return function_args.passes_local_function(node, self.defined) and (
            function_args.helper(self.parsed, node, self.helpers) is not None
        )

    def _is_map(self, node):
        return (
            isinstance(node.func, gast.Name)
            and self.parsed.resolve(node.func) is builtins.map
            and len(node.args) >= 2
            and not node.keywords
        )

    def _is_partial(self, node):
        return (
            isinstance(node, gast.Call)
            and self.parsed.resolve(node.func) is functools.partial
            and node.args
            and not any(isinstance(a, gast.Starred) for a in node.args)
            and all(k.arg is not None for k in node.keywords)
        )

    def define_partial(self, fname, node, origin):
        """``f = functools.partial(g, a, k=b)`` called later as ``f(x)``: a call of
        ``g(a, x, k=b)``, with ``a`` and ``b`` as they were here."""
        if self.bindings.get(fname, 0) > 1 or fname in self.values:
            pre = []
            return pre + [assign(fname, self.expr(node, pre, top=True), origin)]
        pre = []
        frozen = [self._frozen(self.atom(a, pre), pre, origin) for a in node.args[1:]]
        keywords = [
            gast.keyword(arg=k.arg, value=self._frozen(self.atom(k.value, pre), pre, origin))
            for k in node.keywords
        ]
        self.partials[fname] = (node.args[0], frozen, keywords)
        return pre

    def _through_partial(self, node):
        """A call of a partial (bound to a name here, or made in the call itself) as the
        call of its function with the stored arguments first; else None."""
        func = node.func
        if isinstance(func, gast.Name) and func.id in self.partials:
            target, args, keywords = self.partials[func.id]
        elif self._is_partial(func):
            target, args, keywords = func.args[0], func.args[1:], func.keywords
        elif _is_name_chain(func) and isinstance(self.parsed.resolve(func), functools.partial):
            target, args, keywords = _stored_in(func, self.parsed.resolve(func))
        else:
            return None
        merged = gast.Call(
            func=clone(target),
            args=[clone(a) for a in args] + list(node.args),
            keywords=[clone(k) for k in keywords] + list(node.keywords),
        )
        return located(merged, node)

    def _spread_known_tuples(self, node):
        """``f(*args)`` where ``args`` is a tuple of known length here (a display bound
        once, as a spread ``*args`` parameter is): ``f(args[0], args[1])``."""
        if not any(
            isinstance(a, gast.Starred)
            and isinstance(a.value, gast.Name)
            and a.value.id in self.tuple_lengths
            for a in node.args
        ):
            return node
        args = []
        for a in node.args:
            if isinstance(a, gast.Starred) and getattr(a.value, "id", None) in self.tuple_lengths:
                n = self.tuple_lengths[a.value.id]
                args += [
                    gast.Subscript(value=name(a.value.id), slice=const(i), ctx=gast.Load())
                    for i in range(n)
                ]
            else:
                args.append(a)
        return located(gast.Call(func=node.func, args=args, keywords=node.keywords), node)

    def desugared_call(self, node, pre):
        """The value of a call of a local function, a lambda, a partial or ``map``, else
        None."""
        func = node.func
        through = self._through_partial(node)
        if through is not None:
            return self.call(through, pre)
        if isinstance(func, gast.Name) and func.id in self.locals:
            return self.inline(self.locals[func.id], node, pre)
        if isinstance(func, gast.Lambda):
            return self.inline(desugar.Local("", func, {}), node, pre)
        if self._to_inline(node):
            local, key = function_args.helper(self.parsed, node, self.helpers)
            self.helpers.add(key)
            try:
                return self.inline(local, node, pre)
            finally:
                self.helpers.discard(key)
        if self._is_map(node):
            return self.expr(desugar.mapped(node), pre, top=True)
        if self._is_sorted(node):
            if self._may_be_dict(node.args[0]):  # sorted(d) sorts a dict's keys
                iterated = gast.Call(func=self._ops("iterated"), args=node.args, keywords=[])
                node = gast.copy_location(
                    gast.Call(func=node.func, args=[iterated], keywords=node.keywords), node
                )
            stmts, value = desugar.sorted_by_index(node, self.namer)
            pre.extend(self.block(stmts))
            return self.expr(value, pre, top=True)
        return None

    def _is_sorted(self, node):
        return (
            isinstance(node.func, gast.Name)
            and self.parsed.resolve(node.func) is builtins.sorted
            and len(node.args) == 1
            and not isinstance(node.args[0], gast.Starred)
            and all(k.arg in ("key", "reverse") for k in node.keywords)
            and not any(annotation(k.value, Annotation.CONSTANT) for k in node.keywords)
        )

    def call(self, node, pre):
        node = self._spread_known_tuples(node)
        node = keyword_spread.spread(node, self.parsed, self.dict_keys)
        desugared = self.desugared_call(node, pre)
        if desugared is not None:
            return desugared
        func = node.func
        if self.parsed.resolve(func) is builtins.dict and not node.args:
            # dict(a=x, b=y) is the display {"a": x, "b": y}
            keys = [const(kw.arg) for kw in node.keywords]
            values = [self.atom(kw.value, pre) for kw in node.keywords]
            return located(gast.Dict(keys=keys, values=values), node)
        if isinstance(func, gast.Name) or (
            _is_name_chain(func) and self.parsed.resolve(func) is not MISSING
        ):
            new_func = func
        elif isinstance(func, gast.Attribute):  # method call on a value: x.sum(axis=0)
            new_func = gast.Attribute(
                value=self.atom(func.value, pre), attr=func.attr, ctx=gast.Load()
            )
        else:
            new_func = self.atom(func, pre)
        args = [
            located(gast.Starred(value=self.atom(a.value, pre), ctx=gast.Load()), a)
            if isinstance(a, gast.Starred)
            else self.atom(a, pre)
            for a in node.args
        ]
        keywords = [  # (each **d is one keyword per key by now: keyword_spread)
            gast.keyword(arg=kw.arg, value=self.atom(kw.value, pre)) for kw in node.keywords
        ]
        return located(gast.Call(func=new_func, args=args, keywords=keywords), node)

    def index(self, node, pre):
        if isinstance(node, gast.Slice):
            parts = [
                None if p is None else self.atom(p, pre)
                for p in (node.lower, node.upper, node.step)
            ]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e, pre) for e in node.elts], ctx=gast.Load())
        if isinstance(node, gast.Constant):
            return node
        if _is_name_chain(node) and isinstance(node, gast.Attribute):
            return node  # np.newaxis
        return self.atom(node, pre)


def _unpacked_item(elts, i, value):
    """The expression that unpacking ``value`` into ``elts`` binds ``elts[i]`` to:
    ``value[i]``; past a starred target, counted from the end; for the starred target
    itself, ``value[i:-after]`` (of which it is a list)."""
    starred = [k for k, e in enumerate(elts) if isinstance(e, gast.Starred)]
    if not starred or i < starred[0]:
        return gast.Subscript(value=value, slice=const(i), ctx=gast.Load())
    after = len(elts) - starred[0] - 1
    if i > starred[0]:
        return gast.Subscript(value=value, slice=const(i - len(elts)), ctx=gast.Load())
    part = gast.Slice(lower=const(i), upper=const(-after) if after else None, step=None)
    return gast.Subscript(value=value, slice=part, ctx=gast.Load())


def _known_truth(test, resolve):
    """True or False for a test decided before the function runs (``None is None``,
    ``True``, ``np.tanh is not None`` where ``np.tanh`` resolves), else None."""
    if isinstance(test, gast.Constant) and isinstance(test.value, (bool, type(None))):
        return bool(test.value)
    if not (
        isinstance(test, gast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (gast.Is, gast.IsNot))
        and _is_none(test.comparators[0])
    ):
        return None
    left = test.left
    if isinstance(left, gast.Constant):
        known = left.value is None
    elif isinstance(left, gast.Attribute) and _is_name_chain(left):
        found = resolve(left)  # a module's function, say: what the code reads there
        if found is MISSING:
            return None
        known = found is None
    else:
        return None
    return known if isinstance(test.ops[0], gast.Is) else not known


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _stored_in(chain, partial):
    """``(function, arguments, keywords)`` of the global partial ``chain`` names, as
    reads of it (``part.args[0]``): the call reads them when it runs."""

    def field(attr):
        return gast.Attribute(value=clone(chain), attr=attr, ctx=gast.Load())

    def item(attr, key):
        return gast.Subscript(value=field(attr), slice=const(key), ctx=gast.Load())

    args = [item("args", i) for i in range(len(partial.args))]
    keywords = [gast.keyword(arg=k, value=item("keywords", k)) for k in partial.keywords]
    return field("func"), args, keywords


def _index_with(element, index):
    """``element`` (``seq[i]`` from ``_elements``) reading ``seq[index]`` instead."""
    return gast.Subscript(value=element.value, slice=index, ctx=gast.Load())


def _is_name_chain(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def _is_call_to(parsed, node, obj):
    return isinstance(node, gast.Call) and parsed.resolve(node.func) is obj


def _as_load(target):
    if isinstance(target, gast.Name):
        return name(target.id)
    if isinstance(target, gast.Subscript):
        return gast.Subscript(value=_as_load(target.value), slice=target.slice, ctx=gast.Load())
    if isinstance(target, gast.Attribute):
        return gast.Attribute(value=_as_load(target.value), attr=target.attr, ctx=gast.Load())
    return target


def _rename_target(stmts, old, new):
    for s in stmts:
        for t in getattr(s, "targets", []):
            if isinstance(t, gast.Name) and t.id == old:
                t.id = new
    return stmts
