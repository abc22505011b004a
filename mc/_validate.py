"""Validation where parameters enter: one-line errors naming field, value and range."""

from __future__ import annotations

import math
from typing import Any, Iterable


INT32_MAX = 2**31 - 1
# What a float32 device holds: finite values up to FLOAT32_MAX; nonzero ones of
# magnitude below FLOAT32_TINY are subnormal, which XLA flushes to zero.
FLOAT32_MAX = 3.4028234663852886e38
FLOAT32_TINY = 2.0**-126


class ParamError(ValueError):
    """A parameter outside its allowed range. The message is one line:
    ``field=value: allowed``."""


def fail(field: str, value: Any, allowed: str) -> None:
    raise ParamError(f"{field}={value!r}: {allowed}")


def number(field: str, value: Any, *, lo: float | None = None, hi: float | None = None,
           lo_open: bool = False, hi_open: bool = False, integer: bool = False) -> float | int:
    """Check a finite real number lies in the interval; return it as float (or int).

    The interval is written in the error exactly as checked, e.g. ``must be in [0, 1)``.
    Integers are at most ``2**31 - 1`` unless ``hi`` says otherwise (the device counts
    in int32); other numbers must be 0 or a normal float32 (the device computes in
    float32); NaN, infinities, complex numbers and booleans are refused.
    """
    given = value
    if integer and hi is None:
        hi = INT32_MAX
    fmt = (lambda x: f"{int(x):,}") if integer else (lambda x: f"{x:g}")
    lo_s = "-inf" if lo is None else fmt(lo)
    hi_s = "inf" if hi is None else fmt(hi)
    allowed = f"must be {'an integer' if integer else 'a number'} in " \
              f"{'(' if lo_open or lo is None else '['}{lo_s}, {hi_s}{')' if hi_open or hi is None else ']'}"
    if isinstance(value, (bool, complex)) or not isinstance(value, (int, float)) and not _is_np_number(value):
        fail(field, given, allowed)
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        fail(field, given, allowed)
    if not math.isfinite(x):
        fail(field, given, allowed)
    if integer:
        if isinstance(value, int) or _is_np_integer(value):
            value = int(value)
        elif x != math.floor(x):
            fail(field, given, allowed)
        else:
            value = int(x)
    else:
        value = x
        if x != 0 and not FLOAT32_TINY <= abs(x) <= FLOAT32_MAX:
            fail(field, given, f"{allowed} that float32 holds (0, or magnitude {FLOAT32_TINY:.4g} to "
                 f"{FLOAT32_MAX:.4g})")
    if lo is not None and (value < lo or (lo_open and value == lo)):
        fail(field, value if not integer else given, allowed)
    if hi is not None and (value > hi or (hi_open and value == hi)):
        fail(field, value if not integer else given, allowed)
    return value


def positive(field: str, value: Any) -> float:
    return number(field, value, lo=0.0, lo_open=True)


def nonneg(field: str, value: Any) -> float:
    return number(field, value, lo=0.0)


def count(field: str, value: Any, *, lo: int = 1, hi: int | None = None) -> int:
    return number(field, value, lo=lo, hi=hi, integer=True)


def choice(field: str, value: Any, options: Iterable[str]) -> str:
    options = list(options)
    if value not in options:
        fail(field, value, "must be one of " + ", ".join(options))
    return value


def _is_np_number(value: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, np.number) and not isinstance(value, (np.complexfloating, np.bool_))


def _is_np_integer(value: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, np.integer)
