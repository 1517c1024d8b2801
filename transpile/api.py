"""The public entry points: grad, value_and_grad, vjp, jvp and source.

They check arguments, resolve ``wrt`` against the function's parameters and
return the generated function, transpiled once per (function, wrt, mode) and
cached.
"""

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from transpile import pipeline
from transpile.analysis import cuts
from transpile.backend import arguments
from transpile.core import assumptions, tracebacks
from transpile.core.errors import TranspileError, UndefinedName
from transpile.front import bound_functions, callables, higher, object_args, parse, varargs
from transpile.holomorphic import entry as holomorphic_entry
from transpile.rules import declare, user_rules
from transpile_runtime.structure import Wrt, resolve_wrt

_F = TypeVar("_F", bound=Callable[..., Any])


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


def _decorator_or_call(make: _F) -> _F:
    @functools.wraps(make)
    def wrapper(
        f=None,
        wrt=0,
        verbose=False,
        fuse=False,
        has_aux=False,
        argnums=None,
        allow_unused=False,
        checkpoint=None,
        holomorphic=False,
    ):
        wrt = _wrt_or_argnums(wrt, argnums)
        options = {"wrt": wrt, "verbose": verbose, "fuse": fuse, "has_aux": has_aux}
        options["allow_unused"] = allow_unused
        options["checkpoint"] = _checkpoint_option(checkpoint)
        if holomorphic:  # grad's alone (JAX's): a TypeError for the others
            options["holomorphic"] = True
        if f is None:
            return lambda g: make(g, **options)
        return make(f, **options)

    return wrapper  # type: ignore[return-value]  # make's own signature, see wraps


def _wrt_or_argnums(wrt, argnums):
    """``argnums=`` as JAX spells it: the same as ``wrt=`` (indices), one or the other."""
    if argnums is None:
        return wrt
    if wrt != 0:
        raise TypeError("give wrt= or argnums=, not both")
    return argnums


def _checkpoint_option(checkpoint):
    """``checkpoint=``: None (the loops marked with ``checkpointed`` are checkpointed),
    a number of snapshots (every loop of the function's body is), or False (none is)."""
    if checkpoint is None or checkpoint is False:
        return checkpoint
    if isinstance(checkpoint, bool) or not isinstance(checkpoint, int) or checkpoint < 1:
        raise TypeError(
            f"checkpoint= takes a number of snapshots >= 1, None or False, not {checkpoint!r}"
        )
    return checkpoint


def _build(f, wrt, mode, verbose, fuse=False, has_aux=False, allow_unused=False, checkpoint=None):
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {f!r}")
    try:
        made = _made(f, wrt, mode, verbose, fuse, has_aux, checkpoint)
    except UndefinedName as exc:
        build = functools.partial(_made, f, wrt, mode, verbose, fuse, has_aux, checkpoint)
        return until_defined(f, build, mode == "vjp", exc)
    if not allow_unused:  # a wrt argument with no path to the output: say which, and where
        cuts.warn(getattr(made, "__transpile_generated__", None))
    return made


def until_defined(f, build, takes_extra, exc):
    """The entry while a name that ``f`` (or a helper it calls) reads is not defined
    (``exc``): each call tries ``build`` again, and while the name is still missing runs
    ``f`` itself (without the last argument where ``takes_extra``: a vjp's ``dout``, a
    tangent), which raises Python's own ``NameError`` where it reads the name; where it
    does not reach that line, ``exc`` (a ``NameError`` too) is raised: the gradient needs
    every line. ``strict`` of the entry builds or raises."""
    made = []

    def strict():
        if not made:
            made.append(build())
        return made[0]

    @functools.wraps(f)
    def entry(*args, **kwargs):
        if not made:
            try:
                strict()
            except UndefinedName as again:
                f(*(args[:-1] if takes_extra else args), **kwargs)
                raise again from None
        return made[0](*args, **kwargs)

    entry.__transpile_undefined__ = exc
    entry.__transpile_build__ = strict
    del entry.__wrapped__  # not the function itself: what inspect.unwrap must not find
    return entry


def strict(entry):
    """``entry``, or for one waiting for an undefined name (``until_defined``), the
    entry made now: ``UndefinedName`` while the name is still missing."""
    build = getattr(entry, "__transpile_build__", None)
    return entry if build is None else build()


def _made(f, wrt, mode, verbose, fuse, has_aux, checkpoint=None):
    f = callables.plain(f)  # a partial, a bound method, a callable instance
    f = higher.differentiable(strict(f))  # grad(grad(f)): the code the gradient runs
    made_as = "value_and_grad" if has_aux else mode  # has_aux: the pair, then split
    made = _generated(f, wrt, made_as, fuse, has_aux, verbose, checkpoint)
    if has_aux:
        made = _with_aux(made, mode)
    if verbose == 1 or verbose is True:
        print(source(made))
    return made


def _generated(f, wrt, mode, fuse, has_aux, verbose, checkpoint=None):
    """The generated function of ``mode`` for ``f``, or one deferred to its first call."""
    transpile = functools.partial(
        pipeline.transpile, has_aux=has_aux, verbose=int(verbose), checkpoint=checkpoint
    )
    if _takes_varargs(f) or _takes_keywords(f):
        waiting = tuple(("*" + _takes_varargs(f),) if _takes_varargs(f) else ())
        return _deferred(f, wrt, mode, waiting + _takes_keywords(f), transpile)
    indices, as_tuple = resolve_wrt(f, wrt)
    try:
        return transpile(f, indices, mode, as_tuple=as_tuple, fuse=fuse).function
    except UndefinedName:
        raise  # waits for the name (until_defined), not for what a call passes
    except TranspileError:
        if object_args.receivers(f):  # user objects may be passed: wait for their classes
            return object_args.deferred(f, indices, mode, as_tuple, transpile)
        waiting = bound_functions.called_without_default(f)
        if not waiting:
            raise
        return _deferred(f, wrt, mode, waiting, transpile)


_SOURCE_ATTRIBUTES = (
    "__transpile_source__",
    "__transpile_dispatch__",
    "__transpile_generated__",
    "__transpile_deferred__",
    "__transpile_waiting__",
)


def _with_aux(value_and_grad_fn, mode):
    """``has_aux=True``: the function made returns ``((value, aux), gradient)``; ``grad``
    returns ``(gradient, aux)`` and ``value_and_grad`` ``((value, aux), gradient)``, as
    JAX's do."""
    if mode == "grad":

        @functools.wraps(value_and_grad_fn)
        def entry(*args, **kwargs):
            pair, gradient = value_and_grad_fn(*args, **kwargs)
            return gradient, pair[1]

    elif mode == "value_and_grad":

        @functools.wraps(value_and_grad_fn)
        def entry(*args, **kwargs):
            pair, gradient = value_and_grad_fn(*args, **kwargs)
            return tuple(pair), gradient

    else:
        raise TypeError(f"has_aux=True is for grad and value_and_grad, not {mode}")
    for attribute in _SOURCE_ATTRIBUTES:  # source(entry) shows the function made
        if hasattr(value_and_grad_fn, attribute):
            setattr(entry, attribute, getattr(value_and_grad_fn, attribute))
    entry.__dict__.pop("__wrapped__", None)
    return entry


def _takes_varargs(f):
    """The name of ``f``'s ``*args`` parameter, or None."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return None
    return next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)


def _takes_keywords(f):
    """``f``'s keyword-only parameters and ``**kwargs`` (as ``**name``), in order; none
    for what is not a Python function (a ufunc's ``out=``: refused for its source)."""
    if not inspect.isfunction(f):
        return ()
    params = inspect.signature(f).parameters.values()
    return tuple(
        p.name if p.kind is p.KEYWORD_ONLY else "**" + p.name
        for p in params
        if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)
    )


def _deferred(f, wrt, mode, waiting, transpile=pipeline.transpile):
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
    keyword_only = [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]

    def entry_for(args, kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        count, params = None, fixed
        if vararg is not None:
            count = len(bound.arguments.get(vararg, ()))
            params = fixed + varargs.spread_names(parse.run(f).tree, count)
        keys = tuple(k for k in bound.kwargs if k not in keyword_only)
        params = params + keyword_only + list(keys)  # as varargs.spread places them
        indices, as_tuple = resolve_wrt(f, wrt, params)
        passed = list(bound.args) + [bound.kwargs[k] for k in keyword_only + list(keys)]
        functions = bound_functions.of_arguments(params, passed)
        generated = transpile(
            f,
            indices,
            mode,
            as_tuple=as_tuple,
            functions=functions,
            varargs=varargs.spread_of(sig, count, keys),
        )
        return generated.function, passed

    @functools.wraps(f)
    def gradient(*args, **kwargs):
        dout = args[-1:] if mode == "vjp" else ()  # after the keywords, in the entry
        args = args[:-1] if dout else args
        try:
            entry, args = entry_for(args, kwargs)
        except UndefinedName:  # the function's own NameError first, where it raises one
            f(*args, **kwargs)
            raise
        return entry(*args, *dout)

    gradient.__transpile_deferred__ = lambda args: entry_for(args, {})[0]
    gradient.__transpile_waiting__ = waiting
    del gradient.__wrapped__  # not the function itself: what inspect.unwrap must not find
    return gradient


@_decorator_or_call
def grad(
    f: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    verbose: bool | int = False,
    fuse: bool = False,
    has_aux: bool = False,
    argnums: int | Sequence[int] | None = None,
    allow_unused: bool = False,
    checkpoint: int | bool | None = None,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The gradient of scalar-valued ``f`` with respect to argument(s) ``wrt``.

    ``wrt`` is a parameter index, a parameter name, or a tuple of them (a tuple gives
    a tuple of gradients); ``argnums`` is the same, spelled as JAX spells it. The result
    is a plain Python function with ``f``'s parameters; ``source(result)`` shows its
    code. Usable as ``@grad`` and ``@grad(wrt=...)``; ``verbose=True`` prints the
    generated source, ``verbose=2`` each compiler stage's time instead. ``has_aux=True``: ``f`` returns ``(value, aux)``, the gradient is
    that of ``value``, and the result returns ``(gradient, aux)``. ``fuse=True``
    has each shape variant evaluate its regions of elementwise lines over one large
    array a block of entries at a time (``blocks.py``, on two threads where two CPUs
    are free), and chains of elementwise operations left outside them with one
    ``numexpr.evaluate`` call each where numexpr is installed (``fuse.py``).
    A ``wrt`` argument with no path to the output (every route cut by ``stop_gradient``,
    an ``int()``, a comparison, or none at all) gets a zero gradient and a
    ``CutGradientWarning`` naming the line that cuts it; ``allow_unused=True`` says
    that is intended (PyTorch's switch of the same name). ``checkpoint=k``: every
    loop of ``f``'s body keeps at most ``k`` of its states and runs its steps again in
    the backward sweep, as ``for ... in checkpointed(..., snapshots=k)`` does for one
    loop; ``checkpoint=False`` ignores those markers (the loop keeps every step).
    Complex arguments follow JAX's convention: for a real ``f`` of ``z = x + iy`` the
    gradient is ``df/dx - i df/dy`` (its conjugate is the direction of steepest
    ascent); ``holomorphic=True`` gives the complex derivative ``f'(z)`` of a holomorphic
    ``f`` with a complex scalar output (its arguments must be complex, as in JAX).
    """
    if holomorphic:
        if has_aux:
            raise TypeError("grad with holomorphic=True does not take has_aux=True yet")
        indices, _ = resolve_wrt(callables.plain(f), wrt)
        made = _build(f, wrt, "vjp", verbose, fuse, False, allow_unused, checkpoint)
        return holomorphic_entry(made, f, indices)
    return _build(f, wrt, "grad", verbose, fuse, has_aux, allow_unused, checkpoint)


@_decorator_or_call
def value_and_grad(
    f: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    verbose: bool | int = False,
    fuse: bool = False,
    has_aux: bool = False,
    argnums: int | Sequence[int] | None = None,
    allow_unused: bool = False,
    checkpoint: int | bool | None = None,
) -> Callable[..., Any]:
    """Like ``grad``, but the function returns ``(f(*args), gradient)``; with
    ``has_aux=True``, ``((value, aux), gradient)``."""
    return _build(f, wrt, "value_and_grad", verbose, fuse, has_aux, allow_unused, checkpoint)


@_decorator_or_call
def vjp(
    f: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    verbose: bool | int = False,
    fuse: bool = False,
    has_aux: bool = False,
    argnums: int | Sequence[int] | None = None,
    allow_unused: bool = False,
    checkpoint: int | bool | None = None,
) -> Callable[..., Any]:
    """The explicit adjoint of ``f``: ``g(*args, dout)`` returns the gradient of
    ``sum(dout * f(*args))`` with respect to ``wrt``; ``dout`` has ``f``'s output shape."""
    return _build(f, wrt, "vjp", verbose, fuse, has_aux, allow_unused, checkpoint)


def jvp(
    f: Callable[..., Any] | None = None, wrt: Wrt = 0, verbose: bool | int = False
) -> Callable[..., Any]:
    """Forward mode: ``jvp(f, wrt)(*args, tangent)`` returns ``(f(*args), J v)``, the
    value and its directional derivative along ``tangent`` (shaped like the ``wrt``
    argument; a tuple of them for a tuple ``wrt``; dicts and lists for parameter
    structures), made by forward-mode source transformation: ``source(...)`` shows the
    generated code, each active line followed by its tangent (``x_dot``)."""
    if f is None:
        return lambda g: jvp(g, wrt=wrt, verbose=verbose)
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {f!r}")
    try:
        return _jvp_made(f, wrt, verbose)
    except UndefinedName as exc:
        return until_defined(f, lambda: _jvp_made(f, wrt, verbose), True, exc)


def _jvp_made(f, wrt, verbose):
    f = higher.differentiable(strict(callables.plain(f)))
    if _takes_varargs(f):
        raise TypeError(f"jvp needs a function with plain parameters; {f.__name__} takes *args")
    if _takes_keywords(f):
        raise TypeError(
            f"jvp needs a function with plain parameters; {f.__name__} takes "
            f"{', '.join(_takes_keywords(f))} (keywords): pass them in a lambda, "
            f"jvp(lambda x: {f.__name__}(x, key=value))"
        )
    indices, as_tuple = resolve_wrt(f, wrt)
    generated = pipeline.transpile(f, indices, "jvp", as_tuple=as_tuple)
    params = list(inspect.signature(f).parameters)
    # per set of parameters passed lists or tuples: what was generated, used while the
    # names it relied on denote the same objects and no rule was registered since
    by_sequences: dict = {frozenset(): (user_rules.version(), generated)}
    fname = generated.name  # (not entry.__name__: entry referring to itself is a cycle)

    def entry(*args):
        if len(args) != len(params) + 1:
            raise TypeError(
                f"{fname}() takes the {len(params)} arguments of {f.__name__} and "
                f"the tangent, {len(params) + 1} in all; {len(args)} were given"
            )
        arguments.check(args[:-1], params, indices, fname)
        check_tangent(args, indices, as_tuple, fname)
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


def check_tangent(args, indices, as_tuple, fname, what="the tangent"):
    """Raise ``ValueError`` where the last of ``args`` (a tangent, or hvp's ``v``) is not
    shaped like the arguments ``indices`` it goes with (a tuple of them for a tuple
    ``wrt``)."""
    tangent = args[-1]
    if not as_tuple:
        arguments.check_like(tangent, args[indices[0]], what, fname)
        return
    if not isinstance(tangent, (list, tuple)) or len(tangent) != len(indices):
        raise ValueError(
            f"{fname}: wrt is a tuple of {len(indices)}, so {what} must be a tuple of "
            f"{len(indices)}, one for each argument, not {type(tangent).__name__}"
        )
    for k, (i, t) in enumerate(zip(indices, tangent)):
        arguments.check_like(t, args[i], f"{what}[{k}]", fname)


def source(g: Callable[..., Any], *example_args: Any) -> Source:
    """The generated source of ``g`` (and of the user functions it calls), as ``str``.

    With example arguments, the variant that calls with their shapes and dtypes run:
    a gradient without control flow is specialized per signature (see the README's
    "Shape specialization"); for other gradients that is the same generic source.
    """
    if getattr(g, "__transpile_build__", None) is not None:
        g = strict(g)  # UndefinedName while a name it reads is missing
    deferred = getattr(g, "__transpile_deferred__", None)
    if deferred is not None:
        if not example_args:
            raise TypeError(
                f"the gradient depends on the functions passed as "
                f"{', '.join(g.__transpile_waiting__)}: "  # type: ignore[attr-defined]
                "show it with source(g, *args)"
            )
        g = deferred(example_args)
    dispatcher = getattr(g, "__transpile_dispatch__", None)
    if dispatcher is not None:
        dispatcher = dispatcher.current()  # after a rebound global: the gradient now run
        g = dispatcher.function
    gen = getattr(g, "__transpile_generated__", None)
    text = gen.source if gen is not None else getattr(g, "__transpile_source__", None)
    if text is None:
        raise TypeError(f"{g!r} was not generated by transpile")
    if example_args and dispatcher is not None:
        specialized = dispatcher.specialized_source(example_args)
        if specialized is not None:
            return Source(specialized)
    parts = []
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


declare.ENTRIES.update(vjp=vjp, jvp=jvp)  # for the rules whose code calls them (odeint's)
