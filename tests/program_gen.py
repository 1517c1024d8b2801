"""Random numeric programs with control flow, written as Python source from hypothesis draws.

``programs()`` is a hypothesis strategy whose examples are ``Program`` objects: the
source of a module with a scalar-valued ``f(x, y, s, n)`` (``x`` and ``y`` float64
arrays of two broadcast-compatible shapes, ``s`` a Python float, ``n`` a small int)
and up to two helpers ``g0``, ``g1`` that ``f`` (and later helpers) may call, plus
the argument values and the ``wrt`` choices to differentiate with.

Every choice is one hypothesis draw, made so that the draw hypothesis shrinks to
(0, False, the first entry of a list) is the simpler program: one statement per
block, a leaf instead of an expression, no control flow.

The generator tracks, for every name in scope, a static shape that bounds the
value's real shape (numpy broadcasting of a few fixed shapes forms a small
lattice), whether the real shape is exactly that (needed by ``np.stack`` of a list,
in-place ``+=`` and helper arguments), and which arguments the value may share
memory with (``+=`` never targets those, so the program itself leaves its
arguments alone). Inside a loop a name bound before it keeps its exact shape, or
was chosen up front to be "loosened" (then it may be rebound to anything that
broadcasts into its shape, ``h = 1.0`` included). Names first bound inside a
branch survive the branch only if every branch that falls through binds them;
names first bound inside a loop do not survive the loop.

Data-dependent conditions are written through markers: ``render()`` gives the
plain program; ``render("monitor")`` writes ``lhs > c`` as ``_m(lhs - (c)) > 0``,
where ``_m`` records the smallest ``|lhs - c|`` met during a call (so the test can
skip inputs within a finite-difference step of a branch switch) and records the
value at each ``stop_gradient`` site; ``render("replay")`` returns those recorded
values from ``stop_gradient`` sites, for finite differences that hold them constant.
"""

import itertools
import re
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import strategies as st

# (shape of x, shape of y): broadcast-compatible pairs, simplest first.
SHAPE_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((3,), ()), ((2, 3), (2, 1)), ((), (2,))]
CONSTANTS = ["0.5", "1.5", "-0.7", "2.0", "0.3"]
THRESHOLDS = ["0.0", "0.5", "-0.5", "1.0", "-1.0", "2.0"]
UNARY = [
    "np.tanh({a})",
    "np.sin({a})",
    "({a} * 0.5)",
    "np.cos({a})",
    "(-{a})",
    "(1.0 / (1.0 + np.exp(-{a})))",
    "np.log(1.0 + {a} * {a})",
    "np.sqrt(1.0 + {a} * {a})",
    "np.exp(-{a} * {a})",
    "({a} ** 2)",
    "np.square({a})",
    "({a} / 1.5)",
    "stop_gradient({a})",
]
BINARY = [
    "({a} + {b})",
    "({a} * {b})",
    "({a} - {b})",
    "({a} / (1.0 + {b} * {b}))",
    "({a} * np.tanh({b}))",
    "np.sin({a} + {b})",
]
SCALAR_REDUCE = ["np.sum({a})", "np.mean({a})", "np.sum({a} * {a})", "np.mean(np.tanh({a}))"]
COND_REDUCE = ["np.sum({a})", "np.mean({a})", "np.max({a})", "np.min({a})"]
ARG_ROOTS = frozenset({"x", "y", "u", "v"})
MAX_NEST = 3  # compound statements inside compound statements
MAX_LOOPS = 2  # loops inside loops, per function


def bc(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def fits(a, b):
    """Whether shape ``a`` broadcasts into shape ``b``."""
    try:
        return bc(a, b) == tuple(b)
    except ValueError:
        return False


@dataclass(frozen=True)
class Var:
    kind: str  # "arr" (float value), "int", "list"
    shape: tuple = ()  # static shape ("arr"), element shape ("list")
    exact: bool = True  # the value's shape is exactly ``shape``
    roots: frozenset = frozenset()  # arguments the value may share memory with
    strict: bool = False  # must keep exactly ``shape`` when rebound
    limit: tuple = None  # inside a loop: a rebinding must broadcast into this
    min_len: int = 0  # lists: appended at least this many times
    busy: bool = False  # lists: being iterated over, no appends
    index_of: str = None  # ints: a valid index into this list


@dataclass(frozen=True)
class Expr:
    code: str
    shape: tuple
    exact: bool
    roots: frozenset = frozenset()


@dataclass(frozen=True)
class Helper:
    name: str
    params: tuple  # shapes
    rshape: tuple
    rexact: bool


@dataclass
class Fn:
    is_main: bool
    base: list  # the shapes an expression may be asked for (closed under broadcasting)
    params: list  # (name, shape) of the array parameters: exact anchors
    helpers: list
    budget: int
    nest: int = 0
    loops: int = 0
    returns: list = field(default_factory=list)
    root_log: dict = field(default_factory=dict)


@dataclass
class Program:
    body: str  # with condition markers
    conds: list  # marker index -> (lhs, op, threshold)
    x_shape: tuple
    y_shape: tuple
    n: int
    seed: int
    wrt_one: object
    wrt_many: tuple
    wrt_value: object
    reuse_buffers: bool
    features: frozenset

    def render(self, mode="plain"):
        """The module's source. ``mode="monitor"``: conditions report their margin to
        ``_m`` and ``stop_gradient`` values are recorded; ``mode="replay"``: each
        ``stop_gradient(e)`` returns the value recorded at its site instead of ``e``, so
        that finite differences see it as the constant it is to differentiation."""
        header = ["import numpy as np", "", "from transpile import stop_gradient", ""]
        if mode != "plain":
            header += [
                "_MARGIN = [float('inf')]",
                "_SEEN = {}",
                "_NEXT = {}",
                "",
                "",
                "def _m(d):",
                "    _MARGIN[0] = min(_MARGIN[0], abs(float(d)))",
                "    return d",
                "",
                "",
                "def _sg(site, value):",
            ]
            if mode == "monitor":
                header += [
                    "    _SEEN.setdefault(site, []).append(np.copy(value))",
                    "    return value",
                ]
            else:
                header += [
                    "    k = _NEXT.get(site, 0)",
                    "    _NEXT[site] = k + 1",
                    "    return np.copy(_SEEN[site][k])",
                ]
            header.append("")

        def cond(match):
            lhs, op, c = self.conds[int(match.group(1))]
            lhs = _MARKER.sub(cond, lhs)
            if mode == "monitor":
                return f"_m({lhs} - ({c})) {op} 0"
            return f"{lhs} {op} {c}"

        body = _MARKER.sub(cond, self.body)
        if mode != "plain":
            sites = itertools.count()
            body = re.sub(r"\bstop_gradient\(", lambda m: f"_sg({next(sites)}, ", body)
        return "\n".join(header) + "\n\n" + body

    @property
    def source(self):
        return self.render()

    def make_args(self):
        rng = np.random.default_rng(self.seed)
        x = np.asarray(rng.normal(size=self.x_shape) * 0.8, dtype=np.float64)
        y = np.asarray(rng.normal(size=self.y_shape) * 0.8, dtype=np.float64)
        s = float(round(rng.normal(), 6))
        return [x, y, s, self.n]

    def __repr__(self):
        return (
            f"Program(x_shape={self.x_shape}, y_shape={self.y_shape}, n={self.n},"
            f" seed={self.seed}, wrt={self.wrt_one!r}/{self.wrt_many!r}/{self.wrt_value!r},"
            f" reuse_buffers={self.reuse_buffers})\n{self.source}"
        )


_MARKER = re.compile("\x00(\\d+)\x00")


def _indent(lines):
    return ["    " + line for line in lines]


class Gen:
    def __init__(self, draw, control):
        self.draw = draw
        self.control = control
        self.counter = 0
        self.conds = []
        self.features = set()

    # -- draws ---------------------------------------------------------------

    def int(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def pick(self, items):
        items = list(items)
        assert items
        return items[0] if len(items) == 1 else self.draw(st.sampled_from(items))

    def chance(self, percent):
        """True with about ``percent`` % probability; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def depth(self):
        return self.pick([0, 1, 2, 1, 2, 3])

    # -- expressions ---------------------------------------------------------

    def anchor(self, fn, env, shape):
        """An expression of exactly ``shape`` from constants and the array parameters."""
        if shape == ():
            return Expr(self.pick(CONSTANTS), (), True)
        for name, s in fn.params:
            if s == shape:
                return Expr(name, shape, True, env[name].roots)
        for i, (a, sa) in enumerate(fn.params):
            for b, sb in fn.params[i + 1 :]:
                if bc(sa, sb) == shape:
                    return Expr(f"({a} + {b})", shape, True)
        raise AssertionError(f"no anchor for {shape}")

    def expr(self, fn, env, shape, exact, depth):
        """An expression whose static shape broadcasts into ``shape`` (equals it, exactly,
        when ``exact``)."""
        shape = tuple(shape)
        kinds = ["leaf"]
        if depth > 0:
            kinds += ["unary", "binary", "binary"]
            if shape == ():
                kinds.append("reduce")
            if self._axis_sources(fn, shape):
                kinds.append("axis")
            if self._callable(fn, shape, exact):
                kinds += ["call", "call"]
            if self._list_reads(env, shape, exact):
                kinds += ["list", "list"]
            if self.control:
                kinds.append("ifexp")
        kind = self.pick(kinds)
        return getattr(self, "_e_" + kind)(fn, env, shape, exact, depth)

    def _e_leaf(self, fn, env, shape, exact, depth):
        cands = []
        for name, v in env.items():
            if v.kind == "arr" and fits(v.shape, shape):
                if not exact or (v.exact and v.shape == shape):
                    cands.append(Expr(name, v.shape, v.exact, v.roots))
            if v.kind == "int" and (not exact or shape == ()):
                cands.append(Expr(f"({name} + 1.0)", (), True))
        if not exact or shape == ():
            cands.append(Expr(self.pick(CONSTANTS), (), True))
        if not cands:
            return self.anchor(fn, env, shape)
        return self.pick(cands)

    def _e_unary(self, fn, env, shape, exact, depth):
        a = self.expr(fn, env, shape, exact, depth - 1)
        op = self.pick(UNARY)
        if op.startswith("stop_gradient"):
            self.features.add("stop_gradient")
            return Expr(op.format(a=a.code), a.shape, a.exact, a.roots)
        return Expr(op.format(a=a.code), a.shape, a.exact)

    def _e_binary(self, fn, env, shape, exact, depth):
        a = self.expr(fn, env, shape, exact, depth - 1)
        other = self.pick([s for s in fn.base if fits(s, shape)])
        b = self.expr(fn, env, other, False, depth - 1)
        if self.chance(30):
            a, b = b, a
        op = self.pick(BINARY)
        out = bc(a.shape, b.shape)
        is_exact = (a.exact and a.shape == out) or (b.exact and b.shape == out)
        return Expr(op.format(a=a.code, b=b.code), out, is_exact)

    def _e_reduce(self, fn, env, shape, exact, depth):
        a = self.expr(fn, env, self.pick(fn.base), False, depth - 1)
        return Expr(self.pick(SCALAR_REDUCE).format(a=a.code), (), True)

    def _axis_sources(self, fn, shape):
        out = []
        for s in fn.base:
            for axis in (0, -1):
                if len(s) < 1:
                    continue
                dropped = list(s)
                del dropped[axis]
                kept = list(s)
                kept[axis] = 1
                if tuple(dropped) == shape:
                    out.append((s, axis, False))
                if tuple(kept) == shape and s[axis] != 1:
                    out.append((s, axis, True))
        return out

    def _e_axis(self, fn, env, shape, exact, depth):
        s, axis, keep = self.pick(self._axis_sources(fn, shape))
        a = self.expr(fn, env, s, True, depth - 1)
        fname = self.pick(["np.sum", "np.mean"])
        extra = ", keepdims=True" if keep else ""
        self.features.add("axis_reduction")
        return Expr(f"{fname}({a.code}, axis={axis}{extra})", shape, True)

    def _callable(self, fn, shape, exact):
        return [
            h
            for h in fn.helpers
            if all(p in fn.base for p in h.params)
            and fits(h.rshape, shape)
            and (not exact or (h.rshape == shape and h.rexact))
        ]

    def _e_call(self, fn, env, shape, exact, depth):
        h = self.pick(self._callable(fn, shape, exact))
        args = [self.expr(fn, env, p, True, depth - 1) for p in h.params]
        roots = frozenset().union(*(a.roots for a in args))
        self.features.add("call")
        return Expr(f"{h.name}({', '.join(a.code for a in args)})", h.rshape, h.rexact, roots)

    def _list_reads(self, env, shape, exact):
        out = []
        for name, v in env.items():
            if v.kind == "list":
                if v.min_len >= 1 and fits(v.shape, shape) and (not exact or v.shape == shape):
                    out += [
                        Expr(f"{name}[-1]", v.shape, True, v.roots),
                        Expr(f"{name}[0]", v.shape, True, v.roots),
                        Expr(f"np.mean(np.stack({name}), axis=0)", v.shape, True),
                        Expr(f"sum({name})", v.shape, True),
                    ]
                if v.min_len >= 1 and shape == ():
                    out += [
                        Expr(f"np.sum(np.stack({name}) ** 2)", (), True),
                        Expr(f"np.mean(np.stack({name}))", (), True),
                    ]
                if v.min_len == 0 and fits(v.shape, shape) and not exact:
                    out.append(Expr(f"sum({name})", v.shape, False))
            if v.kind == "int" and v.index_of in env:
                lst = env[v.index_of]
                if fits(lst.shape, shape) and (not exact or lst.shape == shape):
                    out.append(Expr(f"{v.index_of}[{name}]", lst.shape, True, lst.roots))
                    out.append(Expr(f"{v.index_of}[{name} - 1]", lst.shape, True, lst.roots))
        return out

    def _e_list(self, fn, env, shape, exact, depth):
        self.features.add("list_read")
        return self.pick(self._list_reads(env, shape, exact))

    def _e_ifexp(self, fn, env, shape, exact, depth):
        c = self.cond(fn, env, simple=True)
        a = self.expr(fn, env, shape, exact, depth - 1)
        b = self.expr(fn, env, shape, exact, depth - 1)
        out = bc(a.shape, b.shape)
        is_exact = a.exact and b.exact and a.shape == b.shape
        self.features.add("ifexp")
        return Expr(f"({a.code} if {c} else {b.code})", out, is_exact, a.roots | b.roots)

    # -- conditions ----------------------------------------------------------

    def cond(self, fn, env, simple=False, loop_index=None):
        kinds = ["data"]
        if fn.is_main:
            kinds.append("param")
        ints = [n for n, v in env.items() if v.kind == "int" and n != "n"]
        if ints:
            kinds.append("index")
        if not simple:
            kinds.append("compound")
        kind = self.pick(kinds)
        if kind == "data":
            self.features.add("data_condition")
            s = self.pick(fn.base)
            a = self.expr(fn, env, s, False, self.pick([0, 1, 2]))
            if not any(re.search(rf"\b{n}\b", a.code) for n in env):  # a constant condition
                name = self.pick([n for n, v in env.items() if v.kind == "arr"])
                a, s = Expr(name, env[name].shape, env[name].exact), env[name].shape
            if s == () and self.chance(40):
                lhs = a.code
            else:
                lhs = self.pick(COND_REDUCE).format(a=a.code)
            self.conds.append((lhs, self.pick([">", "<"]), self.pick(THRESHOLDS)))
            return f"\x00{len(self.conds) - 1}\x00"
        if kind == "param":
            self.features.add("param_condition")
            return self.pick(["n > 1", "n == 2", "n >= 2", "n < 3"])
        if kind == "index":
            i = self.pick(ints)
            return self.pick([f"{i} == 1", f"{i} % 2 == 0", f"{i} > 0", f"{i} < 2"])
        first = self.cond(fn, env, simple=True)
        op = self.pick(["and", "or", "not"])
        if op == "not":
            return f"not ({first})"
        return f"({first}) {op} ({self.cond(fn, env, simple=True)})"

    # -- statements ----------------------------------------------------------

    def log_roots(self, fn, name, roots):
        fn.root_log[name] = fn.root_log.get(name, frozenset()) | roots

    def block(self, fn, env, in_loop, may_return=False, first=None):
        """Lines of a block (not indented) and the env after it (None: it never falls
        through)."""
        lines = list(first or [])
        count = self.pick([1, 2, 3, 1, 2])
        for _ in range(count):
            if fn.budget <= 0:
                break
            fn.budget -= 1
            new, env = self.statement(fn, env, in_loop)
            lines += new
            if env is None:
                return lines, None
        if may_return and self.control and self.chance(15):
            lines.append(self.return_line(fn, env))
            self.features.add("early_return")
            return lines, None
        if not lines:
            lines = ["pass"]
        return lines, env

    def statement(self, fn, env, in_loop):
        kinds = ["assign", "rebind", "assign", "rebind"]
        if self._aug_targets(env):
            kinds.append("augassign")
        if self.control and fn.nest < MAX_NEST:
            kinds += ["if", "if", "return_if"]
            if fn.loops < MAX_LOOPS:
                kinds += ["for", "for", "while", "while", "list_loop", "list_loop", "for_list"]
        if [n for n, v in env.items() if v.kind == "list" and not v.busy]:
            kinds += ["append", "append"]
        if in_loop and fn.nest < MAX_NEST:
            kinds += ["break_continue", "break_continue"]
        kind = self.pick(kinds)
        return getattr(self, "_s_" + kind)(fn, env, in_loop)

    def _s_assign(self, fn, env, in_loop):
        name = self.fresh("v")
        e = self.expr(fn, env, self.pick(fn.base), self.chance(30), self.depth())
        env = dict(env)
        env[name] = Var("arr", e.shape, e.exact, e.roots)
        self.log_roots(fn, name, e.roots)
        return [f"{name} = {e.code}"], env

    def _s_rebind(self, fn, env, in_loop):
        names = [n for n, v in env.items() if v.kind == "arr"]
        name = self.pick(names)
        v = env[name]
        if v.strict:
            target, exact = v.shape, True
        elif v.limit is not None:
            target, exact = v.limit, False
        else:
            target, exact = self.pick(fn.base), self.chance(30)
        style = self.pick(["self", "expr", "name", "const"])
        e = None
        if style == "self" and fits(v.shape, target):
            other = self.expr(fn, env, target, exact and v.shape != target, self.depth())
            form = self.pick(
                ["np.tanh({n}) * {e}", "{n} * 0.5 + {e}", "np.sin({n} + {e})", "{e} - {n} * 0.3"]
            )
            out = bc(v.shape, other.shape)
            e = Expr(
                form.format(n=name, e=other.code),
                out,
                (v.exact and v.shape == out) or (other.exact and other.shape == out),
            )
            if exact and not (e.exact and e.shape == target):
                e = None
        elif style == "name":
            cands = [
                Expr(n, w.shape, w.exact, w.roots)
                for n, w in env.items()
                if w.kind == "arr" and n != name and fits(w.shape, target)
                if not exact or (w.exact and w.shape == target)
            ]
            if cands:
                e = self.pick(cands)
                self.features.add("alias")
        elif style == "const" and (not exact or target == ()):
            e = Expr(self.pick(CONSTANTS), (), True)
        if e is None:
            e = self.expr(fn, env, target, exact, self.depth())
        if in_loop:
            self.features.add("rebind_in_loop")
        if fn.nest:
            self.features.add("rebind_in_block")
        env = dict(env)
        env[name] = replace(v, shape=e.shape, exact=e.exact, roots=e.roots)
        self.log_roots(fn, name, e.roots)
        return [f"{name} = {e.code}"], env

    def _aug_targets(self, env):
        return [
            n
            for n, v in env.items()
            if v.kind == "arr" and not (v.roots & ARG_ROOTS) and n not in ("x", "y", "u", "v")
        ]

    def _s_augassign(self, fn, env, in_loop):
        name = self.pick(self._aug_targets(env))
        v = env[name]
        target = v.shape if v.exact else ()
        e = self.expr(fn, env, target, False, self.depth())
        op = self.pick(["+=", "*=", "-="])
        self.features.add("augassign")
        return [f"{name} {op} {e.code}"], env

    def _s_append(self, fn, env, in_loop):
        name = self.pick([n for n, v in env.items() if v.kind == "list" and not v.busy])
        v = env[name]
        e = self.expr(fn, env, v.shape, True, self.depth())
        env = dict(env)
        env[name] = replace(
            v, roots=v.roots | e.roots, min_len=v.min_len + (1 if fn.nest == 0 else 0)
        )
        self.log_roots(fn, name, e.roots)
        self.features.add("append")
        return [f"{name}.append({e.code})"], env

    def return_line(self, fn, env):
        if fn.is_main:
            return "return " + self.final(fn, env)
        e = self.expr(fn, env, fn.returns_shape, False, self.depth())
        fn.returns.append(e)
        return f"return {e.code}"

    def final(self, fn, env):
        """A scalar expression: reductions of a few names in scope, of an expression,
        or both."""
        names = [n for n, v in env.items() if v.kind == "arr"]
        style = self.pick(["names", "expression", "both"])
        terms = []
        if style != "expression":
            for _ in range(self.pick([1, 2, 3])):
                form = self.pick(["np.sum({n})", "np.mean({n} * {n})", "np.sum(np.sin({n}))"])
                terms.append(form.format(n=self.pick(names)))
        if style != "names":
            e = self.expr(fn, env, self.pick(fn.base), False, self.depth())
            terms.append(self.pick(SCALAR_REDUCE).format(a=e.code))
        return " + ".join(terms)

    # compound statements ------------------------------------------------------

    def join(self, before, ends):
        """The env after branches that fall through with envs ``ends`` (None: no path)."""
        ends = [e for e in ends if e is not None]
        if not ends:
            return None
        out = {}
        for name, v in ends[0].items():
            vs = [e.get(name) for e in ends]
            if any(w is None or w.kind != v.kind for w in vs):
                continue
            if v.kind == "arr":
                shape = bc(*(w.shape for w in vs))
                exact = all(w.exact and w.shape == shape for w in vs)
                roots = frozenset().union(*(w.roots for w in vs))
                out[name] = replace(v, shape=shape, exact=exact, roots=roots)
            elif v.kind == "list":
                if any(w.shape != v.shape for w in vs):
                    continue
                out[name] = replace(
                    v,
                    min_len=min(w.min_len for w in vs),
                    roots=frozenset().union(*(w.roots for w in vs)),
                )
            else:
                out[name] = v
        return out

    def _s_if(self, fn, env, in_loop):
        self.features.add("if")
        c = self.cond(fn, env)
        fn.nest += 1
        then_lines, then_env = self.block(fn, env, in_loop, may_return=True)
        form = self.pick(["if", "else", "elif"])
        lines = [f"if {c}:"] + _indent(then_lines)
        ends = [then_env]
        if form == "if":
            ends.append(env)
        else:
            if form == "elif":
                c2 = self.cond(fn, env)
                elif_lines, elif_env = self.block(fn, env, in_loop, may_return=True)
                lines += [f"elif {c2}:"] + _indent(elif_lines)
                ends.append(elif_env)
            else_lines, else_env = self.block(fn, env, in_loop, may_return=True)
            lines += ["else:"] + _indent(else_lines)
            ends.append(else_env)
        fn.nest -= 1
        return lines, self.join(env, ends)

    def _s_return_if(self, fn, env, in_loop):
        self.features.add("early_return")
        c = self.cond(fn, env)
        fn.nest += 1
        lines, inner = self.block(fn, env, in_loop) if self.chance(30) else ([], env)
        if inner is not None:
            lines = lines + [self.return_line(fn, inner)]
        fn.nest -= 1
        return [f"if {c}:"] + _indent(lines), env

    def _s_break_continue(self, fn, env, in_loop):
        word = self.pick(["break", "continue"])
        self.features.add(word)
        c = self.cond(fn, env)
        fn.nest += 1
        lines, inner = self.block(fn, env, in_loop) if self.chance(30) else ([], env)
        if inner is not None:
            lines = lines + [word]
        fn.nest -= 1
        return [f"if {c}:"] + _indent(lines), env

    def enter_loop(self, env):
        """The env at the top of a loop body, and the names loosened for it."""
        body, loosened = {}, set()
        for name, v in env.items():
            if v.kind != "arr":
                body[name] = v
            elif v.strict or (v.exact and not self.chance(25)):
                body[name] = replace(v, strict=True, limit=v.shape)
            else:
                if v.exact:
                    loosened.add(name)
                body[name] = replace(v, exact=False, strict=False, limit=v.shape)
        if loosened:
            self.features.add("loosened")
        return body, loosened

    def leave_loop(self, fn, before, loosened):
        out = {}
        for name, v in before.items():
            roots = v.roots | fn.root_log.get(name, frozenset())
            if v.kind == "arr":
                out[name] = replace(v, exact=v.exact and name not in loosened, roots=roots)
            elif v.kind == "list":
                out[name] = replace(v, roots=roots)
            else:
                out[name] = v
        return out

    def loop(self, fn, env, header, loop_vars, prefix=(), suffix=None, busy=None):
        """A loop statement: ``header`` line, body env with ``loop_vars`` bound."""
        body_env, loosened = self.enter_loop(env)
        body_env.update(loop_vars)
        if busy:
            body_env[busy] = replace(body_env[busy], busy=True)
        if callable(header):
            header = header(body_env)  # read on every trip: sees the body's names
        fn.nest += 1
        fn.loops += 1
        lines, end = self.block(fn, body_env, True, may_return=True, first=prefix)
        if suffix is not None and end is not None:
            lines.append(suffix(end))
        fn.loops -= 1
        fn.nest -= 1
        return [header] + _indent(lines), self.leave_loop(fn, env, loosened)

    def _s_for(self, fn, env, in_loop):
        i = self.fresh("i")
        bounds = ["range(2)", "range(3)", "range(1, 3)"]
        if fn.is_main:
            bounds.append("range(n)")
        lists = [n for n, v in env.items() if v.kind == "list"]
        if lists:
            bounds.append("range(len({}))")
        bound = self.pick(bounds)
        index = Var("int")
        if "{}" in bound:
            lst = self.pick(lists)
            bound = bound.format(lst)
            index = Var("int", index_of=lst)
        self.features.add("nested_for" if in_loop else "for")
        return self.loop(fn, env, f"for {i} in {bound}:", {i: index})

    def _s_while(self, fn, env, in_loop):
        w = self.fresh("w")
        limit = self.pick(["2", "3", "n"] if fn.is_main else ["2", "3"])
        with_data = self.chance(30)

        def header(body_env):
            cond = f"{w} < {limit}"
            if with_data:
                self.features.add("while_data")
                cond += f" and {self.cond(fn, body_env, simple=True)}"
            return f"while {cond}:"

        self.features.add("while")
        env = dict(env)
        env[w] = Var("int")
        lines, out = self.loop(fn, env, header, {}, prefix=[f"{w} += 1"])
        out.pop(w)
        return [f"{w} = 0"] + lines, out

    def _s_list_loop(self, fn, env, in_loop):
        name = self.fresh("hs")
        shape = self.pick(fn.base)
        env = dict(env)
        if self.chance(65):
            e = self.expr(fn, env, shape, True, self.depth())
            init, min_len, roots = f"[{e.code}]", 1, e.roots
        else:
            init, min_len, roots = "[]", 0, frozenset()
        env[name] = Var("list", shape, True, roots, min_len=min_len)
        self.log_roots(fn, name, roots)
        i = self.fresh("i")
        bound = self.pick(["range(3)", "range(2)", "range(n)"] if fn.is_main else ["range(3)"])

        def append(end):
            e = self.expr(fn, end, shape, True, self.depth())
            self.log_roots(fn, name, e.roots)
            return f"{name}.append({e.code})"

        self.features.add("list_loop")
        lines, out = self.loop(fn, env, f"for {i} in {bound}:", {i: Var("int")}, suffix=append)
        return [f"{name} = {init}"] + lines, out

    def _s_for_list(self, fn, env, in_loop):
        u = self.fresh("u")
        lists = [n for n, v in env.items() if v.kind == "list"]
        if lists and self.chance(60):
            lst = self.pick(lists)
            v = env[lst]
            self.features.add("for_over_list")
            return self.loop(
                fn, env, f"for {u} in {lst}:", {u: Var("arr", v.shape, True, v.roots)}, busy=lst
            )
        items = [
            self.expr(fn, env, self.pick(fn.base), False, self.pick([0, 1]))
            for _ in range(self.pick([2, 3]))
        ]
        shape = bc(*(e.shape for e in items))
        exact = all(e.exact and e.shape == shape for e in items)
        roots = frozenset().union(*(e.roots for e in items))
        open_, close = self.pick([("[", "]"), ("(", ")")])
        header = f"for {u} in {open_}{', '.join(e.code for e in items)}{close}:"
        self.features.add("for_over_literal")
        return self.loop(fn, env, header, {u: Var("arr", shape, exact, roots)})

    # -- functions -----------------------------------------------------------

    def helper(self, index, base, helpers):
        pu = self.pick(base)
        pv = self.pick(base)
        hbase = sorted({(), pu, pv, bc(pu, pv)}, key=lambda s: (len(s), s))
        params = [("u", pu), ("v", pv)]
        fn = Fn(False, hbase, params, list(helpers), budget=self.pick([2, 3, 4]))
        fn.returns_shape = self.pick(hbase)
        env = {
            "u": Var("arr", pu, True, frozenset({"u"}), strict=True),
            "v": Var("arr", pv, True, frozenset({"v"}), strict=True),
        }
        lines, end = self.block(fn, env, False)
        if end is not None:
            lines.append(self.return_line(fn, end))
        rshape = bc(*(e.shape for e in fn.returns))
        rexact = all(e.exact and e.shape == rshape for e in fn.returns)
        name = f"g{index}"
        text = "\n".join([f"def {name}(u, v):"] + _indent(lines))
        return Helper(name, (pu, pv), rshape, rexact), text

    def main(self, base, helpers, x_shape, y_shape):
        fn = Fn(True, base, [("x", x_shape), ("y", y_shape)], helpers, budget=self.pick([4, 6, 8]))
        env = {
            "x": Var("arr", x_shape, True, frozenset({"x"}), strict=True),
            "y": Var("arr", y_shape, True, frozenset({"y"}), strict=True),
            "s": Var("arr", (), True),
            "n": Var("int"),
        }
        first = []
        if helpers:
            h = helpers[-1]
            args = [self.expr(fn, env, p, True, self.pick([0, 1])) for p in h.params]
            first = [f"c0 = {h.name}({', '.join(a.code for a in args)})"]
            env["c0"] = Var("arr", h.rshape, h.rexact, frozenset().union(*(a.roots for a in args)))
            self.features.add("call")
        lines, end = self.block(fn, env, False, first=first)
        while end is not None and fn.budget > 0 and self.chance(50):
            fn.budget -= 1
            more, end = self.statement(fn, end, False)
            lines += more
        if end is not None:
            lines.append(self.return_line(fn, end))
        return "\n".join(["def f(x, y, s, n):"] + _indent(lines))


WRT_ONE = [0, 1, 2, "x", "y", "s"]
WRT_MANY = [(0, 1), (0, 2), (0, 1, 2), (1, 2), ("x", "s"), (1, 0), ("s", "y", "x")]


@st.composite
def programs(draw, control=None):
    """Random programs (see the module docstring). ``control=False``: straight-line only."""
    if control is None:
        control = draw(st.integers(0, 99)) >= 25
    gen = Gen(draw, control)
    x_shape, y_shape = gen.pick(SHAPE_PAIRS)
    base = sorted({(), x_shape, y_shape, bc(x_shape, y_shape)}, key=lambda s: (len(s), s))
    helpers, texts = [], []
    for k in range(gen.pick([0, 1, 2, 1])):
        h, text = gen.helper(k, base, helpers)
        helpers.append(h)
        texts.append(text)
    main = gen.main(base, helpers, x_shape, y_shape)
    body = "\n\n\n".join(texts + [main]) + "\n"
    features = set(gen.features)
    features.add("control" if control else "straight")
    return Program(
        body=body,
        conds=list(gen.conds),
        x_shape=x_shape,
        y_shape=y_shape,
        n=draw(st.integers(1, 3)),
        seed=draw(st.integers(0, 2**32 - 1)),
        wrt_one=gen.pick(WRT_ONE),
        wrt_many=gen.pick(WRT_MANY),
        wrt_value=gen.pick(WRT_ONE + WRT_MANY),
        reuse_buffers=draw(st.booleans()),
        features=frozenset(features),
    )
