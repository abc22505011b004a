"""Reading TOML input files with one-line errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

from . import _validate as v


def read(path: str | Path) -> dict:
    """The tables of a TOML file; a missing file raises FileNotFoundError and
    invalid TOML a one-line ``ParamError`` naming the file."""
    path = Path(path)
    with path.open("rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as err:
            v.fail(str(path), "TOML", f"is not valid TOML ({err})")
