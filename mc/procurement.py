"""Buying the fleet (SPEC §4): own, rent or pay an API per token, for a month of demand.

A ``Procurement`` is one mix against one forecast: owned cards per chip, a cap on
rented cards per chip, and whether an API takes what is left. It is validated
when built and derives, on the host in float64, everything the month needs: the
rented cards (whole cards filling the forecast's peak-hour shortfall, cheapest
per token first, up to each cap), the normalized hourly profile and per-card
rates. ``simulate`` runs months on the device (``mc.procurement_month``) and
settles money on the host (``settle``): owned and rented bills are exact integer
cents; the API bill is float32 tokens times the price, good to ~1e-6 relative.

Units: tokens, tok/s, $; one month is 730 hours (2,628,000 s).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import _toml
from . import _validate as v
from . import engine, summary
from ._hours import HOURS, SECONDS
from ._pytree import pytree_dataclass
from .demand import Demand
from .demand import profile as demand_profile
from .lottery import Lottery
from .procurement_month import month

# -- the catalogue (SPEC §4) ---------------------------------------------------


@dataclass(frozen=True)
class BuyModel:
    name: str
    h100_rate: float  # tok/s one H100 serves, batched steady state
    api_price: float  # $ per 1M tokens


@dataclass(frozen=True)
class Chip:
    name: str
    ratio: float  # rate × H100
    price: float  # $ per owned card-month (capex over 36 months, power, colo, staff)


MODELS = {m.name: m for m in (BuyModel("chat-8b", 10_000.0, 0.20), BuyModel("premium-70b", 700.0, 2.50))}
CHIPS = {c.name: c for c in (Chip("h100", 1.0, 2100.0), Chip("b200", 2.4, 2900.0),
                             Chip("a100-used", 0.45, 1400.0))}
CHIP_NAMES = tuple(CHIPS)  # the order of every per-chip array
RENT_PREMIUM = 1.35  # a rented card bills 1.35 × the owned card-month


def buy_model(model: str | BuyModel) -> BuyModel:
    if isinstance(model, BuyModel):
        return model
    v.choice("model", model, MODELS)
    return MODELS[model]


def chip(name: str | Chip) -> Chip:
    if isinstance(name, Chip):
        return name
    v.choice("chip", name, CHIPS)
    return CHIPS[name]


def card_rate(model: str | BuyModel, chip_: str | Chip) -> float:
    """tok/s one card of ``chip_`` serves of ``model`` at quality 1."""
    return buy_model(model).h100_rate * chip(chip_).ratio


# -- the three challenges ----------------------------------------------------------


def fleet_tokens(model: str | BuyModel, cards: Mapping[str, int], quality: float = 1.0) -> float:
    """Tokens a fleet carries in a month running flat out:
    ``Σ_chip cards · rate · quality · 2,628,000``."""
    return sum(n * card_rate(model, c) for c, n in cards.items()) * quality * SECONDS


def rent_to_fill(model: str | BuyModel, shortfall_tokens: float, chip_: str | Chip,
                 cap: int | None = None) -> int:
    """The whole cards of ``chip_`` whose month of tokens (at quality 1) covers
    ``shortfall_tokens``: ``ceil(shortfall / (rate · 2,628,000))``, at most ``cap``.
    (A shortfall within 1e-6 of a card of a whole number rounds down.)"""
    per_card = card_rate(model, chip_) * SECONDS
    cards = max(0, math.ceil(shortfall_tokens / per_card - 1e-6))
    return cards if cap is None else min(cards, cap)


def api_bill(model: str | BuyModel, tokens: float) -> float:
    """Dollars the API bills for ``tokens``: ``tokens / 1e6 · price``."""
    return tokens / 1e6 * buy_model(model).api_price


# -- a mix against a forecast ---------------------------------------------------------


@pytree_dataclass
class BuyChecks:
    """Pass thresholds (SPEC §4): idle share of owned capacity ≤ ``idle_max``;
    blended cost ≤ ``margin_max`` × the API's bill for the same tokens; API share
    of demanded tokens ≤ ``overflow_max``."""

    idle_max: float = 0.15
    margin_max: float = 0.75
    overflow_max: float = 0.10

    def __post_init__(self):
        for name in ("idle_max", "margin_max", "overflow_max"):
            object.__setattr__(self, name, v.number(f"checks.{name}", getattr(self, name), lo=0.0, hi=10.0))


def _per_chip(field: str, given: Mapping[str, Any] | tuple, check) -> tuple:
    """A ``{chip: value}`` mapping (or a tuple already in ``CHIP_NAMES`` order) →
    a tuple in ``CHIP_NAMES`` order, missing chips ``None``."""
    if isinstance(given, tuple) and len(given) == len(CHIP_NAMES):
        given = dict(zip(CHIP_NAMES, given))
    if not isinstance(given, Mapping):
        v.fail(field, given, "must be a table of chip = value (chips: " + ", ".join(CHIP_NAMES) + ")")
    for name in given:
        v.choice(f"{field}.chip", name, CHIP_NAMES)
    return tuple(None if given.get(c) is None else check(f"{field}.{c}", given[c]) for c in CHIP_NAMES)


def _cards(field: str, n: Any) -> int:
    return v.count(field, n, lo=0, hi=10_000_000)


@pytree_dataclass(static=("model", "api", "slots"))
class Procurement:
    """One mix against one month's forecast.

    Arguments:
        model: ``chat-8b`` or ``premium-70b``.
        forecast_tokens: tokens/month; the realised month's mean (> 0).
        sigma: log-sd of the month's lognormal demand error (mean one).
        demand: the hourly shape (``flat``, ``diurnal``, ``weekly`` or ``trace``);
            its level is ignored — the shape is scaled to mean one.
        owned: ``{chip: cards}`` bought before the month.
        rent_cap: ``{chip: most cards}`` that may be rented.
        api: whether an API serves what cards cannot (else it goes unserved).
        api_price, h100_rate: override the model's $ per 1M tokens and tok/s per H100.
        prices: ``{chip: $ per owned card-month}`` overrides.
        rent_premium: a rented card-month bills this × the owned price.
        slots: quality draws per chip (≥ owned + rented); default exactly that.
            Padding does not change a month's draws (counter-based keys).

    Per-chip fields are stored as tuples in ``CHIP_NAMES`` order; the derived
    fields are what the device reads.
    """

    model: str = "premium-70b"
    forecast_tokens: float = 10e12
    sigma: float = 0.15
    demand: Demand = dataclasses.field(default_factory=lambda: Demand(shape="diurnal"))
    owned: Any = dataclasses.field(default_factory=dict)
    rent_cap: Any = dataclasses.field(default_factory=dict)
    api: bool = True
    api_price: float | None = None
    h100_rate: float | None = None
    prices: Any = dataclasses.field(default_factory=dict)
    rent_premium: float = RENT_PREMIUM
    lottery: Lottery = dataclasses.field(default_factory=Lottery)
    checks: BuyChecks = dataclasses.field(default_factory=BuyChecks)
    slots: tuple[int, ...] | None = None
    # Derived on the host in float64 (cast to float32 for the device):
    rented: tuple[int, ...] = dataclasses.field(init=False, default=())  # cards per chip
    owned_cards: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32
    rented_cards: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32
    card_rate: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32 tok/s
    mean_rate: np.ndarray = dataclasses.field(init=False, default=None)  # () float32 tok/s
    profile: np.ndarray = dataclasses.field(init=False, default=None)  # (730,) float32, mean 1

    def __post_init__(self):
        put = lambda name, val: object.__setattr__(self, name, val)  # noqa: E731
        put("model", buy_model(self.model).name)
        put("forecast_tokens", v.number("forecast_tokens", self.forecast_tokens, lo=0.0, lo_open=True, hi=1e18))
        put("sigma", v.number("sigma", self.sigma, lo=0.0, hi=3.0))
        if not isinstance(self.demand, Demand):
            v.fail("demand", self.demand, "must be a Demand")
        if self.demand.shape == "bursty":
            v.fail("demand.shape", "bursty", "must be flat, diurnal, weekly or trace (a fixed shape)")
        put("owned", tuple(n or 0 for n in _per_chip("owned", self.owned, _cards)))
        put("rent_cap", tuple(n or 0 for n in _per_chip("rent_cap", self.rent_cap, _cards)))
        if not isinstance(self.api, bool):
            v.fail("api", self.api, "must be true or false")
        model = self.spec
        put("api_price", v.positive("api_price", model.api_price if self.api_price is None else self.api_price))
        put("h100_rate", v.positive("h100_rate", model.h100_rate if self.h100_rate is None else self.h100_rate))
        given = _per_chip("prices", self.prices, lambda f, x: v.number(f, x, lo=0.0, lo_open=True, hi=1e7))
        put("prices", tuple(CHIPS[c].price if p is None else p for c, p in zip(CHIP_NAMES, given)))
        put("rent_premium", v.number("rent_premium", self.rent_premium, lo=0.0, lo_open=True, hi=100.0))
        for name, cls in (("lottery", Lottery), ("checks", BuyChecks)):
            if not isinstance(getattr(self, name), cls):
                v.fail(name, getattr(self, name), f"must be a {cls.__name__}")
        if not any(self.owned) and not any(self.rent_cap) and not self.api:
            v.fail("mix", "no cards, no API", "must own cards, allow rented cards or use the API")

        rates = [self.h100_rate * CHIPS[c].ratio for c in CHIP_NAMES]
        prof = _unit_profile(self.demand)
        mean_rate = self.forecast_tokens / SECONDS
        put("rented", self._fill(mean_rate * float(prof.max()), rates))
        need = tuple(o + r for o, r in zip(self.owned, self.rented))
        if self.slots is None:
            put("slots", need)
        else:
            slots = _per_chip("slots", tuple(self.slots), lambda f, x: v.count(f, x, lo=0, hi=2**24))
            for c, s, n in zip(CHIP_NAMES, slots, need):
                if s < n:
                    v.fail(f"slots.{c}", s, f"must be at least owned + rented = {n}")
            put("slots", slots)
        put("owned_cards", np.asarray(self.owned, np.float32))
        put("rented_cards", np.asarray(self.rented, np.float32))
        put("card_rate", np.asarray(rates, np.float32))
        put("mean_rate", np.float32(mean_rate))
        put("profile", prof.astype(np.float32))

    def _fill(self, peak_rate: float, rates: list[float]) -> tuple[int, ...]:
        """Rented cards per chip filling the forecast's peak-hour shortfall over
        owned rated capacity, cheapest rented chip per token first, each ≤ its cap."""
        short = (peak_rate - sum(o * r for o, r in zip(self.owned, rates))) * SECONDS
        rented = dict.fromkeys(CHIP_NAMES, 0)
        for i in sorted(range(len(CHIP_NAMES)), key=lambda i: self.prices[i] / rates[i]):
            c = CHIP_NAMES[i]
            if short <= 0 or not self.rent_cap[i]:
                continue
            rented[c] = rent_to_fill(self.spec, short, Chip(c, rates[i] / self.h100_rate, self.prices[i]),
                                     cap=self.rent_cap[i])
            short -= rented[c] * rates[i] * SECONDS
        return tuple(rented.values())

    @property
    def spec(self) -> BuyModel:
        """The model with this mix's price and rate overrides."""
        base = MODELS[self.model]
        return BuyModel(base.name, self.h100_rate or base.h100_rate, self.api_price or base.api_price)

    def owned_cents(self) -> int:
        """Exact owned bill in cents: Σ cards · price."""
        return sum(n * _cents(p) for n, p in zip(self.owned, self.prices))

    def rented_cents(self) -> int:
        """Exact rented bill in cents: Σ cards · round(price · premium)."""
        return sum(n * _cents(p * self.rent_premium) for n, p in zip(self.rented, self.prices))

    def describe(self) -> str:
        def cards(counts):
            return " + ".join(f"{n:,} {c}" for c, n in zip(CHIP_NAMES, counts) if n) or "none"
        caps = ", ".join(f"cap {n:,} {c}" for c, n in zip(CHIP_NAMES, self.rent_cap) if n)
        d = self.demand
        shape = d.shape + (f" ±{d.amplitude:.0%}" if d.shape in ("diurnal", "weekly") else "")
        return (f"{self.model}, forecast {self.forecast_tokens / 1e12:,.4g}T tokens/month "
                f"(sigma {self.sigma:g}, {shape}); owned {cards(self.owned)} (${self.owned_cents() / 100:,.0f}); "
                f"rented {cards(self.rented)}{f' ({caps})' if caps else ''} (${self.rented_cents() / 100:,.0f}); "
                f"API {'on' if self.api else 'off'} at ${self.api_price:g}/1M")

    # -- dict form ------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        for name in ("owned", "rent_cap", "prices"):
            out[name] = {c: x for c, x in zip(CHIP_NAMES, out[name]) if name == "prices" or x}
        for name in ("demand", "lottery", "checks"):
            sub = out[name]
            out[name] = {f.name: getattr(sub, f.name) for f in dataclasses.fields(sub)
                         if getattr(sub, f.name) is not None}
            if isinstance(out[name].get("trace"), np.ndarray):
                out[name]["trace"] = out[name]["trace"].tolist()
        out["slots"] = None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: "Procurement | None" = None) -> "Procurement":
        """From plain data (the TOML layout); fields not given come from ``base``."""
        known = [f.name for f in dataclasses.fields(cls) if f.init]
        for key in data:
            if key not in known:
                v.fail(key, data[key], "is not a procurement field; known: " + ", ".join(known))
        old = base.to_dict() if base is not None else {}
        merged = {**old, **data}
        for name, scls in (("demand", Demand), ("lottery", Lottery), ("checks", BuyChecks)):
            if name in data and not isinstance(data[name], Mapping):
                v.fail(name, data[name], "must be a table of fields")
            if name in merged:  # a section given updates the base's, field by field
                sub = {**old.get(name, {}), **data.get(name, {})}
                fields = {f.name for f in dataclasses.fields(scls) if f.init}
                for key in sub:
                    if key not in fields:
                        v.fail(f"{name}.{key}", sub[key], f"is not a field of {name}; known: "
                               + ", ".join(sorted(fields)))
                if name == "demand" and sub.get("shape") != "trace":
                    sub = {k: x for k, x in sub.items() if k != "trace"}
                merged[name] = scls(**sub)
        return cls(**merged)

    def replace(self, **kw) -> "Procurement":
        return Procurement.from_dict(kw, base=self)


def _cents(dollars: float) -> int:
    return int(round(dollars * 100))


def _unit_profile(d: Demand) -> np.ndarray:
    """(730,) float64 hourly shape scaled to mean one."""
    prof = np.asarray(demand_profile(None, d), np.float64)
    if not prof.mean() > 0:
        v.fail("demand", d.shape, "must have a positive mean")
    return prof / prof.mean()


def load(path: str | Path) -> Procurement:
    """A procurement from a TOML file; ``preset = "name"`` starts from a preset."""
    path = Path(path)
    data = _toml.read(path)
    base = None
    if "preset" in data:
        from . import procurement_presets

        base = procurement_presets.get(data.pop("preset"))
    return Procurement.from_dict(data, base=base)


# -- settling the month on the host ---------------------------------------------------------

COLUMNS = ("bill", "owned_bill", "rented_bill", "api_bill", "idle_share", "blended_ratio",
           "api_share", "unserved_share")


def settle(p: Procurement, raw: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Device token flows → per-month columns (float64): the bill ($) and its parts,
    the three checks' ratios and ``pass_*`` booleans, then the token flows."""
    tok = {k: np.asarray(x, np.float64) for k, x in raw.items()}
    n = tok["demand_tokens"].shape[0]
    owned_bill = np.full(n, p.owned_cents() / 100.0)
    rented_bill = np.full(n, p.rented_cents() / 100.0)
    api = api_bill(p.spec, tok["api_tokens"])
    bill = owned_bill + rented_bill + api
    served = tok["demand_tokens"] - tok["unserved_tokens"]
    cap = tok["owned_capacity_tokens"]
    idle = np.divide(tok["owned_idle_tokens"], cap, out=np.zeros(n), where=cap > 0)
    blended = bill / api_bill(p.spec, served)
    api_share = tok["api_tokens"] / tok["demand_tokens"]
    out = {"bill": bill, "owned_bill": owned_bill, "rented_bill": rented_bill, "api_bill": api,
           "idle_share": idle, "blended_ratio": blended, "api_share": api_share,
           "unserved_share": tok["unserved_tokens"] / tok["demand_tokens"]}
    out.update(tok)
    c = p.checks
    out["pass_idle"] = idle <= c.idle_max
    out["pass_margin"] = blended <= c.margin_max
    out["pass_overflow"] = api_share <= c.overflow_max
    out["pass_all"] = out["pass_idle"] & out["pass_margin"] & out["pass_overflow"]
    return out


def default_chunk(p: Procurement) -> int:
    """Months per device batch: at most 8,192, and about 4M per-card draws (and
    hours) at a time, so a fleet of 150,000 cards still fits in memory."""
    return max(1, min(8192, 2**22 // (2 * sum(p.slots) + 8 * HOURS)))


@dataclass
class BuyResult:
    """A mix's distribution over ``n`` months: ``summary`` as ``mc.summary.summarize``
    gives it; ``samples`` one row per month when kept."""

    plan: Procurement
    n: int
    seed: int
    summary: dict
    samples: pd.DataFrame | None = dataclasses.field(default=None, repr=False)


def simulate(p: Procurement, n: int, *, seed: int = 0, chunk: int | None = None,
             keep_samples: bool = False) -> BuyResult:
    """Months ``0..n-1`` of ``p``; month ``i`` uses ``fold_in(key(seed), i)``."""
    if not isinstance(p, Procurement):
        raise TypeError(f"p must be a Procurement, not {type(p).__name__}")
    raw = engine.sample(month, p, n, seed=seed, chunk=default_chunk(p) if chunk is None else chunk)
    cols = settle(p, raw)
    return BuyResult(p, int(n), int(seed), summary.summarize(cols), pd.DataFrame(cols) if keep_samples else None)
