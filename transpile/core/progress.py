"""Feedback on long work: what a transpilation (or a shape variant's build) is doing,
once it has taken more than about a second.

Each step's start is logged at INFO under the ``transpile`` logger once the work has run
past ``SLOW`` seconds (so a program that turns logging on sees the stages of a long
compile as they run), and in a terminal or a notebook a progress line on standard error
says the same, rewritten in place and finished with the total time. ``timings`` keeps
each step's time for ``verbose=2``, which prints them.
"""

import logging
import sys
import time

LOGGER = logging.getLogger("transpile")
SLOW = 1.0  # seconds before work counts as long


def _interactive(stream) -> bool:
    """Whether a person is likely watching ``stream``: a terminal, or a Jupyter kernel
    (whose standard error the notebook shows under the cell)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


class Progress:
    """The steps of one piece of work (``what``: "the gradient of f"), in order."""

    def __init__(self, what: str, steps: int, stream=None):
        self.what, self.steps = what, steps
        self.stream = sys.stderr if stream is None else stream
        self.start = self.last = time.perf_counter()
        self.current = None
        self.timings = []  # (step name, seconds)
        self.shown = False

    def step(self, name: str):
        """``name`` starts now (the step before it, if any, has ended)."""
        self._close_step()
        self.current = name
        elapsed = self.last - self.start
        if elapsed > SLOW:
            number = len(self.timings) + 1
            LOGGER.info(
                "%s: step %d of %d (%s), %.1f s so far",
                self.what,
                number,
                self.steps,
                name,
                elapsed,
            )
            if _interactive(self.stream):
                self._line(f"{self.what}: step {number}/{self.steps} ({name}), {elapsed:.1f} s")

    def done(self):
        """The work has ended: finish the progress line, log the total of long work."""
        self._close_step()
        total = self.last - self.start
        if total > SLOW:
            LOGGER.info("%s: done in %.1f s", self.what, total)
        if self.shown:
            self._line(f"{self.what}: done in {total:.1f} s\n")

    def report(self) -> str:
        """Each step's time, one line each, for ``verbose=2``."""
        total = sum(t for _, t in self.timings)
        width = max((len(n) for n, _ in self.timings), default=0)
        rows = [f"  {n:<{width}}  {t * 1000:9.1f} ms" for n, t in self.timings]
        return "\n".join([f"{self.what}: {total * 1000:.1f} ms", *rows])

    def _close_step(self):
        now = time.perf_counter()
        if self.current is not None:
            self.timings.append((self.current, now - self.last))
        self.last = now

    def _line(self, text):
        self.stream.write("\r" + text)
        self.stream.flush()
        self.shown = True
