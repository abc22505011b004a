"""The one JSON writer: every JSON mc prints or writes goes through ``dumps``.

Strict JSON has no NaN or Infinity, and strict parsers refuse them. A figure
that is undefined (an inter-token latency when every answer is one token, a
ratio over nothing) or not finite is written as ``null``. NumPy scalars and
arrays (and anything else with ``__array__``, e.g. a JAX array) become plain
numbers and lists; tuples become lists.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def plain(obj: Any) -> Any:
    """``obj`` as JSON data: dicts, lists, strings, finite numbers, booleans and
    ``None`` (for every non-finite float). Anything else is returned as it is,
    so that ``json.dumps`` refuses it."""
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, float):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, int):
        return int(obj)  # an int subclass (an IntEnum) as a plain int
    if isinstance(obj, dict):
        return {_key(k): plain(x) for k, x in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if hasattr(obj, "__array__") and not isinstance(obj, type):
        return plain(np.asarray(obj))
    return obj


def _key(k: Any) -> Any:
    """A dict key as JSON allows it: NumPy scalars as Python ones; a non-finite
    float key as its name (a key cannot be null)."""
    if isinstance(k, np.generic):
        k = k.item()
    if isinstance(k, float) and not math.isfinite(k):
        return repr(k)
    return k


def dumps(obj: Any, indent: int | None = 2, **kw) -> str:
    """Strict JSON text of ``obj`` (see ``plain``). A value ``plain`` leaves
    unconverted raises ``TypeError``; ``allow_nan=False`` makes a leftover NaN
    or infinity a ``ValueError`` rather than invalid JSON."""
    return json.dumps(plain(obj), indent=indent, allow_nan=False, **kw)


__all__ = ["dumps", "plain"]
