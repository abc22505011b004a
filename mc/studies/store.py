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

``Interrupted`` is how a study stopped by Ctrl-C says what it kept, and
``FolderLock`` keeps two runs from writing one folder at once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import _validate as v
from .. import files


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


def read_piece(path: str | Path, identity: dict) -> tuple[pd.DataFrame | None, str]:
    """``(rows, "")`` when ``path`` holds the whole rows of the piece ``identity``
    names, else ``(None, why)`` (one phrase, for a warning)."""
    try:
        table = files.read_parquet(path)
        frame = table.to_pandas()
    except Exception as err:  # pyarrow raises many kinds for a damaged or empty file
        return None, f"cannot be read as Parquet ({type(err).__name__})"
    raw = (table.schema.metadata or {}).get(b"mc")
    try:
        said = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        said = None
    if not isinstance(said, dict) or not isinstance(said.get("identity"), dict):
        return None, "carries no identity (not written by this version of mc)"
    for field, want in identity.items():
        if said["identity"].get(field) != want:
            return None, (f"belongs to another piece ({field} is {said['identity'].get(field)!r}, "
                          f"expected {want!r})")
    if said.get("rows") != len(frame) or not len(frame):
        return None, f"holds {len(frame)} rows where it says {said.get('rows')!r}"
    if said.get("content") != content_hash(frame):
        return None, "rows differ from their checksum (damaged)"
    return frame, ""


def write_piece(path: str | Path, identity: dict, frame: pd.DataFrame) -> None:
    """A piece's rows, atomically, with ``identity``, the row count and the rows'
    checksum in the Parquet metadata; read back and checked before the file takes
    its name."""
    meta = json.dumps({"identity": identity, "rows": len(frame), "content": content_hash(frame)}, sort_keys=True)

    def write(tmp: str) -> None:
        files.write_parquet(frame, tmp, meta)
        got, why = read_piece(tmp, identity)
        if got is None:  # pragma: no cover - a Parquet round trip that changed the rows
            raise RuntimeError(f"{path} did not read back as written: {why}")

    files.atomic_write(path, write)


def reusable(path: str | Path, identity: dict, warn: Callable[[str], None], what: str) -> pd.DataFrame | None:
    """A piece's rows when its file can be reused; None when it must be computed
    (``warn`` is told why when a file was there but cannot be used). A folder or
    special file where the piece's file belongs is refused (one line)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        v.fail("out", str(path), f"is where {what}'s file belongs but is not a regular file; move it away")
    frame, why = read_piece(path, identity)
    if frame is None:
        warn(f"{path}: {why}; recomputing {what}")
    return frame


class FolderLock:
    """An exclusive lock on ``folder/.lock`` for the life of a run (released by the
    OS if the process dies), so two runs never write one folder at once."""

    def __init__(self, folder: Path, what: str = "run"):
        self.path = Path(folder) / ".lock"
        self.what = what

    def __enter__(self):
        self.fh = open(self.path, "w")
        try:
            import fcntl

            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        except BlockingIOError:
            self.fh.close()
            v.fail("out", str(self.path.parent), f"another {self.what} is writing to this folder")
        return self

    def __exit__(self, *exc):
        self.fh.close()


__all__ = ["FolderLock", "Interrupted", "content_hash", "read_piece", "reusable", "tag", "write_piece"]
