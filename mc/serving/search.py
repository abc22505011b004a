"""The rate search (SPEC §7 "SLO rate", §9's pool): the highest rate at which a
percentile meets a bound with a target probability over replications, found
without assuming that a replication's percentile is monotone in the rate.

What it takes is general: a function ``quantiles(rate)`` giving each replication's
percentile at ``rate``, (K,) with the same draws at every rate. What it does:

1. **A fixed grid.** Rates are tried only at ``start · 2^(k/G)`` for whole ``k``,
   ``G = ceil(ln 2 / ln(1 + rel_tol))`` steps per doubling: the rates tried depend
   on the inputs, never on a result falling one side of a line. The grid is walked
   by doublings from ``start`` until every replication passes below and every one
   fails above (at most 16 each way), and every doubling whose ends are not all
   settled alike is bisected down to single steps.
2. **Each replication's own crossing.** A replication's pass at rate ``x`` (log
   scale) is smoothed over a band of ``±BAND`` in log percentile,
   ``π = clip(1/2 − log(q / bound) / (2·BAND), 0, 1)``, with ``log q`` interpolated
   linearly in log rate between the rates tried. Its crossing is ``x_min`` plus the
   length of log rate over which it passes, ``∫ π dx`` over the rates tried: for a
   path that rises through the bound once this is where it crosses; for a path
   that dips back (a batcher's percentile is monotone in the rate in law, not path
   by path) every stretch it passes counts for its length. It is continuous in
   every percentile: one percentile moving by ``δ`` in log moves it by at most
   ``δ · step / (2·BAND)``.
3. **The rate.** The pass probability at ``x`` is the share of replications whose
   crossing is above ``x``; the rate is where it falls to ``share``, the
   ``1 − share`` quantile of the crossings by the Harrell–Davis estimator (every
   crossing weighted by a Beta(p(K+1), (1−p)(K+1)) density over its rank, so no
   single replication decides it), with a distribution-free 95% interval from
   the order statistics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import _validate as v
from ..engine import Z95

BAND = 0.05  # half-width of the smoothed pass, in log percentile (about ±5%)
MAX_DOUBLINGS = 16


@dataclass(frozen=True)
class Crossing:
    """What the search found. ``rate``: the highest rate meeting the bound with
    probability ``share`` (units of ``start``); ``lo``, ``hi``: its 95% interval;
    ``crossings``: (K,) each replication's own crossing rate; ``tried``: one row a
    rate tried, ascending (``rate``, ``share`` the smoothed share passing,
    ``quantile`` the median percentile, ``meets``: ``share`` reached)."""

    rate: float
    lo: float
    hi: float
    crossings: np.ndarray = field(repr=False)
    tried: list[dict] = field(repr=False)


def steps_per_doubling(rel_tol: float) -> int:
    """Grid steps per doubling of the rate: the fewest whose ratio is at most
    ``1 + rel_tol``."""
    return max(1, math.ceil(math.log(2.0) / math.log1p(rel_tol) - 1e-9))


def passing(z: np.ndarray) -> np.ndarray:
    """The smoothed pass of log percentile over the bound ``z`` (any shape)."""
    return np.clip(0.5 - z / (2 * BAND), 0.0, 1.0)


def _ramp_integral(y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """``∫_0^1 clip(y0 + (y1 − y0)·t, 0, 1) dt``, elementwise."""
    def anti(y):  # ∫_0^y clip(s, 0, 1) ds
        return np.where(y <= 0, 0.0, np.where(y >= 1, y - 0.5, 0.5 * y * y))

    d = y1 - y0
    flat = np.abs(d) < 1e-12
    safe = np.where(flat, 1.0, d)
    return np.where(flat, np.clip(0.5 * (y0 + y1), 0.0, 1.0), (anti(y1) - anti(y0)) / safe)


def crossings(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """(K,) each replication's crossing in log rate: ``x[0] + ∫ π dx`` with
    ``π = passing(z)`` and ``z`` linear between the rows. ``x``: (R,) ascending
    log rates; ``z``: (R, K) log percentile over the bound at each."""
    x, z = np.asarray(x, np.float64), np.asarray(z, np.float64)
    if x.size == 1:
        return np.full(z.shape[1], x[0])
    y = 0.5 - z / (2 * BAND)  # the pass before clipping; linear in z
    parts = _ramp_integral(y[:-1], y[1:]) * np.diff(x)[:, None]
    return x[0] + parts.sum(axis=0)


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta ``I_x(a, b)`` (continued fraction, modified Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f


def hd_weights(k: int, p: float) -> np.ndarray:
    """(k,) Harrell–Davis weights of the sorted sample for quantile ``p`` in [0, 1):
    ``I_{i/k}(a, b) − I_{(i−1)/k}(a, b)``, ``a = p(k+1)``, ``b = (1−p)(k+1)``; ``p = 0``
    is the minimum."""
    if p <= 0.0:
        return np.eye(1, k).ravel()
    a, b = p * (k + 1), (1 - p) * (k + 1)
    cdf = np.array([_betainc(a, b, i / k) for i in range(k + 1)])
    return np.diff(cdf)


def quantile(c: np.ndarray, p: float) -> tuple[float, float, float]:
    """The ``p`` quantile of ``c`` by Harrell–Davis, and a distribution-free 95%
    interval: the order statistics at ranks ``k·p ± 1.96·√(k·p·(1−p))``, rounded
    outward (none from one value)."""
    s = np.sort(np.asarray(c, np.float64))
    k = s.size
    est = float(hd_weights(k, p) @ s)
    if k < 2:
        return est, est, est
    h = Z95 * math.sqrt(k * p * (1 - p))
    lo, hi = max(0, math.floor(k * p - h) - 1), min(k - 1, math.ceil(k * p + h))
    return est, float(min(s[lo], est)), float(max(s[hi], est))


def search(quantiles: Callable[[float], np.ndarray], bound: float, *, start: float, share: float = 0.9,
           rel_tol: float = 0.05, what: str = "the percentile", unit: str = "", of: str = "",
           field: str = "slo_ttft",
           log: Callable[[str], None] | None = None) -> Crossing:
    """The highest rate at which ``quantiles(rate)`` (K,) is at most ``bound`` with
    probability ``share`` over replications (the module's docstring says how).

    ``quantiles(rate)``: each replication's percentile at ``rate`` (s), the same
    draws at every rate; ``start``: where the grid is anchored (a capacity rate);
    ``rel_tol``: the grid's largest step ratio less one; ``what``: how messages
    name the percentile (``"p95 TTFT"``), ``of`` its unit (``"s"``) and ``unit``
    the rate's (``"req/s"``);
    ``field``: the field errors name; ``log``: a function of one line, told each
    rate tried.

    Raises:
        ParamError: ``field`` is met at every rate up to ``start · 2^16``, or no
        rate down to ``start / 2^16`` meets it with probability ``share``.
    """
    if not callable(quantiles):
        raise TypeError(f"quantiles must be a function of one rate, not {type(quantiles).__name__}")
    bound = v.number(field, bound, lo=0.0, lo_open=True, hi=1e30)
    start = v.number("start", start, lo=0.0, lo_open=True, hi=1e30)
    share = v.number("share", share, lo=0.0, hi=1.0, lo_open=True)
    rel_tol = v.number("rel_tol", rel_tol, lo=1e-3, hi=1.0)
    G = steps_per_doubling(rel_tol)
    tail, sec = (f" {unit}" if unit else ""), (f" {of}" if of else "")
    x0, h = math.log(start), math.log(2.0) / G
    z: dict[int, np.ndarray] = {}

    def at(k: int) -> np.ndarray:
        if k not in z:
            rate = math.exp(x0 + k * h)
            q = np.asarray(quantiles(rate), np.float64)
            if q.ndim != 1 or not q.size:
                raise ValueError(f"quantiles({rate:.4g}) must give one value a replication, not shape {q.shape}")
            z[k] = np.log(np.maximum(q, 1e-300) / bound)
            if log is not None:
                log(f"rate {rate:.4g}{tail}: {what} <= {bound:g}{sec} in {passing(z[k]).mean():.0%} of "
                    f"replications (smoothed; median {np.median(q):.4g}{sec})")
        return passing(z[k])

    low = high = 0
    while not np.all(at(low) == 1.0) and low > -MAX_DOUBLINGS * G:
        low -= G
    if at(low).mean() < share:
        q = float(np.median(np.exp(z[low]) * bound))
        v.fail(field, bound, f"no rate meets it: {what} is {q:.4g}{sec} (median) at the lowest rate tried, "
                             f"{math.exp(x0 + low * h):.4g}{tail}")
    while not np.all(at(high) == 0.0) and high < MAX_DOUBLINGS * G:
        high += G
    if at(high).mean() >= share:
        v.fail(field, bound, f"is met at every rate tried, up to {math.exp(x0 + high * h):.4g}{tail}")

    def refine(a: int, b: int) -> None:  # bisect [a, b] on the grid where something happens
        pa, pb = at(a), at(b)
        if b - a < 2 or (np.array_equal(pa, pb) and np.all((pa == 0.0) | (pa == 1.0))):
            return
        m = (a + b) // 2
        at(m)
        refine(a, m)
        refine(m, b)

    for a in range(low, high, G):
        refine(a, a + G)
    ks = sorted(k for k in z if low <= k <= high)
    x = x0 + np.array(ks, np.float64) * h
    c = crossings(x, np.stack([z[k] for k in ks]))
    est, lo, hi = quantile(c, 1.0 - share)
    tried = []
    for k in sorted(z):
        p = float(passing(z[k]).mean())
        tried.append({"rate": math.exp(x0 + k * h), "share": p, "quantile": float(np.median(np.exp(z[k]) * bound)),
                      "meets": p >= share})
    return Crossing(rate=math.exp(est), lo=math.exp(lo), hi=math.exp(hi), crossings=np.exp(c), tried=tried)


__all__ = ["BAND", "Crossing", "crossings", "hd_weights", "passing", "quantile", "search", "steps_per_doubling"]
