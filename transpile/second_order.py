"""Second derivatives: ``hvp`` (Hessian-vector products) and ``hessian``.

``hvp(f)(*args, v)`` is the gradient of ``x -> <grad f(x), v>`` with ``v`` held
constant. That inner product is a small generated function calling ``grad(f)``, whose
call the compiler differentiates through the gradient's own code (``higher``: reverse
over reverse), or, where that code records a tape (a loop), by the gradient of the
tangent of ``jvp(f)`` (``through_tape``: reverse over forward). Either costs a small
constant times one gradient and never forms the Hessian.
``hessian`` stacks the products with the basis vectors.
"""

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from transpile import api, jacobians
from transpile.backend import dispatch
from transpile.core import emit, function_cache
from transpile.core.errors import UndefinedName
from transpile.front import callables, higher
from transpile_runtime import ops
from transpile_runtime.structure import Wrt, flatten, resolve_wrt

_CACHE = function_cache.FunctionCache("second_order")  # f -> {wrt key: hvp function}
_LOCK = threading.Lock()


def _positional(f):
    code = f.__code__
    _refuse_keywords(f)
    return list(code.co_varnames[: code.co_argcount])


def _refuse_keywords(f):
    code = getattr(f, "__code__", None)
    if code is not None and (code.co_flags & 0x0C or code.co_kwonlyargcount):
        raise TypeError(
            f"hvp and hessian need a function with plain parameters; {f.__name__} "
            "takes *args, **kwargs or keyword-only parameters: pass the keywords in a "
            f"lambda, hvp(lambda x: {f.__name__}(x, key=value))"
        )


def _fresh(base, taken):
    name = base
    while name in taken:
        name += "_"
    return name


def _inner_product(f, indices, as_tuple):
    """A generated function with ``f``'s parameters and ``v`` last, returning
    ``<grad f(*args), v>``; its source is readable like any generated code."""
    params = _positional(f)
    taken = set(params)
    base = f.__name__ if f.__name__.isidentifier() else "f"  # a lambda's is "<lambda>"
    v, g, grad_name, ops_name = (_fresh(n, taken) for n in ("v", "g", f"d{base}", "ops"))
    # ops.inner: the sum of g * v over arrays, and over dicts and lists of them
    terms = f"{ops_name}.inner({g}, {v})"
    name = f"{base}_grad_dot"
    args = ", ".join(params)
    source = f"def {name}({args}, {v}):\n    {g} = {grad_name}({args})\n    return {terms}\n"
    # checkpoint=False: a checkpointed loop's replay has no rule of its own to
    # differentiate again; the loop is taped as written (its memory grows with its length)
    wrt_key = tuple(indices) if as_tuple else indices[0]
    gradient = api.strict(api.grad(f, wrt=wrt_key, checkpoint=False))
    bound = {grad_name: gradient, ops_name: ops}
    fn = emit.compile_function(source, name, {}, bound, f"{name}, for hvp of {f.__name__}")
    fn.__transpile_keep__ = gradient
    return fn


def _hvp_of(f, wrt):
    f = higher.differentiable(f)
    if not callable(f) or not hasattr(f, "__code__"):
        raise TypeError(f"expected a Python function, got {f!r}")
    indices, as_tuple = resolve_wrt(f, wrt)
    key = (indices, as_tuple)
    with _LOCK:
        found = _CACHE.get(f, {}).get(key)
    if found is not None:
        return found
    inner = _inner_product(f, indices, as_tuple)
    made = _v_checked(api.grad(inner, wrt=tuple(indices) if as_tuple else indices[0]), key)
    made.__transpile_inner__ = inner  # the inner product: what the products differentiate
    with _LOCK:
        return _CACHE.setdefault(f, {}).setdefault(key, made)


def _v_checked(gradient, key):
    """``gradient`` (of the inner product), refusing a ``v`` not shaped like the
    arguments it goes with: it would broadcast into a wrong product. The gradient's
    attributes come along, so that ``source`` shows it and ``grad`` differentiates it."""
    indices, as_tuple = key
    fname = gradient.__name__  # (not checked.__name__: a function referring to itself)

    @functools.wraps(gradient)
    def checked(*args):
        if args:
            api.check_tangent(args, indices, as_tuple, fname, what="v")
        return gradient(*args)

    del checked.__wrapped__  # not the function itself: what inspect.unwrap must not find
    return checked


def hvp(
    f: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    has_grad: bool = False,
    mode: str = "forward",
) -> Callable[..., Any]:
    """The Hessian-vector product of scalar-valued ``f``: ``hvp(f, wrt)(*args, v)`` is
    ``H v``, ``H`` the Hessian of ``f`` with respect to ``wrt`` at ``args`` (``v`` shaped
    like that argument, a tuple of them for a tuple ``wrt``), in ``wrt``'s structure.

    ``mode="forward"``: forward over reverse, ``jvp(grad(f, wrt), wrt)``, the tangent of
    the gradient's own code along ``v``; ``has_grad=True`` returns ``(gradient, H v)``,
    which that pass computes anyway. ``mode="reverse"``: reverse over reverse, the
    gradient of ``<grad f(x), v>`` with ``v`` constant. Either is made once and cached,
    costs a few gradients and never forms ``H``; ``source(...)`` of the result shows its
    code. Arguments differentiated are numbers, arrays, and dicts and lists of them.
    """
    if f is None:
        return lambda g: hvp(g, wrt=wrt, has_grad=has_grad, mode=mode)
    f = callables.plain(f)  # a partial, a bound method, a callable instance
    if mode not in ("forward", "reverse"):
        raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")
    try:
        return _hvp_made(f, wrt, has_grad, mode)
    except UndefinedName as exc:  # a name f reads is not defined yet: wait for it
        build = functools.partial(_hvp_made, f, wrt, has_grad, mode)
        return api.until_defined(f, build, True, exc)


def _hvp_made(f, wrt, has_grad, mode):
    f = api.strict(f)  # hvp(grad(g)) of a g waiting for a name: made once it is defined
    _refuse_keywords(higher.differentiable(f))
    if mode == "reverse":
        if has_grad:
            raise ValueError("has_grad=True is forward over reverse: use mode='forward'")
        return _hvp_of(f, wrt)
    pair = _grad_and_hvp(f, wrt)
    return pair if has_grad else pair.__transpile_product__


def _grad_and_hvp(f, wrt):
    target = higher.differentiable(f)
    indices, as_tuple = resolve_wrt(target, wrt)
    key = ("with gradient", indices, as_tuple)
    with _LOCK:
        found = _CACHE.get(target, {}).get(key)
    if found is not None:
        return found
    wrt = tuple(indices) if as_tuple else indices[0]
    gradient = api.strict(api.grad(f, wrt=wrt, checkpoint=False))  # as _inner_product
    made = _like_arguments(api.strict(api.jvp(gradient, wrt=wrt)), indices, as_tuple)
    made.__transpile_product__ = _second_of(made, f)
    with _LOCK:
        return _CACHE.setdefault(target, {}).setdefault(key, made)


def _like_arguments(pair, indices, as_tuple):
    """``pair`` (the tangent of the gradient), returning the gradient and ``H v`` as a
    gradient is returned: a 0-d array for a 0-d array argument, float32 for float32
    (the tangent code computes in whatever precision the function's constants have)."""

    @functools.wraps(pair)
    def in_kind(*args):
        gradient, product = pair(*args)
        if not as_tuple:
            given = args[indices[0]]
            return dispatch.like_arrays(gradient, given), dispatch.like_arrays(product, given)
        given = [args[i] for i in indices]
        return (
            tuple(dispatch.like_arrays(g, a) for g, a in zip(gradient, given)),
            tuple(dispatch.like_arrays(p, a) for p, a in zip(product, given)),
        )

    del in_kind.__wrapped__  # not the function itself: what inspect.unwrap must not find
    return in_kind


def _second_of(pair, f):
    """``H v`` alone from the pair ``(gradient, H v)``, showing the pair's source."""

    def product(*args):
        return pair(*args)[1]

    product.__name__ = product.__qualname__ = f"{getattr(f, '__name__', 'f')}_hvp"
    product.__doc__ = "H v: the tangent of the gradient along v (transpile.hvp)"
    for attribute in ("__transpile_source__", "__transpile_generated__"):
        if hasattr(pair, attribute):  # source(product) shows the pair's
            setattr(product, attribute, getattr(pair, attribute))
    return product


def hessian(f: Callable[..., Any] | None = None, wrt: Wrt = 0) -> Callable[..., Any]:
    """The Hessian of scalar-valued ``f`` with respect to argument ``wrt``: an array of
    shape ``x.shape + x.shape`` (a tuple ``wrt`` gives a tuple of rows of blocks, block
    ``[i][j]`` of shape ``x_i.shape + x_j.shape``; a structured argument, a dict or list
    of arrays, gives that structure of such structures of blocks, as JAX does), one
    ``hvp`` per basis vector."""
    if f is None:
        return lambda g: hessian(g, wrt=wrt)
    f = callables.plain(f)
    product = hvp(f, wrt)
    f = higher.differentiable(f)
    indices, as_tuple = resolve_wrt(f, wrt)

    @functools.wraps(f)
    def hessian_of(*args):
        x = tuple(args[i] for i in indices) if as_tuple else args[indices[0]]
        leaves, treedef = flatten(x)
        # columns[j][i]: d(grad_i f)/dx_j, one product per basis vector of x_j
        columns = [_columns(product, args, leaves, treedef, j) for j in range(len(leaves))]
        blocks = [[columns[j][i] for j in range(len(leaves))] for i in range(len(leaves))]
        return jacobians.nest(blocks, treedef, treedef)

    del hessian_of.__wrapped__
    return hessian_of


def _columns(product, args, leaves, treedef, j):
    """For each leaf ``x_i``, the block ``d(grad_i f)/dx_j``, of shape
    ``x_i.shape + x_j.shape``: one product per basis vector of ``x_j``."""
    shape_j = np.shape(leaves[j])
    parts = [[] for _ in leaves]
    for k in range(int(np.prod(shape_j))):
        out, _ = flatten(product(*args, jacobians.basis(leaves, treedef, j, k)))
        for i, part in enumerate(out):
            parts[i].append(np.asarray(part, dtype=jacobians.precision(leaves[i], leaves[j])))
    return [
        np.stack(col, axis=-1).reshape(np.shape(leaves[i]) + shape_j)
        if col
        else np.zeros(
            np.shape(leaves[i]) + shape_j, dtype=jacobians.precision(leaves[i], leaves[j])
        )
        for i, col in enumerate(parts)
    ]
