"""Ctrl-C at every moment of the ``mc`` command, from its first instruction.

The command's first instructions are imports (the package's, then its
subcommand's: jax, NumPy, pandas, a second or more as ``mc.cli.main`` builds its
parser), before the command can install anything of its own. So the
package's ``__init__`` calls ``starting()`` first, with the standard library
alone: when this process is the ``mc`` command (the console script, or
``python -m mc`` or ``python -m mc.cli``), a Ctrl-C until the command starts its work prints one
line and ends the process with exit 130 at once (nothing is written before the
work starts). Imported as a library (``import mc``), nothing changes: Python's
own ``KeyboardInterrupt``.

``MC_FAULT_SAY_STARTED=1`` makes the command print ``mc: started`` on stdout the
moment it holds Ctrl-C (a test's signals are then all mc's to handle).

``ending(code)`` is the command's last step: output flushed, then the process
ends without the interpreter's teardown when the command was interrupted (130),
so no compiled program or device thread left mid-step is torn down under it,
and a Ctrl-C after the work is done is ignored (never a traceback at exit).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import _thread

INTERRUPTED = 130
_STATE = {"command": False, "name": "mc"}
_MODULES = ("mc", "mc.__main__", "mc.cli", "mc.cli.__main__")  # python -m NAME runs the command


def is_command() -> bool:
    """Whether this process runs the ``mc`` command: the console script ``mc``
    or ``python -m mc`` / ``python -m mc.cli`` (as the interpreter was started)."""
    argv = list(getattr(sys, "orig_argv", None) or sys.argv)
    for i, word in enumerate(argv[1:], 1):
        if word == "-m":
            return i + 1 < len(argv) and argv[i + 1] in _MODULES
        if word.startswith("-m"):
            return word[2:] in _MODULES
        if not word.startswith("-"):
            break
    return os.path.basename(sys.argv[0] if sys.argv else "") in ("mc", "mc.exe")


def _say(line: str) -> None:
    try:
        os.write(2, (line + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def _stop_now(signum, frame) -> None:  # pragma: no cover - runs in a subprocess
    # A second Ctrl-C can run this handler again between the line and the exit
    # (Python runs a pending handler between any two steps): it says nothing.
    if _STATE.get("stopping"):
        return
    _STATE["stopping"] = True
    _say(f"{_STATE['name']}: interrupted; nothing was written")
    os._exit(INTERRUPTED)


def starting(name: str | None = None) -> None:
    """In the ``mc`` command's main thread: a Ctrl-C from now until ``working``
    ends the process at once (exit 130, one line). ``name``: the command's name
    for that line once known (``mc run``)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if name is None and not is_command():
        return
    if name is None and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return  # started with Ctrl-C ignored (a background job): left so, as Python leaves it
    _STATE["command"] = True
    if name is not None:
        _STATE["name"] = name
    signal.signal(signal.SIGINT, _stop_now)
    if name is None and os.environ.get("MC_FAULT_SAY_STARTED"):  # tests: the moment mc holds Ctrl-C
        os.write(1, b"mc: started\n")


def is_running_command() -> bool:
    """Whether ``starting`` found this process to be the ``mc`` command."""
    return _STATE["command"]


def working() -> None:
    """The command starts its work: a Ctrl-C raises ``KeyboardInterrupt`` again
    (the engine turns the first into a stop after the chunk in hand), so what is
    written is whole or absent."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def interrupts_not_lost():
    """A Ctrl-C is never lost: Python runs a signal's handler between any two steps
    of the main thread, garbage-collector callbacks and finalizers included (jax
    has one), where a ``KeyboardInterrupt`` cannot propagate: Python prints it as
    "Exception ignored" and goes on, so the command would finish as if no Ctrl-C
    had come. Meanwhile such a one is sent again, with nothing printed: the process
    signals itself a moment later, from a thread, so the handler runs again once
    the callback has returned, in the command's own code."""
    previous = sys.unraisablehook
    pid = os.getpid()

    def resend() -> None:
        time.sleep(0.001)
        os.kill(pid, signal.SIGINT)

    def hook(unraisable) -> None:
        if issubclass(unraisable.exc_type, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
            # A bare thread (``threading``'s start waits for it, and a second Ctrl-C
            # in that wait would be printed here); a Ctrl-C meanwhile is sent again too.
            while True:
                try:
                    _thread.start_new_thread(resend, ())
                    return
                except KeyboardInterrupt:
                    continue
        previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def quiet() -> None:
    """Ctrl-C ignored from here on (the command's result is decided)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def ending(code: int) -> int:
    """The command's exit: a Ctrl-C is ignored from here; output is flushed; an
    interrupted command (130) ends without the interpreter's teardown."""
    quiet()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code == INTERRUPTED:
        os._exit(INTERRUPTED)
    return code


__all__ = ["INTERRUPTED", "ending", "interrupts_not_lost", "is_command", "is_running_command", "quiet", "starting", "working"]
