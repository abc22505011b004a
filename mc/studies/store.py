"""Pieces of a study on disk, each whole or absent: a piece's rows in one Parquet
file that carries what it is, checked before it is reused.

A study that resumes (a sweep's grid points) keeps each finished piece in a file
of its own. The file's Parquet metadata (key ``mc``) holds the piece's *identity*
(whatever the study says names it: its key, index, months, seed, ...) plus its
row count and a checksum of its rows. ``read_piece`` gives the rows back only
when the identity matches the one asked for, the row count is right and the rows
hash to their checksum; otherwise it says why, so the study can recompute the
piece (an empty, truncated, damaged, foreign or misplaced file is never used).
``write_piece`` writes atomically and reads the file back before it takes its
name, so a file under a piece's name always holds that piece's whole rows.

Every piece's identity also holds the arithmetic that made it (``ARITHMETIC``:
``madeby.arithmetic()``, the package version and a digest of the modules that
can change a number), added here when a piece is written. A piece made by other
arithmetic (or written before pieces recorded it) is not reused: the study is
told in one line and recomputes it, unless it asks to keep such pieces
(``stale_ok``; ``mc sweep --reuse-stale``), and then it learns which it kept.

``Interrupted`` is how a study stopped by Ctrl-C says what it kept, and
``FolderLock`` keeps two runs from writing one folder at once and names the run
that holds it (``run_of``), stamped on every file the run seals.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import _validate as v
from .. import files
from . import madeby

ARITHMETIC = "arithmetic"  # the identity field naming the arithmetic that made a piece


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a study: the message says what is kept (whole pieces only)
    and how to go on; the command line prints it and exits 130."""


def content_hash(frame: pd.DataFrame) -> str:
    """sha256 of a table's column names, dtypes and values (row order included)."""
    h = hashlib.sha256(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()


def tag(frame: pd.DataFrame, **what) -> str:
    """The Parquet metadata (key ``mc``) of a result table: what it is (``what``:
    its kind, config hash, months, seed, ...), its row count and its rows' checksum."""
    return json.dumps({**what, "rows": len(frame), "content": content_hash(frame)}, sort_keys=True)


def _read(path: str | Path, identity: dict) -> tuple[pd.DataFrame | None, str, str | None]:
    """``read_piece``'s checks but the arithmetic's: ``(rows, "", made)`` when
    ``path`` holds the whole rows of the piece ``identity`` names (``made``: the
    arithmetic its file records, None when it records none), else ``(None, why, None)``."""
    try:
        table = files.read_parquet(path)
        frame = table.to_pandas()
    except Exception as err:  # pyarrow raises many kinds for a damaged or empty file
        return None, f"cannot be read as Parquet ({type(err).__name__})", None
    raw = (table.schema.metadata or {}).get(b"mc")
    try:
        said = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        said = None
    if not isinstance(said, dict) or not isinstance(said.get("identity"), dict):
        return None, "carries no identity (not written by this version of mc)", None
    for field, want in identity.items():
        if said["identity"].get(field) != want:
            return None, (f"belongs to another piece ({field} is {said['identity'].get(field)!r}, "
                          f"expected {want!r})"), None
    if said.get("rows") != len(frame) or not len(frame):
        return None, f"holds {len(frame)} rows where it says {said.get('rows')!r}", None
    if said.get("content") != content_hash(frame):
        return None, "rows differ from their checksum (damaged)", None
    made = said["identity"].get(ARITHMETIC)
    return frame, "", made if isinstance(made, str) else None


def stale_why(made: str | None) -> str:
    """Why a piece made by arithmetic ``made`` (None: not recorded) is stale, as a phrase."""
    if made is None:
        return f"records no arithmetic (written before mc recorded it; now {madeby.arithmetic()})"
    return f"was made by other arithmetic ({made}, now {madeby.arithmetic()})"


def read_piece(path: str | Path, identity: dict, *, stale_ok: bool = False) -> tuple[pd.DataFrame | None, str]:
    """``(rows, "")`` when ``path`` holds the whole rows of the piece ``identity``
    names, made by this process's arithmetic (by any with ``stale_ok``), else
    ``(None, why)`` (one phrase, for a warning)."""
    frame, why, made = _read(path, identity)
    if frame is not None and made != madeby.arithmetic() and not stale_ok:
        return None, stale_why(made)
    return frame, why


def write_piece(path: str | Path, identity: dict, frame: pd.DataFrame) -> None:
    """A piece's rows, atomically, with ``identity``, the row count and the rows'
    checksum in the Parquet metadata; read back and checked before the file takes
    its name. The identity written holds this process's arithmetic too (``ARITHMETIC``)."""
    identity = {**identity, ARITHMETIC: madeby.arithmetic()}
    meta = json.dumps({"identity": identity, "rows": len(frame), "content": content_hash(frame)}, sort_keys=True)

    def write(tmp: str) -> None:
        files.write_parquet(frame, tmp, meta)
        got, why = read_piece(tmp, identity)
        if got is None:  # pragma: no cover - a Parquet round trip that changed the rows
            raise RuntimeError(f"{path} did not read back as written: {why}")

    files.atomic_write(path, write)


def reusable(path: str | Path, identity: dict, warn: Callable[[str], None], what: str,
             stale: list | None = None) -> pd.DataFrame | None:
    """A piece's rows when its file can be reused; None when it must be computed
    (``warn`` is told why in one line when a file was there but cannot be used). A
    folder or special file where the piece's file belongs is refused (one line).

    A piece made by other arithmetic is recomputed, unless ``stale`` is a list: then
    it is reused and ``stale`` gets the arithmetic its file records (None when it
    records none)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        v.fail("out", str(path), f"is where {what}'s file belongs but is not a regular file; move it away")
    frame, why, made = _read(path, identity)
    if frame is not None and made != madeby.arithmetic():
        if stale is not None:
            stale.append(made)
            return frame
        frame, why = None, stale_why(made)
    if frame is None:
        warn(f"{path}: {why}; recomputing {what}")
    return frame


_HELD: dict[str, "FolderLock"] = {}  # folder (real path) -> the lock this process holds on it


class FolderLock:
    """One writer per output folder: an exclusive lock on ``folder/.lock``, taken
    before anything is written in the folder and held to the end of the run
    (released by the OS if the process dies). A second writer, in this process or
    another, is refused in one line before it writes a byte. The folder is made
    if missing.

    The lock names the run: ``run`` (a fresh random id) is stamped on every file
    the run seals in the folder (``manifest.write_sealed``), so files of two runs
    are told apart when read back (``manifest.verify``). A lock taken again by
    lock held with ``share=True`` (a command holds its folder from its start for
    the study it runs) is the same lock, with the same run, when that study's
    writer takes it again; any other second taker is refused, in this process too.
    """

    def __init__(self, folder: Path, what: str = "run", *, share: bool = False):
        self.share = share
        self.folder = Path(folder)
        self.path = self.folder / ".lock"
        self.what = what
        self.run: str | None = None
        self.fh = None
        self._outer: FolderLock | None = None
        self._depth = 0

    def __enter__(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        self._key = os.path.realpath(self.folder)
        held = _HELD.get(self._key)
        if held is not None and held.share:
            self._outer, self.run = held, held.run
            held._depth += 1
            return self
        fh = open(self.path, "a+")  # never truncated before it is held: the holder's line stays readable
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        except BlockingIOError:
            fh.seek(0)
            holder = " ".join(fh.read(200).split())
            fh.close()
            v.fail("out", str(self.folder), f"another {self.what} is writing to this folder"
                   + (f" ({holder})" if holder else "") + "; nothing was written: wait for it, or give another "
                   "folder")
        self.fh, self.run = fh, uuid.uuid4().hex
        fh.seek(0)
        fh.truncate()
        fh.write(f"run {self.run}, process {os.getpid()}, {self.what}\n")
        fh.flush()
        _HELD[self._key] = self
        return self

    def __exit__(self, *exc):
        if self._outer is not None:
            self._outer._depth -= 1
            return False
        _HELD.pop(self._key, None)
        self.fh.close()
        return False


def run_of(folder: str | Path) -> str | None:
    """The run id of the lock this process holds on ``folder`` (None: none held)."""
    held = _HELD.get(os.path.realpath(folder))
    return held.run if held is not None else None


__all__ = ["ARITHMETIC", "FolderLock", "Interrupted", "content_hash", "read_piece", "reusable", "run_of", "stale_why",
           "tag", "write_piece"]
