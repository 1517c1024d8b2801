"""Room on the stack for deeply nested expressions.

A sum of 1,000 terms written as one expression is a chain of 1,000 nested
``BinOp`` nodes. Python compiles it (its compiler is written in C), but gast's
conversion of the tree and the compiler's recursive walks take a few Python frames
per level, beyond Python's default limit of 1,000 frames. ``room()`` raises the
limit while the compiler runs (nested and concurrent uses count: the last one out
restores it, unless something else changed it meanwhile). From Python 3.11 a Python
call no longer uses the C stack, so a deep limit is safe; before, it stays as it
is, and ``refusal`` turns the ``RecursionError`` into a ``TranspileError`` that
says what to do, as it does for anything deeper still.
"""

import contextlib
import sys
import threading

from transpile.core.errors import TranspileError

_DEEP = 30_000  # a few thousand levels of nesting
_LOCK = threading.Lock()
_STATE = {"depth": 0, "restore": None}


@contextlib.contextmanager
def room():
    """A recursion limit of at least ``_DEEP`` frames for the duration."""
    with _LOCK:
        if _STATE["depth"] == 0:
            old = sys.getrecursionlimit()
            _STATE["restore"] = old if old < _DEEP else None
            if old < _DEEP:
                sys.setrecursionlimit(_DEEP)
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            old = _STATE["restore"]
            if _STATE["depth"] == 0 and old is not None and sys.getrecursionlimit() == _DEEP:
                sys.setrecursionlimit(old)


def refusal(func) -> TranspileError:
    """The error for a function nested too deeply for the compiler to walk."""
    code = func.__code__
    return TranspileError(
        f"{func.__qualname__} holds an expression nested too deeply to differentiate "
        f"(beyond Python's recursion limit of {sys.getrecursionlimit()} frames)",
        filename=code.co_filename,
        lineno=code.co_firstlineno,
        hint="split the long expression into several statements "
        "(s = a + b ...; s = s + ...), or use a loop or np.sum over an array",
    )
