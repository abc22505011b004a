"""A request log's columns to numbers (``requestlog``): arrival times, as date-times
or numbers of seconds or milliseconds, and whole numbers of tokens, with a
one-line error naming the first bad row (its line or row) and its value."""

from __future__ import annotations

import warnings
from typing import Callable, NamedTuple

import numpy as np

from .. import _validate as v
from ..serving.traffic import MAX_LOG_TOKENS

MAX_TIME = 1e12  # s, as RequestLog holds them
AZURE_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # 2023-11-16 18:15:46.6805900 (%f takes up to 9 digits)


class Shown(NamedTuple):
    """How a bad row is named: ``where(i)`` (``line N`` or ``row N``), and which
    rows are null (None: every missing value is an empty CSV cell)."""

    where: Callable[[int], str]
    null: np.ndarray | None


def times(src, raw, col, fmt, shown: Shown):
    """float64 s (since the earliest arrival for date-times) and the start (or None)
    of a time column read under ``fmt`` (a ``LogFormat``: its time unit and name)."""
    import pandas as pd

    api = pd.api.types
    if api.is_datetime64_any_dtype(raw.dtype):
        try:
            ns = _utc_ns(raw)
        except (ValueError, OverflowError):
            v.fail(f"{src}: {col}", str(raw.dtype), "must hold date-times from 1678 to 2261 (ns since 1970 in int64)")
        _first_bad(src, raw, col, ns == _NAT, shown, "must be a date-time")
        return _since(ns)
    if api.is_timedelta64_dtype(raw.dtype):
        raw = raw.dt.total_seconds()
    unit = fmt.time
    if unit == "auto":
        unit = "s"
        if not api.is_numeric_dtype(raw.dtype) and not api.is_bool_dtype(raw.dtype):
            given = raw.dropna()
            if len(given) and np.isnan(pd.to_numeric(given.iloc[:1], errors="coerce").to_numpy(float)[0]):
                unit = "datetime"
    if unit == "datetime" and not api.is_numeric_dtype(raw.dtype):
        ns = _parse_datetimes(raw, AZURE_TIME_FORMAT if fmt.name == "azure" else None)
        _first_bad(src, raw, col, ns == _NAT, shown,
                   "must be a date-time, e.g. 2023-11-16 18:15:46.6805900")
        return _since(ns)
    scale = 1e-3 if unit == "ms" else 1.0
    hi = MAX_TIME / scale
    x = _numbers(raw)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(x) | (x < 0) | (x > hi)
    _first_bad(src, raw, col, bad, shown,
               f"must be a number of {'milliseconds' if unit == 'ms' else 'seconds'} in [0, {hi:g}]")
    return x * scale, None


def tokens(src, raw, col, shown: Shown) -> np.ndarray:
    """float64 whole numbers of tokens of a prompt or answer column."""
    x = _numbers(raw)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(x) | (x < 0) | (x > MAX_LOG_TOKENS) | (x != np.floor(x))
    _first_bad(src, raw, col, bad, shown, f"must be a whole number of tokens in [0, {MAX_LOG_TOKENS:,}]")
    return x


_NAT = np.iinfo(np.int64).min


def _numbers(raw) -> np.ndarray:
    """float64 values; NaN where a value is missing, not a number, or true/false."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(raw.dtype):
        return np.full(len(raw), np.nan)
    if pd.api.types.is_numeric_dtype(raw.dtype):
        return raw.to_numpy(dtype=np.float64, na_value=np.nan)
    return pd.to_numeric(raw.astype(str) if raw.dtype == object else raw,  # text: true is no number
                         errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _utc_ns(dates) -> np.ndarray:
    """int64 ns since the epoch (UTC), ``_NAT`` where missing."""
    if getattr(dates.dtype, "tz", None) is not None:
        dates = dates.dt.tz_convert(None)
    return dates.to_numpy(dtype="datetime64[ns]").view(np.int64)


def _parse_datetimes(raw, fmt: str | None) -> np.ndarray:
    """int64 ns (UTC) of date-time text, ``_NAT`` where not one: the layout's format
    first, then ISO 8601, then the format pandas infers from the rest."""
    import pandas as pd

    text = raw.astype(str) if raw.dtype == object else raw  # numbers among text: parsed as text
    given = raw.notna().to_numpy()
    out = np.full(len(raw), _NAT, dtype=np.int64)
    for how in ([fmt] if fmt else []) + ["ISO8601", None]:
        todo = np.flatnonzero(given & (out == _NAT))
        if not todo.size:
            break
        part = text.iloc[todo]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                parsed = pd.to_datetime(part, format=how, errors="coerce", utc=True)
            except (ValueError, TypeError, OverflowError):
                continue
        out[todo] = _utc_ns(parsed)
    return out


def _since(ns: np.ndarray):
    first = int(ns.min())
    return (ns - first) / 1e9, np.datetime64(first, "ns")


def _first_bad(src, raw, col, bad: np.ndarray, at: Shown, allowed: str) -> None:
    """A one-line error for the first row marked ``bad``, naming it and its value."""
    if not bad.any():
        return
    import pandas as pd

    i = int(np.argmax(bad))
    x = raw.iloc[i]
    if at.null is not None:
        null = bool(at.null[i])
    else:
        null = not isinstance(x, str) and pd.api.types.is_scalar(x) and bool(pd.isna(x))
    if null:
        text = "''" if at.null is None else "null"
    elif isinstance(x, str):
        text = repr(x if len(x) <= 60 else x[:57] + "...")
    elif isinstance(x, (bool, np.bool_)):
        text = "true" if x else "false"
    elif isinstance(x, (int, np.integer)) or \
            isinstance(x, (float, np.floating)) and float(x).is_integer() and abs(x) < 1e16:
        text = str(int(x))
    else:
        text = v.one_line(float(x) if isinstance(x, np.floating) else x)
    raise v.ParamError(f"{src}: {at.where(i)} {col}={text}: {allowed}")
