"""An independent NumPy generator of real-looking probe telemetry (SPEC §8.3 with
§1.4.1's wander and swing), for the fit's tests: it calls none of the package's code.

Each card is probed at irregular times (gaps uniform in ``gap``), each probe a
benchmark of ``probe_s`` seconds starting at its time; the card goes dark for
``outages`` spells of ``outage_hours`` each (a number, or a ``(lo, hi)`` range each
spell's length is drawn uniformly from; placed uniformly in the span, overlaps allowed), and probes inside a spell are not recorded. The card's true rate is
``rated·q·(1 + u(h))·(1 + c(h))`` hour by hour: ``u`` its own AR(1) wander (stationary
sd ``wander_sd``, ``ρ = exp(−1/wander_hours)``, started in its stationary law), ``c``
the fleet's ``−diurnal·cos(2π(h mod 24 − hot_hour)/24) + v(h)``, ``v`` one shared AR(1)
(``swing_sd``, ``swing_hours``). A probe reports its interval's mean rate (hours
overlap-weighted) times ``1 + σ·ε``, ``σ = sigma_hour·sqrt(1 h / probe hours)``,
clipped at 0. Times are hours since a midnight.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def ar1_paths(rng: np.random.Generator, rows: int, hours: int, sd: float, tau: float) -> np.ndarray:
    """(rows, hours) stationary AR(1) paths, one hour a step."""
    out = np.zeros((rows, hours))
    if sd <= 0:
        return out
    rho = math.exp(-1.0 / tau)
    z = rng.standard_normal((rows, hours))
    out[:, 0] = sd * z[:, 0]
    k = sd * math.sqrt(1.0 - rho * rho)
    for h in range(1, hours):
        out[:, h] = rho * out[:, h - 1] + k * z[:, h]
    return out


def mean_over(path: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The mean of an hourly step function over each ``[a, b)`` (overlap-weighted)."""
    out = np.zeros(len(a))
    for j, (lo, hi) in enumerate(zip(a, b)):
        total = 0.0
        for h in range(math.floor(lo), math.ceil(hi)):
            total += (min(h + 1.0, hi) - max(float(h), lo)) * path[h]
        out[j] = total / (hi - lo)
    return out


def fleet(seed: int, *, cards: int = 96, hours: float = 730.0, gap: tuple[float, float] = (0.6, 2.3),
          probe_s: float = 150.0, sigma_hour: float = 0.02, wander_sd: float = 0.02, wander_hours: float = 200.0,
          diurnal: float = 0.015, hot_hour: float = 15.0, swing_sd: float = 0.0, swing_hours: float = 24.0,
          outages: int = 2, outage_hours: float | tuple = 120.0, rated: float = 7000.0,
          lottery_sd: float = 0.05) -> tuple[pd.DataFrame, dict]:
    """Rows ``(card, time, rate)`` and the truth (``{"wander": (cards, H) u, "q": (cards,)}``)."""
    rng = np.random.default_rng(seed)
    H = int(math.ceil(hours)) + 2
    u = ar1_paths(rng, cards, H, wander_sd, wander_hours)
    v = ar1_paths(rng, 1, H, swing_sd, swing_hours)[0]
    clock = np.arange(H) % 24.0
    c = -diurnal * np.cos(2 * np.pi * (clock - hot_hour) / 24.0) + v
    q = np.maximum(1.0 + lottery_sd * rng.standard_normal(cards), 0.05)
    p = probe_s / 3600.0
    sig = sigma_hour / math.sqrt(p)
    frames = []
    for i in range(cards):
        t = rng.uniform(0, gap[1]) + np.cumsum(rng.uniform(gap[0], gap[1], int(hours / gap[0]) + 2))
        t = t[t + p < hours]
        dark = np.zeros(len(t), bool)
        for _ in range(outages):
            length = rng.uniform(*outage_hours) if isinstance(outage_hours, tuple) else outage_hours
            a = rng.uniform(0, hours - length)
            dark |= (t >= a) & (t < a + length)
        t = t[~dark]
        w = mean_over((1 + u[i]) * (1 + c) - 1, t, t + p)
        y = np.maximum(0.0, rated * q[i] * (1 + w) * (1 + sig * rng.standard_normal(len(t))))
        frames.append(pd.DataFrame({"card": f"gpu-{i:03d}", "time": t, "rate": y}))
    return pd.concat(frames, ignore_index=True), {"wander": u, "swing": c, "q": q}
