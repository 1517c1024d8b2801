"""The cyclic garbage collector paused while the compiler runs.

A transpilation makes and drops millions of small objects (gast nodes) while as many
stay alive: with the collector on, its passes over the older generations walk the
live ones again and again, a third of the time a 1,000-statement loop takes to
compile. ``paused()`` turns it off for the duration (nested and concurrent
transpilations count: the outermost one turns it back on, and only if it was on);
it runs afterwards as usual, so cyclic garbage lives at most until its next pass.
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
                gc.enable()
