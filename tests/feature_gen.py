"""Random programs that combine what the README lists under "What is supported".

``feature_programs()`` is a hypothesis strategy whose examples are ``FeatureProgram``
objects: the source of a module with ``f(x, s, p, q)`` (``x`` an array of shape (3,),
``s`` a Python float, ``p`` a dict ``{"w": array (3,), "b": float}``, ``q`` a list of
two arrays (3,), all arrays of one dtype, float32 or float64), one entry point to
differentiate it with (``ENTRIES``) and its ``wrt``.

The body threads one active value ``h`` of shape (3,) through a few *stages*; each
stage uses one construct (``STAGES``): comprehensions (list, dict, generator; loops
over a dict's keys, values and items), lambdas bound to names and passed to helpers,
keywords passed on (``**kw`` callees, ``**`` of a display and of the dict parameter), a
global object counting its calls, a global list of functions iterated,
nested ``def`` closures, ``functools.partial``, small classes with methods and
``__call__`` (global objects and objects made in the function, given to helpers), the
dict and list parameters, ``*args`` helpers, recursion (direct and mutual) with a base
case, early returns, ``np.linalg``, ``einsum``, ``split``, ``where``, fancy indexing,
writes into fresh arrays (``+=`` into slices, masks, views taken after the writes:
``.T``, ``reshape``, ``ravel``, ``swapaxes``, a row), keyword arguments skipping
defaults (directly and through ``functools.partial``; a default computed from a global
rebound after the ``def``), ``if/elif/else``, ``while``, ``break``, ``continue``,
``zip``, ``enumerate``, lists built by ``append``, augmented assignment, builtins and
``math`` (``abs``, ``max``, ``sorted`` with a key, ``map``, a set comprehension).
``s`` is a Python float or a numpy scalar of the dtype. Scalar entry points
(``grad``, ``hvp``, ...) get ``f`` returning a reduction of ``h``; the others (``vjp``,
``jvp``, ``jacobian``) get ``f`` returning ``h`` itself.

Every choice is one hypothesis draw, and the first entry of each list is the simplest,
so that hypothesis shrinks towards one plain stage through ``grad``.

``KNOWN`` names the stages (per entry point) that fail today for a reason another
helper is fixing; ``feature_programs(known=False)`` leaves them out (the default run),
``known=True`` draws them too (surveys: ``tests/feature_survey.py``).
"""

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

PARAMS = ("x", "s", "p", "q")
CONSTANTS = ["0.5", "1.5", "-0.7", "0.3", "1.2"]

FIRST = ("grad", "value_and_grad")
VECTOR = ("vjp", "jvp", "jacobian_forward", "jacobian_reverse")
SECOND = ("hvp", "hvp_has_grad", "hvp_reverse", "hessian", "grad_grad")
ENTRIES = FIRST + VECTOR + SECOND
# Entry points that run forward mode (hvp's default is forward over reverse).
FORWARD = ("jvp", "jacobian_forward", "hvp", "hvp_has_grad", "hessian")

WRT = {
    "grad": [0, 1, 2, 3, (0, 1), ("x", "p"), (3, 0)],
    "value_and_grad": [0, "s", "p", (0, 3)],
    "vjp": [0, 1, 2, 3, (0, 2)],
    "jvp": [0, 1, 2, 3, (0, 1)],
    "jacobian_forward": [0, 1, 2, (0, 1)],
    "jacobian_reverse": [0, 1, 2, (0, 1)],
    "hvp": [0, 1, 2, 3, (0, 1)],
    "hvp_has_grad": [0, 1, 2, (0, 2)],
    "hvp_reverse": [0, 1, 2, 3, (0, 1)],
    "hessian": [0, 1, 2],
    # grad(grad(f, wrt=1), wrt=k): d/dk of df/ds (df/ds is a scalar)
    "grad_grad": [1, 0, 2],
}


@dataclass(frozen=True)
class FeatureProgram:
    source: str
    entry: str
    wrt: object
    dtype: str
    zero_d: bool  # p["b"] is a 0-d array of ``dtype``, not a Python float
    seed: int
    features: frozenset

    def make_args(self):
        rng = np.random.default_rng(self.seed)
        dtype = np.dtype(self.dtype)

        def arr():
            return np.asarray(rng.normal(size=3) * 0.7, dtype=dtype)

        x = arr()
        s = float(round(rng.normal() * 0.7, 6))
        if "numpy_scalar" in self.features:  # s a numpy scalar of the dtype: np.float32(0.3)
            s = dtype.type(s)
        b = float(round(rng.normal() * 0.5, 6))
        p = {"w": arr(), "b": np.asarray(b, dtype=dtype) if self.zero_d else b}
        q = [arr(), arr()]
        return [x, s, p, q]

    def extra(self, like):
        """A random array structure shaped like ``like`` (a dout, tangent or ``v``), of
        its leaves' dtypes, reproducible from the program's seed."""
        rng = np.random.default_rng(self.seed + 1)

        def leaf(a):
            if isinstance(a, np.ndarray):
                return np.asarray(rng.normal(size=a.shape), dtype=a.dtype)
            return float(round(rng.normal(), 6))

        return _map(leaf, like)

    def __repr__(self):
        return (
            f"FeatureProgram(entry={self.entry!r}, wrt={self.wrt!r}, dtype={self.dtype},"
            f" zero_d={self.zero_d}, seed={self.seed}, features={sorted(self.features)})\n"
            f"{self.source}"
        )


def _map(fn, tree):
    if isinstance(tree, dict):
        return {k: _map(fn, v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_map(fn, v) for v in tree)
    return fn(tree)


# --------------------------------------------------------------------------
# Module-level definitions the stages may use (each written once per module)

DEFS = {
    "apply_twice": "def apply_twice(fn, z):\n    return fn(fn(z))",
    "apply_with": "def apply_with(fn, z, c):\n    return fn(z) * c + z",
    "mix": "def mix(a, z, off=0.0):\n    return a * z + off",
    "affine": "def affine(z, scale=2.0, off=0.0):\n    return z * scale + off",
    "total": (
        "def total(*zs):\n"
        "    out = zs[0]\n"
        "    for z in zs[1:]:\n"
        "        out = out + z\n"
        "    return out"
    ),
    "weighted": "def weighted(c, *zs):\n    return c * sum(zs)",
    "rec": (
        "def rec(z, k):\n"
        "    if k <= 0:\n"
        "        return z\n"
        "    return rec(np.sin(z) * 1.1 + 0.1, k - 1)"
    ),
    "rec_sum": (
        "def rec_sum(z, k):\n"
        "    if k == 0:\n"
        "        return z * 0.5\n"
        "    return z + rec_sum(np.tanh(z), k - 1)"
    ),
    "Affine": (
        "class Affine:\n"
        "    def __init__(self, w, b):\n"
        "        self.w = w\n"
        "        self.b = b\n"
        "\n"
        "    def __call__(self, z):\n"
        "        return self.w * z + self.b\n"
        "\n"
        "    def act(self, z):\n"
        "        return np.tanh(self.w * z) + self.b\n"
        "\n"
        "    def both(self, z):\n"
        "        return self.act(self(z))"
    ),
    "scaled": "def scaled(z, *, k=1.5):\n    return z * k + np.sin(z)",
    "apply_act": "def apply_act(z, act=np.tanh):\n    return act(z) * 1.2 + z",
    "shift": (
        "OFFSET = 0.25\n\n\ndef shift(z, a=1.0, b=OFFSET * 2.0, c=0.5):\n"
        "    return z * a + b + np.sin(z) * c\n\n\nOFFSET = 10.0  # rebound: the default is 0.5"
    ),
    "clipped": (
        "def clipped(z, c):\n"
        "    if np.max(z) > 3.0:\n"
        "        return z * 0.0 + 3.0\n"
        "    return np.tanh(z) * c + z"
    ),
    "even_step": (
        "def even_step(z, k):\n"
        "    if k <= 0:\n"
        "        return z\n"
        "    return odd_step(np.sin(z) + 0.1 * z, k - 1)\n\n\n"
        "def odd_step(z, k):\n"
        "    if k <= 0:\n"
        "        return z * 0.5\n"
        "    return even_step(z * 0.9 + np.cos(z) * 0.1, k - 1)"
    ),
    "passon": "def passon(z, **kw):\n    return np.tanh(z) + z * len(kw)",
    "lin2": "def lin2(z, w, b=0.0):\n    return z * w + b",
    "Counted": (
        "class Counted:\n"
        "    def __init__(self):\n"
        "        self.calls = 0\n"
        "\n"
        "    def step(self, z):\n"
        "        self.calls += 1\n"
        "        return np.sin(z) * 1.1 + z"
    ),
    "COUNTED": "COUNTED = Counted()",
    "FUNS": "FUNS = [np.sin, np.tanh, np.sin]",
    "LAYER": "LAYER = Affine(np.array([0.8, -0.5, 1.1]), 0.2)",
    "SCALE": "SCALE = functools.partial(mix, 0.7)",
}
DEPENDS = {"LAYER": ["Affine"], "SCALE": ["mix"], "COUNTED": ["Counted"]}


class Gen:
    def __init__(self, draw, stages):
        self.draw = draw
        self.stages = stages
        self.defs = []
        self.features = set()
        self.counter = 0

    def pick(self, items):
        items = list(items)
        return items[0] if len(items) == 1 else self.draw(st.sampled_from(items))

    def const(self):
        return self.pick(CONSTANTS)

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def use(self, name):
        for dep in DEPENDS.get(name, []):
            self.use(dep)
        if name not in self.defs:
            self.defs.append(name)

    def stage(self):
        kind = self.pick(self.stages)
        self.features.add(kind)
        return STAGES[kind](self)


# --------------------------------------------------------------------------
# Stages: each returns the lines that rebind ``h`` (shape (3,)) from ``h`` and the
# parameters. Names a stage binds are fresh, so stages compose in any order.


def _elementwise(g):
    form = g.pick(
        ["np.tanh(h) + s * h", "np.sin(h) * @C + h", "h * s + np.cos(h)", "h / (1.0 + h * h)"]
    )
    return ["h = " + form.replace("@C", g.const())]


def _list_comprehension(g):
    form = g.pick(
        [
            "h = np.stack([np.sin(h[i]) * @C + h[i] for i in range(3)])",
            "h = h * sum([np.tanh(h[i]) for i in range(3)])",
            "h = h + np.stack([w * @C for w in q])[1]",
            "h = np.stack([h[i] * h[j] for i, j in zip(range(3), (2, 0, 1))])",
        ]
    )
    return [form.replace("@C", g.const())]


def _dict_comprehension(g):
    d = g.fresh("d")
    form = g.pick(
        [
            f'{d} = {{k: h * c for k, c in zip(("a", "b"), (@C, 1.5))}}\n'
            f'h = {d}["a"] + np.sin({d}["b"])',
            f"{d} = {{i: h[i] ** 2 for i in range(3)}}\nh = h * {d}[0] + {d}[2]",
            f'{d} = {{"u": h * s, "v": np.cos(h)}}\n{d}["w"] = {d}["u"] * @C\n'
            f'h = {d}["w"] + {d}["v"]',
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _dict_comprehension_new_key(g):
    d = g.fresh("d")
    return [
        f'{d} = {{k: h * c for k, c in zip(("a", "b"), (s, {g.const()}))}}',
        f'{d}["c"] = {d}["a"] * {d}["b"]',
        f'h = {d}["c"] + h',
    ]


def _generator(g):
    form = g.pick(
        [
            "h = h + sum(np.cos(h[i]) for i in range(3))",
            "h = h * sum(np.sum(w * w) for w in q) * @C",
            "h = h * @C + sum(np.tanh(w * h) for w in (h, x))",
        ]
    )
    return [form.replace("@C", g.const())]


def _dict_iteration(g):
    t = g.fresh("t")
    d = g.fresh("d")
    form = g.pick(
        [
            f"{t} = 0.0\nfor k in p:\n    {t} = {t} + np.sum(p[k])\nh = h * {t}",
            "for k, v in p.items():\n    h = h + v * @C",
            "h = h * sum(np.sum(v) for v in p.values())",
            f'{d} = {{"a": h * @C, "b": np.sin(h)}}\nh = h + sum({d}[k] for k in {d})',
            f"{d} = {{i: h[i] * @C for i in range(3)}}\nh = h * sum({d}.values())",
            f'{d} = {{"a": h, "b": h * h}}\nfor k, v in {d}.items():\n    h = h + v * @C',
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _lambda(g):
    act = g.fresh("act")
    form = g.pick(
        [
            f"{act} = lambda z: np.tanh(z) * 1.5 + z * @C\nh = {act}(h)",
            f"{act} = lambda z, c=@C: np.sin(z) * c + z\nh = {act}(h) + {act}(h * s)",
            f"{act} = lambda z: np.exp(-z * z)\nh = h + np.stack(list(map({act}, q)))[0]",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _lambda_to_helper(g):
    act = g.fresh("act")
    fn = g.fresh("inner")
    form = g.pick(
        [
            f"{act} = lambda z: z * s + np.cos(z)\nh = apply_twice({act}, h)",
            "h = apply_with(lambda z: np.sin(z) + 0.5 * z, h, @C)",
            f"def {fn}(z):\n    return np.tanh(z) * s\nh = apply_with({fn}, h, @C)",
        ]
    )
    text = form.replace("@C", g.const())
    if "apply_twice" in text:
        g.use("apply_twice")
    if "apply_with" in text:
        g.use("apply_with")
    return text.split("\n")


def _closure(g):
    fn = g.fresh("inner")
    h0 = g.fresh("h")
    form = g.pick(
        [
            f"{h0} = h * @C\ndef {fn}(z):\n    return z * {h0} + np.sin(z)\nh = {fn}(h)",
            f"def {fn}(z, c=@C):\n    return np.tanh(z * c) + s * z\nh = {fn}(h) + {fn}(x)",
            f"def {fn}(z):\n    if z[0] > 5.0:\n        return z\n    return z * z * 0.5\n"
            f"h = {fn}(h) + h",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _partial(g):
    m = g.fresh("m")
    g.use("mix")
    form = g.pick(
        [
            f"{m} = functools.partial(mix, @C)\nh = {m}(h)",
            f"{m} = functools.partial(mix, s)\nh = {m}(h, off=0.2)",
            "h = SCALE(h) + h",
        ]
    )
    text = form.replace("@C", g.const())
    if "SCALE" in text:
        g.use("SCALE")
    return text.split("\n")


def _keyword_skip(g):
    g.use("affine")
    m = g.fresh("m")
    form = g.pick(
        [
            "h = affine(h, off=s)",
            "h = affine(h, off=@C) * np.sin(h)",
            f"{m} = functools.partial(affine, off=s)\nh = {m}(h)",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _global_object(g):
    g.use("LAYER")
    return [g.pick(["h = LAYER(h)", "h = LAYER.act(h) * s", "h = LAYER.both(h)"])]


def _made_object(g):
    g.use("Affine")
    layer = g.fresh("layer")
    form = g.pick(
        [
            f"{layer} = Affine(h * @C, s)\nh = {layer}(h)",
            f"{layer} = Affine(h, s)\nh = {layer}.act(h) + h",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _made_object_inactive(g):
    g.use("Affine")
    layer = g.fresh("layer")
    form = g.pick([f"{layer} = Affine(p['w'], p['b'])", f"{layer} = Affine(q[0], 0.5)"])
    return [form, g.pick([f"h = {layer}.act(h) + h", f"h = {layer}(h) * h"])]


def _made_object_method_calls(g):
    g.use("Affine")
    layer = g.fresh("layer")
    return [f"{layer} = Affine(x, {g.const()})", f"h = {layer}.both(h)"]


def _function_argument(g):
    g.use("apply_act")
    form = g.pick(
        ["h = apply_act(h)", "h = apply_act(h, act=np.sin)", "h = apply_act(h * s, np.cos)"]
    )
    return [form]


def _keyword_only(g):
    g.use("scaled")
    return [
        g.pick(["h = scaled(h, k=s)", "h = scaled(h)", "h = scaled(h * s, k=@C)"]).replace(
            "@C", g.const()
        )
    ]


def _keywords_passed_on(g):
    form = g.pick(
        [
            "h = passon(h)",
            "h = passon(h, a=s, b=@C)",
            'h = affine(h, **{"scale": s, "off": @C})',
            "h = lin2(h, **p)",
        ]
    )
    g.use("passon" if "passon" in form else "affine" if "affine" in form else "lin2")
    return [form.replace("@C", g.const())]


def _counter(g):
    g.use("COUNTED")
    return [g.pick(["h = COUNTED.step(h)", "h = COUNTED.step(h * s) + h"])]


def _function_list(g):
    fn = g.fresh("fn")
    g.use("FUNS")
    return [f"for {fn} in FUNS:", g.pick([f"    h = {fn}(h) * s", f"    h = {fn}(h * s) + h"])]


def _unpacking(g):
    a, b = g.fresh("a"), g.fresh("b")
    form = g.pick(
        [
            f"{a}, {b} = h * @C, np.sin(h)\nh = {a} + {b} * s",
            f"{a}, *{b} = np.split(h, 3)\nh = np.concatenate([{a} * @C] + {b})",
            f"{a}, {b} = q\nh = h * {a} + {b}",
            f"{a} = (h, h * s)\n{b}, h = {a}\nh = h + np.tanh({b})",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _reversed_sorted(g):
    form = g.pick(
        [
            "h = h + sum(w * @C for w in reversed(q))",
            "for w in reversed([h * 0.5, np.sin(h)]):\n    h = h * 0.8 + w",
            "h = h * sorted([q[0][0], q[1][0], s])[1]",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _dict_parameter(g):
    return [g.pick(['h = h * p["w"] + p["b"]', 'h = np.tanh(h + p["w"]) * p["b"]'])]


def _list_parameter(g):
    form = g.pick(
        [
            "h = h + q[0] * np.sin(q[1])",
            "for w in q:\n    h = h * 0.5 + w",
            "for i, w in enumerate(q):\n    h = h + w * (i + 1.0)",
            "h = h * q[-1] + q[0] * @C",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _varargs(g):
    form = g.pick(
        [
            ("total", "h = total(h, np.sin(h), h * s)"),
            ("weighted", "h = weighted(@C, h, np.cos(h))"),
            ("total", "h = total(h, h * @C)"),
        ]
    )
    g.use(form[0])
    return [form[1].replace("@C", g.const())]


def _recursion(g):
    name = g.pick(["rec", "rec_sum"])
    g.use(name)
    return [f"h = {name}(h, {g.pick([1, 2, 3])})"]


def _linalg(g):
    a = g.fresh("A")
    build = f"{a} = np.outer(h, h) * 0.1 + np.eye(3) * 2.0"
    use = g.pick(
        [
            f"h = np.linalg.solve({a}, h)",
            f"h = np.linalg.inv({a}) @ h",
            f"h = h * np.linalg.det({a})",
            "h = h / np.linalg.norm(h)",
            f"sign, logdet = np.linalg.slogdet({a})\nh = h * logdet",
            f"h = np.linalg.cholesky({a}) @ h",
        ]
    )
    return [build] + use.split("\n")


def _einsum(g):
    m = g.fresh("M")
    form = g.pick(
        [
            'h = np.einsum("i,i->", h, x) * h',
            f'{m} = np.outer(h, x)\nh = np.einsum("ij,j->i", {m}, h)',
            f'{m} = np.outer(h, q[0])\nh = np.einsum("ij,ij->i", {m}, {m}) + h',
            f'{m} = np.outer(h, h)\nh = np.einsum("ij->i", {m}) * @C',
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _split(g):
    a, b, c = g.fresh("a"), g.fresh("b"), g.fresh("c")
    form = g.pick(
        [
            f"{a}, {b}, {c} = np.split(h, 3)\nh = np.concatenate([{c} * {a}, {b}, {a} + {c}])",
            f"{a}, {b} = np.split(h, [1])\nh = np.concatenate([np.sin({b}), {a} * s])",
            "parts = np.split(h, 3)\nh = np.concatenate(parts[::-1]) * h",
        ]
    )
    return form.split("\n")


def _where(g):
    form = g.pick(
        [
            "h = np.where(h > 0.0, h, 0.3 * h)",
            "h = np.where(x > 0.0, np.sin(h), h * h)",
            "h = np.where(h > @C, h * s, np.tanh(h))",
        ]
    )
    return [form.replace("@C", g.const())]


def _fancy_index(g):
    idx = g.fresh("idx")
    form = g.pick(
        [
            "h = h[[2, 0, 1]] * h",
            f"{idx} = np.array([0, 2, 2])\nh = h[{idx}] + h",
            "h = h + np.sum(h[x > 0.0])",
            "h = h * h[np.argsort(x)]",
        ]
    )
    return form.split("\n")


def _fresh_write(g):
    out = g.fresh("out")
    form = g.pick(
        [
            f"{out} = np.zeros(3)\n{out}[0] = h[1] * 2.0\n{out}[1:] = np.sin(h[:2])\nh = {out} + h",
            f"{out} = np.zeros_like(h)\nfor i in range(3):\n    {out}[i] = h[i] * h[(i + 1) % 3]\n"
            f"h = {out}",
            f"{out} = np.zeros((2, 3))\n{out}[0] = h\n{out}[1, :] = h * s\nh = np.sum({out}, axis=0)",
            f"{out} = np.empty(3)\n{out}[:] = h * @C\n{out}[x > 0.0] = 1.0\nh = {out} * h",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _copy_write(g):
    out = g.fresh("out")
    return [f"{out} = h.copy()", f"{out}[1] = {out}[0] * s", f"h = {out} * h"]


def _view_write(g):
    # a view of an allocation made before a write into it and read after: taken again
    # where it is read (``retake``)
    out, r = g.fresh("out"), g.fresh("r")
    view = g.pick([f"{out}.T", f"{out}.reshape(4)", f"np.ravel({out})"])
    return [
        f"{out} = np.zeros((2, 2))",
        f"{r} = {view}",
        f"{out}[0, 1] = h[0]",
        f"h = h * np.sum({r})",
    ]


def _view_after_writes(g):
    # views (.T, reshape, ravel, swapaxes, a row) of an array written through its base,
    # taken after the writes (``out[0, 0] += v`` reads an item: a number, not a view)
    out, r = g.fresh("out"), g.fresh("r")
    view = g.pick(
        [
            f"{out}.T",
            f"{out}.reshape(4)",
            f"np.ravel({out})",
            f"np.swapaxes({out}, 0, 1)",
            f"{out}[1]",
            f"np.transpose({out})",
        ]
    )
    return [
        f"{out} = np.zeros((2, 2), dtype=h.dtype)",
        f"{out}[0, 1] = h[0] * {g.const()}",
        f"{out}[1, :] = np.sin(h[1:]) * s",
        f"{out}[0, 0] += h[2]",
        f"{r} = {view}",
        f"h = h * np.sum({r} * {r}) + np.sum({r}[1:]) * 0.3",
    ]


def _keyword_defaults(g):
    # keyword arguments skipping defaults, and defaults computed at the def
    g.use("shift")
    m = g.fresh("m")
    form = g.pick(
        [
            "h = shift(h, c=s)",
            "h = shift(h, b=s * h, c=@C)",
            "h = shift(z=h, a=@C)",
            "h = shift(h, 1.5, c=s)",
            f"{m} = functools.partial(shift, c=s, a=@C)\nh = {m}(h)",
            f"{m} = functools.partial(shift, b=h)\nh = {m}(h * s)",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _control_flow(g):
    t = g.fresh("t")
    form = g.pick(
        [
            "if np.sum(h) > 0.0:\n    h = h * s\nelif h[0] > 0.5:\n    h = np.sin(h)\nelse:\n"
            "    h = h * h",
            f"{t} = 0\nwhile {t} < 2:\n    h = np.tanh(h) + 0.1 * h\n    {t} += 1",
            "for i in range(4):\n    if i == 2:\n        break\n    h = h * @C + np.sin(h)",
            "for i in range(3):\n    if i == 1:\n        continue\n    h = h + s * h[i]",
            "for a, b in zip(q, (0.5, 1.5)):\n    h = h + a * b",
            "for i, w in enumerate(reversed(q)):\n    h = h * (1.0 + 0.1 * i) + w * s",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _list_append(g):
    hs, w = g.fresh("hs"), g.fresh("w")
    form = g.pick(
        [
            f"{hs} = []\nfor i in range(3):\n    {hs}.append(h * (i + 1.0))\nh = np.stack({hs})[-1] + {hs}[0]",
            f"{hs} = []\nfor {w} in q:\n    {hs}.append(np.sin({w} * h))\nh = sum({hs}) * @C",
            f"{hs} = [h]\nfor i in range(2):\n    {hs}.append(np.tanh({hs}[-1]))\n"
            f"h = np.concatenate({hs})[3:6] + h",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _augmented(g):
    out = g.fresh("out")
    form = g.pick(
        [
            "h = h * 1.0\nh += s * x\nh *= @C",
            f"{out} = np.zeros((3, 2), dtype=h.dtype)\n{out}[:, 0] += h\n{out}[:, 1] += h * s\n"
            f"h = np.sum({out} * {out}, axis=1)",
            f"{out} = h.copy()\n{out}[h > 0.0] = 0.5 * h[h > 0.0]\nh = {out} + h",
        ]
    )
    return form.replace("@C", g.const()).split("\n")


def _builtins_math(g):
    form = g.pick(
        [
            "h = h * math.exp(s * 0.1) + abs(s) * h",
            "h = h * max(s, 0.2) + min(float(np.sum(h)), 1.0)",
            "h = h * sorted([q[0][0], q[1][0], s], key=abs)[1]",
            "h = h + np.stack(list(map(np.sin, q)))[0] * math.sin(s)",
            "h = h * sum({w * 1.0 for w in (0.5, 1.5)}) + np.sum([v * v for v in h])",
        ]
    )
    return [form]


def _early_return(g):
    g.use("clipped")
    return [g.pick(["h = clipped(h, s)", "h = clipped(h * @C, 0.1)"]).replace("@C", g.const())]


def _mutual_recursion(g):
    g.use("even_step")
    return [f"h = even_step(h, {g.pick([1, 2, 3])})"]


STAGES = {
    "elementwise": _elementwise,
    "list_comprehension": _list_comprehension,
    "dict_comprehension": _dict_comprehension,
    "generator": _generator,
    "lambda": _lambda,
    "lambda_to_helper": _lambda_to_helper,
    "closure": _closure,
    "partial": _partial,
    "global_object": _global_object,
    "made_object": _made_object,
    "function_argument": _function_argument,
    "unpacking": _unpacking,
    "keyword_only": _keyword_only,
    "keywords_passed_on": _keywords_passed_on,
    "counter": _counter,
    "function_list": _function_list,
    "reversed_sorted": _reversed_sorted,
    "dict_parameter": _dict_parameter,
    "list_parameter": _list_parameter,
    "varargs": _varargs,
    "recursion": _recursion,
    "linalg": _linalg,
    "einsum": _einsum,
    "split": _split,
    "where": _where,
    "fancy_index": _fancy_index,
    "fresh_write": _fresh_write,
    "copy_write": _copy_write,
    "view_after_writes": _view_after_writes,
    "keyword_defaults": _keyword_defaults,
    "control_flow": _control_flow,
    "list_append": _list_append,
    "augmented": _augmented,
    "builtins_math": _builtins_math,
    "early_return": _early_return,
    "mutual_recursion": _mutual_recursion,
    # known classes (see KNOWN)
    "dict_iteration": _dict_iteration,
    "dict_comprehension_new_key": _dict_comprehension_new_key,
    "keyword_skip": _keyword_skip,
    "made_object_method_calls": _made_object_method_calls,
    "made_object_inactive": _made_object_inactive,
    "view_write": _view_write,
}

ALL = tuple(ENTRIES)
# Stages that fail today for a reason other work is fixing: stage -> [(entry points it
# fails under, who fixes it, what happens)]. The default run leaves each out under
# those entry points; remove an entry when its fix lands.
KNOWN = {
    # (none: remove an entry when its fix lands)
}


def _stages_for(entry, known, only=None):
    return [
        name
        for name in STAGES
        if known or not any(entry in entries for entries, _, _ in KNOWN.get(name, []))
        if only is None or name in only
    ]


def _render(defs, body):
    lines = ["import functools", "import math", "", "import numpy as np", "", ""]
    for name in defs:
        lines += [DEFS[name], "", ""]
    lines.append("def f(x, s, p, q):")
    lines += ["    " + line for line in body]
    return "\n".join(lines) + "\n"


@st.composite
def feature_programs(draw, known=False, entries=ENTRIES, only=None):
    """Programs (see the module docstring); ``only``: the names of the stages to draw
    from (surveys)."""
    entry = draw(st.sampled_from(entries))
    gen = Gen(draw, [])
    wrt = gen.pick(WRT[entry])
    gen.stages = _stages_for(entry, known, only)
    dtype = gen.pick(["float64", "float32"])
    zero_d = draw(st.booleans())
    body = [
        gen.pick(["h = x * s", "h = x + s * @C", "h = np.sin(x) + s"]).replace("@C", gen.const())
    ]
    for _ in range(draw(st.integers(1, 4))):
        body += gen.stage()
    vector = entry in VECTOR
    if vector:
        body.append(gen.pick(["return h", "return h * 1.0 + np.sin(h) * s"]))
    else:
        final = gen.pick(
            ["np.sum(h * h) * 0.5", "np.sum(np.tanh(h)) + np.sum(h) * s", "np.mean(np.sin(h) * h)"]
        )
        body.append(f"return {final}")
    source = _render(gen.defs, body)
    features = set(gen.features) | {f"entry:{entry}", f"dtype:{dtype}"}
    if zero_d:
        features.add("zero_d")
    if draw(st.booleans()):
        features.add("numpy_scalar")
    return FeatureProgram(
        source=source,
        entry=entry,
        wrt=wrt,
        dtype=dtype,
        zero_d=zero_d,
        seed=draw(st.integers(0, 2**32 - 1)),
        features=frozenset(features),
    )
