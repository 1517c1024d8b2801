"""What a runtime helper declares of itself (``@helper``), for the compiler to read.

The declaration changes nothing at run time: ``rules/declare.py`` reads it (``helper_of``)
to know whether a helper's result is fresh, its first argument passed through, or
shared, whether it is linear in its first argument and which arguments it reads only
for their shape.
"""

from collections import namedtuple

Helper = namedtuple("Helper", "fresh passes shares linear shape_args specialized checks")


def helper(
    fresh=False,
    passes=False,
    shares=False,
    linear=False,
    shape_args=(),
    specialized=False,
    checks=False,
):
    """Declare what the compiler may assume of the helper below; exactly one of:
    ``fresh``, its result shares memory with no argument and nothing else holds it, and
    it writes into no argument;
    ``passes``, it may return its first argument itself or a writable view of it;
    ``shares``, it may return a read-only array or one an argument also reaches.
    ``linear``: linear in its first argument, with an array or number result (a sign
    may move through it); ``shape_args``: positions of arguments read only for their
    shape, dtype and array module (a recorded shape may stand for them);
    ``specialized``: the shape specializer rewrites its calls; ``checks``: it raises
    for values the gradient cannot be taken of, so a call must stay where it is even
    when its result is not used."""
    if fresh + passes + shares != 1:
        raise ValueError("a helper is exactly one of fresh, passes and shares")
    declared = Helper(fresh, passes, shares, linear, tuple(shape_args), specialized, checks)

    def declare(fn):
        fn.declared = declared
        return fn

    return declare
