"""Fault injection, so interrupts are tested at exact moments.

Interrupts are tested from inside, at exact moments, not by racing a timer: every
callable in ``CHUNK_HOOKS`` runs after each merged chunk with the number of chunks
this process has merged so far (it may raise KeyboardInterrupt, or signal the
process). ``MC_FAULT_AFTER_CHUNKS="K:SIG"`` (SIG one of INT, TERM, KILL) makes a
process send itself that signal after its K-th chunk, so a subprocess test can
stop a command at a chosen moment.
"""

from __future__ import annotations

import os
import signal
from typing import Callable

CHUNK_HOOKS: list[Callable[[int], None]] = []
_MERGED = [0]


def after_chunk() -> None:
    """Called by the engine after each merged chunk: runs the hooks, then the
    ``MC_FAULT_AFTER_CHUNKS`` signal when its chunk comes."""
    _MERGED[0] += 1
    for hook in list(CHUNK_HOOKS):
        hook(_MERGED[0])
    fault = os.environ.get("MC_FAULT_AFTER_CHUNKS")
    if fault:
        k, _, name = fault.partition(":")
        if k.strip().isdigit() and _MERGED[0] == int(k) and hasattr(signal, "SIG" + name.strip().upper()):
            os.kill(os.getpid(), getattr(signal, "SIG" + name.strip().upper()))


__all__ = ["CHUNK_HOOKS", "after_chunk"]
