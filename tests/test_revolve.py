"""The schedules of ``runtime/revolve.py``, on a step whose gradient has a closed form
(``x -> a[t] * x``: the gradient of the last state is the product of the ``a``): the
steps run again equal the binomial optimum (the closed form, and a brute-force search
over every schedule), no step runs more than ``r`` times for ``binom(c + r, c)`` steps,
and no more than ``snapshots`` states are held at once, for ``for`` and ``while``."""

import functools
import itertools
from math import comb, prod

import pytest

from transpile_runtime import revolve


@functools.cache
def fewest(steps, slots):
    """Brute force: the fewest steps run again over every recursive schedule."""
    if steps == 1:
        return 0
    if slots == 1:
        return steps * (steps - 1) // 2
    return min(m + fewest(steps - m, slots - 1) + fewest(m, slots) for m in range(1, steps))


class State:
    """A loop state that counts how many are alive."""

    live = 0
    most = 0

    def __init__(self, x):
        self.x = x
        State.live += 1
        State.most = max(State.most, State.live)

    def __del__(self):
        State.live -= 1


class Counting:
    """``step(t, state) = a[t] * state``, its recording and adjoint, counting runs."""

    def __init__(self, a):
        self.a, self.runs = a, {}

    def step(self, t, s):
        self.runs[t] = self.runs.get(t, 0) + 1
        return State(self.a[t] * s.x)  # a state of one value is passed bare

    def fwd(self, t, s):
        self.runs[t] = self.runs.get(t, 0) - 1  # a recording: not a run again
        return self.step(t, s), (t,)

    @staticmethod
    def bwd(a, saved, ds):
        return (ds * a[saved[0]],)


def _for(steps, slots):
    a = [1.0 + 0.01 * (i % 7) for i in range(steps)]
    c = Counting(a)
    State.live = State.most = 0
    out, record = revolve.run_for(c.step, range(steps), slots, (State(1.0),), ())
    final = steps - record.kept[-1][0]  # the last segment, run to give the loop's result
    base = State.live
    (g,) = revolve.backward(c.fwd, functools.partial(Counting.bwd, a), record, 1.0)
    return c, record, out, g, final, base, prod(a)


@pytest.mark.parametrize("slots", [1, 2, 3, 4, 6])
def test_closed_form_equals_the_search_over_schedules(slots):
    for steps in range(1, 70):
        assert revolve.forward_steps(steps, slots) == fewest(steps, slots), (steps, slots)


@pytest.mark.parametrize(
    "steps,slots", [*itertools.product([1, 2, 3, 7, 10, 35, 36, 100], [1, 2, 3, 5]), (600, 20)]
)
def test_the_schedule_runs_the_fewest_steps_and_the_right_gradient(steps, slots):
    c, record, out, g, final, base, product = _for(steps, slots)
    assert out.x == pytest.approx(product, rel=1e-12)
    assert g == pytest.approx(product, rel=1e-12)
    # every step run once forward, then what the schedule runs again; the primal sweep
    # also runs the last segment (which revolve records rather than runs)
    assert record.runs == sum(c.runs.values()) == revolve.forward_steps(steps, slots) + final
    assert State.most <= base + slots + 1  # the snapshots, and one state being advanced


def test_twenty_snapshots_and_four_runs_reach_10626_steps():
    steps, slots = comb(24, 20), 20
    assert steps == 10_626 and revolve.repetitions(steps, slots) == 4
    assert revolve.repetitions(steps + 1, slots) == 5
    c, record, _, g, final, _, product = _for(steps, slots)
    assert g == pytest.approx(product, rel=1e-10)
    assert max(c.runs.values()) <= 4 + (final > 1)
    assert record.runs == 4 * steps - comb(24, 21) + final


@pytest.mark.parametrize("steps,slots", [(1, 2), (5, 2), (37, 4), (500, 20), (3000, 8)])
def test_the_online_schedule_for_while_loops(steps, slots):
    a = [1.0 + 0.01 * (i % 5) for i in range(steps)]
    counter = {"t": 0}

    def step(s, k):
        counter["t"] += 1
        return (State(a[k.x] * s.x), State(k.x + 1))

    def cond(s, k):
        return k.x < steps

    def fwd(s, k):
        return step(s, k), (k.x,)

    def bwd(saved, ds):
        return (ds[0] * a[saved[0]], 0.0)

    State.live = State.most = 0
    (out, _), record = revolve.run_while(step, cond, slots, (State(1.0), State(0)), ())
    assert record.length == steps and len(record.kept) <= max(1, slots // 2)
    base = State.live
    g, _ = revolve.backward(fwd, bwd, record, (1.0, 0.0))
    assert g == pytest.approx(prod(a), rel=1e-12) and out.x == pytest.approx(prod(a))
    # each state is a pair: at most `slots` of them held, and one being advanced
    assert State.most <= base + 2 * (slots + 1)


def test_snapshots_must_be_a_positive_int():
    with pytest.raises(ValueError, match="snapshots"):
        revolve.run_for(lambda t, x: (x,), range(3), 0, (1.0,), ())
