"""Capacity that goes away in a mix (SPEC §4 with §10's terms): owned cards that fail
and are repaired, and spot cards rented beside on-demand ones.

``[failures]`` (``Repairs``) and ``[spot]`` (``SpotMarket``) take their fields'
declarations from the fleet month's (``mc.fleet.outages``): a rate, a zone's spells,
a wave share mean the same thing in both; only ``repair_hours`` is the buying
month's own (an owned card comes back repaired; the fleet's slot takes a fresh card
after ``replace_hours``). Every term is off by default: no failure rate, no spot card.

``Terms`` is a mix's static shape (how many candidate events each card and zone
holds), None when every term is off: the month is then today's, bit for bit.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from .._fields import check_fields, declarations, declare
from .._pytree import pytree_dataclass
from ..fleet.outages import Failures, Spot
from ..fleet.outages.plan import cap, spot_caps


def _same(cls, name: str, doc: str | None = None):
    """A field declared as ``cls``'s field ``name`` (its default, range and unit),
    with its meaning restated for a mix where ``doc`` is given."""
    d = declarations(cls)[name]
    if doc is not None:
        d = dataclasses.replace(d, doc=doc)
    return dataclasses.field(default=d.default, metadata={"declared": d})


@pytree_dataclass
class Repairs:
    """Owned cards' hard failures (a plan's ``[failures]``): each owned card fails at
    ``rate`` per card-month (730 h) while it serves, only within the month, and
    serves again, repaired, ``repair_hours`` later (a fixed time)."""

    rate: float = _same(Failures, "rate", "hard failures of an owned card while it serves (Llama 3: about 0.014)")
    repair_hours: float = declare(72.0, lo=0.0, hi=1e6, unit="h", doc="hours a failed owned card is down before it "
                                  "serves again")

    def __post_init__(self):
        check_fields(self, "failures")

    @property
    def on(self) -> bool:
        return self.rate > 0


@pytree_dataclass
class SpotMarket:
    """The spot market a mix rents from (a plan's ``[spot]``): §10's zones, spells,
    waves and lone preemptions; a spot card-month bills ``price_factor`` × an
    on-demand rented one's, for the hours the card is there."""

    price_factor: float = _same(Spot, "price_factor", "a spot card's price as a share of an on-demand rented one's")
    zones: int = _same(Spot, "zones", "zones the spot cards are spread over (round-robin, chips in catalogue order)")
    up_hours: float = _same(Spot, "up_hours")
    down_hours: float = _same(Spot, "down_hours")
    wave_share: float = _same(Spot, "wave_share")
    rate: float = _same(Spot, "rate")

    def __post_init__(self):
        check_fields(self, "spot")


class Terms(NamedTuple):
    """A mix's static shape with a term on."""

    n_fail: int  # failure candidates per owned card (0: no failures)
    spot_slots: tuple[int, ...]  # spot cards' draws per chip (padding, as ``slots``)
    zones: int
    n_lone: int  # lone preemption candidates per spot card
    n_cycles: int  # up/down cycles per zone (0: no spot card)

    @property
    def any_spot(self) -> bool:
        return self.n_cycles > 0


def terms(failures: Repairs, spot: SpotMarket, spot_slots: tuple[int, ...]) -> Terms | None:
    """The static shape from concrete fields; None when every term is off."""
    rate = float(failures.rate)
    if rate <= 0 and not any(spot_slots):
        return None
    n_lone, n_cycles = spot_caps(spot) if any(spot_slots) else (0, 0)
    return Terms(n_fail=cap(rate), spot_slots=tuple(int(n) for n in spot_slots),
                 zones=int(spot.zones) if n_cycles else 1, n_lone=n_lone, n_cycles=n_cycles)


__all__ = ["Repairs", "SpotMarket", "Terms", "terms"]
