"""Recursive user functions: the transpilations in progress, and the forward
references a recursive call is given to them.

Each ``pipeline.transpile`` of a function runs in a ``Frame`` on a stack, one per
user function being transpiled around it (the gradient, then the callees it calls,
and theirs). A call to a function whose transpilation, for the same key, is already
on the stack is a recursive call: ``find`` hands it the frame's ``StandIn``, a
``Generated`` whose functions are placeholders, so the caller's forward and adjoint
functions call ``f_fwd`` and ``f_bwd`` by names bound once the pair exists.

The pair the caller builds then depends on an unfinished frame: it may not be
cached, nor looked up by another call, before that frame is built. Every frame
above the one referred to records it as its ``root``; when a frame with a lower
root is built, it waits among the members of that frame. When a frame whose root is
itself is built, ``close`` fills the placeholders of its members and itself (in
their closures and their lists of callees), gives each of them the code reads of
all of them (a rebound helper of ``odd`` makes ``even`` stale too), and returns them
to be cached. A transpilation that fails leaves nothing half-built in the cache.
"""

from transpile.core import assumptions
from transpile.core.ir import Generated


class Frame:
    """One transpilation in progress: ``func`` for ``key`` (``wrt``, mode, ...)."""

    def __init__(self, func, key, depth):
        self.func = func
        self.key = key
        self.depth = depth  # its index on the stack
        self.root = depth  # the lowest frame its functions refer to before it is built
        self.generated = None  # once built
        self.members = []  # frames built that refer to this one: closed with it
        self._stand_in = None

    @property
    def stand_in(self):
        """The ``StandIn`` a recursive call gets, made when one asks: it and the frame
        refer to each other, a cycle no transpilation without recursion should leave
        for the collector (``close`` breaks it once the placeholders are filled)."""
        if self._stand_in is None:
            self._stand_in = StandIn(self)
        return self._stand_in

    def matches(self, func, key):
        return self.func is func and self.key == key

    @property
    def split(self):
        return self.key[1] == "split"  # key: (wrt, mode, ...), pipeline.transpile's


class StandIn(Generated):
    """What a recursive call gets: a pair of placeholders for a frame's functions."""

    def __init__(self, frame):
        fwd = Placeholder(frame, forward=True)
        bwd = Placeholder(frame, forward=False)
        super().__init__(fwd, "", "", extra=Generated(bwd, "", ""))
        self.frame = frame


class Placeholder:
    """Bound where a function of a frame still being built is called; replaced in
    every closure by that function once the frame is closed."""

    def __init__(self, frame, forward):
        self.frame = frame
        self.forward = forward

    def resolve(self):
        gen = self.frame.generated
        return gen.function if self.forward else gen.extra.function

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self.frame.func.__name__}: a recursive pair was called before it was built"
        )


def pair_names(stack, depth, base):
    """The names of the pair the frame at ``depth`` makes: ``f_fwd`` and ``f_bwd``,
    numbered when pairs of the same function for other parameters are being made
    below it (a recursive call that differentiates another argument), so that each
    pair has a name of its own and is called by it."""
    frame = stack[depth]
    same = sum(1 for f in stack[:depth] if f.func is frame.func and f.split)
    suffix = f"_{same}" if same else ""
    return f"{base}_fwd{suffix}", f"{base}_bwd{suffix}"


def find(stack, func, key):
    """What a call of ``func`` for ``key`` gets from the transpilations in progress:
    the stand-in of the frame building it, the pair of a frame built but waiting for
    a lower one, or None."""
    for frame in stack:
        if frame.matches(func, key):
            _refer(stack, frame.depth)
            return frame.stand_in
    for frame in stack:
        for member in frame.members:
            if member.matches(func, key):
                _refer(stack, frame.depth)
                return member.generated
    return None


def _refer(stack, depth):
    """The frames above ``depth`` call a function not built yet: they wait for it."""
    for frame in stack[depth + 1 :]:
        frame.root = min(frame.root, depth)


def close(stack, frame, generated):
    """Record that ``frame`` is built. Returns the frames that may now be cached: none
    while it refers to a frame still in progress (it waits among that frame's
    members), else itself and its members, their placeholders filled."""
    frame.generated = generated
    if frame.root < frame.depth:
        stack[frame.root].members += [frame, *frame.members]
        frame.members = []
        return []
    group = [frame, *frame.members]
    reads = assumptions.merge(*(f.generated.code_reads for f in group))
    for member in group:
        for gen in (member.generated, member.generated.extra):
            if gen is not None:
                _link(gen, reads)
    for member in group:
        member._stand_in = None  # its placeholders are filled: the cycle goes
    return group


def _link(gen, reads):
    """Fill ``gen``'s placeholders: its callees, the cells of its function's closure."""
    gen.code_reads = reads
    gen.callees[:] = [c.frame.generated if isinstance(c, StandIn) else c for c in gen.callees]
    for cell in gen.function.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell of the user's closure
            continue
        if isinstance(value, Placeholder):
            cell.cell_contents = value.resolve()
