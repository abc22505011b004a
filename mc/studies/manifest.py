"""The one manifest writer: what made a result, so any figure can be regenerated.

A manifest names the configuration (and its hash), the seed and N, how seeds
were used, the versions of everything that ran, the backend and its devices,
the git commit, and when it was made.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import math
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ..files import write_text

CRN = "common random numbers: every point uses the seed; month i uses fold_in(key(seed), i)"


def plain(x: Any) -> Any:
    """JSON-ready data: NumPy arrays and scalars as lists and numbers."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [plain(y) for y in x]
    if isinstance(x, dict):
        return {k: plain(y) for k, y in x.items()}
    return x


def _json_default(x):
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    raise TypeError(f"not JSON data: {type(x).__name__}")


def config_hash(data: Any) -> str:
    """sha256 of the canonical JSON of ``data`` (sorted keys, no spaces)."""
    text = json.dumps(plain(data), sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def versions() -> dict[str, str | None]:
    out = {"python": platform.python_version()}
    for pkg in ("mc", "jax", "jaxlib", "numpy", "pandas", "pyarrow"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


def git_commit() -> dict | None:
    """The commit of the package's checkout and whether it has local changes."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head, "dirty": bool(dirty)}


def provenance(**extra) -> dict:
    """What ran, for every output: ``extra`` fields (seed, n, wall time, ...) as
    given, then the versions, backend, devices, git commit and the time."""
    import jax

    return {
        **plain(extra),
        "versions": versions(),
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "git": git_commit(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def build(config: dict, *, seed: int, n: int, seeding: str = CRN, **extra) -> dict:
    """A manifest for a result made from ``config`` (plain data) with ``seed`` and
    ``n`` months per point; ``extra`` fields (points, wall time, ...) go in as given."""
    return {"config": plain(config), "config_hash": config_hash(config),
            **provenance(seed=seed, n=n, seeding=seeding, **extra)}


def to_json(manifest: dict) -> str:
    return json.dumps(manifest, indent=2, default=_json_default) + "\n"


def write(folder: str | Path, manifest: dict) -> Path:
    """``folder/manifest.json``, written atomically."""
    path = Path(folder) / "manifest.json"
    write_text(path, to_json(manifest))
    return path


def beside(path: str | Path) -> Path:
    """The manifest of one output file: ``months.parquet`` -> ``months.manifest.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".manifest.json")


def write_beside(path: str | Path, manifest: dict) -> Path:
    """The manifest of one output file, written atomically beside it (``beside``)."""
    out = beside(path)
    write_text(out, to_json(manifest))
    return out


SEEDED = "month i uses fold_in(key(seed), i)"

__all__ = ["CRN", "SEEDED", "plain", "config_hash", "versions", "git_commit", "provenance", "build", "to_json",
           "write", "beside", "write_beside"]
