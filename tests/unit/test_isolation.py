"""Unit tests of interop.equivalence.isolation: a crash in the child is an AidgeCrash naming the signal
and the phase, anything else comes back as the child's own exception."""
from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import textwrap
import time

import pytest

from interop.errors import AidgeCrash, AidgeError
from interop.cases.expected_failures import ExpectedAidgeFailure, ExpectedFailure
from interop.equivalence.isolation import IsolatedError, run_isolated
from interop.equivalence.isolation_phase import phase_from_stack
from interop.equivalence.tester import EquivalenceError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _abort():
    os.abort()


def _segfault():
    ctypes.string_at(0)


def test_abort_is_a_crash_naming_sigabrt():
    with pytest.raises(AidgeCrash) as info:
        run_isolated(_abort)
    exc = info.value
    assert exc.signal == "SIGABRT"
    assert not exc.timed_out
    assert str(exc).startswith("crash: process killed by SIGABRT")
    assert isinstance(exc, AidgeError)
    assert "_abort" in str(exc)  # the child's Python stack is part of the message


def test_segfault_is_a_crash_naming_sigsegv():
    with pytest.raises(AidgeCrash, match=r"^crash: process killed by SIGSEGV") as info:
        run_isolated(_segfault)
    assert info.value.signal == "SIGSEGV"


def test_the_phase_comes_from_the_bridge_frame(tmp_path):
    # a module whose file is bridge/graph.py, like interop/bridge/graph.py, dying inside _compile
    (tmp_path / "bridge").mkdir()
    path = tmp_path / "bridge" / "graph.py"
    path.write_text(textwrap.dedent("""
        import os

        def _compile():
            os.abort()

        def wrap():
            _compile()
    """))
    spec = importlib.util.spec_from_file_location("fake_bridge_for_isolation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(AidgeCrash, match=r"^crash: process killed by SIGABRT during compile") as info:
        run_isolated(module.wrap)
    assert info.value.phase == "compile"


def test_phase_from_stack_reads_the_innermost_known_frame():
    dump = textwrap.dedent("""\
        Fatal Python error: Segmentation fault

        Current thread 0x00007f (most recent call first):
          File "/x/interop/bridge/runner.py", line 170 in read_tensor
          File "/x/interop/bridge/runner.py", line 167 in forward
          File "/x/interop/bridge/module.py", line 257 in backward
          File "/x/interop/equivalence/tester.py", line 207 in _unit_test
    """)
    assert phase_from_stack(dump) == ("forward", "runner.py:read_tensor")
    # a user's own module.py with a forward is not the bridge
    assert phase_from_stack('  File "/home/me/module.py", line 3 in forward\n') == (None, "module.py:forward")
    assert phase_from_stack("") == (None, None)


def test_an_exception_comes_back_with_its_type_and_text():
    def boom():
        raise ValueError("bad value 42")

    with pytest.raises(ValueError) as info:
        run_isolated(boom)
    assert str(info.value) == "bad value 42"
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "traceback in the isolated child process" in notes and "boom" in notes


def test_an_exception_with_keyword_only_init_keeps_its_attributes():
    def mismatch():
        raise EquivalenceError("[t, epoch 1] output differs", test="t", epoch=1, what="output", seed=7)

    with pytest.raises(EquivalenceError, match=r"output differs") as info:
        run_isolated(mismatch)
    assert (info.value.test, info.value.epoch, info.value.what, info.value.seed) == ("t", 1, "output", 7)


def test_an_aidge_error_keeps_phase_and_operator():
    def fail():
        raise AidgeError("backward", "Backward not yet implemented for Abs_Op on backend cpu", operator="Abs")

    with pytest.raises(AidgeError) as info:
        run_isolated(fail)
    assert info.value.phase == "backward" and info.value.operator == "Abs"
    assert str(info.value) == "Aidge backward failed (operator Abs): Backward not yet implemented for Abs_Op on backend cpu"


def test_an_exception_that_cannot_be_rebuilt_is_an_isolated_error():
    class Local(Exception):  # not importable from the parent
        pass

    def fail():
        raise Local("only here")

    with pytest.raises(IsolatedError, match="Local: only here"):
        run_isolated(fail)


def test_results_and_arguments_travel():
    assert run_isolated(lambda a, b=1: {"sum": a + b}, 2, b=3) == {"sum": 5}


def test_an_unpicklable_result_is_a_type_error():
    with pytest.raises(TypeError, match="cannot be pickled"):
        run_isolated(lambda: (lambda: None))


def test_a_child_that_runs_too_long_is_killed():
    # the child would sleep 30 s and return normally: the error itself says it was killed at its
    # timeout (no assertion on elapsed time: a loaded machine must not fail it, issue 32)
    with pytest.raises(AidgeCrash, match=r"^crash: process timed out after 0.5 s") as info:
        run_isolated(time.sleep, 30, timeout=0.5)
    assert info.value.timed_out and info.value.signal == "SIGKILL"


def test_a_child_that_exits_abruptly_is_a_crash():
    with pytest.raises(AidgeCrash, match=r"exited with status 3 without a result") as info:
        run_isolated(os._exit, 3)
    assert info.value.signal is None


def test_the_parent_state_is_untouched_by_the_child():
    box = {"value": 1}

    def mutate():
        box["value"] = 2
        return box["value"]

    assert run_isolated(mutate) == 2
    assert box["value"] == 1


def test_a_crash_entry_of_the_expected_failure_table_covers_a_crash():
    """A crash in the forked child, under the guard the interop plugin puts around the call."""
    from interop.cases.expected_failures import expected_failure_guard
    from interop.cases.suite import run_operator_case

    entry = ExpectedFailure("X", "forward", "crash", "crash: process killed by SIGABRT", ("X:case",))

    class FakeRun:
        expected_failure = entry

    with pytest.raises(ExpectedAidgeFailure, match=r"\[crash\] X forward"):
        with expected_failure_guard(entry):
            run_operator_case(FakeRun(), lambda case: os.abort())
    # another failure is not hidden by the entry
    with pytest.raises(ValueError):
        with expected_failure_guard(entry):
            run_operator_case(FakeRun(), lambda case: (_ for _ in ()).throw(ValueError("other")))


def test_signal_names_are_readable():
    from interop.equivalence.isolation_phase import _signal_name

    assert _signal_name(signal.SIGABRT) == "SIGABRT"
    assert _signal_name(250) == "signal 250"
