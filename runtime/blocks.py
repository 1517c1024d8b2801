"""Running a block function over every block of a region (``grad(f, fuse=True)``).

The compiler's ``blocks`` pass writes a region of elementwise lines as a function of
one block of entries; ``in_blocks`` calls it for every block, on two threads where the
region is large and two CPUs are ours (numpy releases the GIL while a ufunc computes).
"""

import contextvars
import os
import threading

MIN_THREADED = 1 << 18  # entries: a smaller region runs its blocks on one thread


def in_blocks(block, size, step, *args):
    """Call ``block(i, *args)`` for each ``i`` in ``range(0, size, step)``: on two threads
    (each takes the next block when it is done with one) where ``size`` is at least
    ``MIN_THREADED`` and two CPUs are ours, else in order. numpy releases the GIL
    while a ufunc computes; the blocks write disjoint entries, so the results are
    those of one thread. The helper thread runs in a copy of the caller's context
    (``np.errstate``), and an exception in either thread is raised here."""
    starts = iter(range(0, size, step))
    if size < MIN_THREADED or _cpus() < 2:
        for i in starts:
            block(i, *args)
        return
    errors = []

    def work():
        try:
            for i in starts:
                block(i, *args)
        except BaseException as error:  # noqa: BLE001  (raised by the caller's thread)
            errors.append(error)
            for _ in starts:  # the other thread stops at its next block
                pass

    helper = threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True)
    helper.start()
    work()
    helper.join()
    if errors:
        raise errors[0]


def _cpus():
    """How many CPUs this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1
