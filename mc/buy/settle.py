"""A mix's months (SPEC §4): run on the device, settled on the host.

The device gives each month's token flows (``mc.buy.month``); ``settle`` turns
them into money in float64: owned and rented bills are exact integer cents, the
API bill is float32 tokens times the price, good to ~1e-6 relative. The engine
keeps the token flows and summarises the settled columns exactly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import Mapping

import numpy as np
import pandas as pd

from .. import _validate as v
from .. import engine
from ..engine import Column
from ..units import HOURS
from .catalogue import api_bill
from .month import LOST, OUTPUTS, TOKENS, month
from .plan import Procurement

# The units of what capacity that goes away adds (``mc.buy.month.LOST``).
LOST_UNITS = {"spot_capacity_tokens": "tokens", "spot_tokens": "tokens", "owned_down_tokens": "tokens",
              "spot_lost_tokens": "tokens", "owned_down_card_hours": "card-hours", "spot_lost_card_hours": "card-hours",
              "n_failed": "cards", "n_preempted": "cards", "spot_unbilled": "$"}
PROCUREMENT = "a Procurement (mc.buy.presets.get(name) or mc.Procurement(...))"
# The SPEC §4 outputs of a month of buying, each with its kind and units: the settled
# columns (float64 $ and shares), the device's token flows, then the checks.
COLUMNS = {"bill": Column("float", "$"), "owned_bill": Column("float", "$"), "rented_bill": Column("float", "$"),
           "api_bill": Column("float", "$"), "spot_bill": Column("float", "$"), "idle_share": Column("float", "share"),
           "blended_ratio": Column("float", ""), "api_share": Column("float", "share"),
           "unserved_share": Column("float", "share"),
           **{t: Column("float", "tokens") for t in TOKENS}, "demand_error": Column("float", ""),
           **{t: Column("float", LOST_UNITS[t]) for t in LOST},
           **{f"pass_{c}": Column("pass", "share") for c in ("idle", "margin", "overflow", "served", "all")}}


def settle(p: Procurement, raw: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Device token flows → per-month columns (float64): the bill ($) and its parts
    (spot's: its full month to the cent, less what preempted hours did not bill),
    the checks' ratios (shares of tokens), the token flows, then the four checks'
    ``pass_*`` booleans and ``pass_all``.

    ``pass_served``: unserved tokens ≤ ``unserved_max`` of demand. With the API on,
    ``unserved_tokens`` is exactly 0; with it off, a month whose cards cover every
    hour leaves exactly 0 too (``mc.buy.month``: each hour's remainder is a float32
    difference of equal numbers), so the default limit of 0 fails exactly the
    months that leave some demand unserved. The margin is judged on the tokens
    served, so only this check sees demand a mix without the API drops."""
    tok = {k: np.asarray(x, np.float64) for k, x in raw.items()}
    n = tok["demand_tokens"].shape[0]
    owned_bill = np.full(n, p.owned_cents() / 100.0)
    rented_bill = np.full(n, p.rented_cents() / 100.0)
    api = api_bill(p.spec, tok["api_tokens"])
    bill = owned_bill + rented_bill + api
    spot = np.zeros(n)
    if p.terms is not None and p.terms.any_spot:  # hour-weighted: a preempted card bills nothing while away
        spot = np.maximum(0.0, p.spot_cents() / 100.0 - tok["spot_unbilled"])
        bill = bill + spot
    served = tok["demand_tokens"] - tok["unserved_tokens"]
    cap = tok["owned_capacity_tokens"]
    idle = np.divide(tok["owned_idle_tokens"], cap, out=np.zeros(n), where=cap > 0)
    blended = bill / api_bill(p.spec, served)
    api_share = tok["api_tokens"] / tok["demand_tokens"]
    out = {"bill": bill, "owned_bill": owned_bill, "rented_bill": rented_bill, "api_bill": api, "spot_bill": spot,
           "idle_share": idle, "blended_ratio": blended, "api_share": api_share,
           "unserved_share": tok["unserved_tokens"] / tok["demand_tokens"]}
    out.update(tok)
    c = p.checks
    out["pass_idle"] = idle <= c.idle_max
    out["pass_margin"] = blended <= c.margin_max
    out["pass_overflow"] = api_share <= c.overflow_max
    out["pass_served"] = out["unserved_share"] <= c.unserved_max
    out["pass_all"] = out["pass_idle"] & out["pass_margin"] & out["pass_overflow"] & out["pass_served"]
    return out


def default_chunk(p: Procurement) -> int:
    """Months per device batch: at most 8,192, and about 4M per-card draws (and
    hours, and loss intervals where a term is on) at a time, so a fleet of 150,000
    cards still fits in memory."""
    v.instance("p", p, Procurement, PROCUREMENT)
    per_month = 2 * sum(p.slots) + 8 * HOURS
    t = p.terms
    if t is not None:  # each loss interval, and each spot card's lone candidates against its down spells
        per_month += 6 * sum(p.slots) * t.n_fail + sum(t.spot_slots) * (t.n_cycles * (6 + 2 * t.n_lone) + 8)
    return max(1, min(8192, 2**22 // per_month))


def schema(p: Procurement) -> engine.Schema:
    """The engine's schema: every token flow kept on the host and settled there."""
    return engine.Schema(columns=OUTPUTS, kept=OUTPUTS, derive=partial(settle, p))


@dataclass
class BuyResult:
    """A mix's distribution over ``n`` months: ``summary`` as ``mc.engine.of_columns``
    gives it; ``samples`` one row per month when kept; ``requested`` the months
    asked for (more than ``n`` when a Ctrl-C stopped the run early:
    ``summary["partial"]``)."""

    plan: Procurement
    n: int
    seed: int
    summary: dict
    samples: pd.DataFrame | None = dataclasses.field(default=None, repr=False)
    requested: int | None = None


def simulate(p: Procurement, n: int, *, seed: int = 0, chunk: int | None = None,
             keep_samples: bool = False, progress: bool | None = False) -> BuyResult:
    """Months ``0..n-1`` of ``p``; month ``i`` uses ``fold_in(key(seed), i)``."""
    v.instance("p", p, Procurement, PROCUREMENT)
    keep_samples = v.flag("keep_samples", keep_samples)
    out = engine.summarise(month, p, n, schema(p), seed=seed, chunk=default_chunk(p) if chunk is None else chunk,
                           progress=progress)
    samples = pd.DataFrame(out.columns) if keep_samples and out.columns is not None else None
    return BuyResult(p, out.run.done, int(seed), out.summary, samples, requested=out.run.n)
