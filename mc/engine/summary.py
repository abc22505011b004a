"""Summaries of a distribution over months (SPEC §2): host arithmetic only.

Everything here is plain NumPy on the host, in float64, so sums over many
fleet-months do not lose precision.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

QUANTILES = (5, 50, 95)
Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion k/n."""
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At k = 0 or k = n the bound is exactly 0 or 1; keep rounding out of it.
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def figure(value: float, lo: float | None = None, hi: float | None = None, units: str = "") -> dict:
    """One figure as every ``--json`` and report writes it: ``{"value", "lo", "hi",
    "units"}``, ``lo``/``hi`` its 95% interval (left out where there is none), ``units``
    a short unit (``"$"``, ``"tok/s"``, ``"share"``, ``"cards"``; ``""`` for a ratio)."""
    out = {"value": float(value)}
    if lo is not None and hi is not None:
        out["lo"], out["hi"] = float(lo), float(hi)
    out["units"] = units
    return out


def mean_half(std: Any, n: Any) -> Any:
    """Half the normal 95% interval of a mean over ``n`` months: ``Z95 · s / sqrt(n)``,
    ``s`` the sample standard deviation (divisor ``n − 1``) from the population
    ``std`` (divisor ``n``), that is ``Z95 · std / sqrt(n − 1)``. ``std`` and ``n``
    floats or arrays (one per column or row); NaN (no interval) below two months."""
    n = np.asarray(n, np.float64)
    return Z95 * np.asarray(std, np.float64) / np.sqrt(np.where(n >= 2, n - 1, np.nan))


def mean_interval(x: Any, axis: int = 0) -> tuple:
    """A mean over months with its normal 95% interval (``mean_half``):
    ``(mean, lo, hi)`` of ``x`` in float64 along ``axis`` (the months): floats for
    a (months,) sample, arrays of the other axes otherwise."""
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=axis)
    half = mean_half(x.std(axis=axis), x.shape[axis])
    lo, hi = mean - half, mean + half
    if np.ndim(mean) == 0:
        return float(mean), float(lo), float(hi)
    return mean, lo, hi


def mean_figure(mean: float, std: float, n: int, units: str = "") -> dict:
    """A mean over ``n`` months as a ``figure``, with its normal 95% interval
    (``mean_half``; no interval below two months)."""
    if n < 2 or not math.isfinite(std):
        return figure(mean, units=units)
    half = mean_half(std, n)
    return figure(mean, mean - half, mean + half, units)


def pass_figure(p: Mapping) -> dict:
    """A pass rate (``pass_count``'s ``{rate, lo, hi, n}``) as a ``figure`` with its
    95% Wilson interval, units ``"share"``."""
    if not p.get("n"):
        return figure(math.nan, units="share")
    return figure(p["rate"], p["lo"], p["hi"], "share")


def describe(x: np.ndarray) -> dict[str, float]:
    """mean, std (population), p5/p50/p95 (linear interpolation) of a sample."""
    x = np.asarray(x, dtype=np.float64)
    p = np.percentile(x, QUANTILES)
    out = {"mean": float(x.mean()), "std": float(x.std())}
    out.update({f"p{q}": float(v) for q, v in zip(QUANTILES, p)})
    return out


def mode(x: np.ndarray) -> tuple[float, float]:
    """The most frequent value (smallest on ties) and its share of the sample."""
    values, counts = np.unique(np.asarray(x), return_counts=True)
    i = int(np.argmax(counts))
    return values[i].item(), counts[i] / counts.sum()


def pass_count(k: int, n: int) -> dict[str, float]:
    """Pass rate of ``k`` passes in ``n`` months with its 95% Wilson interval."""
    lo, hi = wilson(k, n)
    return {"rate": k / n if n else math.nan, "lo": lo, "hi": hi, "n": n}


def pass_rate(passed: np.ndarray) -> dict[str, float]:
    """Pass rate of a boolean check with its 95% Wilson interval."""
    passed = np.asarray(passed, dtype=bool)
    return pass_count(int(passed.sum()), passed.size)


def of_columns(columns: Mapping[str, np.ndarray], modes: tuple[str, ...] = ()) -> dict:
    """The exact summary of per-month columns.

    Boolean columns named ``pass_*`` become pass rates with Wilson intervals;
    every other column gets mean/std/p5/p50/p95; ``modes`` names the columns
    whose most frequent value is given.

    Returns:
        ``{"n": N, "stats": {col: {mean, std, p5, p50, p95}},
        "pass": {check: {rate, lo, hi, n}}}``, and ``"modes": {col: {value,
        share}}`` when ``modes`` is not empty.
    """
    stats, passes, n = {}, {}, None
    for name, col in columns.items():
        col = np.asarray(col)
        n = col.shape[0] if n is None else n
        if name.startswith("pass_"):
            passes[name[len("pass_"):]] = pass_rate(col)
        else:
            stats[name] = describe(col)
    out = {"n": int(n or 0), "stats": stats, "pass": passes}
    if modes:
        out["modes"] = {}
        for name in modes:
            value, share = mode(columns[name])
            out["modes"][name] = {"value": value, "share": float(share)}
    return out


def lerp(a: float, b: float, t: float) -> float:
    """NumPy's linear interpolation (``np.percentile``'s default method)."""
    d = b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def exact_percentile(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """``np.percentile(sample, q)`` of a sample given as sorted distinct values with counts."""
    n = int(counts.sum())
    pos = q / 100 * (n - 1)
    k0 = math.floor(pos)
    k1 = min(k0 + 1, n - 1)
    cum = np.cumsum(counts)
    a = float(values[int(np.searchsorted(cum, k0, side="right"))])
    b = float(values[int(np.searchsorted(cum, k1, side="right"))])
    return lerp(a, b, pos - k0)
