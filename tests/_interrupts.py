"""Interrupts at exact moments, for the tests: a hook after the k-th chunk."""

from __future__ import annotations

import os
import signal

from mc.engine import faults


class at_chunk:
    """A context in which, at the ``k``-th chunk the engine merges from now, the
    process gets SIGINT (``how="SIGINT"``: the first Ctrl-C; the run finishes the
    chunk in hand and stops) or a KeyboardInterrupt is raised (``how="raise"``: a
    second Ctrl-C; the run stops at once)."""

    def __init__(self, k: int, how: str = "SIGINT"):
        if how not in ("SIGINT", "raise"):
            raise ValueError(how)
        self.k, self.how, self.seen = k, how, 0

    def __call__(self, merged: int) -> None:
        self.seen += 1
        if self.seen == self.k:
            if self.how == "SIGINT":
                os.kill(os.getpid(), signal.SIGINT)
            else:
                raise KeyboardInterrupt

    def __enter__(self):
        faults.CHUNK_HOOKS.append(self)
        return self

    def __exit__(self, *exc):
        faults.CHUNK_HOOKS.remove(self)
        return False
