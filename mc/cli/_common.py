"""Helpers shared by the subcommands: arguments, JSON output, and a scenario read
with its warnings on stderr."""

from __future__ import annotations

import argparse
import contextlib
import os
import warnings
from typing import Any, Iterator

from .. import _json, files
from .. import _validate as v
from ..studies import dispatch


def add_sampling(p: argparse.ArgumentParser, n: int) -> None:
    p.add_argument("--n", type=int, default=n, help=f"fleet-months to simulate (default {n:,})")
    p.add_argument("--seed", type=int, default=0, help="seed; month i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    add_progress(p)


def add_progress(p: argparse.ArgumentParser, unit: str = "months") -> None:
    """``--quiet`` and ``--progress``: the bar (``unit``/s and an ETA, on stderr)
    shows on a terminal unless ``--quiet`` or ``--json``; ``--progress`` forces it."""
    p.add_argument("--quiet", action="store_true", help="no progress bar or messages on stderr")
    p.add_argument("--progress", action="store_true",
                   help=f"a progress bar ({unit}/s, ETA) on stderr even when it is not a terminal or with --json")


def progress_of(args) -> bool | None:
    """What ``progress=`` a command passes on: False with ``--quiet``, True with
    ``--progress``, False with ``--json``, else None (only on a terminal)."""
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", False):
        return True
    return False if getattr(args, "json", False) else None


def add_cluster(p: argparse.ArgumentParser, what: str) -> None:
    """``--cluster ray[://HOST:PORT]``: ``what`` (grid points, settings) run as Ray
    tasks; the same bits as without it."""
    p.add_argument("--cluster", metavar="ray[://HOST:PORT]", default=None,
                   help=f"run the {what} on a Ray cluster: ray (this machine's cluster, RAY_ADDRESS or one "
                   "ray start began here, else a new one on this machine's cores) or ray://HOST:PORT (a "
                   "cluster's client port); the same results, bit for bit. Default: MC_CLUSTER, else here. "
                   "Needs pip install 'mc[cluster]'")


def cluster_of(args) -> tuple[str | None, str]:
    """``(value, name)`` of ``--cluster``, else of ``MC_CLUSTER`` (unset or empty:
    here); checked where it enters (one line naming it, exit 2), an empty
    ``--cluster`` too."""
    value, name = getattr(args, "cluster", None), "--cluster"
    if value is not None and not value.strip():  # an unset variable in a script: not "here" without a word
        v.fail(name, value, f"is empty; allowed: {dispatch.ALLOWED} (leave --cluster out to run here)")
    if value is None and os.environ.get(dispatch.ENV):
        value, name = os.environ[dispatch.ENV], dispatch.ENV
    dispatch.parse(value, name)
    return value, name


@contextlib.contextmanager
def executor_of(given: tuple[str | None, str]) -> Iterator[Any]:
    """The executor for ``cluster_of``'s value, closed when the block ends: here, or
    a connected and checked Ray cluster (Ray is imported only then)."""
    from ..studies import cluster

    value, name = given
    executor = cluster.executor(value if value is not None else "", name=name)
    try:
        yield executor
    finally:
        executor.close()


def held(folder: Any, what: str):
    """The output folder's lock (``store.FolderLock``) for the rest of a command, so
    a second writer is refused before either writes a byte; nothing without a folder."""
    if folder is None:
        return contextlib.nullcontext()
    from ..studies.store import FolderLock

    return FolderLock(folder, what, share=True)


def print_json(obj: Any) -> None:
    """``obj`` as strict JSON on stdout: NumPy values as plain numbers, and an
    undefined or non-finite figure as ``null`` (never NaN or Infinity)."""
    print(_json.dumps(obj, indent=2))


def load_scenario(spec: str, quiet: bool = False):
    """``files.scenario(spec)``, each warning met on the way (a request log too
    short to tile, used as its mean) shown as the command shows warnings (one line
    on stderr, each message once: ``mc.cli.main``); none when ``quiet`` (``--quiet``:
    nothing on stderr but errors)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        scenario = files.scenario(spec)
    for w in seen if not quiet else ():
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return scenario
