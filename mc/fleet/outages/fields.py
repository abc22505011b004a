"""SPEC §10's fields: ``[failures]`` and ``[spot]`` (a pool entry's ``market`` is a
field of its card class, ``mc.fleet.pool.CardClass``; ``[autoscaler] failover`` is
the autoscaler's). Every term is off by default: no failure rate, no spot card."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ... import _validate as v
from ..._fields import check_fields, declare
from ..._pytree import pytree_dataclass
from ..pool import MARKETS, Pool


def _hours_or_never(field: str, value: Any) -> float | None:
    """``fallback_hours``: hours ≥ 0, or ``inf`` (TOML ``inf``, or the word) for never,
    held as None (a month's outputs never carry an infinity)."""
    if isinstance(value, str) and value.strip().lower() in ("inf", "never"):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isinf(value) and value > 0:
        return None
    return v.number(field, value, lo=0.0)


@pytree_dataclass
class Failures:
    """Hard failures (SPEC §10): each card in a slot fails at ``rate`` per card-month
    (730 h) while it holds the slot, only within the month; its slot takes a fresh card
    of the same class and market ``Exponential(replace_hours)`` later, serving after
    the autoscaler's ``boot_hours``."""

    rate: float = declare(0.0, lo=0.0, hi=100.0, unit="per card-month",
                          doc="hard failures of a card while it holds its slot (Llama 3: about 0.014)")
    replace_hours: float = declare(24.0, lo=0.0, hi=1e6, unit="h", doc="mean wait for a failed card's replacement")

    def __post_init__(self):
        check_fields(self, "failures")

    @property
    def on(self) -> bool:
        return self.rate > 0


@pytree_dataclass
class Spot:
    """Spot cards (SPEC §10): billed at ``price_factor`` × their class's price; their
    slots sit in ``zones`` (round-robin in pool order), each zone up and down in
    exponential spells of mean ``up_hours`` and ``down_hours``; a zone going down
    preempts each of its spot cards with probability ``wave_share``, and each spot
    card is besides preempted alone at ``rate`` per card-month. An emptied spot slot
    takes a spot card once its zone is up, or after ``fallback_hours`` (None: never)
    an on-demand one. ``share`` (None: unset) splits each entry of an all on-demand
    pool between the markets (``split``): the one way a grid varies the spot share."""

    price_factor: float = declare(0.33, lo=0.0, lo_open=True, hi=1.0, unit="× price",
                                  doc="a spot card's price as a share of its class's")
    zones: int = declare(1, lo=1, hi=1024, kind="integer", unit="zones", doc="zones the spot slots are spread over")
    up_hours: float = declare(10.0, lo=0.0, lo_open=True, hi=1e6, unit="h", doc="mean up spell of a zone")
    down_hours: float = declare(2.0, lo=0.0, lo_open=True, hi=1e6, unit="h", doc="mean down spell of a zone")
    wave_share: float = declare(1.0, lo=0.0, hi=1.0, unit="share",
                                doc="chance that a zone going down preempts each of its spot cards")
    rate: float = declare(0.0, lo=0.0, hi=100.0, unit="per card-month", doc="lone preemptions of a spot card")
    fallback_hours: float | None = declare(None, kind="any", parse=_hours_or_never, unit="h",
                                           doc="an emptied spot slot takes an on-demand card after this long "
                                               "(inf: never)")
    # The one way a grid says how much of a pool is spot: each pool entry's count
    # split (``split``). None: the pool's markets as written.
    share: float | None = declare(None, lo=0.0, hi=1.0, unit="share",
                                  doc="share of each pool entry's cards rented on spot (unset: the entries' markets)")

    def __post_init__(self):
        check_fields(self, "spot")


def split(pool: Pool, share: float) -> Pool:
    """``pool`` (every entry on-demand) with ``round(share · count)`` of each entry's
    cards (halves up) moved to a spot entry of the same class, placed right after
    it; an entry left with no card is dropped."""
    groups = []
    for card, n in pool.groups:
        k = int(math.floor(share * n + 0.5))
        if n - k:
            groups.append((card, n - k))
        if k:
            groups.append((dataclasses.replace(card, market="spot"), k))
    return Pool(tuple(groups))


__all__ = ["Failures", "MARKETS", "Spot", "split"]
