"""Files out: output paths checked before anything runs, atomic writes and digests,
Parquet through Python file objects."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from .. import _validate as v


OUTPUT_FORMATS = (".parquet", ".csv", ".json")
# Every file this process has written (``atomic_write``), in order: what a command
# stopped by Ctrl-C says it wrote.
WRITTEN: list[str] = []


def check_output(path: Any, formats: tuple[str, ...] = OUTPUT_FORMATS, field: str = "out") -> Path:
    """An output file path, checked before anything runs: its extension names a
    format, it is not a folder or a special file, and its folder is one (made if
    missing) under a folder that can be written. Errors are one-line ``ParamError``s
    naming ``field`` (the flag or argument the path came in)."""
    allowed = "must be a file path ending in " + ", ".join(formats)
    if not isinstance(path, (str, Path)) or not str(path).strip():
        v.fail(field, path, allowed)
    _check_name(path, field)
    path = Path(path)
    if path.suffix.lower() not in formats:
        v.fail(field, str(path), allowed)
    if path.exists() and not path.is_file():
        v.fail(field, str(path), "exists and is not a regular file")
    _check_folder(_existing(path.parent), str(path), field)
    return path


def _check_name(path: Any, field: str = "out") -> None:
    """A name the operating system can be given: no NUL, and nothing its file-system
    encoding cannot write (bytes that are not UTF-8, which Python holds as surrogate
    escapes, go back as the same bytes)."""
    if "\x00" in str(path):
        v.fail(field, str(path), "must not hold a NUL character")
    try:
        os.fsencode(str(path))
    except UnicodeError:
        v.fail(field, str(path), f"cannot be written as a file name in this system's encoding "
               f"({sys.getfilesystemencoding()})")


def _existing(folder: Path) -> Path:
    """The nearest folder (or file) of ``folder``'s ancestry that exists."""
    while str(folder) and not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_output_folder(path: Any) -> Path:
    """An output folder: absent (it will be made) or a folder, under a writable one."""
    if not isinstance(path, (str, Path)) or not str(path).strip():
        v.fail("out", path, "must be a folder path")
    _check_name(path)
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            v.fail("out", str(path), "exists and is not a folder")
        _check_folder(path, str(path))
        return path
    _check_folder(_existing(path.parent), str(path))
    return path


def _check_folder(folder: Path, shown: str, field: str = "out") -> None:
    folder = folder if str(folder) else Path(".")
    if not folder.exists():
        v.fail(field, shown, f"is in a folder that does not exist ({folder})")
    if not folder.is_dir():
        v.fail(field, shown, f"is inside a file, not a folder ({folder})")
    if not os.access(folder, os.W_OK | os.X_OK):
        v.fail(field, shown, f"is in a folder that cannot be written ({folder})")


def digest(path: str | Path) -> dict:
    """``{"bytes", "sha256"}`` of a file's contents."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return {"bytes": size, "sha256": h.hexdigest()}


def atomic_write(path: str | Path, write: Callable[[str], Any]) -> dict:
    """Write a file through a temporary sibling, flush it to disk and rename it into
    place, so an interrupted run (or a power cut) never leaves a half-written file.
    ``write(tmp_path)``. Never replaces anything but a regular file; the file gets
    the usual permissions (0666 less the umask). Returns the ``digest`` of what was
    written (taken before the rename: a manifest that seals it vouches for these
    bytes, not for whatever another writer may put there later)."""
    path = Path(path)
    if path.exists() and not path.is_file():
        v.fail("out", str(path), "exists and is not a regular file")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        made = digest(tmp)
        os.replace(tmp, path)
        WRITTEN.append(str(path))
        _fsync_folder(path.parent)
        return made
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - folders that cannot be opened (not POSIX)
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems without directory fsync
        pass
    finally:
        os.close(fd)


def write_parquet(data, file: str | Path, metadata: str | None = None) -> None:
    """A table (pandas or pyarrow) as Parquet at ``file`` (not atomic: ``atomic_write``
    gives it a temporary path), with ``metadata`` text under the schema key ``mc``.
    Written through a Python file: pyarrow's own paths must be UTF-8, while the
    operating system takes any bytes (a name that is not UTF-8 is kept)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
    if metadata is not None:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"mc": metadata.encode()})
    with open(file, "wb") as fh:
        pq.write_table(table, fh)


def read_parquet(path: str | Path):
    """A Parquet file as a pyarrow Table (its schema metadata included), read
    through a Python file so any name the operating system holds can be read."""
    import pyarrow.parquet as pq

    with open(path, "rb") as fh:
        return pq.read_table(fh)


def write_table(frame, path: str | Path, metadata: str | None = None) -> dict:
    """A table written atomically in the format its extension names (``.parquet``,
    ``.csv`` or ``.json``: records, one object a row). ``metadata`` (text, e.g. a
    manifest's JSON) goes into a parquet file's schema metadata under ``mc``.
    Returns the written file's ``digest``."""
    path = check_output(path)
    ext = path.suffix.lower()
    if ext == ".parquet":
        return atomic_write(path, lambda tmp: write_parquet(frame, tmp, metadata))
    if ext == ".csv":
        return atomic_write(path, lambda tmp: frame.to_csv(tmp, index=False))
    return atomic_write(path, lambda tmp: frame.to_json(tmp, orient="records", lines=False, indent=1))


def write_text(path: str | Path, text: str) -> dict:
    """``atomic_write`` of a text file; returns its ``digest``."""
    def write(tmp):
        with open(tmp, "w") as fh:
            fh.write(text)

    return atomic_write(path, write)
