"""What the dask tests share (``test_dask.py``, ``test_spectral_dask.py``): the
threaded scheduler, a counter of computes, and a context where dask's numpy fallback
raises. Imported only after ``pytest.importorskip("dask")``."""

import contextlib
import warnings

import dask
import pytest
from dask.callbacks import Callback


@pytest.fixture(autouse=True)
def threaded_scheduler():
    with dask.config.set(scheduler="threads"):
        yield


class Computes(Callback):
    """Counts the graphs the local schedulers run (each ``compute``)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


@contextlib.contextmanager
def no_fallback():
    """A context where a numpy fallback (dask's ``FutureWarning`` for a numpy function
    it does not implement, which computes its arguments into numpy) raises."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "The `numpy", FutureWarning)
        yield
