"""A plain NumPy reference for buying the fleet (SPEC §4), written from the spec.

It shares nothing with ``mc.buy`` but the draws: given the same standard
normals and uniforms, it rebuilds the catalogue, sizes the rented cards, serves
each hour owned → rented → API in float64, and bills in integer cents.
"""

from __future__ import annotations

import math

import numpy as np

SECONDS = 730 * 3600
CHIPS = ("h100", "b200", "a100-used")
RATIO = {"h100": 1.0, "b200": 2.4, "a100-used": 0.45}
PRICE = {"h100": 2100.0, "b200": 2900.0, "a100-used": 1400.0}  # $ per owned card-month
MODEL = {"chat-8b": (10_000.0, 0.20), "premium-70b": (700.0, 2.50)}  # tok/s per H100, $/1M


def profile(amplitude: float, peak_hour: float) -> np.ndarray:
    """(730,) float64 diurnal shape with mean one."""
    h = np.arange(730.0)
    shape = 1.0 + amplitude * np.cos(2 * np.pi * (h - peak_hour) / 24.0)
    return shape / shape.mean()


def rented(model: str, owned: dict, caps: dict, forecast_tokens: float, shape: np.ndarray) -> dict:
    """Whole rented cards filling the forecast's peak-hour shortfall over owned
    rated capacity; cheapest rented $/token first, each chip up to its cap."""
    h100_rate = MODEL[model][0]
    peak = forecast_tokens / SECONDS * shape.max()  # tok/s
    short = peak - sum(owned.get(c, 0) * h100_rate * RATIO[c] for c in CHIPS)
    out = dict.fromkeys(CHIPS, 0)
    for c in sorted(CHIPS, key=lambda c: PRICE[c] / RATIO[c]):
        if short <= 0 or not caps.get(c, 0):
            continue
        per_card = h100_rate * RATIO[c]
        out[c] = min(caps[c], max(0, math.ceil(short / per_card - 1e-6)))
        short -= out[c] * per_card
    return out


def quality(z, u, mean=0.96, sd=0.05, lo=0.5, hi=1.5, lemon_rate=0.0, lemon_factor=0.67):
    q = np.clip(mean + sd * np.asarray(z, np.float64), lo, hi)
    return np.where(np.asarray(u) < lemon_rate, q * lemon_factor, q)


def month(demand_z: float, chip_draws: dict, model: str, owned: dict, rent: dict,
          forecast_tokens: float, sigma: float, shape: np.ndarray, api: bool = True,
          lottery: dict | None = None) -> dict:
    """One month's token flows (float64) from the shared draws.

    ``chip_draws[c] = (z, u)``: the chip's slots, owned cards first, then rented.
    """
    h100_rate = MODEL[model][0]
    cap_owned = cap_rented = 0.0
    for c in CHIPS:
        z, u = chip_draws[c]
        q = quality(z, u, **(lottery or {}))
        o, r = owned.get(c, 0), rent.get(c, 0)
        cap_owned += h100_rate * RATIO[c] * q[:o].sum()
        cap_rented += h100_rate * RATIO[c] * q[o:o + r].sum()
    error = math.exp(sigma * float(demand_z) - sigma**2 / 2)
    demand = forecast_tokens / SECONDS * error * shape  # tok/s per hour
    by_owned = np.minimum(demand, cap_owned)
    by_rented = np.minimum(demand - by_owned, cap_rented)
    left = demand - by_owned - by_rented
    return {
        "demand_tokens": demand.sum() * 3600,
        "owned_capacity_tokens": cap_owned * SECONDS,
        "owned_tokens": by_owned.sum() * 3600,
        "owned_idle_tokens": (cap_owned - by_owned).sum() * 3600,
        "rented_capacity_tokens": cap_rented * SECONDS,
        "rented_tokens": by_rented.sum() * 3600,
        "api_tokens": left.sum() * 3600 if api else 0.0,
        "unserved_tokens": 0.0 if api else left.sum() * 3600,
    }


def bill_cents(owned: dict, rent: dict) -> tuple[int, int]:
    """Owned and rented bills in integer cents (rented = 1.35 × owned price)."""
    owned_c = sum(n * round(PRICE[c] * 100) for c, n in owned.items())
    rented_c = sum(n * round(PRICE[c] * 135) for c, n in rent.items())
    return owned_c, rented_c


def checks(model: str, tokens: dict, owned_cents: int, rented_cents: int, unserved_max: float = 0.0) -> dict:
    """Bill ($), the four ratios and pass flags (idle ≤ 15%, blended ≤ 75%, API ≤ 10%,
    unserved ≤ ``unserved_max`` of demand: none by default), and pass_all.

    The API takes whatever cards leave (SPEC §4); a mix without it leaves that
    unserved, and the month fails unless the unserved share is within the limit."""
    price = MODEL[model][1]
    api_bill = tokens["api_tokens"] / 1e6 * price
    bill = (owned_cents + rented_cents) / 100 + api_bill
    cap = tokens["owned_capacity_tokens"]
    idle = tokens["owned_idle_tokens"] / cap if cap > 0 else 0.0
    served = tokens["demand_tokens"] - tokens["unserved_tokens"]
    blended = bill / (served / 1e6 * price)
    share = tokens["api_tokens"] / tokens["demand_tokens"]
    unserved = tokens["unserved_tokens"] / tokens["demand_tokens"]
    out = {"api_bill": api_bill, "bill": bill, "idle_share": idle, "blended_ratio": blended,
           "api_share": share, "unserved_share": unserved, "pass_idle": idle <= 0.15,
           "pass_margin": blended <= 0.75, "pass_overflow": share <= 0.10, "pass_served": unserved <= unserved_max}
    out["pass_all"] = out["pass_idle"] and out["pass_margin"] and out["pass_overflow"] and out["pass_served"]
    return out
