"""The cyclic garbage collector paused while the compiler runs.

A transpilation makes and drops millions of small objects (gast nodes) while as many
stay alive: with the collector on, its passes over the older generations walk the
live ones again and again, a third of the time a 1,000-statement loop takes to
compile. ``paused()`` turns it off for the duration (nested and concurrent
transpilations count: the outermost one turns it back on, and only if it was on);
it runs afterwards as usual, so cyclic garbage lives at most until its next pass.

What the compiler made and keeps (the gradient's trees, its entry) would all be young
when the collector comes back: its first pass, at the next few hundred allocations,
would walk every one of them (a tenth of a second after a 1,000-statement loop). They
are long-lived, so they are moved to the oldest generation at once (``gc.freeze``
then ``gc.unfreeze``, which move lists without walking them), unless the program has
frozen objects of its own, which ``unfreeze`` would release. What else was young then
moves with them: cyclic garbage the program made just before (in another thread, or
since the collector's last pass) is freed by the next full pass instead of the next
young one.
"""

import contextlib
import gc
import threading

_LOCK = threading.Lock()
_STATE = {"depth": 0, "resume": False}


@contextlib.contextmanager
def paused():
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["resume"] = gc.isenabled()
            gc.disable()
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0 and _STATE["resume"]:
                _age_survivors()
                gc.enable()


def _age_survivors():
    """Every object tracked now into the oldest generation (see above)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
