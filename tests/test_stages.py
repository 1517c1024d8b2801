"""One stage at a time: what each stage of ``transpile.pipeline.STAGES`` makes.

Tangent tests its passes one by one (``test_anf``, ``test_cfg``,
``test_template``, ``test_optimization``); so do these. For a stage that
rewrites code, a tiny function from ``tests/stage_funcs.py`` is compiled up to
that stage and what it prints (``pipeline.dump``, the same text as
``python -m transpile FILE:FUNC --dump STAGE``) is compared with the exact
expected source; where it helps, the stage before is checked too, so the test
shows what this stage changed. For an analysis stage the test asserts the facts
it records on the ``ir.Function``, or the located error it raises.

The golden strings were printed by the stages themselves and then read line by
line. If one fails after a change to the compiler, read the difference: a
stage whose output changed for a reason gets a new golden string, and the
reason belongs in the commit message.
"""

import dataclasses
import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import fd
import gast
import numpy as np
import pytest
import stage_funcs as S

from transpile import grad, pipeline, source
from transpile.__main__ import main as cli_main
from transpile.core import emit
from transpile.core.errors import TranspileError
from transpile.core.ir import MISSING, Context, Function
from transpile.core.nodes import function_def
from transpile_runtime import ops

FUNCS = Path(S.__file__).resolve()
ROOT = FUNCS.parent.parent


def built(func, stage, wrt=(0,), mode="grad", sequences=frozenset()):
    """The ``ir.Function`` after the stages up to and including ``stage``."""
    ctx = Context(func, tuple(wrt), mode, sequences=sequences, transpile=pipeline.transpile)
    return pipeline.run(ctx, until=stage)


def dump(func, stage, wrt=(0,), mode="grad"):
    return pipeline.dump(func, wrt, stage, mode=mode)


def golden(text):
    return textwrap.dedent(text).lstrip("\n")


def line(stmt):
    return emit.to_source(stmt).strip()


def line_of(func, text):
    """The line number, in ``stage_funcs.py``, of ``func``'s first line containing ``text``."""
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def statement(fn, target):
    """The top-level statement of the normalized body that assigns ``target``."""
    return next(
        s
        for s in fn.tree.body
        if isinstance(s, gast.Assign) and getattr(s.targets[0], "id", None) == target
    )


# --------------------------------------------------------------------------
# The stage list


def test_stage_names_are_unique():
    assert len(set(pipeline.STAGE_NAMES)) == len(pipeline.STAGES)
    assert pipeline.STAGE_NAMES == tuple(s.name for s in pipeline.STAGES)


@pytest.mark.parametrize("stage", pipeline.STAGES, ids=pipeline.STAGE_NAMES)
def test_each_stage_is_a_module_level_stage_function_in_a_documented_module(stage):
    module = importlib.import_module(stage.run.__module__)
    assert stage.run.__name__ == stage.run.__qualname__ == "stage"
    assert module.stage is stage.run
    assert module.__doc__ and module.__doc__.strip()
    assert stage.does.strip()


EVERY_STAGE = pipeline.STAGES + pipeline.FORWARD_STAGES + pipeline.VARIANT_STAGES


@pytest.mark.parametrize("stage", EVERY_STAGE, ids=lambda s: s.name)
def test_each_stage_is_named_for_its_module(stage):
    """``--dump raw`` is ``transpile/reverse/raw.py``: a stage is found by its name."""
    assert stage.run.__module__.rpartition(".")[2] == stage.name


def test_every_stage_has_a_test_here():
    tests = [n for n in globals() if n.startswith("test_")]
    untested = [
        s
        for s in pipeline.STAGE_NAMES + pipeline.VARIANT_STAGE_NAMES
        if not any(n.startswith(f"test_{s}_") for n in tests)
    ]
    assert untested == []


def test_run_stops_after_the_stage_named():
    fn = built(S.plain, "normalize")
    assert fn.tree is not None and fn.kinds is None and fn.emitted is None


def test_dump_refuses_an_unknown_stage():
    with pytest.raises(ValueError, match="no stage 'optimize'"):
        dump(S.plain, "optimize")


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "transpile", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.mark.parametrize("stage", pipeline.STAGE_NAMES)
def test_cli_dump_accepts_every_stage(stage, capsys, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "stage_funcs", S)  # main() loads the file afresh
    assert cli_main([f"{FUNCS}:rnn", "--wrt", "h,W", "--dump", stage]) == 0
    assert capsys.readouterr().out == dump(S.rnn, stage, wrt=(0, 1)) + "\n"


@pytest.mark.parametrize("stage", ["normalize", "record", "emit"])
def test_cli_dump_prints_the_stage_in_a_subprocess(stage):
    done = cli(f"{FUNCS}:rnn", "--wrt", "h,W", "--dump", stage)
    assert done.returncode == 0, done.stderr
    assert done.stdout == dump(S.rnn, stage, wrt=(0, 1)) + "\n"


def test_cli_dump_refuses_an_unknown_stage_and_lists_them():
    done = cli(f"{FUNCS}:plain", "--dump", "optimize")
    assert done.returncode == 2
    assert "invalid choice: 'optimize'" in done.stderr
    choices = done.stderr.split("choose from ", 1)[1].rsplit(")", 1)[0]
    every = pipeline.STAGE_NAMES + pipeline.VARIANT_STAGE_NAMES
    assert [c.strip(" '") for c in choices.split(",")] == list(every)


def test_cli_stages_lists_the_stages_in_order():
    done = cli("--stages")
    assert done.returncode == 0, done.stderr
    rows = [row.split(None, 1) for row in done.stdout.splitlines() if row and row[0] != "#"]
    assert rows == [[s.name, s.does] for s in pipeline.STAGES + pipeline.VARIANT_STAGES]
    assert "# a shape variant" in done.stdout


def test_cli_dumps_a_variant_stage_for_example_arguments():
    done = cli(f"{FUNCS}:plain_sum", "--dump", "specialized", "--args", "np.ones(3)")
    assert done.returncode == 0, done.stderr
    assert "ops.filled(x, 1.0, (3,), 'float64')" in done.stdout
    done = cli(f"{FUNCS}:plain_sum", "--args", "np.ones(4)")
    assert done.returncode == 0, done.stderr
    assert "(4,)" in done.stdout and "ops.unreduce" not in done.stdout
    done = cli(f"{FUNCS}:plain_sum", "--dump", "compact")
    assert done.returncode == 1 and "needs example arguments" in done.stderr
    done = cli(f"{FUNCS}:plain_sum", "--args", "np.ones(")
    assert done.returncode == 2 and "--args" in done.stderr


# --------------------------------------------------------------------------
# parse


def test_parse_strips_a_decorator_that_returns_the_function():
    assert dump(S.decorated, "parse") == golden(
        """
        def decorated(x):
            return np.sum(x * x)
        """
    )


def test_parse_locates_the_tree_in_the_file_and_resolves_free_names():
    parsed = built(S.decorated, "parse").parsed
    assert parsed.filename == str(FUNCS)
    assert parsed.tree.lineno + parsed.line_offset == line_of(S.decorated, "def decorated")
    assert parsed.lookup("np") is np
    assert parsed.lookup("x") is MISSING  # a local never resolves


def test_parse_reads_the_lines_inspect_reads_or_asks_inspect():
    """The source is cut by the lines the code object spans; where that is not the
    whole def (a tail without code), parse falls back on ``inspect``."""
    import corpus_control
    import corpus_straight

    from transpile.front import parse

    funcs = [
        f
        for module in (S, corpus_control, corpus_straight)
        for f in vars(module).values()
        if inspect.isfunction(f) and f.__module__ == module.__name__ and inspect.unwrap(f) is f
    ]
    assert len(funcs) > 50
    for f in funcs:
        spanned = parse._spanned_lines(f)
        assert spanned is None or spanned == inspect.getsourcelines(f)[0], f.__name__
    assert parse._spanned_lines(S.pass_at_the_end) is None
    assert dump(S.pass_at_the_end, "parse").rstrip().endswith("pass")


def test_parse_refuses_a_function_replaced_by_a_wrapper():
    with pytest.raises(TranspileError, match="wrapped by a decorator") as info:
        built(S.wrapped, "parse")
    assert info.value.lineno == line_of(S.wrapped, "@wrapping")


# --------------------------------------------------------------------------
# higher


def test_higher_makes_a_gradients_add_at_a_new_array_and_leaves_user_code_alone():
    """A gradient read again (``grad(grad(f))``): its in-place ``ops.add_at`` becomes
    ``ops.scatter_added``, which has a rule; the user's own code passes unchanged."""
    import higher_order_funcs as H

    generic = grad(H.indexed).__transpile_dispatch__.current().generic
    parsed = dump(generic, "parse")
    assert "ops.add_at(" in parsed and "scatter_added" not in parsed
    rewritten = dump(generic, "higher")
    assert "ops.add_at(" not in rewritten
    assert rewritten.count("= ops.scatter_added(") == parsed.count("ops.add_at(")
    assert dump(S.decorated, "higher") == dump(S.decorated, "parse")
    x = np.array([0.3, -0.7, 1.1])
    dindexed = grad(H.indexed)

    def squared_norm(v):
        return np.sum(dindexed(v) ** 2)

    (expected,) = fd.numeric_grad(squared_norm, (x,), (0,))
    assert np.allclose(grad(squared_norm)(x), expected, rtol=1e-6)


# --------------------------------------------------------------------------
# fence, inplace


def test_fence_refuses_unsupported_syntax_at_its_line():
    built(S.uses_with, "parse")
    with pytest.raises(TranspileError, match="inside a `with` block") as info:
        built(S.uses_with, "fence")
    assert info.value.filename == str(FUNCS)
    assert info.value.lineno == line_of(S.uses_with, "return np.sum(x)  # refused")


def test_inplace_refuses_an_update_another_name_sees_that_fence_lets_through():
    built(S.updates_alias, "fence")
    with pytest.raises(TranspileError, match="`z -= 1.0` updates the array") as info:
        built(S.updates_alias, "inplace")
    assert info.value.lineno == line_of(S.updates_alias, "z -= 1.0")


# --------------------------------------------------------------------------
# helpers


def test_helpers_inlines_a_small_helper_with_fresh_names_and_its_default():
    assert dump(S.calls_a_helper, "fence") == golden(
        """
        def calls_a_helper(x, h):
            h = _scaled_tanh(h, x[0])
            return np.sum(h) + np.sum(_scaled_tanh(h, x, scale=0.5))
        """
    )
    # the parameters bound to names stay those names; x[0] gets a name clear of the
    # caller's x; the default 2.0 is written in; the second call's value is named
    assert dump(S.calls_a_helper, "helpers") == golden(
        """
        def calls_a_helper(x, h):
            x_1 = x[0]
            z = x_1 * 2.0
            h = np.tanh(z + h)
            z_1 = x * 0.5
            scaled_tanh_out_1 = np.tanh(z_1 + h)
            return np.sum(h) + np.sum(scaled_tanh_out_1)
        """
    )
    fn = built(S.calls_a_helper, "helpers")
    assert {"x_1", "z", "z_1"} <= fn.parsed.local_names
    assert "_scaled_tanh" in {r.chain for r in fn.inlined}  # re-checked on each call
    x, h = np.linspace(-1.0, 1.0, 3), np.linspace(0.2, 0.6, 3)
    expected = fd.numeric_grad(S.calls_a_helper, (x, h), (0,))[0]
    fd.assert_close(grad(S.calls_a_helper)(x, h), expected, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# names


def test_naming_are_the_usual_ones_when_free():
    fn = built(S.plain, "naming")
    assert fn.names == {
        "np": "np",
        "ops": "ops",
        "scipy_ops": "scipy_ops",
        "forward_ops": "forward_ops",
        "complex_ops": "complex_ops",
        "spectral": "spectral",
        "Tape": "Tape",
        "tape": "tape",
    }
    assert fn.namespace["ops"] is ops
    assert fn.namer.adjoint("x") == "dx"


def test_naming_avoid_the_users_names():
    fn = built(S.takes_names, "naming")
    assert fn.names == {
        "np": "np",
        "ops": "ops_",
        "scipy_ops": "scipy_ops",
        "forward_ops": "forward_ops",
        "complex_ops": "complex_ops",
        "spectral": "spectral",
        "Tape": "Tape",
        "tape": "tape_1",
    }
    assert fn.namespace["ops_"] is ops
    assert fn.namer.adjoint("x") == "d_x"  # dx is a parameter


# --------------------------------------------------------------------------
# anf


def test_normalize_puts_one_operation_per_line():
    assert dump(S.nested, "normalize") == golden(
        """
        def nested(x, y):
            _t1 = x * y
            _t2 = np.sin(_t1)
            _t3 = _t2 + y
            _t4 = np.sum(_t3)
            return _t4
        """
    )


def test_normalize_lowers_returns_to_a_single_exit():
    assert dump(S.returns_early, "normalize") == golden(
        """
        def returns_early(x):
            returned = False
            _t1 = np.sum(x)
            _t2 = _t1 > 0
            _t3 = bool(_t2)
            if _t3:
                _t4 = x * x
                result = np.sum(_t4)
                returned = True
            else:
                result = np.sum(x)
                returned = True
            return result
        """
    )


def test_normalize_unpacks_tuples_and_renames_an_augmented_assignment():
    assert dump(S.unpacks, "normalize") == golden(
        """
        def unpacks(x):
            _t1 = x * 2.0
            _t2 = _t1
            _t3 = x
            a = _t2
            b = _t3
            a2 = a + b
            _t4 = np.sum(a2)
            return _t4
        """
    )


# --------------------------------------------------------------------------
# loops


def test_loops_moves_a_checkpointed_loops_body_into_a_step():
    assert dump(S.checkpointed_loop, "loops") == golden(
        """
        def checkpointed_loop(w, h, n):
            s = 0.0
            h, s = checkpointed_loop_loop(range(n), h, s, w)
            return s
        """
    )
    fn = built(S.checkpointed_loop, "loops")
    looped = fn.parsed.bound["checkpointed_loop_loop"]
    loop = looped.__transpile_revolve__
    assert (loop.snapshots, loop.carried, loop.cond) == (4, 2, None)
    w, h = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    new_h, new_s = loop.step(2, h, 1.0, w)  # one step: the body as written, from t = 2
    np.testing.assert_allclose(new_h, np.tanh(h * w) + 2)
    np.testing.assert_allclose(new_s, 1.0 + np.sum(np.tanh(h * w) + 2))
    assert looped(range(3), h, 0.0, w)[1] == S.checkpointed_loop(w, h, 3)


def test_loops_drops_the_marker_in_forward_mode():
    fn = pipeline.run(Context(S.checkpointed_loop, (0,), "jvp"), until="loops")
    assert "for t in range(n):" in emit.to_source(fn.parsed.tree)


# --------------------------------------------------------------------------
# snapshot


def test_snapshot_copies_a_list_read_before_an_append():
    assert "np.stack(hs)" in dump(S.appends_after_stack, "normalize")
    assert dump(S.appends_after_stack, "snapshot") == golden(
        """
        def appends_after_stack(x):
            hs = [x]
            _t6 = list(hs)
            _t1 = np.stack(_t6)
            s = np.sum(_t1)
            _t2 = x * 2.0
            hs.append(_t2)
            _t3 = hs[1]
            _t4 = np.sum(_t3)
            _t5 = s + _t4
            return _t5
        """
    )


def test_snapshot_leaves_a_list_read_after_its_appends():
    assert dump(S.appends_before_stack, "snapshot") == dump(S.appends_before_stack, "normalize")


# --------------------------------------------------------------------------
# auxiliary


def test_auxiliary_differentiates_the_first_entry_of_the_pair():
    ctx = Context(
        S.value_and_aux, (0,), "value_and_grad", transpile=pipeline.transpile, has_aux=True
    )
    fn = pipeline.run(ctx, until="auxiliary")
    assert [line(s) for s in fn.tree.body][-3:] == [
        "_t1 = np.sum(h)",
        "_t2 = (_t1, h)",
        "return _t1",
    ]
    assert fn.whole_result == "_t2"


def test_auxiliary_leaves_other_functions_alone():
    assert dump(S.value_and_aux, "auxiliary") == dump(S.value_and_aux, "snapshot")


# --------------------------------------------------------------------------
# retake


def test_retake_takes_a_late_view_of_an_allocation_again_where_it_is_read():
    assert "cols * _t2" in dump(S.reads_late_transpose, "auxiliary")
    assert dump(S.reads_late_transpose, "retake") == golden(
        """
        def reads_late_transpose(x):
            _t1 = (2, 3)
            out = np.zeros(_t1)
            cols = out.T
            out[0] = x
            _t2 = x[0]
            cols2 = out.T
            _t3 = cols2 * _t2
            _t4 = np.sum(_t3)
            return _t4
        """
    )


def test_retake_leaves_a_view_that_may_be_a_copy():
    assert dump(S.reads_stale_view, "retake") == dump(S.reads_stale_view, "auxiliary")


# --------------------------------------------------------------------------
# kinds


def test_kinds_finds_the_sequences_and_the_parameters_taken_for_arrays():
    kinds = built(S.sequences, "kinds").kinds
    assert kinds.sequences == {"a", "_t1", "b", "t", "c"}  # _t1 = [x]
    assert kinds.assumed_arrays == {"x", "ys"}  # z = x + ys


def test_kinds_takes_a_parameter_known_to_be_a_list_as_a_sequence():
    kinds = built(S.sequences, "kinds", sequences=frozenset({"ys"})).kinds
    assert kinds.sequences == {"a", "_t1", "b", "t", "c", "ys", "z"}
    assert kinds.assumed_arrays == set()


# --------------------------------------------------------------------------
# activity


def test_activity_marks_only_varied_and_useful_statements():
    fn = built(S.partly_active, "activity")
    active = [line(s) for s in fn.tree.body if fn.activity.defines_active(s)]
    assert active == [
        "_t3 = np.sin(x)",
        "_t4 = c * _t3",
        "_t5 = _t4 * s",
        "_t6 = np.sum(_t5)",
        "_t7 = _t6 / n",
    ]


def test_activity_does_both_halves():
    fn = built(S.partly_active, "activity")
    u, s = statement(fn, "u"), statement(fn, "s")
    assert "u" in fn.activity.varied_after[id(u)] and "u" not in fn.activity.useful_after[id(u)]
    assert "s" in fn.activity.useful_after[id(s)] and "s" not in fn.activity.varied_after[id(s)]
    assert not fn.activity.defines_active(statement(fn, "_t1"))  # np.cosh(x), stopped


# --------------------------------------------------------------------------
# cuts


def test_cuts_records_each_wrt_parameter_with_no_path_and_what_cuts_it():
    import explain_funcs

    assert built(S.partly_active, "cuts", wrt=(0, 1)).cuts == ()  # both reach the output
    (found,) = built(explain_funcs.int_cut, "cuts").cuts
    assert found.param == "w"
    assert [(c.kind, c.what) for c in found.cuts] == [("integer", "int()")]
    assert found.cuts[0].line == explain_funcs.line_of(explain_funcs.int_cut, "n = int")


# --------------------------------------------------------------------------
# aliasing


def test_aliasing_refuses_a_view_read_after_a_write_into_its_array():
    built(S.reads_stale_view, "activity")
    with pytest.raises(TranspileError, match="'row' is a view of 'out'") as info:
        built(S.reads_stale_view, "aliasing")
    assert info.value.lineno == line_of(S.reads_stale_view, "return np.sum(row * x)")


# --------------------------------------------------------------------------
# raw


def test_raw_adjoint_accumulates_from_the_rule_templates():
    assert dump(S.sum_sin, "raw") == golden(
        """
        def dsum_sin(x):
            _t1 = np.sin(x)
            _t2 = np.sum(_t1)
            # grad of: return np.sum(np.sin(x))
            d_t1 += ops.unreduce(d_t2, _t1, None, False)
            # grad of: return np.sum(np.sin(x))
            dx += d_t1 * np.cos(x)
        """
    )


# --------------------------------------------------------------------------
# seed


def test_seeding_of_a_full_reduction_is_one():
    fn = built(S.sum_sin, "seeding")
    assert fn.d_result == "d_t2"
    assert line(fn.adjoint[0]) == "d_t2 = 1.0"
    assert line(fn.adjoint[-1]) == "return dx"


def test_seeding_of_another_output_is_checked_and_a_gradient_filled_by_slot_is_shaped():
    fn = built(S.first_item, "seeding")
    assert line(fn.adjoint[0]) == "d_t2 = ops.seed(_t2)"
    assert line(fn.adjoint[-1]) == "return ops.like(dx, x)"


def test_seeding_of_a_vjp_is_the_checked_cotangent():
    fn = built(S.sum_sin, "seeding", mode="vjp")
    assert fn.extra_args == ["dout"]
    assert line(fn.adjoint[0]) == "d_t2 = ops.cotangent(dout, _t2)"


def test_seeding_returns_a_tuple_for_several_parameters():
    fn = built(S.nested, "seeding", wrt=(0, 1))
    assert line(fn.adjoint[-1]) == "return (dx, dy)"


# --------------------------------------------------------------------------
# zeros


def test_zeros_makes_first_writes_and_drops_unread_zeros():
    before = dump(S.both_branches, "seeding")
    assert "dx += dy * np.cos(x)" in before and "dy = __zero__(y)" in before
    assert dump(S.both_branches, "zeros") == golden(
        """
        def dboth_branches(x, c):
            _t1 = bool(c)
            if _t1:
                y = np.sin(x)
            else:
                y = np.cos(x)
            _t2 = np.sum(y)
            d_t2 = 1.0
            # grad of: return np.sum(y)
            dy = ops.unreduce(d_t2, y, None, False)
            if _t1:
                # grad of: y = np.sin(x)
                dx = dy * np.cos(x)
                __restore__(y)
            else:
                # grad of: y = np.cos(x)
                dx = -(dy * np.sin(x))
                __restore__(y)
            return dx
        """
    )


def test_zeros_drops_contributions_of_a_zero_adjoint():
    # log(sigmoid) is differentiated as a whole: nothing writes dp, so what the
    # rules for p = 1.0 / (1.0 + np.exp(-z)) would add to dz is zero
    assert "d_t3 -= dp * p / _t3" in dump(S.log_sigmoid, "seeding")
    assert dump(S.log_sigmoid, "zeros") == golden(
        """
        def dlog_sigmoid(z):
            _t1 = -z
            _t2 = np.exp(_t1)
            _t3 = 1.0 + _t2
            p = 1.0 / _t3
            _t4 = np.log(p)
            _t5 = np.sum(_t4)
            d_t5 = 1.0
            # grad of: return np.sum(np.log(p))
            d_t4 = ops.unreduce(d_t5, _t4, None, False)
            # grad of: return np.sum(np.log(p))
            dz = d_t4 * (1.0 - p)
            # grad of: p = 1.0 / (1.0 + np.exp(-z))
            # grad of: p = 1.0 / (1.0 + np.exp(-z))
            # grad of: p = 1.0 / (1.0 + np.exp(-z))
            # grad of: p = 1.0 / (1.0 + np.exp(-z))
            return dz
        """
    )


# --------------------------------------------------------------------------
# copies


def test_copies_merge_adjoints_and_fold_the_constant_seed():
    before = dump(S.renames, "zeros")
    assert "dx = dy" in before and "d_t2 = 1.0" in before
    assert dump(S.renames, "copies") == golden(
        """
        def drenames(x):
            y = x
            _t1 = np.sin(y)
            _t2 = np.sum(_t1)
            # grad of: return np.sum(np.sin(y))
            d_t1 = ops.unreduce(1.0, _t1, None, False)
            # grad of: return np.sum(np.sin(y))
            dy = d_t1 * np.cos(y)
            # grad of: y = x
            return dy
        """
    )


def test_copies_drop_a_copy_straight_back_in_a_loop_body():
    """``s = s + t`` in a loop: its adjoint ``d_t4 = ds ... ds = d_t4`` leaves ``ds``
    what it was, so the second copy goes, then the first (``tidy`` folds the seed)."""
    before = dump(S.loop_scale, "zeros")
    assert "d_t4 = ds" in before and "ds = d_t4" in before
    after = dump(S.loop_scale, "copies")
    assert "ds = d_t4" not in after and "d_t4 = ds" not in after
    assert "d_t2 = ops.unreduce(ds, _t2, None, False)" in after
    assert "ops.unreduce(1.0, _t2)" in source(grad(S.loop_scale))  # the seed, folded in
    args = (np.array([0.3, -1.2, 0.8]), 4)
    g = grad(S.loop_scale)
    for _ in range(3):  # generic, then the variant
        (want,) = fd.numeric_grad(S.loop_scale, args, (0,))
        np.testing.assert_allclose(g(*args), want, rtol=1e-7)


def test_copies_merge_an_adjoint_copy_in_a_loop_body():
    before = dump(S.loop_copy, "zeros")
    assert "dv = d_t2" in before
    assert dump(S.loop_copy, "copies") == golden(
        """
        def dloop_copy(x):
            h = x
            _t1 = range(2)
            for _ in _t1:
                v = np.sin(h)
                _t2 = v + h
                h = 0.5 * _t2
            _t3 = np.sum(h)
            # grad of: return np.sum(h)
            dh = ops.unreduce(1.0, h, None, False)
            for _ in reversed(_t1):
                # grad of: h = 0.5 * (v + h)
                d_t2 = dh * 0.5
                __restore__(h)
                # grad of: h = 0.5 * (v + h)
                dh = d_t2
                __restore__(_t2)
                # grad of: v = np.sin(h)
                dh = dh + d_t2 * np.cos(h)
                __restore__(v)
            # grad of: h = x
            dx = dh
            return dx
        """
    )
    x = np.array([0.3, -1.2, 2.0])
    (expected,) = fd.numeric_grad(S.loop_copy, (x,), (0,))
    np.testing.assert_allclose(grad(S.loop_copy)(x), expected, rtol=1e-8)


# --------------------------------------------------------------------------
# signs


def test_signs_cancel_a_negation_in_its_use():
    before = dump(S.sigmoid, "copies")
    assert "d_t3 = -(d_t4 * _t4 / _t3)" in before and "dz = -d_t1" in before
    assert dump(S.sigmoid, "signs") == golden(
        """
        def dsigmoid(z):
            _t1 = -z
            _t2 = np.exp(_t1)
            _t3 = 1.0 + _t2
            _t4 = 1.0 / _t3
            _t5 = np.sum(_t4)
            # grad of: return np.sum(1.0 / (1.0 + np.exp(-z)))
            d_t4 = ops.unreduce(1.0, _t4, None, False)
            # grad of: return np.sum(1.0 / (1.0 + np.exp(-z)))
            d_t3 = d_t4 * _t4 / _t3
            # grad of: return np.sum(1.0 / (1.0 + np.exp(-z)))
            # grad of: return np.sum(1.0 / (1.0 + np.exp(-z)))
            dz = d_t3 * _t2
            # grad of: return np.sum(1.0 / (1.0 + np.exp(-z)))
            return dz
        """
    )


# --------------------------------------------------------------------------
# record


def test_record_pushes_only_what_the_adjoint_reads():
    before = dump(S.loop_sin, "signs")
    assert "__restore__(x)" in before and "__restore__(_t2)" in before
    assert dump(S.loop_sin, "record") == golden(
        """
        def dloop_sin(x):
            tape = Tape()
            x_in = x
            _t1 = range(3)
            for i in _t1:
                _t2 = np.sin(x)
                tape.push(x)
                x = _t2 + 1.0
            _t3 = np.sum(x)
            # grad of: return np.sum(x)
            dx = ops.unreduce(1.0, x, None, False)
            for i in reversed(_t1):
                # grad of: x = np.sin(x) + 1.0
                d_t2 = dx
                x = tape.pop()
                # grad of: x = np.sin(x) + 1.0
                dx = d_t2 * np.cos(x)
            return dx
        """
    )


def test_record_pushes_the_shape_of_a_value_read_for_its_shape():
    assert dump(S.rnn, "record", wrt=(0, 1)) == golden(
        """
        def drnn(h, W, xs):
            tape = Tape()
            h_in = h
            _t1 = xs.shape
            _t2 = _t1[0]
            _t3 = range(_t2)
            _t4 = ops.UNSET
            for t in _t3:
                tape.push(ops.shape_of(_t4))
                _t4 = h @ W
                _t5 = xs[t]
                _t6 = _t4 + _t5
                tape.push(h)
                h = np.tanh(_t6)
            _t7 = np.sum(h)
            dW = ops.zeros_like(W)
            # grad of: return np.sum(h)
            dh = ops.unreduce(1.0, h, None, False)
            for t in reversed(_t3):
                # grad of: h = np.tanh(h @ W + xs[t])
                d_t6 = dh * (1.0 - h * h)
                h = tape.pop()
                # grad of: h = np.tanh(h @ W + xs[t])
                d_t4 = ops.unbroadcast(d_t6, _t4)
                # grad of: h = np.tanh(h @ W + xs[t])
                dh = ops.matmul_left(d_t4, h, W)
                dW += ops.matmul_right(d_t4, h, W)
                _t4 = tape.pop()
            return (dh, dW)
        """
    )


def test_record_computes_a_residual_again_rather_than_pushing_it():
    """``d = h - ys[t]``: ``h`` is on the tape anyway, ``ys`` and ``t`` the loop does not
    rebind, so the reverse step starts by computing ``d`` again, and ``d`` (restored after
    its adjoint in the raw adjoint) is neither pushed nor popped."""
    before = dump(S.residual_loop, "signs", wrt=(1,))
    assert "__restore__(d)" in before and "__restore__(_t5)" in before
    assert dump(S.residual_loop, "record", wrt=(1,)) == golden(
        """
        def dresidual_loop(h, W, ys):
            tape = Tape()
            s = 0.0
            _t1 = ys.shape
            _t2 = _t1[0]
            _t3 = range(_t2)
            _t6 = ops.UNSET
            for t in _t3:
                _t4 = h @ W
                tape.push(h)
                h = np.tanh(_t4)
                _t5 = ys[t]
                d = h - _t5
                tape.push(ops.shape_of(_t6))
                _t6 = d * d
                _t7 = np.sum(_t6)
                _t8 = s + _t7
                s = _t8
            dW = ops.zeros_like(W)
            dh = ops.zeros_like(h)
            for t in reversed(_t3):
                # computed again rather than kept on the tape
                d = h - ys[t]
                # grad of: s = s + np.sum(d * d)
                # grad of: s = s + np.sum(d * d)
                # grad of: s = s + np.sum(d * d)
                d_t6 = ops.unreduce(1.0, _t6, None, False)
                # grad of: s = s + np.sum(d * d)
                dd = d_t6 * (2.0 * d)
                _t6 = tape.pop()
                # grad of: d = h - ys[t]
                dh = dh + ops.unbroadcast(dd, h)
                # grad of: h = np.tanh(h @ W)
                d_t4 = dh * (1.0 - h * h)
                h = tape.pop()
                # grad of: h = np.tanh(h @ W)
                dh = ops.matmul_left(d_t4, h, W)
                dW += ops.matmul_right(d_t4, h, W)
            return dW
        """
    )
    args = (np.full((2, 3), 0.2), np.eye(3) * 0.7, np.linspace(-1.0, 1.0, 24).reshape(4, 2, 3))
    g = grad(S.residual_loop, wrt=(1,))
    for _ in range(3):  # the generic code, then the shape variant
        (want,) = fd.numeric_grad(S.residual_loop, args, (1,))
        (got,) = g(*args)
        np.testing.assert_allclose(got, want, rtol=1e-7)


# --------------------------------------------------------------------------
# assemble


def test_assemble_makes_a_callee_a_forward_and_an_adjoint_function():
    fn = built(S.sum_sin, "assemble", mode="split")
    assert pipeline.render(fn) == golden(
        """
        def sum_sin_fwd(x):
            _t1 = np.sin(x)
            _t2 = np.sum(_t1)
            return (_t2, (ops.shape_of(_t1), x))

        def sum_sin_bwd(saved, d_t2):
            _t1, x = saved
            # grad of: return np.sum(np.sin(x))
            d_t1 = ops.unreduce(d_t2, _t1, None, False)
            # grad of: return np.sum(np.sin(x))
            dx = d_t1 * np.cos(x)
            return (dx,)
        """
    )


def test_assemble_returns_the_value_with_the_gradient():
    fn = built(S.sum_sin, "assemble", mode="value_and_grad")
    assert [o.name for o in fn.outputs] == ["sum_sin_value_and_grad"]
    assert line(fn.outputs[0].body[-1]) == "return (_t2, dx)"


# --------------------------------------------------------------------------
# dead


def test_deadcode_removes_assignments_nobody_reads():
    before = dump(S.unused, "assemble")
    assert "u = np.cos(x)" in before and "_t2 = np.sum(_t1)" in before
    assert dump(S.unused, "deadcode") == golden(
        """
        def dunused(x):
            _t1 = x * x
            # grad of: return np.sum(x * x)
            d_t1 = ops.unreduce(1.0, _t1, None, False)
            # grad of: return np.sum(x * x)
            dx = d_t1 * (2.0 * x)
            return dx
        """
    )


# --------------------------------------------------------------------------
# shapes


def test_shapes_reads_a_shape_from_its_source():
    assert "ops.unreduce(1.0, _t1, None, False)" in dump(S.sum_sin, "deadcode")
    assert dump(S.sum_sin, "shapes") == golden(
        """
        def dsum_sin(x):
            # grad of: return np.sum(np.sin(x))
            d_t1 = ops.unreduce(1.0, x, None, False)
            # grad of: return np.sum(np.sin(x))
            dx = d_t1 * np.cos(x)
            return dx
        """
    )


# --------------------------------------------------------------------------
# tidy


def test_tidy_folds_constants_drops_defaults_and_repeated_comments():
    assert "dx = d_t1 * 1.0" in dump(S.times_one, "shapes")
    assert dump(S.times_one, "tidy") == golden(
        """
        def dtimes_one(x):
            # grad of: return np.sum(x * 1.0)
            d_t1 = ops.unreduce(1.0, x)
            dx = d_t1
            return dx
        """
    )


# --------------------------------------------------------------------------
# ownership


def test_ownership_copies_a_gradient_that_may_be_a_broadcast():
    assert dump(S.plain_sum, "ownership") == golden(
        """
        def dplain_sum(x):
            # grad of: return np.sum(x)
            dx = ops.unreduce(1.0, x)
            return ops.owned(dx, x)
        """
    )


def test_ownership_leaves_a_fresh_gradient():
    assert dump(S.plain, "ownership") == dump(S.plain, "tidy")
    assert "ops.owned" not in dump(S.plain, "ownership")


# --------------------------------------------------------------------------
# specializable


def test_fixed_shapes_straight_line_code_gets_variants_keyed_on_int_shapes():
    assert built(S.plain, "fixed_shapes").static == frozenset()
    assert built(S.rows, "fixed_shapes").static == frozenset({"n"})  # n sets a shape


def test_fixed_shapes_loops_over_static_ranges_get_variants_too():
    assert built(S.loop_sin, "fixed_shapes").static == frozenset()
    assert built(S.loop_sin, "inline").outputs[-1].anf is not None  # the probe's body


def test_fixed_shapes_not_with_branches_or_while_loops():
    assert built(S.loops, "fixed_shapes").static is None
    assert built(S.loops, "inline").outputs[-1].anf is None  # nothing to probe


def test_fixed_shapes_variants_of_int_shapes_are_correct():
    dx = grad(S.rows)
    x = np.arange(6.0)
    for n in (2, 3, 2):  # a variant per value of n, the first one again
        np.testing.assert_allclose(dx(x, n), 2.0 * x)


# --------------------------------------------------------------------------
# inline


def test_inline_prints_temporaries_used_once_where_they_are_used():
    assert dump(S.log_sigmoid, "inline") == golden(
        """
        def dlog_sigmoid(z):
            p = 1.0 / (1.0 + np.exp(-z))
            # grad of: return np.sum(np.log(p))
            dz = ops.unreduce(1.0, z) * (1.0 - p)
            return dz
        """
    )


def test_inline_keeps_the_one_operation_per_line_form():
    (out,) = built(S.log_sigmoid, "inline").outputs
    kept = emit.to_source(function_def(out.name, out.args, out.anf))
    assert kept == dump(S.log_sigmoid, "ownership")


# --------------------------------------------------------------------------
# final


def test_emit_compiles_the_source_shown():
    generated = built(S.plain, "emit").generated
    assert generated.source == dump(S.plain, "inline")
    # a gradient with shape variants is compiled when its entry first needs it
    assert generated.function is None
    function = generated.compile()
    assert textwrap.dedent(inspect.getsource(function)) == generated.source
    assert [r.chain for r in generated.code_reads] == ["np"]
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(function(x), 2.0 * x)


def test_emit_compiles_a_gradient_without_variants_at_once():
    generated = built(S.loops, "emit").generated
    assert generated.compile is None
    assert textwrap.dedent(inspect.getsource(generated.function)) == generated.source


# --------------------------------------------------------------------------
# entry


def test_dispatch_routes_calls_to_the_compiled_gradient():
    fn = built(S.plain, "dispatch")
    entry = fn.generated.function
    assert list(inspect.signature(entry).parameters) == ["x"]
    assert entry.__transpile_generated__.source == dump(S.plain, "emit")
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(entry(x), 2.0 * x)


def test_dispatch_specializes_straight_line_code_and_static_loops_only():
    assert built(S.plain, "dispatch").generated.function.__transpile_dispatch__.specializable
    assert built(S.loop_sin, "dispatch").generated.function.__transpile_dispatch__.specializable
    assert not built(S.loops, "dispatch").generated.function.__transpile_dispatch__.specializable


def test_dispatch_is_not_made_for_a_callee():
    fn = built(S.sum_sin, "dispatch", mode="split")
    assert not hasattr(fn.generated.function, "__transpile_dispatch__")
    assert fn.generated.extra.name == "sum_sin_bwd"


# --------------------------------------------------------------------------
# The normal form: every statement after anf has a shape normalize.py lists

ATOM = (gast.Name, gast.Constant)
BINARY = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow, gast.MatMult)
UNARY = (gast.USub, gast.UAdd, gast.Not, gast.Invert)
OPAQUE = (gast.BoolOp, gast.Lambda, gast.JoinedStr)


def atoms(*nodes):
    return all(isinstance(n, ATOM) for n in nodes)


def is_index(node):
    """Atoms, slices of atoms, None, Ellipsis (constants), and tuples of them."""
    if isinstance(node, gast.Slice):
        return all(p is None or atoms(p) for p in (node.lower, node.upper, node.step))
    if isinstance(node, gast.Tuple):
        return all(is_index(e) for e in node.elts)
    return atoms(node)


def is_call(node):
    """``f(atom, ..., k=atom)``, ``f`` a name, an attribute chain of names, or ``atom.m``."""
    if not isinstance(node, gast.Call):
        return False
    f = node.func
    while isinstance(f, gast.Attribute):
        f = f.value
    return (
        isinstance(f, ATOM)
        and atoms(*node.args)
        and all(k.arg is not None and atoms(k.value) for k in node.keywords)
    )


def value_shape(v):
    """The shape of the right-hand side of ``name = ...``, or None."""
    shapes = {
        "copy": atoms(v),
        "binary": isinstance(v, gast.BinOp) and isinstance(v.op, BINARY) and atoms(v.left, v.right),
        "unary": isinstance(v, gast.UnaryOp) and isinstance(v.op, UNARY) and atoms(v.operand),
        "compare": isinstance(v, gast.Compare)
        and len(v.ops) == 1
        and atoms(v.left, *v.comparators),
        "call": is_call(v),
        "attribute": isinstance(v, gast.Attribute) and atoms(v.value),
        "subscript": isinstance(v, gast.Subscript) and atoms(v.value) and is_index(v.slice),
        "display": isinstance(v, (gast.Tuple, gast.List)) and atoms(*v.elts),
        "dict": isinstance(v, gast.Dict) and None not in v.keys and atoms(*v.keys, *v.values),
        "opaque": isinstance(v, OPAQUE),
    }
    return next((k for k, ok in shapes.items() if ok), None)


def blocks(stmts):
    """``stmts`` and every branch and loop body in it, each a list of statements."""
    yield stmts
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from blocks(s.body)
            yield from blocks(s.orelse)


def shape_violations(tree):
    """``(line, why)`` for each statement of a normalized function not in the normal form."""
    stmts = [s for block in blocks(tree.body) for s in block]
    ranges = {
        s.targets[0].id
        for s in stmts
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Call)
        and getattr(s.value.func, "id", None) == "range"
    }
    bad = []
    for block in blocks(tree.body):
        for s in block:
            why = stmt_violation(s, block, ranges)
            if why:
                bad.append((line(s).splitlines()[0], why))
    returns = [s for s in stmts if isinstance(s, gast.Return)]
    if returns != [tree.body[-1]] or not atoms(returns[0].value):
        bad.append(("return", "not exactly one `return atom`, the last statement"))
    return bad


def stmt_violation(s, block, ranges):
    if isinstance(s, gast.Assign):
        if len(s.targets) != 1:
            return "several targets"
        t = s.targets[0]
        if isinstance(t, gast.Name):
            return None if value_shape(s.value) else "value not in the normal form"
        if isinstance(t, gast.Subscript):
            ok = isinstance(t.value, gast.Name) and is_index(t.slice) and atoms(s.value)
            return None if ok else "subscript write not `name[index] = atom`"
        return "target neither a name nor a subscript"
    if isinstance(s, gast.Expr):
        return None if is_call(s.value) else "expression statement not a call of atoms"
    if isinstance(s, gast.If):
        return None if atoms(s.test) else "if test not an atom"
    if isinstance(s, gast.For):
        ok = isinstance(s.target, gast.Name) and getattr(s.iter, "id", None) in ranges
        return None if ok and not s.orelse else "for not over a range computed before"
    if isinstance(s, gast.While):
        t = s.test
        ok = (
            atoms(t)
            and isinstance(t, gast.Name)
            and s.body
            and line(s.body[-1]).startswith(t.id + " =")
        )
        return None if ok else "while test not an atom recomputed at the end of the body"
    if isinstance(s, (gast.Break, gast.Continue, gast.Raise, gast.Assert, gast.Return)):
        return None
    if isinstance(s, gast.Pass):
        # not in normalize.py's list: left where `if c: continue` was lowered
        return None if block == [s] else "pass beside other statements"
    return f"{type(s).__name__} statement"


NORMAL_FORM_FUNCS = [
    S.nested,
    S.returns_early,
    S.unpacks,
    S.appends_after_stack,
    S.partly_active,
    S.rnn,
    S.branches,
    S.loops,
    S.containers,
    S.calls,
    S.subscripts,
]


@pytest.mark.parametrize("func", NORMAL_FORM_FUNCS, ids=lambda f: f.__name__)
def test_normalize_output_has_only_the_statement_shapes_normalize_lists(func):
    assert shape_violations(built(func, "normalize").tree) == []


@pytest.mark.parametrize(
    "text",
    [
        "y = np.sin(x * 2.0)",  # a nested operation
        "y = x + 1.0 + x",
        "y = a < b < c",  # two comparisons
        "y = x[i + 1]",
        "x[0] = y * 2.0",
        "y += x",
        "a, b = x",
        "f(x)[0]",
        "if x > 0:\n    y = x",
        "if x:\n    return x",  # a second return
        "for i in x:\n    y = i",  # not over a range
        "while x:\n    x = x - 1.0\n    y = x",  # the test not recomputed last
    ],
)
def test_the_shape_check_refuses_what_normalize_removes(text):
    tree = gast.parse(f"def f(x):\n{textwrap.indent(text, '    ')}\n    return x\n").body[0]
    assert shape_violations(tree) != []


def test_objects_makes_method_calls_function_calls_and_fields_of_a_view_keys():
    import method_funcs as M

    from transpile.front.object_args import layout

    model = M.MLP(np.ones((3, 4)), np.zeros(4), np.ones((4, 2)))
    classes = (("self", layout(model)),)
    ctx = Context(M.MLP.hidden, (0,), "split", transpile=pipeline.transpile, classes=classes)
    fn = pipeline.run(ctx, until="objects")
    assert emit.to_source(fn.parsed.tree) == golden(
        """
        def hidden(self, x):
            z = x @ self['W1'] + self['b1']
            return np.maximum(z, stop_gradient(self).leak * z)
        """
    )
    ctx = Context(
        M.mlp_loss, (0,), "grad", transpile=pipeline.transpile, classes=(("model", layout(model)),)
    )
    text = emit.to_source(pipeline.run(ctx, until="objects").parsed.tree)
    assert "MLP_forward(model, x)" in text


# --------------------------------------------------------------------------
# the shape variant's stages (VARIANT_STAGES), dumped for example arguments


def vdump(func, stage, args, wrt=(0,)):
    return pipeline.dump(func, wrt, stage, args=args)


def code_lines(text):
    return [ln.strip() for ln in text.splitlines() if ln.strip() and "#" not in ln]


def test_specialized_writes_the_shapes_in_and_drops_the_return_guard():
    x = np.ones(3)
    assert "ops.unreduce(1.0, x)" in dump(S.plain_sum, "inline")
    special = vdump(S.plain_sum, "specialized", (x,))
    assert "ops.unreduce" not in special and "ops.owned" not in special
    assert "ops.filled(x, 1.0, (3,), 'float64')" in special  # the shape the probe saw


def test_drop_unread_stops_pushing_what_the_variant_no_longer_pops():
    args = (np.ones(3), 3)
    before = vdump(S.loop_scale, "specialized", args)
    after = vdump(S.loop_scale, "drop_unread", args)
    assert "tape.push(ops.shape_of(_t2))" in before and "_t2 = tape.pop()" in before
    assert "shape_of" not in after and "_t2 = tape.pop()" not in after
    # y, which dy reads, is computed again from x and i (record), not taped
    assert after.count("tape.push(") == after.count("tape.pop()") == 0
    assert after.count("\n        y = x * i\n") == 2
    g = grad(S.loop_scale)
    for _ in range(3):  # the generic code (the probe), then the variant
        (want,) = fd.numeric_grad(S.loop_scale, args, (0,))
        np.testing.assert_allclose(g(*args), want, rtol=1e-7)


def test_complements_makes_the_cross_entropy_adjoint_y_minus_p():
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(2), rng.standard_normal((6, 2)), rng.integers(0, 2, 6) * 1.0)
    before = code_lines(vdump(S.cross_entropy, "drop_unread", args))
    after = code_lines(vdump(S.cross_entropy, "complements", args))
    assert not any(ln.endswith("= y - p") for ln in before)
    assert any(ln.endswith("= y - p") for ln in after)


def test_pruned_removes_what_the_simplifications_left_unread():
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(2), rng.standard_normal((6, 2)), rng.integers(0, 2, 6) * 1.0)
    before = code_lines(vdump(S.cross_entropy, "complements", args))
    after = code_lines(vdump(S.cross_entropy, "pruned", args))
    assert "_t7 = 1.0 - y" in before and "_t7 = 1.0 - y" not in after
    assert [ln for ln in before if ln not in after] == ["_t7 = 1.0 - y", "d_t11 = 1.0"]


def test_fused_changes_nothing_without_fuse_true():
    args = (np.ones(3), np.ones(3))
    assert vdump(S.product_sum, "fused", args) == vdump(S.product_sum, "pruned", args)


def test_reuse_buffers_writes_results_into_dead_temporaries(monkeypatch):
    from transpile.cleanup import buffers

    monkeypatch.setattr(buffers, "REUSE_SIZE", 1)  # every size counts as large here
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4))
    args += (rng.standard_normal((5, 4)),)
    before = vdump(S.tanh_layer, "fused", args)
    after = vdump(S.tanh_layer, "reuse_buffers", args)
    assert "out=" not in before
    assert "h = np.tanh(a, out=a)" in after and "out=x" not in after


def test_guard_return_leaves_a_fresh_gradient_unguarded_and_the_result_owns_its_array():
    args = (np.ones(3), np.arange(3.0))
    assert code_lines(vdump(S.product_sum, "guard_return", args)) == [
        "def dproduct_sum(a, b):",
        "da = 1.0 * b",
        "return da",
    ]
    g = grad(S.product_sum)
    for _ in range(3):
        got = g(*args)
        assert not np.shares_memory(got, args[1])
        np.testing.assert_array_equal(got, args[1])


def test_compact_prints_what_is_read_once_where_it_is_read():
    args = (np.ones(3), np.arange(3.0))
    assert code_lines(vdump(S.product_sum, "compact", args)) == [
        "def dproduct_sum(a, b):",
        "return 1.0 * b",
    ]


def test_compiled_is_the_variant_a_later_call_runs():
    x = np.arange(3.0)
    g = grad(S.plain_sum)
    assert vdump(S.plain_sum, "compiled", (x,)) == source(g, x)
    for _ in range(3):
        np.testing.assert_array_equal(g(x), np.ones(3))


def test_a_variant_stage_needs_example_arguments_and_says_when_none_is_made():
    with pytest.raises(ValueError, match="needs example arguments"):
        pipeline.dump(S.plain_sum, (0,), "compact")
    with pytest.raises(ValueError, match="no stage 'nope'.*compiled"):
        pipeline.dump(S.plain_sum, (0,), "nope")


# --------------------------------------------------------------------------
# the facts on ir.Function: each made by the stage it names


def _facts_first_set(func, mode="grad", **options):
    """{field: the first stage after which it differs from its default}."""
    fields = dataclasses.fields(Function)
    default = Function()
    first = {}
    for stage in pipeline.stages_for(mode):
        ctx = Context(func, (0,), mode, transpile=pipeline.transpile, **options)
        fn = pipeline.run(ctx, until=stage.name)
        for f in fields:
            if f.name not in first and _differs(getattr(fn, f.name), getattr(default, f.name)):
                first[f.name] = stage.name
    return first


def _differs(value, default):
    try:
        return bool(value != default)
    except ValueError:  # an array compared: it is set
        return True


@pytest.mark.parametrize(
    "func, mode, options",
    [
        (S.calls, "grad", {}),
        (S.rows, "grad", {}),
        (S.value_and_aux, "value_and_grad", {"has_aux": True}),
        (S.makes_an_object, "vjp", {}),
        (S.calls, "jvp", {}),
        (S.halves_in_a_helper, "grad", {}),
    ],
    ids=["calls", "rows", "has_aux", "object-vjp", "calls-jvp", "updates-followed"],
)
def test_each_fact_is_made_by_the_stage_it_names(func, mode, options):
    declared = {f.name: f.metadata["made_by"] for f in dataclasses.fields(Function)}
    first = _facts_first_set(func, mode, **options)
    assert first, "no fact was made"
    wrong = {
        name: (stage, declared[name]) for name, stage in first.items() if stage != declared[name]
    }
    # forward mode makes its functions and their namespace in its one stage
    if mode == "jvp":
        for name in ("outputs", "callees", "callee_names"):
            if wrong.get(name, ("tangents",))[0] == "tangents":
                wrong.pop(name, None)
    assert wrong == {}


def test_every_fact_is_documented_and_seen_made():
    seen = {}
    for func, mode, options in [
        (S.calls, "grad", {}),
        (S.rows, "grad", {}),
        (S.value_and_aux, "value_and_grad", {"has_aux": True}),
        (S.makes_an_object, "vjp", {}),
        (S.halves_in_a_helper, "grad", {}),
        (S.unpacks, "grad", {}),  # a += b: normalize remembers the update (augmented)
    ]:
        seen.update(_facts_first_set(func, mode, **options))
    for f in dataclasses.fields(Function):
        assert f.metadata["what"] and f.metadata["read_by"], f.name
    assert set(seen) == {f.name for f in dataclasses.fields(Function)} - {"cuts"}


# generators, exceptions, regions


def test_generators_makes_a_generators_yields_appends_to_the_list_it_returns():
    assert dump(S.pairs, "generators", mode="split") == golden(
        """
        def pairs(v):
            items = []
            for i in range(0, v.shape[0], 2):
                items.append((v[i], v[i + 1]))
            return items
        """
    )


def test_exceptions_makes_a_try_a_branch_on_the_clause_that_ran_and_marks_a_with():
    assert dump(S.factored, "exceptions") == golden(
        """
        def factored(S, y):
            caught = __try__(1, np.linalg.LinAlgError)
            if caught:
                pass
            else:
                L = np.linalg.cholesky(S)
            if caught:
                err = __exception__(1)
                print(err)
                L = np.linalg.cholesky(S + np.eye(2))
            __with__(2, np.errstate(divide='ignore'))
            r = np.linalg.solve(L, y)
            __end__(2)
            return np.sum(r * r)
        """
    )


def test_regions_prints_the_markers_back_as_try_and_with_statements():
    before = dump(S.factored, "inline")
    assert "__try__(1, np.linalg.LinAlgError)" in before and "__end__(2)" in before
    after = dump(S.factored, "regions")
    assert "__" not in after.replace("__zero__", "")
    assert (
        textwrap.indent(
            golden(
                """
            try:
                L = np.linalg.cholesky(S)
            except np.linalg.LinAlgError as exception:
                caught = 1
                err = exception
                L = L_old_1
            else:
                caught = 0
            if caught:
                print(err)
            """
            ),
            "    ",
        )
        in after
    )
    with_block = "    with np.errstate(divide='ignore'):\n        r = np.linalg.solve(L, y)\n"
    assert with_block in after
