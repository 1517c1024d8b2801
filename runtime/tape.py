"""The stack that loops record overwritten values on.

One tape is created per call of a generated function, so generated code is
re-entrant. ``push`` is ``list.append``; ``pop`` is ``list.pop``.
"""


class Tape(list):
    """A last-in, first-out stack of values the adjoint sweep reads back."""

    push = list.append
