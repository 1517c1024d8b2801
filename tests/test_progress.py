"""Feedback on long work (``transpile/core/progress.py``): the stages of a transpilation and a
shape variant's build logged at INFO under the ``transpile`` logger once the work has
run past ``progress.SLOW`` seconds, a progress line where a person watches, and each
stage's time with ``verbose=2``. ``SLOW`` is set to 0 here, so that every piece of work
counts as long (no test depends on how fast the machine is)."""

import io
import logging

import numpy as np
import pytest

from transpile import grad, pipeline
from transpile.core import progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def everything_is_slow(monkeypatch):
    monkeypatch.setattr(progress, "SLOW", 0.0)


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def other_loss(w, x):
    return np.sum(np.sin(x @ w))


def test_the_stages_of_a_long_transpilation_are_logged(everything_is_slow, caplog):
    caplog.set_level(logging.INFO, logger="transpile")
    pipeline._CACHE.clear()
    grad(loss)(np.ones(3), np.ones((4, 3)))
    messages = [r.getMessage() for r in caplog.records if r.name == "transpile"]
    stages = [m for m in messages if m.startswith("the grad of loss: step")]
    assert len(stages) == len(pipeline.STAGES)
    assert "(activity)" in " ".join(stages)
    assert any(m.startswith("the grad of loss: done in") for m in messages)
    assert not any(m.startswith("the shape variant of") for m in messages)  # one call
    grad(loss)(np.ones(3), np.ones((4, 3)))  # the second call builds the shape variant
    messages = [r.getMessage() for r in caplog.records if r.name == "transpile"]
    assert any(m.startswith("the shape variant of dloss") for m in messages)


def test_nothing_is_logged_for_quick_work(caplog):
    caplog.set_level(logging.INFO, logger="transpile")
    pipeline._CACHE.clear()
    progress_line = Terminal()
    steps = progress.Progress("quick work", 2, stream=progress_line)
    steps.step("one")
    steps.step("two")
    steps.done()
    assert progress_line.getvalue() == ""
    assert not [r for r in caplog.records if r.name == "transpile"]


def test_a_progress_line_in_a_terminal(everything_is_slow):
    terminal = Terminal()
    steps = progress.Progress("the grad of f", 2, stream=terminal)
    steps.step("parse")
    steps.step("fence")
    steps.done()
    text = terminal.getvalue()
    assert "\rthe grad of f: step 1/2 (parse)" in text and "step 2/2 (fence)" in text
    assert text.endswith("s\n") and "done in" in text


def test_no_progress_line_where_nobody_watches(everything_is_slow, monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "ipykernel", raising=False)
    stream = io.StringIO()  # a pipe or a file: not a terminal
    steps = progress.Progress("the grad of f", 1, stream=stream)
    steps.step("parse")
    steps.done()
    assert stream.getvalue() == ""


def test_verbose_2_prints_each_stage_time(capsys):
    pipeline._CACHE.clear()
    grad(other_loss, verbose=2)
    out = capsys.readouterr().out
    assert out.startswith("the grad of other_loss: ")
    listed = [line.split()[0] for line in out.splitlines()[1:]]
    assert listed == list(pipeline.STAGE_NAMES)
    assert all(line.rstrip().endswith("ms") for line in out.splitlines())


def test_a_long_numeric_gradient_shows_its_progress(monkeypatch, caplog):
    from transpile_runtime import numeric_grad
    from transpile_runtime import progress as check_progress

    monkeypatch.setattr(check_progress, "SLOW", 0.0)
    monkeypatch.setattr(check_progress, "_EVERY", 0.0)
    terminal = Terminal()
    monkeypatch.setattr(check_progress.sys, "stderr", terminal)
    caplog.set_level(logging.INFO, logger="transpile")
    w = np.arange(6.0).reshape(2, 3)
    g = numeric_grad(lambda w: np.sum(w**2), w)
    np.testing.assert_allclose(g, 2 * w, rtol=1e-8)  # the check itself is unchanged
    text = terminal.getvalue()
    assert "\rthe numeric gradient of " in text and "6 of 6 entries" in text
    assert text.endswith("s\n") and "6 entries in" in text
    messages = [r.getMessage() for r in caplog.records if r.name == "transpile"]
    assert any("of 6 entries after" in m for m in messages)
    assert any(m.endswith("s") and "done in" in m for m in messages)


def test_a_quick_numeric_gradient_says_nothing(monkeypatch):
    from transpile_runtime import numeric_grad
    from transpile_runtime import progress as check_progress

    terminal = Terminal()
    monkeypatch.setattr(check_progress.sys, "stderr", terminal)
    numeric_grad(lambda w: np.sum(w**2), np.ones(3))
    assert terminal.getvalue() == ""
