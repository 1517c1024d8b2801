"""The derivative of a call to a gradient whose code records a tape: reverse over
forward.

A gradient of a function with a loop pushes values on a tape in its primal sweep and
pops them in its adjoint sweep; that code is not differentiated again. Its derivative
is known another way: for ``g = grad(f)(*args)`` (``wrt`` the differentiated
parameters), the adjoint of argument ``a`` given the adjoint ``dg`` of ``g`` is the
gradient with respect to ``a`` of ``<grad f(*args), dg>``, and that inner product is
the tangent ``jvp(f, wrt)(*args, dg)`` computes, in forward-mode code with no tape.
So a call to such a gradient gets a ``defvjp``-style rule (``user_rules``) whose
adjoint of argument ``a`` is ``grad(<the tangent of f's jvp>, wrt=a)``: reverse mode
over forward mode, a small constant times one gradient, the Hessian never formed.
``hvp``, ``hessian`` and ``grad(grad(f))`` of a function with loops go through here.
"""

import inspect
import threading
import weakref

from transpile.core import emit
from transpile.rules.user_rules import Found, UserRule

_CACHE = weakref.WeakKeyDictionary()  # entry -> Found
_LOCK = threading.Lock()


def rule(entry, dispatcher, transpile):
    """The rule for calling ``entry``, the entry of a gradient made by ``grad`` (one
    with a tape), or None for another mode (``value_and_grad``, ``vjp``); its
    gradients are made, when first called, by ``transpile`` (``pipeline.transpile``)."""
    spec = dispatcher.spec
    if spec.mode != "grad":
        return None
    with _LOCK:
        found = _CACHE.get(entry)
    if found is not None:
        return found
    func = spec.rebuild.origin()
    sig = inspect.signature(func)
    params = list(sig.parameters)
    wrt = (tuple(spec.wrt), spec.as_tuple)
    # the adjoint of argument j: d/d(arg j) <grad f, dg>; its tangent, by the symmetry
    # of second derivatives: d/d(wrt) <d f/d(arg j), t>
    adjoints = tuple(
        _Second(func, sig, wrt, ((j,), False), f"{p}_adjoint", transpile)
        for j, p in enumerate(params)
    )
    tangents = tuple(
        _Second(func, sig, ((j,), False), wrt, f"{p}_tangent", transpile)
        for j, p in enumerate(params)
    )
    made = Found(UserRule(entry, "vjp", adjoints, tangents=tangents), entry)
    with _LOCK:
        return _CACHE.setdefault(entry, made)


class _Second:
    """``(v, g, *args, **kwargs) ->`` the gradient with respect to the parameters
    ``outer`` of the tangent of ``jvp(func, inner)(*args, v)``; ``inner`` and ``outer``
    are (indices, as_tuple). One gradient is made per set of parameters passed lists
    or tuples."""

    def __init__(self, func, sig, inner, outer, suffix, transpile):
        self.func, self.sig, self.inner, self.outer = func, sig, inner, outer
        self.transpile = transpile
        self.__name__ = f"{func.__name__}_{suffix}"
        # what an error names when this is differentiated once more
        self.__qualname__ = (
            f"the second derivative of {func.__name__} through its loop's tape (not "
            "differentiated again: a third derivative through a loop is not supported yet)"
        )
        self.made = {}  # sequences -> gradient of the tangent
        self.lock = threading.Lock()

    def __call__(self, v, g, *args, **kwargs):
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.args
        sequences = frozenset(
            p for p, a in zip(self.sig.parameters, values) if isinstance(a, (list, tuple))
        )
        with self.lock:
            gradient = self.made.get(sequences)
        if gradient is None:
            gradient = self.gradient(sequences)
            with self.lock:
                gradient = self.made.setdefault(sequences, gradient)
        return gradient(*values, v)

    def gradient(self, sequences):
        (inner, inner_tuple), (outer, outer_tuple) = self.inner, self.outer
        forward = self.transpile(
            self.func, inner, "jvp", as_tuple=inner_tuple, sequences=sequences
        ).function
        params = list(self.sig.parameters)
        taken = set(params)
        t, value, tangent, jvp_name = (
            _fresh(n, taken) for n in ("t", "value", "tangent", forward.__name__)
        )
        args = ", ".join(params)
        base = self.func.__name__  # a lambda's, "<lambda>", is no name to define
        name = f"{base if base.isidentifier() else 'lambda_'}_tangent"
        source = (
            f"def {name}({args}, {t}):\n"
            f"    {value}, {tangent} = {jvp_name}({args}, {t})\n"
            f"    return {tangent}\n"
        )
        label = f"{name}, the tangent of {self.func.__name__}"
        fn = emit.compile_function(source, name, {}, {jvp_name: forward}, label)
        made = self.transpile(fn, outer, "grad", as_tuple=outer_tuple).function
        made.__transpile_keep__ = fn  # the cache holds what it made only while fn lives
        return made


def _fresh(base, taken):
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name
