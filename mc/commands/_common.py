"""Helpers shared by the subcommands: loading scenarios, writing files safely."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .. import _validate as v
from .. import presets
from ..scenario import Scenario, load


def scenario_arg(spec: str) -> Scenario:
    """A preset name or a path to a scenario TOML file."""
    if spec.endswith(".toml") or os.sep in spec or Path(spec).exists():
        return load(spec)
    if spec not in presets.names():
        v.fail("scenario", spec, "must be a preset (" + ", ".join(presets.names()) + ") or a .toml file")
    return presets.get(spec)


def add_sampling(p: argparse.ArgumentParser, n: int) -> None:
    p.add_argument("--n", type=int, default=n, help=f"fleet-months to simulate (default {n:,})")
    p.add_argument("--seed", type=int, default=0, help="seed; month i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def atomic_write(path: str | Path, write) -> None:
    """Write a file through a temporary sibling and rename it into place, so an
    interrupted run never leaves a half-written file. ``write(tmp_path)``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=float))
