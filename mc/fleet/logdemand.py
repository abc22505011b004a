"""Demand from a request log (SPEC §1.7): the hourly profile ``D_h`` and the
busiest minute within each hour. Pure NumPy, on the host, in float64.

The profile is the log's answer tokens arriving in each hour divided by the
seconds of that hour the log covers (a card's rated rate counts generated
tokens). How the log's hours become the month's 730 follows its span:

- ``"month"`` (spans at least 730 h): month hour ``h`` is the log's hour ``h``;
  arrivals past hour 729 are not used.
- ``"week"`` (at least 168 h): repeated by hour of the week. Month hour ``h``
  is slot ``h mod 168``, the mean over every log hour in that slot.
- ``"day"`` (at least 24 h): the same by hour of the day (slot ``h mod 24``).
- ``"mean"`` (shorter): the log's mean, ``Σ answer / span``, every hour (with a
  warning saying so).

Alignment. Without a wall clock (``log.start`` None) hours are counted from
the first arrival: log hour ``a`` is ``[3600 a, 3600 (a + 1))`` s of log time,
and month hour 0 is the log's first hour. With a clock the slots follow it:
for ``"week"`` month hour 0 is Monday 00:00 (so days 5 and 6 of each month
week are Saturday and Sunday, as in the ``weekly`` shape), for ``"day"`` it is
00:00, and for ``"month"`` it is the clock hour of the first arrival.

Edges and averaging. The log covers the closed interval from its first arrival
to its last; an hour it covers in part (at either edge) counts only the
covered seconds, so an edge hour is not under-counted. A slot covered several
times holds the log's rate over all its covered seconds, ``Σ tokens / Σ
covered s`` (for whole hours: the mean of their rates); a tiling log covers
every slot for at least one whole hour's worth of seconds. An arrival exactly
at the end of the log's last hour counts in that hour, not the next.

What a run reports of such a demand: ``log_demand`` (its figures) and
``demand_line`` (one line of text).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..serving.traffic import RequestLog
from ..units import HOURS

HOUR = 3600.0
MINUTE = 60.0
PERIOD = {"week": 168, "day": 24}
RULES = ("month", "week", "day", "mean")


def rule(span: float, hours: int = HOURS) -> str:
    """How a log of ``span`` seconds fills ``hours`` hours: ``"month"``,
    ``"week"``, ``"day"`` or ``"mean"`` (see the module's docstring)."""
    if span >= hours * HOUR:
        return "month"
    if span >= PERIOD["week"] * HOUR:
        return "week"
    if span >= PERIOD["day"] * HOUR:
        return "day"
    return "mean"


def clock_offset(log: RequestLog, how: str) -> float:
    """Seconds from month hour 0's origin to the log's first arrival: 0 without a
    clock; with one, since the Monday 00:00 at or before it (``"week"``), since
    00:00 (``"day"``), since the top of its hour (``"month"``)."""
    if log.start is None or how == "mean":
        return 0.0
    start = np.datetime64(log.start, "ns")
    if how == "week":
        day = start.astype("datetime64[D]")
        weekday = (int(day.astype(np.int64)) + 3) % 7  # 1970-01-01 was a Thursday; Monday is 0
        origin = day - np.timedelta64(weekday, "D")
    elif how == "day":
        origin = start.astype("datetime64[D]")
    else:
        origin = start.astype("datetime64[h]")
    return float((start - origin.astype("datetime64[ns]")).astype(np.int64)) / 1e9


def hourly_profile(log: RequestLog, hours: int = HOURS) -> tuple[np.ndarray, str]:
    """The log's hourly demand over ``hours`` hours.

    Args:
        log: a ``RequestLog``.
        hours: hours of the month (730).

    Returns:
        ``(profile, how)``: (hours,) float64 tok/s of answer tokens, and the rule
        used (``rule(log.span)``). A ``"mean"`` log warns, naming the log and its
        span.
    """
    if not isinstance(log, RequestLog):
        raise TypeError(f"log must be a RequestLog, not {type(log).__name__}")
    span, answer = log.span, log.answer.astype(np.float64)
    how = rule(span, hours)
    if how == "mean":
        mean = float(answer.sum()) / span
        warnings.warn(f"demand.log: {log.source} spans {span / HOUR:.3g} h, less than a day, so its mean "
                      f"({mean:,.6g} tok/s of answer tokens) is used for every hour of the month", stacklevel=2)
        return np.full(hours, mean), how
    offset = clock_offset(log, how)
    at = offset + log.time  # s since the origin of month hour 0
    end = offset + span
    last = max(int(np.ceil(end / HOUR)) - 1, int(offset // HOUR))
    index = np.minimum(np.floor(at / HOUR).astype(np.int64), last)
    if how == "month":  # only the month's hours are used
        keep = index < hours
        index, answer, last = index[keep], answer[keep], hours - 1
    tokens = np.bincount(index, weights=answer, minlength=last + 1)
    lo = np.arange(last + 1) * HOUR
    covered = np.clip(np.minimum(lo + HOUR, end) - np.maximum(lo, offset), 0.0, HOUR)
    if how == "month":
        return tokens / covered, how
    period = PERIOD[how]
    slot = np.arange(last + 1) % period
    rate = np.bincount(slot, weights=tokens, minlength=period) / np.bincount(slot, weights=covered,
                                                                              minlength=period)
    return rate[np.arange(hours) % period], how


def minute_peak(log: RequestLog) -> dict:
    """The busiest minute's peak-to-mean within each hour of the log.

    Hours and minutes are counted from the first arrival (``[3600 a, 3600 (a +
    1))`` and 60 s within it). For each whole hour the log covers that has an
    arrival, the ratio is the answer tokens of its busiest minute × 60 over the
    hour's answer tokens; a log shorter than an hour is measured as one window
    of its span (the busiest minute over its mean minute, ``tokens · 60 / span``).

    Returns:
        ``{"median", "max"}``: the ratio's median and max over those hours;
        ``"hours"``: how many were measured; ``"window_s"``: the seconds each
        spans (3600, or the span of a log shorter than an hour).
    """
    if not isinstance(log, RequestLog):
        raise TypeError(f"log must be a RequestLog, not {type(log).__name__}")
    span, t, answer = log.span, log.time, log.answer.astype(np.float64)
    whole = int(span // HOUR)
    window = HOUR if whole else span
    if whole:
        keep = t < whole * HOUR
        t, answer = t[keep], answer[keep]
    minute = np.floor(t / MINUTE).astype(np.int64)
    hour = minute // 60 if whole else np.zeros_like(minute)
    # ``t`` is sorted, so minutes and hours come in runs: sum each run.
    starts = np.flatnonzero(np.r_[True, minute[1:] != minute[:-1]])
    per_minute, minute_hour = np.add.reduceat(answer, starts), hour[starts]
    first = np.flatnonzero(np.r_[True, minute_hour[1:] != minute_hour[:-1]])
    busiest = np.maximum.reduceat(per_minute, first)
    total = np.add.reduceat(per_minute, first)
    ratio = busiest * (window / MINUTE) / total
    return {"median": float(np.median(ratio)), "max": float(ratio.max()), "hours": int(ratio.size),
            "window_s": float(window)}


__all__ = ["RULES", "rule", "clock_offset", "hourly_profile", "minute_peak"]


_TILING = {
    "month": "its first 730 h used hour by hour{clock}",
    "week": "repeated by hour of the week{clock}",
    "day": "repeated by hour of the day{clock}",
    "mean": "used as its mean",
}
_CLOCK = {"month": " from its first clock hour", "week": " from Monday 00:00 of its clock",
          "day": " from 00:00 of its clock"}


def log_demand(demand) -> dict | None:
    """What is reported of a log demand (None for other shapes): the log's
    source, rows, span and sha256, how it fills the month, the hourly profile's
    mean and peak (tok/s, as the month sees them) and its busiest minute."""
    if demand.shape != "log":
        return None
    log, hourly = demand.log, np.asarray(demand.trace, np.float64)
    how = rule(log.span)
    return {"source": log.source, "rows": log.rows, "span_h": log.span / 3600, "sha256": log.sha256,
            "tiling": how, "clock": log.start is not None and how != "mean", "scale": demand.scale,
            "level": demand.level, "mean": float(hourly.mean()), "peak": float(hourly.max()),
            "minute_peak": demand.minute_peak()}


def demand_line(demand) -> str | None:
    """One line for a log demand (None for other shapes), e.g. ``demand from log
    F.csv (19,365 requests over 0.973 h, used as its mean): hourly mean 1,168
    tok/s, peak 1,168 tok/s; busiest minute 1.28x its hour's mean (median),
    1.28x (max) over its one 0.973 h window``."""
    info = log_demand(demand)
    if info is None:
        return None
    how = _TILING[info["tiling"]].format(clock=_CLOCK.get(info["tiling"], "") if info["clock"] else
                                         " from its first arrival")
    if info["scale"] is not None:
        how += f", times {info['scale']:g}"
    elif info["level"] is not None:
        how += f", scaled to mean {info['level']:,.6g} tok/s"
    m = info["minute_peak"]
    over = (f"over {m['hours']:,} whole hour{'s' if m['hours'] != 1 else ''}" if m["window_s"] >= 3600
            else f"over its one {m['window_s'] / 3600:.3g} h window")
    return (f"demand from log {info['source']} ({info['rows']:,} requests over {info['span_h']:,.3g} h, {how}): "
            f"hourly mean {info['mean']:,.0f} tok/s, peak {info['peak']:,.0f} tok/s; busiest minute "
            f"{m['median']:.3g}x its hour's mean (median), {m['max']:.3g}x (max) {over}")
