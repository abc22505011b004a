"""Input paths: a file that exists, is regular and of sane size, or a one-line error."""

from __future__ import annotations

from pathlib import Path

from .. import _validate as v


MAX_INPUT_BYTES = 64 << 20  # no scenario, sweep or trace file comes near this


def input_file(path: str | Path, what: str, *, limit: int = MAX_INPUT_BYTES) -> Path:
    """An input file that exists and is a regular file of at most ``limit`` bytes
    (default 64 MiB; request logs allow more); a missing file raises
    FileNotFoundError, anything else a one-line ``ParamError``."""
    if not isinstance(path, (str, Path)) or not str(path):
        v.fail(what, path, "must be the path of a file")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    if path.is_dir():
        v.fail(what, str(path), "is a folder, not a file")
    if not path.is_file():
        v.fail(what, str(path), "is not a regular file")
    if path.stat().st_size > limit:
        size = f"{limit >> 30} GiB" if limit >= 1 << 30 and not limit % (1 << 30) else f"{limit >> 20} MiB"
        v.fail(what, str(path), f"is larger than {size}")
    return path
