"""The one manifest writer: what made a result, so any figure can be regenerated.

A manifest names the configuration (and its hash), the seed and N, how seeds
were used, the versions of everything that ran, the arithmetic that made it
(``arithmetic``: ``madeby.arithmetic()``, the package version and a digest of the
modules that can change a number), where it ran (``machine``: ``where.machine()``,
the CPU model and arithmetic features, jaxlib and ``XLA_FLAGS``; a record only, never
a reason to recompute), the backend and its devices, the git commit, and when it
was made.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import math
import platform
import subprocess
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from .. import _json
from .. import _validate as v
from ..files import digest, write_table, write_text
from ..fleet import policies
from . import madeby, store, where

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


def provenance(*, backend: bool = True, **extra) -> dict:
    """What ran, for every output: ``extra`` fields (seed, n, wall time, ...) as
    given, the eviction rules loaded from users' files (origin, path, sha256) when
    any was, then the versions, the arithmetic (``madeby.arithmetic()``), the
    machine (``where.machine()``), backend, devices, git commit and the time.
    ``backend=False``: for host arithmetic that starts no device backend (the
    backend and devices are then null)."""
    if backend:
        import jax

    rules = policies.loaded()
    return {
        **plain(extra),
        **({"rules": rules} if rules else {}),
        "versions": versions(),
        "arithmetic": madeby.arithmetic(),
        "machine": where.machine(),
        "backend": jax.default_backend() if backend else None,
        "devices": [str(d) for d in jax.devices()] if backend else None,
        "git": git_commit(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def build(config: dict, *, seed: int, n: int, seeding: str = CRN, **extra) -> dict:
    """A manifest for a result made from ``config`` (plain data) with ``seed`` and
    ``n`` months per point; ``extra`` fields (points, wall time, ...) go in as given."""
    return {"config": plain(config), "config_hash": config_hash(config),
            **provenance(seed=seed, n=n, seeding=seeding, **extra)}


def to_json(manifest: dict) -> str:
    """Strict JSON (``mc._json``): a figure that is undefined or not finite is ``null``."""
    return _json.dumps(manifest, indent=2) + "\n"


def write(folder: str | Path, manifest: dict) -> Path:
    """``folder/manifest.json``, written atomically (a manifest that seals nothing;
    a result's files are sealed with ``write_sealed``)."""
    path = Path(folder) / "manifest.json"
    write_text(path, to_json(manifest))
    return path


def beside(path: str | Path) -> Path:
    """The manifest of one output file: ``months.parquet`` -> ``months.parquet.manifest.json``
    (the whole name, so ``months.csv`` and ``months.parquet`` each keep their own)."""
    path = Path(path)
    return path.with_name(path.name + ".manifest.json")


# -- sealed results ---------------------------------------------------------------------
#
# A result folder (or file) is whole only when its manifest says so: the manifest is
# written last and lists every output with its size and sha256, and it is removed
# before any output is rewritten. An interrupt at any moment therefore leaves either
# the last whole result, or outputs with no manifest (refused when read), never a
# manifest over outputs it does not describe.

def unseal(manifest_path: str | Path) -> None:
    """Remove a result's manifest before its outputs are rewritten (so no manifest
    ever vouches for outputs it did not see written)."""
    path = Path(manifest_path)
    if path.is_file() or path.is_symlink():
        path.unlink()


def seal(manifest_path: str | Path, manifest: dict, outputs) -> Path:
    """Write ``manifest`` last, with ``"outputs"``: each output file (in the
    manifest's folder) by name, with its size and sha256; ``verify`` checks them.
    ``outputs``: the files' paths, or ``{path: digest}`` with the digests their
    writers returned (``files.atomic_write``), so the seal vouches for the bytes
    this process wrote even if another writer replaced a file since."""
    path = Path(manifest_path)
    given = outputs if isinstance(outputs, dict) else {out: None for out in outputs}
    listed = {}
    for out, made in given.items():
        out = Path(out)
        if out.parent.resolve() != path.parent.resolve():
            raise ValueError(f"output {out} is not in the manifest's folder {path.parent}")
        listed[out.name] = made or digest(out)
    write_text(path, to_json({**manifest, **({"outputs": listed} if listed else {})}))
    return path


def _stamped(meta: str | None, run: str) -> str | None:
    """A table's Parquet metadata (JSON text) with the run's id added (``"run"``)."""
    if meta is None:
        return None
    try:
        data = json.loads(meta)
    except ValueError:
        return meta
    return _json.dumps({**data, "run": run}, indent=None, sort_keys=True) if isinstance(data, dict) else meta


def run_id(folder: str | Path) -> str:
    """The identity of the run writing into ``folder``: its lock's (``store.FolderLock``),
    else a fresh one."""
    return store.run_of(folder) or uuid.uuid4().hex


def write_sealed(manifest_path: str | Path, manifest: dict, tables: dict) -> Path:
    """A whole result in the one safe order: remove its manifest (``unseal``), write
    each table atomically (``tables``: ``{path: (frame, parquet metadata or None)}``,
    in the format each path's extension names), then write the manifest sealing
    them with the digests their writes returned (``seal``).

    Every file carries the run's identity (``"run"``: the id of the folder's lock
    this process holds, ``store.FolderLock``, else a fresh one), in the manifest
    and in each Parquet table's metadata, so ``verify`` tells one run's files from
    another's."""
    run = run_id(Path(manifest_path).parent)
    unseal(manifest_path)
    made = {Path(path): write_table(frame, path, metadata=_stamped(meta, run)) for path, (frame, meta) in tables.items()}
    return seal(manifest_path, {**manifest, "run": run}, made)


def _run_of_table(path: Path) -> str | None:
    """The run id a Parquet table's metadata carries (None: none, or not Parquet)."""
    if path.suffix.lower() != ".parquet":
        return None
    try:
        import pyarrow.parquet as pq

        with open(path, "rb") as fh:
            raw = (pq.read_schema(fh).metadata or {}).get(b"mc")
        said = json.loads(raw) if raw else None
    except Exception:  # a damaged table: the digest check names it
        return None
    run = said.get("run") if isinstance(said, dict) else None
    return run if isinstance(run, str) else None


def verify(manifest_path: str | Path) -> dict:
    """A sealed result's manifest, after checking every output it lists is there with
    the size and sha256 it was written with.

    Raises:
        ParamError: one line naming the file that is missing, damaged or changed.
    """
    path = Path(manifest_path)
    if not path.is_file():
        v.fail("result", str(path.parent), f"has no manifest {path.name}: it was not finished (an interrupted "
               "run writes no manifest); run it again")
    try:
        made = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        v.fail("manifest", str(path), f"cannot be read as JSON ({type(err).__name__})")
    listed = made.get("outputs") if isinstance(made, dict) else None
    if not isinstance(listed, dict) or not listed:
        v.fail("manifest", str(path), "lists no outputs with their checksums (written by an older mc, or not "
               "by mc); run the result again")
    run = made.get("run")
    for name, want in listed.items():
        out = path.parent / name
        if not out.is_file():
            v.fail("result", str(out), f"is missing or not a file, but {path.name} lists it")
        theirs = _run_of_table(out)
        if isinstance(run, str) and theirs is not None and theirs != run:
            v.fail("result", str(path.parent), f"mixes two runs' files: {name} was written by run {theirs} and "
                   f"{path.name} by run {run}; run it again into an empty folder")
        if digest(out) != want:
            v.fail("result", str(out), f"differs from what {path.name} records (size or sha256): damaged or "
                   "changed since it was written")
    return made


SEEDED = "month i uses fold_in(key(seed), i)"

__all__ = ["CRN", "SEEDED", "plain", "config_hash", "versions", "git_commit", "provenance", "build", "to_json",
           "write", "beside", "seal", "unseal", "verify", "write_sealed", "run_id"]
