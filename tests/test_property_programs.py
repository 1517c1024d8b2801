"""Property test: random programs with control flow against finite differences.

Hypothesis draws programs (``tests/program_gen.py``): straight-line numpy code on
arrays of a few shapes and Python floats, if/elif/else on data and on parameters,
``for`` over ranges (nested), lists and literals, ``while`` with a counter,
``break``/``continue``, early returns, helper functions with their own control
flow, lists built by ``append`` and read by index, ``np.stack`` and ``sum``,
``stop_gradient``, augmented assignment, and names rebound inside branches and
loops. Each program is written to a file and imported (the transpiler reads
source), then for ``grad`` with one ``wrt``, ``grad`` with a tuple, and
``value_and_grad``, a first and a second call must each:

- match float64 central finite differences (``tests/fd.py``);
- leave the arguments as they were;
- return, for every array argument, an ndarray of its shape and dtype that is
  writable and shares memory with no argument, no other returned array, and
  nothing the previous call returned (which must itself be left unchanged);
- for ``value_and_grad``, return ``f(*args)`` as the value.

The finite differences run on a copy of the program in which every
``stop_gradient(e)`` returns the value recorded at that site at the inputs, so
they see it as the constant it is to differentiation. Inputs where finite
differences mean nothing are skipped (``assume``): a branch condition within a
few finite-difference steps of its threshold (the program's conditions are
evaluated through a monitor), overflow, a program that changes its own arguments,
and functions on which two finite-difference step sizes disagree.

Hypothesis runs derandomized without a database, so a run is reproducible; a
failure prints the program source and its arguments. The default test checks 200
programs (``PROPERTY_EXAMPLES=N`` overrides that); ``pytest -m slow`` runs 5,000
more. Below the property, minimal reproducers of the failures it found.
"""

import copy
import importlib.util
import inspect
import itertools
import json
import os
import re
import traceback

import fd
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis.errors import UnsatisfiedAssumption
from program_gen import programs

from transpile import TranspileError, grad, value_and_grad
from transpile.cleanup import buffers

PARAMS = ("x", "y", "s", "n")
RTOL, ATOL = 1e-5, 1e-7
MARGIN = 5e-3  # smallest |lhs - threshold| of a branch condition at the inputs
_SERIAL = itertools.count()
# The README's guarantees: augmented assignment on an array another name may share
# (or that a helper received) is refused with a TranspileError, not differentiated.
_REFUSED_IN_PLACE = re.compile(r"updates (the array of `\w+` )?in place")


def _settings(examples, report_multiple_bugs):
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=False,
        report_multiple_bugs=report_multiple_bugs,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


# --------------------------------------------------------------------------
# Loading


def _load(program, folder, mode):
    serial = next(_SERIAL)
    stem = f"prop_{mode}_{os.getpid()}_{serial}"
    path = folder / f"{stem}.py"
    path.write_text(program.render(mode))
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _indices(wrt):
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return tuple(PARAMS.index(w) if isinstance(w, str) else w for w in items)


# --------------------------------------------------------------------------
# Checks on one call


def _array_leaves(tree):
    return [leaf for leaf in fd.flatten(tree)[0] if isinstance(leaf, np.ndarray)]


def _check_structure(grads, args, indices, names=PARAMS):
    """One gradient per ``wrt`` entry, each shaped like its argument."""
    assert len(grads) == len(indices), f"{len(grads)} gradients for wrt {indices}"
    for i, g in zip(indices, grads):
        assert np.shape(g) == np.shape(args[i]), (
            f"gradient of {names[i]} has shape {np.shape(g)}, argument {np.shape(args[i])}"
        )
    return True


def _check_types(grads, args, indices, names=PARAMS):
    """An ndarray argument gets an ndarray of its dtype; a float gets a scalar."""
    for i, g in zip(indices, grads):
        a = args[i]
        if isinstance(a, np.ndarray):
            assert isinstance(g, np.ndarray), (
                f"gradient of {names[i]} (an ndarray {a.shape}) is {type(g).__name__} {g!r}"
            )
            assert g.dtype == a.dtype, f"gradient of {names[i]} is {g.dtype}, argument {a.dtype}"
        else:
            assert np.ndim(g) == 0, f"gradient of float {names[i]} is {g!r}"


def _check_memory(returned, args, earlier):
    """Every returned array is writable and shares memory with no argument, no other
    returned array and nothing an earlier call returned."""
    mine = _array_leaves(returned)
    for k, g in enumerate(mine):
        assert g.flags.writeable, f"returned array {k} is read-only: {g!r}"
        for name, a in zip(PARAMS, args):
            if isinstance(a, np.ndarray):
                assert not np.shares_memory(g, a), (
                    f"returned array {k} shares memory with argument {name}"
                )
        for j, other in enumerate(mine[:k]):
            assert g is not other, f"returned arrays {j} and {k} are the same object"
            assert not np.shares_memory(g, other), f"returned arrays {j} and {k} share memory"
        for j, old in enumerate(_array_leaves(earlier)):
            assert not np.shares_memory(g, old), (
                f"returned array {k} shares memory with array {j} of the first call"
            )


class Smoothness:
    """Finite differences at the default step, and a second opinion on demand."""

    def __init__(self, f, args):
        self.f, self.args = f, args
        self.reference = fd.numeric_grad(f, args, (0, 1, 2))
        self._second = None

    def expected(self, indices):
        return tuple(self.reference[i] for i in indices)

    def scale(self, value):
        sizes = [abs(float(value)), 1.0]
        sizes += [float(np.max(np.abs(g))) for g in self.reference if np.size(g)]
        return max(sizes)

    def smooth(self, value):
        """Whether a coarser step gives the same derivatives (no kink, no switch)."""
        if self._second is None:
            second = fd.numeric_grad(self.f, self.args, (0, 1, 2), step=2e-4)
            try:
                fd.assert_close(second, self.reference, RTOL, ATOL * self.scale(value))
                self._second = True
            except AssertionError:
                self._second = False
        return self._second


def _skip(reason):
    event(f"skipped: {reason}")
    assume(False)


def _check_gradient(actual, indices, oracle, value):
    expected = oracle.expected(indices)
    try:
        fd.assert_close(actual, expected, RTOL, ATOL * oracle.scale(value), path="gradient")
    except AssertionError:
        if not oracle.smooth(value):
            _skip("finite differences disagree with a coarser step")
        raise


# --------------------------------------------------------------------------
# One program


class Report:
    """Runs the checks of one program. By default the first failing check raises.

    Two environment variables serve surveys (not CI): ``PROPERTY_COLLECT=path``
    appends every failing check of every example to that JSON-lines file and lets
    the example pass, so one run meets all the failures; ``PROPERTY_ONLY=regex``
    fails only on checks whose ``"<check>: <message>\\n<program source>"`` matches
    (others skip the example), so that hypothesis shrinks one kind of failure at a time.
    """

    def __init__(self, program, args):
        self.program, self.args = program, args
        self.collect = os.environ.get("PROPERTY_COLLECT")
        only = os.environ.get("PROPERTY_ONLY")
        self.only = re.compile(only, re.DOTALL) if only else None
        self.failed = False

    def check(self, label, where, run):
        try:
            return run()
        except UnsatisfiedAssumption:
            raise
        except Exception as error:
            failure = error
        self.fail(label, where, failure)  # outside the handler: no __context__
        return None

    def fail(self, label, where, error):
        kind = "" if isinstance(error, AssertionError) else f"{type(error).__name__}: "
        message = f"{label}: {where}: {kind}{error}"
        if self.only is not None and not self.only.search(f"{message}\n{self.program.source}"):
            assume(False)
        if self.collect:
            record = {
                "label": label,
                "where": where,
                "error": f"{kind}{error}",
                "trace": traceback.format_exception(type(error), error, error.__traceback__)[-4:],
                "features": sorted(self.program.features),
                "program": _describe(self.program, self.args),
            }
            with open(self.collect, "a") as out:
                out.write(json.dumps(record) + "\n")
            self.failed = True
            return
        trace = ""
        if not isinstance(error, AssertionError):
            trace = "".join(traceback.format_exception(error)[-6:]) + "\n"
        # One exception class per check, raised with no cause or context: an error
        # inside generated code has a file name that changes between runs, and
        # hypothesis would take the same failure for a new one each time it replays it.
        raise _failure_class(label)(f"{message}\n\n{trace}{_describe(self.program, self.args)}")

    def done(self):
        if self.failed:
            _skip("failure collected")


_FAILURES = {}


def _failure_class(label):
    if label not in _FAILURES:
        name = "".join(w.capitalize() for w in label.split()) + "CheckFailed"
        _FAILURES[label] = type(name, (AssertionError,), {"__module__": __name__})
    return _FAILURES[label]


def _check_api(report, api, wrt, f, args, value, oracle):
    maker = grad if api == "grad" else value_and_grad
    where = f"{api}(f, wrt={wrt!r})"
    refused = None
    try:
        g = maker(f, wrt=wrt, allow_unused=True)  # a random program may not read an argument
    except TranspileError as error:
        refused = error
    if refused is not None:
        if _REFUSED_IN_PLACE.search(str(refused)):
            _skip("refused as documented: an in-place update of a shared array")
        report.fail("transpile", where, refused)
        return
    indices = _indices(wrt)
    earlier = earlier_copy = None
    for call in ("first call", "second call"):
        where = f"{api}(f, wrt={wrt!r}), {call}"
        pristine = copy.deepcopy(args)
        result = report.check("call", where, lambda: (g(*args),))
        if result is None:
            return
        result = result[0]
        report.check(
            "arguments", where, lambda: fd.assert_same(list(args), list(pristine), "argument")
        )
        got_value, grads = None, result
        if api == "value_and_grad":
            if not report.check("structure", where, lambda: _pair(result)):
                return
            got_value, grads = result
            report.check("value", where, lambda: _check_value(got_value, value))
        grads = grads if isinstance(wrt, tuple) else (grads,)
        if not report.check("structure", where, lambda: _check_structure(grads, args, indices)):
            continue
        report.check("types", where, lambda: _check_types(grads, args, indices))
        report.check("gradient", where, lambda: _check_gradient(grads, indices, oracle, value))
        returned = list(grads) + ([got_value] if isinstance(got_value, np.ndarray) else [])
        report.check("memory", where, lambda: _check_memory(returned, args, earlier))
        if earlier is not None:
            report.check(
                "earlier result",
                where,
                lambda: fd.assert_same(earlier, earlier_copy, "the first call's result"),
            )
        earlier, earlier_copy = returned, copy.deepcopy(returned)


def _check_value(got, value):
    assert got is not None and np.ndim(got) == 0, (
        f"value_and_grad's value is {got!r}, f gives {value!r}"
    )
    np.testing.assert_allclose(got, value, rtol=1e-9, atol=1e-12)


def _pair(result):
    assert isinstance(result, tuple) and len(result) == 2, f"expected (value, grad), got {result!r}"
    return True


def check_program(program, folder):
    f = _load(program, folder, "plain").f
    monitored = _load(program, folder, "monitor")
    replay = _load(program, folder, "replay")
    replay._SEEN = monitored._SEEN

    def f_constant_stops(*args):  # f, with every stop_gradient value held constant
        replay._NEXT.clear()
        return replay.f(*args)

    args = program.make_args()
    pristine = copy.deepcopy(args)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            monitored.f(*args)
        except FloatingPointError:
            _skip("overflow")
    if monitored._MARGIN[0] <= MARGIN:
        _skip("a condition near its threshold")
    try:
        fd.assert_same(list(args), list(pristine))
    except AssertionError:
        _skip("the program changes its argument")  # an aliased +=, or a += in a loop
    value = f(*copy.deepcopy(args))
    if not (np.ndim(value) == 0 and np.isfinite(value) and abs(value) < 1e4):
        _skip("value too large")
    with np.errstate(all="ignore"):
        oracle = Smoothness(f_constant_stops, args)
        if not all(np.all(np.isfinite(g)) for g in oracle.reference):
            _skip("derivative too large")
    for feature in program.features:
        event(f"feature: {feature}")
    report = Report(program, args)
    with pytest.MonkeyPatch.context() as patch:
        if program.reuse_buffers:
            patch.setattr(buffers, "REUSE_SIZE", 1)
        _check_api(report, "grad", program.wrt_one, f, args, value, oracle)
        _check_api(report, "grad", program.wrt_many, f, args, value, oracle)
        _check_api(report, "value_and_grad", program.wrt_value, f, args, value, oracle)
    report.done()


def _describe(program, args):
    with np.printoptions(precision=17):
        shown = ", ".join(f"{name}={a!r}" for name, a in zip(PARAMS, args))
    return f"program (arguments {shown}; reuse_buffers={program.reuse_buffers}):\n{program.source}"


# --------------------------------------------------------------------------
# The property


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("property_programs")


# The default run shrinks only the first failure it meets (each distinct failure
# costs a minute or more of shrinking); the exhaustive run reports every one.
@_settings(int(os.environ.get("PROPERTY_EXAMPLES", "200")), report_multiple_bugs=False)
@given(program=programs())
def test_random_programs_with_control_flow(program, folder):
    check_program(program, folder)


@pytest.mark.slow
@_settings(5000, report_multiple_bugs=True)
@given(program=programs())
def test_random_programs_with_control_flow_exhaustive(program, folder):
    check_program(program, folder)


# --------------------------------------------------------------------------
# Minimal reproducers of the failures the property found, kept as regression tests:
# each failed at commit e4d3b1a or 9a43db3, and the comment above it says how.


def _check_reproducer(f, args, wrt, api="grad"):
    """The property's checks on one hand-written function, over two calls."""
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    names = list(inspect.signature(f).parameters)
    expected = fd.numeric_grad(f, copy.deepcopy(args), indices)
    value = f(*copy.deepcopy(args))
    # some reproducers differentiate an argument nothing reads (the zeros checked here)
    g = (grad if api == "grad" else value_and_grad)(f, wrt=wrt, allow_unused=True)
    earlier = None
    for _ in range(2):
        pristine = copy.deepcopy(args)
        result = g(*args)
        fd.assert_same(list(args), list(pristine), "argument")
        if api == "value_and_grad":
            got_value, result = result
            np.testing.assert_allclose(got_value, value, rtol=1e-9, atol=1e-12)
        grads = result if isinstance(wrt, tuple) else (result,)
        _check_structure(grads, args, indices, names)
        _check_types(grads, args, indices, names)
        fd.assert_close(grads, expected, RTOL, ATOL)
        _check_memory(list(grads), args, earlier)
        earlier = list(grads)


def return_inside_loop(x, n):
    for _ in range(2):
        if n > 1:
            return np.sum(x)
    return np.sum(x * x)


def return_inside_nested_if(x, n):
    if n < 3:
        if n < 2:
            return np.sum(np.sin(x))
    return np.sum(x * x)


# Found: value_and_grad returns `result` after the adjoint sweep popped it back off the
# tape: None (or an older value) whenever a return sits inside a loop or nested branch
@pytest.mark.parametrize("f", [return_inside_loop, return_inside_nested_if])
def test_value_and_grad_value_with_early_return(f):
    _check_reproducer(f, [np.array([0.1, 0.2, 0.3]), 1], 0, api="value_and_grad")


def rebound_to_constant_in_branch(x, n):
    h = x * 2.0
    if n > 1:
        h = 1.0
    return np.sum(h)


def argument_rebound_in_branch(x, y, n):
    if n > 1:
        x = y
    return np.sum(x)


def rebound_to_constant_in_loop(x, n):
    for _ in range(2):
        x = 0.5
    return np.sum(x)


# Found: a name rebound inside a branch or loop to a value that does not depend on wrt
# gets no adjoint statement, so the adjoint of its old value flows on (2.0 and 1.0
# instead of zeros, an array of ones instead of zeros)
@pytest.mark.parametrize(
    "f", [rebound_to_constant_in_branch, argument_rebound_in_branch, rebound_to_constant_in_loop]
)
def test_rebinding_to_an_inactive_value_in_a_block(f):
    args = [np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]), 2]
    if f is not argument_rebound_in_branch:
        del args[1]
    _check_reproducer(f, args, 0)


def conditional_expression_picks_constant_in_loop(x, n):
    u = x
    for i in range(2):
        u = u * (u if i == 0 else 2.0)  # the temporary of the if-expression is rebound
    return np.sum(u)


def conditional_expression_picks_other_argument_in_loop(x, y):
    s = 0.0
    for w in range(3):
        s = np.sum(y if w == 0 else x)  # the last trip reads x only: d/dy is 0
    return np.sin(s)


# Found: inside a loop, the temporary of an if-expression bound to an arm that does not
# depend on wrt keeps the adjoint of a later trip, which reaches the active arm of an
# earlier trip: [1.29] instead of [1.2]; cos(sum(x)) instead of zeros (same cause as
# test_rebinding_to_an_inactive_value_in_a_block)
@pytest.mark.parametrize(
    ("f", "args", "wrt"),
    [
        (conditional_expression_picks_constant_in_loop, [np.array([0.3]), 1], 0),
        (
            conditional_expression_picks_other_argument_in_loop,
            [np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])],
            1,
        ),
    ],
)
def test_conditional_expression_with_inactive_arm_in_loop(f, args, wrt):
    _check_reproducer(f, args, wrt)


def return_in_nested_if_with_else(s, n):
    if n < 3:
        if n < 2:
            return 1.0
    else:
        return 2.0
    return s * s


def return_in_else_of_elif(s, n):
    if n == 2:
        return 1.0
    elif n > 5:
        pass
    else:
        return 2.0 * s
    return s * s


# Found: a return inside an if nested in a branch of an if whose other branch returns is
# dropped: the function's last return is differentiated (and returned by value_and_grad)
# instead: gradient 1.4 instead of 0.0 and 2.0
@pytest.mark.parametrize("api", ["grad", "value_and_grad"])
@pytest.mark.parametrize("f", [return_in_nested_if_with_else, return_in_else_of_elif])
def test_return_in_nested_if_is_kept(f, api):
    _check_reproducer(f, [0.7, 1], 0, api=api)


def float_argument_rebound_to_array(x, s, n):
    if n > 1:
        s = x
    return np.sum(np.sin(s))


# Found: the gradient of float `s` rebound in a branch to an array comes back as the
# adjoint of the array (shape (3,), values cos(x)) instead of 0.0
def test_float_argument_rebound_to_array_in_branch():
    _check_reproducer(float_argument_rebound_to_array, [np.array([0.1, 0.2, 0.3]), 0.5, 2], 1)


def argument_rebound_in_branch_then_unused(x, y, n):
    if n > 1:
        y = x * 2.0  # y is not read again: d/dy is zeros shaped like the argument y
    return np.sum(x)


def float_argument_rebound_in_branch_then_unused(x, s, n):
    if n > 1:
        s = np.tanh(s) * x
        return np.sum(x)
    return np.sum(x)


# found: the zero gradient of an argument rebound in a branch and never read again
# was shaped like the rebound value (zeros (2, 3) for y of shape (3,); an array for s)
@pytest.mark.parametrize(
    ("f", "args"),
    [
        (argument_rebound_in_branch_then_unused, [np.ones((2, 3)), np.ones(3), 2]),
        (float_argument_rebound_in_branch_then_unused, [np.array([0.1, 0.2, 0.3]), 0.5, 2]),
    ],
)
def test_argument_rebound_in_branch_and_unused(f, args):
    _check_reproducer(f, args, 1)


def argument_rebound_after_reduction(x, y, n):
    c = np.tanh(np.sum(y, axis=0))
    if n > 1:
        y = x
    return np.sum(c)


def test_gradient_of_argument_rebound_in_branch_is_writable():
    # found read-only on every call (the tape restored `y` as its shape only, and the
    # gradient was a broadcast view); fixed since
    args = [np.ones((2, 3)), np.array([-0.77, 0.71, 0.77]), 2]
    _check_reproducer(argument_rebound_after_reduction, args, 1)


def list_made_in_untaken_branch(x, n):
    if n > 1:
        hs = [1.0]
        for _ in range(2):
            hs.append(np.sum(x))
            x = x * hs[-1]
    return np.sum(x)


def tuple_loop_in_untaken_branch(x, n):
    if n > 1:
        for a in (x * 2.0, 1.0):
            return np.sum(a)
    return 0.5


# Found: the adjoint of a list or tuple bound only inside a branch is zeroed at function
# level (`dhs = ops.zeros_like(hs)`, `d_t3 = ops.zeros_like(_t3)`): UnboundLocalError
# when the branch is not taken
@pytest.mark.parametrize("f", [list_made_in_untaken_branch, tuple_loop_in_untaken_branch])
def test_container_made_in_untaken_branch(f):
    _check_reproducer(f, [np.array([0.1, 0.2, 0.3]), 1], 0)


def list_made_in_loop_body(s):
    v = 0.0
    for _ in range(2):
        hs = []
        hs.append(s)
        v = v + hs[0]
    return v


# Found: the adjoint of a list built inside a loop body is made once, from the last
# trip's list, and `hs = []` does not reset it per trip: IndexError in the sweep
def test_list_made_in_loop_body():
    _check_reproducer(list_made_in_loop_body, [0.5], 0)


def stack_then_append(x):
    hs = [x, x * 2.0]
    s = np.sum(np.stack(hs) ** 2)
    hs.append(x)
    return s


def stack_of_growing_list(x):
    hs = [x]
    for _ in range(2):
        hs.append(np.mean(np.stack(hs), axis=0))
    return np.sum(hs[-1])


# Found: the adjoint of np.stack(hs) unstacks into the list as it is at the end of the
# function (ops.unstack(d, hs)), not as it was when stacked: IndexError
@pytest.mark.parametrize("f", [stack_then_append, stack_of_growing_list])
def test_stack_of_a_list_appended_later(f):
    _check_reproducer(f, [np.array([0.1, 0.2, 0.3])], 0)


def long_branch(x, n):
    if n > 1:
        return np.sum(
            np.sin(x) + np.sin(x) + np.sin(x) + np.sin(x) + np.sin(x)
            + np.sin(x) + np.sin(x) + np.sin(x) + np.sin(x) + np.sin(x)
        )  # fmt: skip
    return 0.0


# Found: TranspileError 'the source of f ... is not the code that runs: its text
# compiles to different code' for an unchanged file: compiled alone, without the
# module's `import numpy as np`, `np.sin(x)` is LOAD_METHOD (a longer instruction than
# the module's LOAD_ATTR), so the jump over the branch needs an EXTENDED_ARG in one
# compilation and not the other; parse._same_code compares instruction indices
def test_unchanged_function_with_long_branch_is_not_refused():
    _check_reproducer(long_branch, [np.array([0.1, 0.2, 0.3]), 2], 0)


def sum_of_zero_d(x, y):
    return np.sum(x * y)


# Found: a 0-d ndarray argument gets a numpy scalar (np.float64) gradient, not a
# writable 0-d ndarray
def test_zero_d_array_argument_gets_an_array():
    _check_reproducer(sum_of_zero_d, [np.array(0.5), np.array([1.0, 2.0])], (0, 1))


def continue_in_while(x, n):
    i = 0
    while i < 2:
        i += 1
        if n > 1:
            continue
        x = x * 2.0
    return np.sum(x)


# Found: TranspileError '`continue` inside a while loop is not supported', while the
# README lists `while` and `continue` as supported
def test_continue_in_while_loop():
    _check_reproducer(continue_in_while, [np.array([0.1, 0.2, 0.3]), 1], 0)


def sum_of_sum(x, y, n):
    return np.sum(x + y)


def sum_of_sum_in_branch(x, y, n):
    if n > 0:
        return np.sum(x + y)
    return 0.0


@pytest.mark.parametrize("f", [sum_of_sum, sum_of_sum_in_branch])
def test_gradients_are_distinct_arrays(f):
    # known (a): dx and dy were one array object (`ops.unbroadcast(d, x)` handed back
    # `d`), on the first call of a straight-line gradient and on every call of one
    # with control flow; fixed since
    _check_reproducer(f, [np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]), 1], (0, 1))


def augmented_assignment_through_alias(x):
    h = x * 2.0
    g = h
    g += x  # numpy: h changes too
    return np.sum(h * h)


def test_augmented_assignment_through_alias_is_refused():
    # known (b): differentiated as if `h` were unchanged (8x instead of 18x); now
    # refused, as the README's guarantees say
    with pytest.raises(TranspileError, match=_REFUSED_IN_PLACE):
        grad(augmented_assignment_through_alias)(np.array([0.1, 0.2, 0.3]))
