"""The public entry points: grad, value_and_grad, vjp, jvp and source.

They check arguments, resolve ``wrt`` against the function's parameters and
return the generated function, transpiled once per (function, wrt, mode) and
cached.
"""

import functools
import inspect

from transpile import (
    arguments,
    assumptions,
    bound_functions,
    higher,
    object_args,
    parse,
    pipeline,
    tracebacks,
    user_rules,
    varargs,
)
from transpile.errors import TranspileError
from transpile_runtime.structure import resolve_wrt


class Source(str):
    """Generated source code: a plain ``str`` that renders highlighted in Jupyter."""

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))  # IPython's plain-text view: the code, not a quoted repr

    def _repr_html_(self):
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:
            import html

            return f"<pre>{html.escape(str(self))}</pre>"
        return highlight(str(self), PythonLexer(), HtmlFormatter(noclasses=True))


def _decorator_or_call(make):
    @functools.wraps(make)
    def wrapper(f=None, wrt=0, verbose=False, fuse=False):
        if f is None:
            return lambda g: make(g, wrt=wrt, verbose=verbose, fuse=fuse)
        return make(f, wrt=wrt, verbose=verbose, fuse=fuse)

    return wrapper


def _build(f, wrt, mode, verbose, fuse=False):
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {f!r}")
    f = higher.differentiable(f)  # grad(grad(f)): the code the gradient runs
    if _takes_varargs(f):
        return _deferred(f, wrt, mode, waiting=("*" + _takes_varargs(f),))
    indices, as_tuple = resolve_wrt(f, wrt)
    try:
        generated = pipeline.transpile(f, indices, mode, as_tuple=as_tuple, fuse=fuse)
    except TranspileError:
        if object_args.receivers(f):  # user objects may be passed: wait for their classes
            return object_args.deferred(f, indices, mode, as_tuple, pipeline.transpile)
        waiting = bound_functions.called_without_default(f)
        if not waiting:
            raise
        return _deferred(f, wrt, mode, waiting)
    fn = generated.function
    if verbose:
        print(source(fn))
    return fn


def _takes_varargs(f):
    """The name of ``f``'s ``*args`` parameter, or None."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return None
    return next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)


def _deferred(f, wrt, mode, waiting):
    """The gradient of ``f``, transpiled at each call for what the call passes (a
    dictionary lookup once made): ``waiting`` are the parameters it depends on, those
    called as functions without a function default, or ``*args`` (made per number of
    arguments, ``wrt`` counting the arguments as passed)."""
    sig = inspect.signature(f)
    fixed = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    vararg = _takes_varargs(f)

    def entry_for(args, kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        count, params = None, fixed
        if vararg is not None:
            count = len(bound.arguments.get(vararg, ()))
            params = fixed + varargs.spread_names(parse.run(f).tree, count)
        indices, as_tuple = resolve_wrt(f, wrt, params)
        functions = bound_functions.of_arguments(params, bound.args)
        generated = pipeline.transpile(
            f, indices, mode, as_tuple=as_tuple, functions=functions, varargs=count
        )
        return generated.function, bound.args

    @functools.wraps(f)
    def gradient(*args, **kwargs):
        entry, args = entry_for(args, kwargs)
        return entry(*args)

    gradient.__transpile_deferred__ = lambda args: entry_for(args, {})[0]
    gradient.__transpile_waiting__ = waiting
    del gradient.__wrapped__  # not the function itself: what inspect.unwrap must not find
    return gradient


@_decorator_or_call
def grad(f=None, wrt=0, verbose=False, fuse=False):
    """The gradient of scalar-valued ``f`` with respect to argument(s) ``wrt``.

    ``wrt`` is a parameter index, a parameter name, or a tuple of them (a tuple gives
    a tuple of gradients). The result is a plain Python function with ``f``'s
    parameters; ``source(result)`` shows its code. Usable as ``@grad`` and
    ``@grad(wrt=...)``; ``verbose=True`` prints the generated source. ``fuse=True``
    has each shape variant evaluate its regions of elementwise lines over one large
    array a block of entries at a time (``blocks.py``, on two threads where two CPUs
    are free), and chains of elementwise operations left outside them with one
    ``numexpr.evaluate`` call each where numexpr is installed (``fuse.py``).
    """
    return _build(f, wrt, "grad", verbose, fuse)


@_decorator_or_call
def value_and_grad(f=None, wrt=0, verbose=False, fuse=False):
    """Like ``grad``, but the function returns ``(f(*args), gradient)``."""
    return _build(f, wrt, "value_and_grad", verbose, fuse)


@_decorator_or_call
def vjp(f=None, wrt=0, verbose=False, fuse=False):
    """The explicit adjoint of ``f``: ``g(*args, dout)`` returns the gradient of
    ``sum(dout * f(*args))`` with respect to ``wrt``; ``dout`` has ``f``'s output shape."""
    return _build(f, wrt, "vjp", verbose, fuse)


def jvp(f=None, wrt=0, verbose=False):
    """Forward mode: ``jvp(f, wrt)(*args, tangent)`` returns ``(f(*args), J v)``, the
    value and its directional derivative along ``tangent`` (shaped like the ``wrt``
    argument; a tuple of them for a tuple ``wrt``; dicts and lists for parameter
    structures), made by forward-mode source transformation: ``source(...)`` shows the
    generated code, each active line followed by its tangent (``x_dot``)."""
    if f is None:
        return lambda g: jvp(g, wrt=wrt, verbose=verbose)
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {f!r}")
    f = higher.differentiable(f)
    if _takes_varargs(f):
        raise TypeError(f"jvp needs a function with plain parameters; {f.__name__} takes *args")
    indices, as_tuple = resolve_wrt(f, wrt)
    generated = pipeline.transpile(f, indices, "jvp", as_tuple=as_tuple)
    params = list(inspect.signature(f).parameters)
    # per set of parameters passed lists or tuples: what was generated, used while the
    # names it relied on denote the same objects and no rule was registered since
    by_sequences = {frozenset(): (user_rules.version(), generated)}

    def entry(*args):
        if len(args) != len(params) + 1:
            raise TypeError(
                f"{entry.__name__}() takes the {len(params)} arguments of {f.__name__} and "
                f"the tangent, {len(params) + 1} in all; {len(args)} were given"
            )
        arguments.check(args[:-1], params, indices, entry.__name__)
        sequences = frozenset(p for p, a in zip(params, args) if isinstance(a, (list, tuple)))
        version, made = by_sequences.get(sequences, (None, None))
        if version != user_rules.version() or not assumptions.hold(made.code_reads):
            version = user_rules.version()
            made = pipeline.transpile(f, indices, "jvp", as_tuple=as_tuple, sequences=sequences)
            by_sequences[sequences] = (version, made)
        try:
            return made.function(*args)
        except BaseException as error:
            tracebacks.locate(error)  # a note naming the user's line behind the generated one
            raise

    entry.__name__ = entry.__qualname__ = generated.name
    entry.__doc__ = f"(value, tangent) of {f.__name__}: made by transpile.jvp"
    entry.__transpile_source__ = generated.source
    entry.__transpile_generated__ = generated
    if verbose:
        print(source(entry))
    return entry


def source(g, *example_args) -> Source:
    """The generated source of ``g`` (and of the user functions it calls), as ``str``.

    With example arguments, the variant that calls with their shapes and dtypes run:
    a gradient without control flow is specialized per signature (see the README's
    "Shape specialization"); for other gradients that is the same generic source.
    """
    deferred = getattr(g, "__transpile_deferred__", None)
    if deferred is not None:
        if not example_args:
            raise TypeError(
                f"the gradient depends on the functions passed as "
                f"{', '.join(g.__transpile_waiting__)}: show it with source(g, *args)"
            )
        g = deferred(example_args)
    dispatcher = getattr(g, "__transpile_dispatch__", None)
    if dispatcher is not None:
        dispatcher = dispatcher.current()  # after a rebound global: the gradient now run
        g = dispatcher.function
    text = getattr(g, "__transpile_source__", None)
    if text is None:
        raise TypeError(f"{g!r} was not generated by transpile")
    if example_args and dispatcher is not None:
        specialized = dispatcher.specialized_source(example_args)
        if specialized is not None:
            return Source(specialized)
    parts = []
    gen = getattr(g, "__transpile_generated__", None)
    if gen is not None:
        seen = set()

        def collect(gen):
            for callee in gen.callees:
                if id(callee) in seen:
                    continue
                seen.add(id(callee))
                collect(callee)
                parts.append(callee.source)
                if callee.extra is not None:
                    collect(callee.extra)
                    parts.append(callee.extra.source)

        collect(gen)
    parts.append(text)
    return Source("\n\n".join(parts))
