"""What buying the fleet prices (SPEC §4): models, chips, and the three challenge sums.

Units: tokens, tok/s, $; one month is 730 hours (2,628,000 s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .. import _validate as v
from .._pytree import set_field
from ..serving import catalogue as serving_catalogue
from ..units import SECONDS


def _name(field: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        v.fail(field, value, "must be a non-empty string")
    return value


@dataclass(frozen=True)
class BuyModel:
    name: str
    h100_rate: float  # tok/s one H100 serves, batched steady state
    api_price: float  # $ per 1M tokens
    serving: str | None = None  # the same model in the serving catalogue (mc card, pool entries)

    def __post_init__(self):
        _name("model.name", self.name)
        set_field(self, "h100_rate", v.positive("model.h100_rate", self.h100_rate))
        set_field(self, "api_price", v.positive("model.api_price", self.api_price))
        if self.serving is not None:
            _name("model.serving", self.serving)


@dataclass(frozen=True)
class Chip:
    name: str
    ratio: float  # rate × H100
    price: float  # $ per owned card-month (capex over 36 months, power, colo, staff)
    serving: str | None = None  # the same GPU in the serving catalogue (mc card, pool entries)

    def __post_init__(self):
        _name("chip.name", self.name)
        set_field(self, "ratio", v.positive("chip.ratio", self.ratio))
        set_field(self, "price", v.positive("chip.price", self.price))
        if self.serving is not None:
            _name("chip.serving", self.serving)


MODELS = {m.name: m for m in (BuyModel("chat-8b", 10_000.0, 0.20, "8b"), BuyModel("premium-70b", 700.0, 2.50, "70b"))}
CHIPS = {c.name: c for c in (Chip("h100", 1.0, 2100.0, "h100-sxm"), Chip("b200", 2.4, 2900.0, "b200"),
                             Chip("a100-used", 0.45, 1400.0, "a100-80gb"))}
CHIP_NAMES = tuple(CHIPS)  # the order of every per-chip array
RENT_PREMIUM = 1.35  # a rented card bills 1.35 × the owned card-month


def _lookup(field: str, name, table: dict, serving_lookup, aliases: dict) -> str:
    """The buying catalogue's name for ``name``: its own name, or any name or alias
    the serving catalogue gives the same model or GPU (``h100-sxm``, ``a100``,
    ``8b``, ``llama-3-70b``, ...). Anything else fails, listing what is known."""
    if not isinstance(name, str):  # a list or an array is no name (and not hashable)
        v.fail(field, name, f"must be a name, one of {', '.join(table)}")
    key = name.strip().lower()
    if key in table:
        return key
    try:
        same = serving_lookup(key).name
    except v.ParamError:
        same = None
    for entry in table.values():
        if same is not None and entry.serving == same:
            return entry.name
    serving = {e.serving for e in table.values()}
    others = sorted((serving | {a for a, c in aliases.items() if c in serving}) - set(table))
    v.fail(field, name, f"must be one of {', '.join(table)} (or another name of the same one: "
           f"{', '.join(others)}); the buying catalogue (docs/model.md §4) has no other")


def model_name(name: str, field: str = "model") -> str:
    """``chat-8b`` or ``premium-70b``, from either catalogue's names."""
    return _lookup(field, name, MODELS, serving_catalogue.model, serving_catalogue.MODEL_ALIASES)


def chip_name(name: str, field: str = "chip") -> str:
    """``h100``, ``b200`` or ``a100-used``, from either catalogue's names."""
    return _lookup(field, name, CHIPS, serving_catalogue.gpu, serving_catalogue.GPU_ALIASES)


def buy_model(model: str | BuyModel) -> BuyModel:
    if isinstance(model, BuyModel):
        return model
    return MODELS[model_name(model)]


def chip(name: str | Chip) -> Chip:
    if isinstance(name, Chip):
        return name
    return CHIPS[chip_name(name)]


def _tokens(field: str, tokens):
    """A token count (>= 0), or a NumPy array of them (the months of a run)."""
    if isinstance(tokens, np.ndarray) and tokens.dtype.kind in "iuf":
        return tokens
    return v.nonneg(field, tokens)


def card_rate(model: str | BuyModel, chip_: str | Chip) -> float:
    """tok/s one card of ``chip_`` serves of ``model`` at quality 1."""
    return buy_model(model).h100_rate * chip(chip_).ratio


# -- the three challenges ----------------------------------------------------------


def fleet_tokens(model: str | BuyModel, cards: Mapping[str, int], quality: float = 1.0) -> float:
    """Tokens a fleet carries in a month running flat out:
    ``Σ_chip cards · rate · quality · 2,628,000``."""
    v.mapping("cards", cards, "a table of chip = cards, e.g. {'h100': 8}")
    quality = v.nonneg("quality", quality)
    return sum(v.nonneg(f"cards.{c}", n) * card_rate(model, c) for c, n in cards.items()) * quality * SECONDS


def rent_to_fill(model: str | BuyModel, shortfall_tokens: float, chip_: str | Chip,
                 cap: int | None = None) -> int:
    """The whole cards of ``chip_`` whose month of tokens (at quality 1) covers
    ``shortfall_tokens``: ``ceil(shortfall / (rate · 2,628,000))``, at most ``cap``.
    (A shortfall within 1e-6 of a card of a whole number rounds down.)"""
    per_card = card_rate(model, chip_) * SECONDS
    shortfall_tokens = v.number("shortfall_tokens", shortfall_tokens)
    if cap is not None:
        cap = v.count("cap", cap, lo=0, hi=None)
    cards = max(0, math.ceil(shortfall_tokens / per_card - 1e-6))
    return cards if cap is None else min(cards, cap)


def api_bill(model: str | BuyModel, tokens: float) -> float:
    """Dollars the API bills for ``tokens``: ``tokens / 1e6 · price``."""
    return _tokens("tokens", tokens) / 1e6 * buy_model(model).api_price
