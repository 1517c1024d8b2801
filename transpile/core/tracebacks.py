"""Errors raised in generated code, located in the user's source.

An exception raised while a gradient runs (in a helper of the user's, or by numpy
called from it) has generated frames last in its traceback, such as
``<transpile helper_fwd from helper #1>``, line 7. Each generated function's lines
know the user's statement they came from (the printer records them; an adjoint line
follows its ``# grad of:`` comment), so the gradient's entry adds a note to the
exception naming the user's file, line and text for the innermost generated frame:
``traceback`` prints it under the message (Python 3.11 and later; earlier versions
print the traceback alone).
"""

import bisect
import linecache
import threading

_ORIGINS = {}  # generated file name -> (user file, {generated line: user line})
_LOCK = threading.Lock()
_NOTE = "in the generated code, {generated}:{line} comes from {file}:{user_line}{text}"


def register(generated, user_file, lines) -> None:
    """Remember that line ``g`` of the file ``generated`` comes from line ``lines[g]``
    of ``user_file`` (a generated line not in ``lines`` follows the one before it)."""
    if lines:
        with _LOCK:
            _ORIGINS[generated] = (user_file, dict(lines), sorted(lines))


def forget(generated) -> None:
    with _LOCK:
        _ORIGINS.pop(generated, None)


def locate(error: BaseException) -> None:
    """Add to ``error`` a note naming the user's line behind its innermost generated
    frame (once, however many entries it passes through)."""
    add_note = getattr(error, "add_note", None)
    if add_note is None:
        return
    found = None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        origin = _origin(code.co_filename, tb.tb_lineno)
        if origin is not None:
            found = (code.co_filename, tb.tb_lineno, *origin)
        tb = tb.tb_next
    if found is None:
        return
    generated, line, user_file, user_line = found
    text = linecache.getline(user_file, user_line).strip()
    note = _NOTE.format(
        generated=generated,
        line=line,
        file=user_file,
        user_line=user_line,
        text=f": {text}" if text else "",
    )
    if note not in getattr(error, "__notes__", ()):
        add_note(note)


def _origin(generated, line):
    with _LOCK:
        found = _ORIGINS.get(generated)
    if found is None:
        return None
    user_file, lines, ordered = found
    k = bisect.bisect_right(ordered, line) - 1
    return (user_file, lines[ordered[k]]) if k >= 0 else None
