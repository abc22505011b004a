"""A plain NumPy reference of SPEC §8's observation model, for one card at a time.

It consumes the very draws the JAX core consumes (``mc.telemetry.observe.CardDraws``
as NumPy arrays: the lottery's normal and uniform, each month's dip uniforms and
exponentials, one standard normal per sample) and recomputes the card's quality,
its dips and every sample in float64 with loops, never calling the core's code.
"""

from __future__ import annotations

import math

import numpy as np

HOURS = 730


def poisson_cdf(k: int, lam: float) -> float:
    return sum(math.exp(-lam) * lam**j / math.factorial(j) for j in range(k + 1))


def quality(z: float, u_lemon: float, lottery) -> tuple[float, bool]:
    """SPEC §1.2: ``q`` clipped, times the lemon factor for a lemon."""
    q = min(max(lottery.mean + lottery.sd * z, lottery.lo), lottery.hi)
    lemon = u_lemon < lottery.lemon_rate
    return (q * lottery.lemon_factor if lemon else q), bool(lemon)


def card_dips(u_count, u_begin, e_length, u_depth, dips) -> list[tuple[float, float, float]]:
    """SPEC §1.3 month by month with no window: month ``m`` holds
    ``min(Poisson(rate), max_count)`` dips, each beginning uniformly in
    ``[730m, 730(m+1))``. Returns ``(begin, end, depth)`` in hours."""
    out = []
    for m in range(len(u_count)):
        n = sum(float(u_count[m]) >= poisson_cdf(k, dips.rate) for k in range(dips.max_count))
        for k in range(n):
            b = HOURS * m + float(u_begin[m, k]) * HOURS
            e = b + dips.mean_hours * float(e_length[m, k])
            out.append((b, e, dips.depth_lo + float(u_depth[m, k]) * (dips.depth_hi - dips.depth_lo)))
    return out


def samples(true_rate: float, dips: list, eps, every_minutes: float, sigma_hour: float) -> np.ndarray:
    """(n,) float64: sample ``j`` at ``τ = (j+1)·Δ`` is
    ``max(0, t·max(0, 1 − Σ δ·overlap(dip, [τ − Δ, τ))/Δ)·(1 + σ(Δ)·ε_j))``."""
    delta = every_minutes / 60.0
    sigma = sigma_hour * math.sqrt(1.0 / delta)
    y = np.empty(len(eps))
    for j, e in enumerate(eps):
        lo, hi = j * delta, (j + 1) * delta
        lost = sum(d * max(0.0, min(end, hi) - max(b, lo)) for b, end, d in dips) / delta
        y[j] = max(0.0, true_rate * max(0.0, 1.0 - lost) * (1.0 + sigma * float(e)))
    return y


def card(draws, rated: float, p) -> dict:
    """One card's truth and samples from its draws (one card's slice of
    ``CardDraws`` as NumPy) and its ``mc.telemetry.Params``."""
    q, lemon = quality(float(draws.lottery.z[0]), float(draws.lottery.u_lemon[0]), p.lottery)
    d = draws.dips
    dips = card_dips(d.u_count, d.u_begin, d.e_length, d.u_depth, p.dips)
    t = rated * q
    return {"q": q, "lemon": lemon, "true_rate": t, "dips": dips,
            "rate": samples(t, dips, draws.noise, p.every, p.sigma_hour)}
