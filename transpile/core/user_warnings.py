"""Warnings shown at the user's line: the first frame of the stack outside the
compiler, its runtime and the code it generated, however deep in them the warning
arose (a shape variant is built from inside the generated entry's call)."""

import os
import sys
import warnings

import transpile_runtime

_OWN_FOLDERS = tuple(  # the compiler's package (this module is in its core/) and the runtime
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (os.path.dirname(os.path.abspath(__file__)), transpile_runtime.__file__)
)
_GENERATED = "<transpile "  # the file name emit gives generated code


def _ours(filename: str) -> bool:
    return filename.startswith(_GENERATED) or os.path.abspath(filename).startswith(_OWN_FOLDERS)


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)``, attributed to the user's line."""
    level, frame = 1, sys._getframe(1)  # level 1: the caller of this function
    while frame.f_back is not None and _ours(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level + 1)  # + 1: this function's frame
