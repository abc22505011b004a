"""Ctrl-C and progress during a run: the first Ctrl-C asks the run to stop after
the chunk in hand (``interruptible``), and a tqdm bar counts months (``progress_bar``),
or nothing where no one watches (``NoBar``)."""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from .. import _validate as v


class Stop:
    """Set by the first Ctrl-C during a run: the run stops after the chunk in hand
    and returns what it has (marked partial). A second Ctrl-C raises at once."""

    def __init__(self):
        self.requested = False


@contextmanager
def interruptible() -> Iterator[Stop]:
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame):
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Ctrl-C held back for a short wait that must not be cut (a chunk in flight
    finishing): one that comes meanwhile is handed to the handler that was in
    place as the block ends (the default one raises ``KeyboardInterrupt``). Off
    the main thread, nothing changes (signals reach only it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came and callable(previous):
        previous(signal.SIGINT, None)
    elif came and previous == signal.SIG_DFL:
        raise KeyboardInterrupt


def progress_bar(total: int, enabled: Any, unit: str = "months", desc: str | None = None):
    """A tqdm bar in fleet-months (or ``unit``) per second with an ETA, on stderr.
    ``enabled``: True always, False never, None only when stderr is a terminal; or a
    bar already open (one that several runs share: a command over many scenarios),
    which is used as it is and left open. Without a bar to show, tqdm is not
    needed (a machine may run the engine with jax and NumPy alone, as the GPU
    check does)."""
    enabled = v.progress("progress", enabled)
    if hasattr(enabled, "update"):
        return _Shared(enabled)
    show = sys.stderr.isatty() if enabled is None else bool(enabled)
    if not show:
        return NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit=" " + unit, unit_scale=True, disable=not show, file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1, mininterval=0.5, desc=desc)


class _Shared:
    """A bar handed in by the caller: entered and left without closing it."""

    def __init__(self, bar):
        self.bar = bar

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc):
        return False


class NoBar:
    """A progress bar that shows nothing (where no one watches)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, *args, **kw) -> None:
        pass

    def set_description_str(self, *args, **kw) -> None:
        pass

    def close(self) -> None:
        pass

