"""A mix against a forecast (SPEC §4): own, rent or pay an API per token.

A ``Procurement`` is one mix against one forecast: owned cards per chip, a cap on
rented cards per chip, and whether an API takes what is left. It is validated
when built and derives, on the host in float64, everything the month needs: the
rented cards (whole cards filling the forecast's peak-hour shortfall, cheapest
per token first, up to each cap), the normalized hourly profile and per-card
rates. ``mc.buy.settle.simulate`` runs its months.

Units: tokens, tok/s, $; one month is 730 hours (2,628,000 s).
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any, Mapping

import numpy as np

from .. import _validate as v
from .._fields import Field, check_fields, declare
from .._pytree import fields_dict, pytree_dataclass, section, set_field
from ..fleet.demand import Demand
from ..fleet.demand import profile as demand_profile
from ..fleet.lottery import Lottery
from ..fleet.pool import renamed
from ..units import HOURS, SECONDS
from .catalogue import CHIP_NAMES, CHIPS, MODELS, RENT_PREMIUM, BuyModel, Chip, buy_model, chip_name, rent_to_fill
from .terms import Repairs, SpotMarket, Terms, terms


# -- a mix against a forecast ---------------------------------------------------------


@pytree_dataclass
class BuyChecks:
    """Pass thresholds (SPEC §4), each a share in [0, 10]: idle share of owned
    capacity (tokens) ≤ ``idle_max``; blended cost ≤ ``margin_max`` × the API's bill
    for the tokens served; API share of demanded tokens ≤ ``overflow_max``; share of
    demanded tokens left unserved ≤ ``unserved_max``. The API takes whatever cards
    leave, so only a mix without it leaves tokens unserved; by default none may be
    (a month that leaves any demand unserved fails)."""

    idle_max: float = declare(0.15, lo=0.0, hi=10.0, unit="share of owned capacity", doc="most idle tokens that pass")
    margin_max: float = declare(0.75, lo=0.0, hi=10.0, unit="× API bill of served tokens",
                                doc="most bill / the API's bill for the tokens served")
    overflow_max: float = declare(0.10, lo=0.0, hi=10.0, unit="share of demand tokens", doc="most API tokens that pass")
    unserved_max: float = declare(0.0, lo=0.0, hi=10.0, unit="share of demand tokens", doc="most unserved tokens that pass")

    def __post_init__(self):
        check_fields(self, "checks")


def _per_chip(field: str, given: Mapping[str, Any] | tuple, check) -> tuple:
    """A ``{chip: value}`` mapping (or a tuple already in ``CHIP_NAMES`` order) →
    a tuple in ``CHIP_NAMES`` order, missing chips ``None``."""
    if isinstance(given, tuple) and len(given) == len(CHIP_NAMES):
        given = dict(zip(CHIP_NAMES, given))
    if not isinstance(given, Mapping):
        v.fail(field, given, "must be a table of chip = value (chips: " + ", ".join(CHIP_NAMES) + ")")
    named = {}
    for name, x in given.items():  # any catalogue's name of a chip (h100-sxm, a100, ...) is that chip
        c = chip_name(name, f"{field}.chip")
        if c in named:
            v.fail(f"{field}.{name}", x, f"names chip {c} a second time")
        named[c] = x
    given = named
    return tuple(None if given.get(c) is None else check(f"{field}.{c}", given[c]) for c in CHIP_NAMES)


def _cards(field: str, n: Any) -> int:
    return v.count(field, n, lo=0, hi=10_000_000)


def _card_table(field: str, given: Any) -> tuple[int, ...]:
    """``{chip: cards}`` → cards per chip in ``CHIP_NAMES`` order (missing: 0)."""
    return tuple(n or 0 for n in _per_chip(field, given, _cards))


# One chip's owned card-month price, as a ``[price_month]`` table gives it.
CHIP_PRICE = Field(dataclasses.MISSING, lo=0.0, lo_open=True, hi=1e7, unit="$ per card-month")


def _price_table(field: str, given: Any) -> tuple[float, ...]:
    """``{chip: $ per card-month}`` → prices in ``CHIP_NAMES`` order (missing: the catalogue's)."""
    given = _per_chip(field, given, CHIP_PRICE.check)
    return tuple(CHIPS[c].price if p is None else p for c, p in zip(CHIP_NAMES, given))


def _slot_table(field: str, given: Any) -> tuple[int | None, ...]:
    """``{chip: slots}`` (or a tuple in ``CHIP_NAMES`` order) → slots per chip, None where not given."""
    given = tuple(given) if isinstance(given, list) else given
    if not isinstance(given, (tuple, Mapping)):
        v.fail(field, given, f"must be a table of chip = slots or a tuple of {len(CHIP_NAMES)} "
               f"counts ({', '.join(CHIP_NAMES)})")
    return _per_chip(field, given, lambda f, x: v.count(f, x, lo=0, hi=2**24))


def _model(field: str, name: Any) -> str:
    return buy_model(name).name


@pytree_dataclass(static=("model", "api", "slots", "spot_slots", "terms"))
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
        rent_spot: ``{chip: cards}`` rented on the spot market (``spot``), served
            after the on-demand ones; none by default.
        api: whether an API serves what cards cannot (else it goes unserved).
        api_price, h100_rate: override the model's $ per 1M tokens and tok/s per H100.
        prices: ``{chip: $ per owned card-month}`` overrides (in a file or ``from_dict``:
            ``price_month``, or ``price_hour`` in $ per card-hour, as a pool entry's price).
        rent_premium: a rented card-month bills this × the owned price.
        slots: quality draws per chip (≥ owned + rented); default exactly that.
            Padding does not change a month's draws (counter-based keys).
        failures: owned cards' hard failures and repair (``mc.buy.terms.Repairs``).
        spot: the spot market (``mc.buy.terms.SpotMarket``).
        spot_slots: spot cards' draws per chip (≥ rent_spot), as ``slots``.

    Per-chip fields are stored as tuples in ``CHIP_NAMES`` order; the derived
    fields are what the device reads.
    """

    model: str = declare("premium-70b", kind="any", parse=_model, doc="the model served: chat-8b or premium-70b")
    forecast_tokens: float = declare(10e12, lo=0.0, lo_open=True, hi=1e18, unit="tokens per month",
                                     doc="the month's expected demand")
    sigma: float = declare(0.15, lo=0.0, hi=3.0, unit="log-sd", doc="spread of the forecast error")
    demand: Demand = dataclasses.field(default_factory=lambda: Demand(shape="diurnal"))
    owned: Any = declare(factory=dict, kind="any", parse=_card_table, unit="cards",
                         doc="cards bought before the month")
    rent_cap: Any = declare(factory=dict, kind="any", parse=_card_table, unit="cards",
                            doc="most cards that may be rented")
    rent_spot: Any = declare(factory=dict, kind="any", parse=_card_table, unit="cards",
                             doc="spot cards rented (served after the on-demand ones)")
    api: bool = declare(True, kind="flag", doc="an API serves what the cards cannot")
    api_price: float | None = declare(None, lo=0.0, lo_open=True, unit="$ per 1M tokens", doc="API price")
    h100_rate: float | None = declare(None, lo=0.0, lo_open=True, unit="tok/s", doc="one H100's rate for this model")
    prices: Any = declare(factory=dict, kind="any", parse=_price_table, unit="$ per card-month",
                          doc="an owned card's price")
    rent_premium: float = declare(RENT_PREMIUM, lo=0.0, lo_open=True, hi=100.0, unit="× owned price",
                                  doc="a rented card-month's price")
    lottery: Lottery = dataclasses.field(default_factory=Lottery)
    checks: BuyChecks = dataclasses.field(default_factory=BuyChecks)
    slots: tuple[int, ...] | None = declare(None, kind="any", parse=_slot_table, unit="cards",
                                            doc="quality draws (padding)")
    failures: Repairs = dataclasses.field(default_factory=Repairs)
    spot: SpotMarket = dataclasses.field(default_factory=SpotMarket)
    spot_slots: tuple[int, ...] | None = declare(None, kind="any", parse=_slot_table, unit="cards",
                                                 doc="spot cards' quality draws (padding)")
    # Derived on the host in float64 (cast to float32 for the device):
    rented: tuple[int, ...] = dataclasses.field(init=False, default=())  # cards per chip
    owned_cards: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32
    rented_cards: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32
    card_rate: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32 tok/s
    mean_rate: np.ndarray = dataclasses.field(init=False, default=None)  # () float32 tok/s
    profile: np.ndarray = dataclasses.field(init=False, default=None)  # (730,) float32, mean 1
    spot_cards: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32
    spot_price: np.ndarray = dataclasses.field(init=False, default=None)  # (chips,) float32 $ per spot card-month
    terms: Terms | None = dataclasses.field(init=False, default=None)  # static: None with every term off

    def __post_init__(self):
        put = partial(set_field, self)
        check_fields(self, "")
        if not isinstance(self.demand, Demand):
            v.fail("demand", self.demand, "must be a Demand")
        if self.demand.shape in ("bursty", "log"):
            v.fail("demand.shape", self.demand.shape, "must be flat, diurnal, weekly or trace (a fixed shape; a "
                   "request log's hourly profile can be given as a trace)")
        model = MODELS[self.model]  # before ``spec``, which reads the overrides
        put("api_price", model.api_price if self.api_price is None else self.api_price)
        put("h100_rate", model.h100_rate if self.h100_rate is None else self.h100_rate)
        for name, cls in (("lottery", Lottery), ("checks", BuyChecks), ("failures", Repairs), ("spot", SpotMarket)):
            if not isinstance(getattr(self, name), cls):
                v.fail(name, getattr(self, name), f"must be a {cls.__name__}")
        if not any(self.owned) and not any(self.rent_cap) and not any(self.rent_spot) and not self.api:
            v.fail("mix", "no cards, no API", "must own cards, allow rented cards or use the API (or rent spot cards)")

        rates = [self.h100_rate * CHIPS[c].ratio for c in CHIP_NAMES]
        prof = _unit_profile(self.demand)
        mean_rate = self.forecast_tokens / SECONDS
        put("rented", self._fill(mean_rate * float(prof.max()), rates))
        need = tuple(o + r for o, r in zip(self.owned, self.rented))
        # a chip left out: exactly its cards
        slots = need if self.slots is None else tuple(n if x is None else x for x, n in zip(self.slots, need))
        for c, x, n in zip(CHIP_NAMES, slots, need):
            if x < n:
                v.fail(f"slots.{c}", x, f"must be at least owned + rented = {n}")
        put("slots", slots)
        spot_slots = (self.rent_spot if self.spot_slots is None else
                      tuple(n if x is None else x for x, n in zip(self.spot_slots, self.rent_spot)))
        for c, x, n in zip(CHIP_NAMES, spot_slots, self.rent_spot):
            if x < n:
                v.fail(f"spot_slots.{c}", x, f"must be at least rent_spot = {n}")
        put("spot_slots", spot_slots)
        put("terms", terms(self.failures, self.spot, spot_slots))
        put("spot_cards", np.asarray(self.rent_spot, np.float32))
        # A spot card-month's price as billed (to the cent), so a card away all month bills nothing.
        put("spot_price", np.asarray([_cents(p * self.rent_premium * self.spot.price_factor) / 100
                                      for p in self.prices], np.float32))
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

    def spot_cents(self) -> int:
        """Exact spot bill in cents when every spot card is there all month:
        Σ cards · round(price · premium · price_factor)."""
        return sum(n * _cents(p * self.rent_premium * self.spot.price_factor) for n, p in zip(self.rent_spot, self.prices))

    def describe(self) -> str:
        def cards(counts):
            return " + ".join(f"{n:,} {c}" for c, n in zip(CHIP_NAMES, counts) if n) or "none"
        caps = ", ".join(f"cap {n:,} {c}" for c, n in zip(CHIP_NAMES, self.rent_cap) if n)
        d = self.demand
        shape = d.shape + (f" ±{d.amplitude:.0%}" if d.shape in ("diurnal", "weekly") else "")
        return (f"{self.model}, forecast {self.forecast_tokens / 1e12:,.4g}T tokens/month "
                f"(sigma {self.sigma:g}, {shape}); owned {cards(self.owned)} (${self.owned_cents() / 100:,.0f}); "
                f"rented {cards(self.rented)}{f' ({caps})' if caps else ''} (${self.rented_cents() / 100:,.0f}); "
                f"API {'on' if self.api else 'off'} at ${self.api_price:g}/1M"
                + (f"; spot {cards(self.rent_spot)} (${self.spot_cents() / 100:,.0f} if never preempted, "
                   f"{self.spot.zones} zone{'s' if self.spot.zones != 1 else ''})" if any(self.rent_spot) else "")
                + (f"; owned cards fail {self.failures.rate:g}/card-month, {self.failures.repair_hours:g} h repair"
                   if self.failures.on else ""))

    # -- dict form ------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        for name in ("owned", "rent_cap", "rent_spot", "prices"):
            out[name] = {c: x for c, x in zip(CHIP_NAMES, out[name]) if name == "prices" or x}
        for name in SECTIONS:
            out[name] = fields_dict(out[name])
        out["slots"] = out["spot_slots"] = None
        return {("price_month" if k == "prices" else k): x for k, x in out.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: "Procurement | None" = None) -> "Procurement":
        """From plain data (the TOML layout); fields not given come from ``base``."""
        v.instance("data", data, Mapping, "a dict of procurement fields (the TOML layout)")
        v.instance("base", base, (Procurement, type(None)), "a Procurement or None")
        known = [PRICES[0] if f.name == "prices" else f.name for f in dataclasses.fields(cls) if f.init] + list(PRICES[1:])
        renamed(data, "", RENAMED)
        for key in data:
            if key not in known:
                v.fail(key, data[key], "is not a procurement field; known: " + ", ".join(known))
        data = _month_prices(data)
        old = base.to_dict() if base is not None else {}
        merged = {**old, **data}
        merged["prices"] = merged.pop("price_month", {})
        for name, scls in SECTIONS.items():
            if name in merged:  # a section given updates the base's, field by field
                merged[name] = section(name, scls, data.get(name, {}), old.get(name))
        return cls(**merged)

    def replace(self, **kw) -> "Procurement":
        return Procurement.from_dict(kw, base=self)


# The owned card-month prices per chip, by the names a pool entry's price takes:
# $ per card-month or $ per card-hour (× 730 h); ``prices``, the first's older name,
# is refused naming it.
PRICES = ("price_month", "price_hour")
RENAMED = {"prices": "price_month"}


def _month_prices(data: Mapping[str, Any]) -> dict:
    """``data`` with at most one of ``PRICES`` given, as ``price_month``."""
    data = dict(data)
    given = [k for k in PRICES if k in data]
    if len(given) > 1:
        v.fail("price_month", {k: data[k] for k in given}, "give one table of prices: price_month ($ per owned "
               "card-month) or price_hour ($ per card-hour, 730 hours a month)")
    if given == ["price_hour"]:
        table = data.pop("price_hour")
        if not isinstance(table, Mapping):
            v.fail("price_hour", table, "must be a table of chip = $ per card-hour")
        data["price_month"] = {c: v.positive(f"price_hour.{c}", x) * HOURS for c, x in table.items()}
    if given and given != ["price_hour"]:  # $ per card-month, checked under the name given
        table = data["price_month"]
        if not isinstance(table, Mapping):
            v.fail(given[0], table, "must be a table of chip = $ per owned card-month")
        data["price_month"] = {c: x if x is None else CHIP_PRICE.check(f"{given[0]}.{c}", x)
                               for c, x in table.items()}
    return data


def _cents(dollars: float) -> int:
    return int(round(dollars * 100))


def _unit_profile(d: Demand) -> np.ndarray:
    """(730,) float64 hourly shape scaled to mean one."""
    prof = np.asarray(demand_profile(None, d), np.float64)
    if not prof.mean() > 0:
        v.fail("demand", d.shape, "must have a positive mean")
    return prof / prof.mean()


SECTIONS = {"demand": Demand, "lottery": Lottery, "checks": BuyChecks, "failures": Repairs, "spot": SpotMarket}
