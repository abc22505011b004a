"""Validation where parameters enter: one-line errors naming field, value and range."""

from __future__ import annotations

import math
from collections.abc import Mapping, Set
from contextlib import contextmanager
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
    raise ParamError(f"{field}={one_line(value)}: {allowed}")


def one_line(value: Any) -> str:
    """``repr(value)`` on one line (a NumPy array's repr spans several)."""
    text = repr(value)
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def exception_line(e: BaseException, width: int = 300) -> str:
    """The first line of an exception's message, whitespace collapsed (its type's
    name when it has none)."""
    text = str(e).strip().splitlines()
    return " ".join(text[0].split())[:width] if text else type(e).__name__


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
    """``value`` when it is one of the names ``options`` (anything else, a list or
    an array included, is a one-line error listing them)."""
    options = list(options)
    if not isinstance(value, str) or value not in options:
        fail(field, value, "must be one of " + ", ".join(options))
    return value


def instance(name: str, value: Any, kind: type | tuple, what: str) -> Any:
    """``value`` when it is a ``kind``; else a ``TypeError`` naming the argument:
    ``name must be what, not <type>``."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {what}, not {type(value).__name__}")
    return value


def listed(field: str, value: Any) -> list:
    """A list or tuple's items (a grid's values, a list of names); anything else,
    a string included, is a one-line error."""
    if not isinstance(value, (list, tuple)):
        fail(field, value, "must be a list")
    return list(value)


def flag(field: str, value: Any) -> bool:
    """A true/false switch: ``bool`` (or a NumPy bool), nothing else."""
    if not isinstance(value, bool) and not _is_np_bool(value):
        fail(field, value, "must be true or false")
    return bool(value)


def mapping(field: str, value: Any, what: str = "a table (dict)") -> Any:
    """``value`` when it is a mapping (a dict or a TOML table); else a one-line error."""
    if not isinstance(value, Mapping):
        fail(field, value, f"must be {what}")
    return value


def progress(field: str, value: Any) -> Any:
    """A run's ``progress``: True, False, None (a bar when stderr is a terminal) or
    a bar already open (anything with ``update``, as a tqdm bar, that is not a
    container: a dict has ``update`` too)."""
    if value is None or isinstance(value, bool) or _is_np_bool(value):
        return value
    if callable(getattr(value, "update", None)) and not isinstance(value, (Mapping, Set, list, tuple, str, bytes)):
        return value
    fail(field, value, "must be true, false, None (a bar when stderr is a terminal) or an open progress bar")


def field_of(err: ParamError) -> str:
    """The field a one-line ``ParamError`` names (its text before the first ``=``)."""
    return str(err).partition("=")[0]


@contextmanager
def renamed(names: Mapping[str, str] | None = None, prefix: str | None = None):
    """ParamErrors raised inside name the field as the user wrote it: a field in
    ``names`` takes its name there, any other gets ``prefix`` in front (a table's
    ``n`` becomes ``pool.8b@h100.n``), so an inner check's own name (``cards``)
    never reaches the user in place of theirs (``pool.8b@h100.count``)."""
    try:
        yield
    except ParamError as err:
        field, _, rest = str(err).partition("=")
        new = (names or {}).get(field)
        if new is None and prefix and not field.startswith((prefix, "-")):
            new = prefix + field
        if new is None or new == field:
            raise
        raise ParamError(f"{new}={rest}") from None


def items(field: str, text: Any, example: str) -> list[str]:
    """A comma-separated list flag's items, each stripped: an empty list, an empty
    item (``8,,16``, ``8,``) or a value that is not text is refused in one line
    naming ``field`` (``example``: a list it takes, for the message)."""
    if not isinstance(text, str) or not text.strip():
        fail(field, text, f"must be a comma-separated list, e.g. {example}; it is empty")
    got = [item.strip() for item in text.split(",")]
    if not all(got):
        fail(field, text, f"must be a comma-separated list with no empty item, e.g. {example}")
    return got


def pairs(field: str, text: Any, example: str) -> list[tuple[str, str]]:
    """``KEY=VALUE,KEY=VALUE`` as ``[(key, value)]``, keys and values stripped: an
    empty list or item, an item with no ``=`` or an empty key or value, and a key
    given twice are refused in one line naming ``field``."""
    out: list[tuple[str, str]] = []
    for item in items(field, text, example):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            fail(field, text, f"must be KEY=VALUE pairs separated by commas, e.g. {example}; {item!r} is not one")
        if key in (k for k, _ in out):
            fail(field, text, f"gives {key} twice: give each once")
        out.append((key, value))
    return out


def _is_np_number(value: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, np.number) and not isinstance(value, (np.complexfloating, np.bool_))


def _is_np_bool(value: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, np.bool_)


def _is_np_integer(value: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, np.integer)
