"""Checkpointed loops: a few snapshots of a loop's state, and the steps between them
run again in the backward sweep (Griewank's binomial checkpointing, ``revolve``).

The compiler turns the body of a loop marked with ``checkpointed`` into a *step*:
``step(item, *state, *consts) -> state`` (no ``item`` for a ``while`` loop), with its
recording ``step_fwd(...) -> (state, saved)`` and its adjoint
``step_bwd(saved, dstate) -> (*dstate, *dconsts)`` made like any helper's pair (a state
of one value is that value, not a 1-tuple, in the step's result, in the loop's result
and in the adjoint ``backward`` is given: no tuple adjoint to build). The
primal sweep calls ``run_for`` or ``run_while``, which run the steps as written and keep
at most ``snapshots`` states; the adjoint sweep calls ``backward``, which reverses the
steps with no more snapshots than that, running steps again from the nearest one.

The schedule, for ``n`` steps from a held state with ``c`` snapshot slots (that state's
own included): run ``m`` steps, keep the state reached in a slot, reverse the last
``n - m`` steps with the ``c - 1`` slots left, then the first ``m`` with all ``c``
again (the right part's slots are free by then). With one slot, each step is reached
by running again from the held state. ``split`` chooses ``m`` so that this costs the
fewest steps run again that any schedule can (Griewank 1992): with ``r`` the smallest
number with ``binom(c + r, c) >= n``, ``r * n - binom(c + r, c + 1)`` steps
(``forward_steps``); ``c`` slots and ``r`` runs of each step reach ``binom(c + r, c)``
steps. The first descent (``m``, then ``m'`` of the rest, ...) is what the primal sweep
keeps, so the backward sweep starts where a schedule would.

A ``while`` loop's length is known only at its end (``run_while``, an online
schedule): the primal sweep keeps every ``gap``-th state, and when half the slots are
full it drops every other one and doubles ``gap``. At the end the segments between the
states kept are reversed, the last first, each by the binomial schedule with the slots
the earlier segments' states leave free; never more than ``snapshots`` states at once.
"""

from math import comb

from .ops import add


def repetitions(steps: int, slots: int) -> int:
    """The smallest ``r`` with ``binom(slots + r, slots) >= steps``."""
    r = 0
    while comb(slots + r, slots) < steps:
        r += 1
    return r


def forward_steps(steps: int, slots: int) -> int:
    """The fewest steps any schedule with ``slots`` snapshot slots (the starting state's
    included) runs, besides the one recording run of each, to reverse ``steps`` steps."""
    r = repetitions(steps, slots)
    return r * steps - comb(slots + r, slots + 1)


def split(steps: int, slots: int) -> int:
    """Where to keep the next state when reversing ``steps`` steps with ``slots`` slots
    (``steps >= 2``, ``slots >= 2``): the first ``m`` steps are then reversed with every
    step run at most ``r - 1`` more times, the other ``steps - m`` with one slot fewer
    and ``r``, and both parts need exactly those (so neither part wastes a slot)."""
    r = repetitions(steps, slots)
    low = steps - comb(slots + r - 1, slots - 1)
    if r >= 2:
        low = max(low, comb(slots + r - 2, slots))
    return max(low, 1)


class Record:
    """What the primal sweep of a checkpointed loop leaves for its adjoint: the states
    kept (``(position, state)``, in order), the loop's length, its items and the values
    the body reads but does not change."""

    def __init__(self, step, items, consts, slots, kept, length):
        self.step, self.items, self.consts = step, items, consts
        self.slots, self.kept, self.length = slots, kept, length
        self.single = len(kept[0][1]) == 1  # a state of one value: bare, not a 1-tuple
        self.runs = 0  # steps run as written, the primal sweep's included (for tests)

    def advance(self, state, position, count):
        """The state ``count`` steps after ``state`` (the state at ``position``)."""
        for i in range(position, position + count):
            state = self.step(*self.arguments(i, state))
            if self.single:
                state = (state,)
        self.runs += count
        return state

    def result(self, state):
        return state[0] if self.single else state

    def arguments(self, i, state):
        head = () if self.items is None else (self.items[i],)
        return (*head, *state, *self.consts)


def run_for(step, iterable, snapshots: int, state: tuple, consts: tuple):
    """The loop's final state and its ``Record``, keeping the first descent of the
    binomial schedule for ``snapshots`` slots."""
    items = iterable if isinstance(iterable, range) else list(iterable)  # indexed by step
    record = Record(step, items, consts, _slots(snapshots), [(0, state)], len(items))
    position, left, slots = 0, len(items), record.slots
    while left > 1 and slots > 1:
        m = split(left, slots)
        state = record.advance(state, position, m)
        position, left, slots = position + m, left - m, slots - 1
        record.kept.append((position, state))
    return record.result(record.advance(state, position, left)), record


def run_while(step, cond, snapshots: int, state: tuple, consts: tuple):
    """The loop's final state and its ``Record``: ``step`` runs while ``cond(*state,
    *consts)`` holds, every ``gap``-th state kept in at most half of the slots."""
    slots = _slots(snapshots)
    hold = max(1, slots // 2)
    record = Record(step, None, consts, slots, [(0, state)], 0)
    gap, position = 1, 0
    while cond(*state, *consts):
        state = record.advance(state, position, 1)
        position += 1
        if position % gap == 0 and cond(*state, *consts):
            record.kept.append((position, state))
            if len(record.kept) > hold:  # thin out: every other state, twice the gap
                gap *= 2
                record.kept = [(p, s) for p, s in record.kept if p % gap == 0]
    record.length = position
    return record.result(state), record


def _slots(snapshots):
    if not isinstance(snapshots, int) or snapshots < 1:
        raise ValueError(f"checkpointed(..., snapshots=...) needs an int >= 1, not {snapshots!r}")
    return snapshots


def backward(step_fwd, step_bwd, record: Record, dstate):
    """The adjoints of the loop's initial state and of its constants (those the step
    differentiates: ``step_bwd`` returns the state's first), from ``dstate``, the adjoint
    of its final state."""
    sweep = _Sweep(step_fwd, step_bwd, record, (dstate,) if record.single else tuple(dstate))
    kept, end = record.kept, record.length
    while kept:
        # the states before this segment hold len(kept) - 1 slots; its start one more
        position, state = kept.pop()  # dropped once its segment is reversed
        sweep.reverse(state, position, end - position, record.slots - len(kept))
        end = position
    return (*sweep.dstate, *(sweep.dconsts or ()))


class _Sweep:
    """The adjoint of a loop's steps, one at a time, from its last step back."""

    def __init__(self, step_fwd, step_bwd, record, dstate):
        self.fwd, self.bwd, self.record = step_fwd, step_bwd, record
        self.dstate, self.dconsts = dstate, None

    def reverse(self, state, position, steps, slots):
        """Reverse ``steps`` steps from ``state`` (the state at ``position``)."""
        while steps > 0:
            if steps == 1 or slots == 1:
                last = position + steps - 1
                self.adjoint_step(self.record.advance(state, position, steps - 1), last)
                steps -= 1
                continue
            m = split(steps, slots)
            self.reverse(
                self.record.advance(state, position, m), position + m, steps - m, slots - 1
            )
            steps = m

    def adjoint_step(self, state, i):
        saved = self.fwd(*self.record.arguments(i, state))[1]  # the next state: dropped now
        adjoints = self.bwd(saved, self.dstate[0] if self.record.single else self.dstate)
        count = len(self.dstate)
        self.dstate = tuple(adjoints[:count])
        if len(adjoints) > count:
            self.dconsts = (
                [add(a, b) for a, b in zip(self.dconsts, adjoints[count:])]
                if (self.dconsts is not None)
                else list(adjoints[count:])
            )
