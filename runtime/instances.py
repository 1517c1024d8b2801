"""Objects made in a differentiated function, given to code that was not transpiled.

An object made in the function (``layer = Dense(W, b)``) is built as the dict of its
fields, which is what makes its fields differentiable. Where a call that receives it
is not differentiated (its result does not reach the output, or depends on no
differentiated input), the generated code calls the user's function or method as it
is, through ``with_instances``: each such argument is given as an instance of its
class holding those fields, made without ``__init__``, so the function's own code
(``self.w``, ``self.act(z)``, ``layer(z)``) runs as written.

The wrapper records what it wraps (``unwrapped``): a gradient read again (second
order, forward over reverse) differentiates the function itself, its parameter
known to hold such a dict.
"""

import functools
import inspect

_MADE = "__transpile_made__"


def instance(fields, cls):
    """An instance of ``cls`` holding ``fields`` (a dict); anything else as it is."""
    if type(fields) is not dict:
        return fields
    obj = cls.__new__(cls)
    for k, v in fields.items():
        object.__setattr__(obj, k, v)
    return obj


def with_instances(function, made):
    """``function`` with the parameters of ``made`` (``(parameter, class, layout)``
    each; the layout is the compiler's, kept for ``unwrapped``) given as instances."""
    sig = inspect.signature(function)

    @functools.wraps(function)
    def call(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        for param, cls, _ in made:
            if param in bound.arguments:
                bound.arguments[param] = instance(bound.arguments[param], cls)
        return function(*bound.args, **bound.kwargs)

    setattr(call, _MADE, (function, made))
    return call


def unwrapped(func):
    """``(the function, ((parameter, class, layout), ...))`` that ``func``, made by
    ``with_instances``, calls; ``(func, ())`` for any other ``func``."""
    return getattr(func, _MADE, (func, ()))
