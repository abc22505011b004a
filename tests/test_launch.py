"""The command's Ctrl-C from its first line (``mc._launch``) and the engine's
short waits that hold Ctrl-C back: the pieces, in this process (the whole command
at random moments is ``tests/cli/test_ctrl_c.py``)."""

from __future__ import annotations

import os
import signal
import sys
import time
import types

import pytest

from mc import _launch
from mc.engine.progress import deferred_interrupts


@pytest.mark.parametrize("argv, prog, want", [
    (["python", "-m", "mc.cli", "run", "x"], "-m", True),
    (["python", "-mmc.cli", "run"], "-m", True),
    (["python", "-P", "-m", "mc.cli"], "-m", True),
    (["/venv/bin/python", "/venv/bin/mc", "run"], "/venv/bin/mc", True),
    (["python", "-m", "pytest", "tests"], "-m", False),
    (["python", "-c", "import mc"], "-c", False),
    (["python", "script.py"], "script.py", False),
    (["python", "-m", "mc.clix"], "-m", False),
    (["python", "-m", "mc", "run"], "-m", True),
    (["python", "-mmc"], "-m", True),
    (["python", "-m", "mcx"], "-m", False),
])
def test_the_command_is_told_from_a_library_user(argv, prog, want, monkeypatch):
    monkeypatch.setattr(sys, "orig_argv", argv)
    monkeypatch.setattr(sys, "argv", [prog])
    assert _launch.is_command() is want


def test_a_ctrl_c_python_could_not_raise_is_sent_again():
    """As from a garbage-collector callback: Python reports it and goes on; it comes
    back as a KeyboardInterrupt in the code that runs next, with nothing printed."""
    lost = types.SimpleNamespace(exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(), exc_traceback=None,
                                 err_msg=None, object=None)
    with pytest.raises(KeyboardInterrupt):
        with _launch.interrupts_not_lost():
            sys.unraisablehook(lost)
            for _ in range(2000):
                time.sleep(0.005)  # the signal comes from a thread a millisecond later
    assert sys.unraisablehook is not None


def test_other_unraisable_errors_reach_the_hook_as_before(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    other = types.SimpleNamespace(exc_type=ValueError, exc_value=ValueError("x"), exc_traceback=None, err_msg=None,
                                  object=None)
    with _launch.interrupts_not_lost():
        sys.unraisablehook(other)
    assert seen == [other] and sys.unraisablehook == seen.append


def test_a_ctrl_c_during_a_short_wait_comes_after_it():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            done.append(True)  # the wait is not cut
    assert done == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_before_the_exit_says_nothing(monkeypatch):
    """Two Ctrl-Cs close together while the command starts: the handler may run again
    between its line and the exit; the second run says nothing (one line in all)."""
    said, exits = [], []

    def exit_(code):
        exits.append(code)
        if len(exits) == 1:
            _launch._stop_now(2, None)  # the second Ctrl-C, pending as the first exits

    monkeypatch.setattr(_launch, "_say", said.append)
    monkeypatch.setattr(_launch.os, "_exit", exit_)
    monkeypatch.setitem(_launch._STATE, "stopping", False)
    _launch._stop_now(2, None)
    assert said == [f"{_launch._STATE['name']}: interrupted; nothing was written"] and exits == [130]
