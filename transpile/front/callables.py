"""What ``grad`` and the other transforms are given, made a plain function: a
``functools.partial``, a bound method (``grad(model.loss)``), a callable instance
(``grad(model)``, its ``__call__``), or a ``classmethod`` bound to its class.

Each becomes a small generated function with the parameters still to be passed, calling
the underlying function with the bound ones (``def loss(x, y): return target(self, x,
y)``), compiled from source as generated code is, so the compiler reads and
differentiates it like any function of the user's, the bound object and arguments being
values it closes over. Anything else is returned as it is.
"""

import functools
import inspect

from transpile.core import emit


def plain(obj):
    """``obj``, or the plain function that calling it amounts to (see the module's
    docstring). What it binds lives in its closure cells, which the gradient made of it
    reads (and so keeps) as it reads any closure's; the function itself may be dropped."""
    target, leading, keywords = _unwrapped(obj)
    if target is obj:
        return obj
    return _wrapper(obj, target, leading, keywords)


def _unwrapped(obj):
    """``(function, leading arguments, keywords)`` that a call of ``obj`` amounts to."""
    if isinstance(obj, functools.partial):
        target, leading, keywords = _unwrapped(obj.func)
        return target, leading + tuple(obj.args), {**keywords, **obj.keywords}
    if inspect.ismethod(obj):
        target, leading, keywords = _unwrapped(obj.__func__)
        return target, (obj.__self__, *leading), keywords
    call = type(obj).__call__ if callable(obj) else None
    if (
        not inspect.isfunction(obj)
        and not isinstance(obj, type)
        and inspect.isfunction(call)
        and not hasattr(obj, "__transpile_dispatch__")
    ):
        return call, (obj,), {}
    return obj, (), {}


def _wrapper(obj, target, leading, keywords):
    params = list(inspect.signature(target).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(leading) > len(positional):
        raise TypeError(f"{obj!r} binds more positional arguments than {target.__name__} takes")
    taken = {p.name for p in params}
    target_name = _fresh(target.__name__ + "_target", taken)
    bound = {target_name: target}
    calls = [_bind(f"{positional[k].name}_bound", v, bound, taken) for k, v in enumerate(leading)]
    signature, forwarded = [], []
    for p in (p for p in params[len(leading) :] if p.name not in keywords):
        # after a parameter the partial bound by keyword, the rest go by keyword (the
        # function made still takes them by position too: transforms ask for every one)
        in_place = params.index(p) == len(calls) + len(forwarded)
        declared, passed = _parameter(p, in_place, signature, bound, taken)
        signature += declared
        forwarded.append(passed)
    forwarded += [f"{k}={_bind(f'{k}_bound', v, bound, taken)}" for k, v in keywords.items()]
    name = target.__name__ if target.__name__.isidentifier() else "bound"
    source = (
        f"def {name}({', '.join(signature)}):\n"
        f"    return {target_name}({', '.join(calls + forwarded)})\n"
    )
    fn = emit.compile_function(source, name, {}, bound, f"{name}, called as {type(obj).__name__}")
    fn.__doc__ = target.__doc__
    return fn


def _parameter(p, in_place, signature, bound, taken):
    """``(what the made function declares, how it passes p on)`` for parameter ``p``."""
    if p.kind is p.VAR_POSITIONAL:
        return [f"*{p.name}"], f"*{p.name}"
    if p.kind is p.VAR_KEYWORD:
        return [f"**{p.name}"], f"**{p.name}"
    declared = []
    if p.kind is p.KEYWORD_ONLY and not any(s.startswith("*") for s in signature):
        declared.append("*")
    if p.default is p.empty:
        declared.append(p.name)
    else:  # the value the target's def evaluated
        declared.append(f"{p.name}={_default(p.default, p.name, bound, taken)}")
    by_keyword = p.kind is p.KEYWORD_ONLY or not in_place
    return declared, f"{p.name}={p.name}" if by_keyword else p.name


def _bind(base, value, bound, taken):
    """A fresh name for ``value``, bound into the made function."""
    name = _fresh(base, taken)
    bound[name] = value
    return name


def _default(value, param, bound, taken):
    """A default as source: a number, string, bool or None written out, anything else
    a name bound to the value itself."""
    if value is None or type(value) in (bool, int, float, str):
        return repr(value)
    return _bind(f"{param}_default", value, bound, taken)


def _fresh(base, taken):
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name
