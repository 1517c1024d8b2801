"""TranspileError: a located, actionable error for code that cannot be differentiated."""

import linecache


class TranspileError(Exception):
    """Raised at transpile time for code that cannot be differentiated.

    The message names ``file:line``, quotes the offending line and says what to do.
    """

    def __init__(self, what: str, *, filename: str = "<unknown>", lineno: int = 0, hint: str = ""):
        self.what = what
        self.filename = filename
        self.lineno = lineno
        self.hint = hint
        line = linecache.getline(filename, lineno).strip() if lineno else ""
        message = f"{filename}:{lineno}: {what}"
        if line:
            message += f"\n    {line}"
        if hint:
            message += f"\n  hint: {hint}"
        super().__init__(message)


def at(ctx, node, what: str, hint: str = "") -> TranspileError:
    """Build a TranspileError located at ``node`` of the function described by ``ctx``."""
    lineno = getattr(node, "lineno", None) or 1
    return TranspileError(what, filename=ctx.filename, lineno=lineno + ctx.line_offset, hint=hint)


class UndefinedName(TranspileError, NameError):
    """A free name the function reads denotes nothing (no local, global, closure variable
    or builtin): the function itself raises ``NameError`` where it reads it, so no
    gradient can be made until the name is defined."""

    def __init__(self, name: str, *, filename: str, lineno: int, function: str):
        super().__init__(
            f"name {name!r} is not defined: {function} reads it, and no global, closure "
            "variable or builtin has that name",
            filename=filename,
            lineno=lineno,
            hint=f"define {name!r} (an import missing?) before the gradient is called; "
            "it is made at the first call where every name the function reads is defined",
        )
        self.name = name
