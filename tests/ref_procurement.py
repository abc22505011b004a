"""A plain NumPy reference for buying the fleet (SPEC §4), written from the spec.

It shares nothing with ``mc.buy`` but the draws: given the same standard
normals and uniforms, it rebuilds the catalogue, sizes the rented cards, serves
each hour owned → rented → API in float64, and bills in integer cents. With owned
cards that fail and spot cards (``month_with_terms``), it walks each card's events
one by one (failures and repairs; its zone's spells, waves and lone preemptions)
and serves each hour owned → rented → spot → API.
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


# -- capacity that goes away (§4 with §10's terms), per event ---------------------------


def down_spells(rate: float, repair: float, gaps) -> list[tuple[float, float]]:
    """An owned card's down spells ``[t, t + repair)`` that begin in the month: it
    fails after ``gap · 730 / rate`` hours up, is down ``repair`` hours, and so on."""
    out, t = [], 0.0
    if rate <= 0:
        return out
    for g in gaps:
        t += float(g) * 730.0 / rate
        if t >= 730.0:
            break
        out.append((t, t + repair))
        t += repair
    return out


def zone_down_spells(u0: float, spells, up: float, down: float) -> list[tuple[float, float]]:
    """A zone's down spells ``(begin, end)`` in order: it starts down when ``u0 <
    down / (up + down)``, then alternates, each spell ``x · mean`` hours long."""
    is_down = float(u0) < down / (up + down)
    out, t = [], 0.0
    for x in spells:
        length = float(x) * (down if is_down else up)
        if is_down:
            out.append((t, t + length))
        t += length
        is_down = not is_down
    return out


def spot_away(downs, u_wave, lone_gaps, wave_share: float, rate: float) -> tuple[list, int]:
    """One spot card's spells away ``(begin, end)`` within ``[0, 730)`` and its
    preemptions, by walking its events in time order: its zone going down takes it
    with probability ``wave_share`` (the j-th down spell reads ``u_wave[j]``); a lone
    preemption takes it if it is there; while its zone is up a taken card is
    replaced at once, else when the zone comes up."""
    events = []
    for j, (b, e) in enumerate(downs):
        events += [(b, 0, j), (e, 2, j)]
    if rate > 0:
        t = 0.0
        for g in lone_gaps:
            t += float(g) * 730.0 / rate
            events.append((t, 1, -1))
    events.sort(key=lambda x: (x[0], x[1]))
    zone_down, here, since, away, n = False, True, 0.0, [], 0
    for t, kind, j in events:
        if t >= 730.0:
            break
        if kind == 0:  # the zone goes down
            zone_down = True
            if here and float(u_wave[j]) < wave_share:
                here, since, n = False, t, n + 1
        elif kind == 1:  # a lone preemption
            if here:
                n += 1
                if zone_down:
                    here, since = False, t
        else:  # the zone comes up: a fresh card at once
            zone_down = False
            if not here:
                away.append((since, t))
                here = True
    if not here:
        away.append((since, 730.0))
    return away, n


def lost_hourly(spells: list[tuple[float, float, float]]) -> np.ndarray:
    """(730,) float64 ``Σ weight · overlap([b, e), [h, h + 1))``."""
    h = np.arange(730.0)
    out = np.zeros(730)
    for b, e, w in spells:
        out += w * np.clip(np.minimum(e, h + 1) - np.maximum(b, h), 0.0, None)
    return out


def month_with_terms(demand_z: float, chip_draws: dict, model: str, owned: dict, rent: dict, spot: dict,
                     forecast_tokens: float, sigma: float, shape: np.ndarray, failures: dict, market: dict,
                     lost: dict, api: bool = True) -> dict:
    """One month's flows with owned cards failing and spot cards, from the shared draws.

    ``lost["fail"][c]`` (slots, n) failure gaps of chip ``c``'s owned cards (its first
    slots); ``lost["spot"][c] = (z, u, lone_gaps, u_wave)`` its spot cards';
    ``lost["zone_u"]``, ``lost["spells"]`` each zone's. Spot cards sit in zones
    round-robin, chips in catalogue order. Hour by hour: owned, rented, spot, API."""
    h100_rate = MODEL[model][0]
    base = month(demand_z, chip_draws, model, owned, rent, forecast_tokens, sigma, shape, api)
    cap_owned = base["owned_capacity_tokens"] / SECONDS
    cap_rented = base["rented_capacity_tokens"] / SECONDS
    down, n_failed, down_hours = [], 0, 0.0
    for c in CHIPS:
        q = quality(*chip_draws[c])
        for i in range(owned.get(c, 0)):
            for b, e in down_spells(failures["rate"], failures["repair_hours"], lost["fail"][c][i]):
                down.append((b, e, h100_rate * RATIO[c] * q[i]))
                n_failed += 1
                down_hours += min(e, 730.0) - b
    zones = [zone_down_spells(u, s, market["up_hours"], market["down_hours"])
             for u, s in zip(lost["zone_u"], lost["spells"])]
    away, cap_spot, n_pre, away_hours, unbilled, g = [], 0.0, 0, 0.0, 0.0, 0
    for c in CHIPS:
        if not spot.get(c, 0):
            continue
        z, u, lone, wave = lost["spot"][c]
        q = quality(z, u)
        for i in range(spot[c]):
            spells, n = spot_away(zones[g % len(zones)], wave[i], lone[i], market["wave_share"], market["rate"])
            g += 1
            n_pre += n
            cap_spot += h100_rate * RATIO[c] * q[i]
            for b, e in spells:
                away.append((b, e, h100_rate * RATIO[c] * q[i]))
                away_hours += e - b
                unbilled += (e - b) * round(PRICE[c] * 1.35 * market["price_factor"] * 100) / 100 / 730.0
    error = math.exp(sigma * float(demand_z) - sigma**2 / 2)
    demand = forecast_tokens / SECONDS * error * shape
    owned_now = np.maximum(0.0, cap_owned - lost_hourly(down))
    spot_now = np.maximum(0.0, cap_spot - lost_hourly(away))
    by_owned = np.minimum(demand, owned_now)
    by_rented = np.minimum(demand - by_owned, cap_rented)
    by_spot = np.minimum(demand - by_owned - by_rented, spot_now)
    left = demand - by_owned - by_rented - by_spot
    spot_cents = sum(n * round(PRICE[c] * 1.35 * market["price_factor"] * 100) for c, n in spot.items())
    return {
        "demand_tokens": demand.sum() * 3600,
        "owned_capacity_tokens": owned_now.sum() * 3600,
        "owned_tokens": by_owned.sum() * 3600,
        "owned_idle_tokens": (owned_now - by_owned).sum() * 3600,
        "rented_capacity_tokens": cap_rented * SECONDS,
        "rented_tokens": by_rented.sum() * 3600,
        "api_tokens": left.sum() * 3600 if api else 0.0,
        "unserved_tokens": 0.0 if api else left.sum() * 3600,
        "spot_capacity_tokens": spot_now.sum() * 3600,
        "spot_tokens": by_spot.sum() * 3600,
        "owned_down_tokens": (cap_owned - owned_now).sum() * 3600,
        "spot_lost_tokens": (cap_spot - spot_now).sum() * 3600,
        "owned_down_card_hours": down_hours,
        "spot_lost_card_hours": away_hours,
        "n_failed": n_failed,
        "n_preempted": n_pre,
        "spot_unbilled": unbilled,
        "spot_bill": spot_cents / 100 - unbilled,
    }
