"""The project's scripts (experiments/, figures/) as modules, for the tests that
run a study or draw a figure: each folder is on ``sys.path`` only while its module
is imported (a study imports its neighbours, e.g. ``_study``, at its top)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(name: str, folder: str = "experiments"):
    """The module ``folder/name.py`` of the repository, imported once."""
    sys.path.insert(0, str(ROOT / folder))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ROOT / folder))
