"""What arithmetic made a stored result: the package version and a digest of the
source of every module that can change a number.

``arithmetic()`` is ``"<version>+<digest>"``, e.g. ``"0.1.0+3f2a9c0b1d4e5f67"``:
the digest is the first 16 hex digits of the sha256 over every ``.py`` file under
``mc/`` (its path relative to ``mc/`` and its bytes, in sorted path order), less
the layers that cannot change a stored number (``NOT_ARITHMETIC``):

- ``cli/``: the command line (it parses, prints and calls the library);
- text and figures for people: ``fleet/report.py``, ``buy/report.py``,
  ``studies/presets.py``, ``studies/benchreport.py``,
  ``studies/calibrate/_text.py``, ``files/comments.py`` (``mc show``),
  ``files/fielddocs.py`` (fields' units and meanings), ``telemetry/plot.py``
  (``mc fit --figure``);
- the progress bar, ``engine/progress.py``; the process's start and its Ctrl-C,
  ``__main__.py`` and ``_launch.py``;
- the bookkeeping of results: ``studies/store.py``, ``studies/manifest.py``,
  ``studies/where.py`` (where a result ran: a record, not an identity) and this module.

Every other module counts, whether or not a given model uses it: a change to any
of them marks every stored point as made by other arithmetic (recomputed unless
``--reuse-stale`` keeps it). Eviction rules loaded from users' files are not in
the digest: a manifest records them with their sha256 (``manifest.provenance``).
The fingerprint is computed once per process.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from .._version import __version__

PACKAGE = Path(__file__).resolve().parents[1]  # mc/
# Paths relative to mc/ (a folder ends with "/") whose source cannot change a stored number.
NOT_ARITHMETIC = ("cli/", "fleet/report.py", "buy/report.py", "studies/presets.py", "studies/benchreport.py",
                  "studies/calibrate/_text.py", "files/comments.py", "files/fielddocs.py", "telemetry/plot.py",
                  "engine/progress.py", "studies/store.py", "studies/manifest.py", "studies/madeby.py",
                  "studies/where.py", "__main__.py", "_launch.py")
DIGITS = 16  # hex digits of the digest kept


def counted(root: Path | None = None) -> list[str]:
    """The ``.py`` files under ``root`` (default ``PACKAGE``) that the digest covers,
    relative to it, sorted."""
    root = Path(root or PACKAGE)
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    return [n for n in names if not any(n == x or (x.endswith("/") and n.startswith(x)) for x in NOT_ARITHMETIC)]


def digest(root: Path | None = None) -> str:
    """The first ``DIGITS`` hex digits of the sha256 over each counted file's
    relative path and bytes (each length-prefixed), in sorted path order, under
    ``root`` (default ``PACKAGE``)."""
    root = Path(root or PACKAGE)
    h = hashlib.sha256()
    for name in counted(root):
        data = (root / name).read_bytes()
        for part in (name.encode(), data):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()[:DIGITS]


@functools.cache
def arithmetic() -> str:
    """``"<version>+<digest>"`` of this process's package (computed once;
    ``arithmetic.cache_clear()`` forgets it)."""
    return f"{__version__}+{digest()}"


__all__ = ["DIGITS", "NOT_ARITHMETIC", "PACKAGE", "arithmetic", "counted", "digest"]
