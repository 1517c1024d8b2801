"""A progress line for long checks (``check_grad`` and ``numeric_grad`` over many
entries), and their log under the ``transpile`` logger.

Once a check has run past ``SLOW`` seconds it logs at INFO that it is still going, and,
where a person watches (a terminal or a Jupyter kernel), keeps one line on standard
error up to date: how many entries of how many, and the time so far; it ends with the
total time. The compiler's ``transpile/core/progress.py`` does the same for transpilations;
this module is the runtime's own, since the runtime never imports the compiler.
"""

import logging
import sys
import time

LOGGER = logging.getLogger("transpile")
SLOW = 2.0  # seconds before a check counts as long
_EVERY = 0.25  # seconds between updates of the line


def _interactive(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


class Counter:
    """Counts the ``total`` steps of ``what`` ("the numeric gradient of f")."""

    def __init__(self, what: str, total: int, stream=None):
        self.what, self.total, self.done = what, total, 0
        self.stream = sys.stderr if stream is None else stream
        self.start = self.shown_at = time.perf_counter()
        self.logged = self.shown = False

    def step(self, count: int = 1):
        self.done += count
        now = time.perf_counter()
        elapsed = now - self.start
        if elapsed < SLOW or now - self.shown_at < _EVERY:
            return
        self.shown_at = now
        if not self.logged:
            LOGGER.info(
                "%s: %d of %d entries after %.1f s", self.what, self.done, self.total, elapsed
            )
            self.logged = True
        if _interactive(self.stream):
            self.stream.write(
                f"\r{self.what}: {self.done} of {self.total} entries, {elapsed:.1f} s"
            )
            self.stream.flush()
            self.shown = True

    def finish(self):
        elapsed = time.perf_counter() - self.start
        if self.logged:
            LOGGER.info("%s: done in %.1f s", self.what, elapsed)
        if self.shown:
            self.stream.write(f"\r{self.what}: {self.total} entries in {elapsed:.1f} s\n")
            self.stream.flush()
