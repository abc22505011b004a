"""The autoscaler's parameters (SPEC §6): rounds, replacement, boot, hysteresis."""

from __future__ import annotations

import numpy as np

from .._fields import check_fields, declare
from .._pytree import pytree_dataclass
from ..units import HOURS


@pytree_dataclass(static=("period", "replace", "failover"))
class Autoscaler:
    """Decisions every ``period`` hours (rounds start at ``k·period``); with
    ``replace`` an evicted card's slot takes a fresh card at once, serving from
    ``boot_hours`` later; a card is evicted once marked in ``strikes``
    consecutive rounds, and only after serving ``min_age`` hours. With
    ``failover`` (SPEC §10) a run slot that empties between rounds hands its place
    to the best scored spare. ``period``, ``replace`` and ``failover`` fix the
    month's shape (static)."""

    period: int = declare(HOURS, lo=1, hi=HOURS, kind="integer", unit="h", doc="hours between decisions")
    replace: bool = declare(False, kind="flag", doc="an evicted card's slot takes a fresh card")
    boot_hours: float = declare(1.0, lo=0.0, hi="period", hi_open=True, unit="h",
                                doc="a replacement serves this long after placement")
    strikes: int = declare(1, lo=1, kind="integer", unit="rounds", doc="consecutive marked rounds before an eviction")
    min_age: float = declare(0.0, lo=0.0, unit="h", doc="hours served before a card may be evicted")
    # SPEC §10: when a run slot empties between rounds, the best scored spare joins the run set.
    failover: bool = declare(True, kind="flag", doc="a spare takes an emptied run slot's place at once (§10)")

    def __post_init__(self):
        check_fields(self, "autoscaler")

    @property
    def rounds(self) -> int:
        """``K = ceil(730 / period)``."""
        return -(-HOURS // self.period)

    def starts(self) -> np.ndarray:
        """(rounds,) int32 hour each round starts, ``t_k = k·period``."""
        return (np.arange(self.rounds) * self.period).astype(np.int32)

    def lengths(self) -> np.ndarray:
        """(rounds,) int32 hours of each round (the last may be shorter)."""
        t = self.starts()
        return (np.minimum(t + self.period, HOURS) - t).astype(np.int32)

    def rent(self, cents: np.ndarray) -> np.ndarray:
        """(rounds, ...) int32: monthly prices ``cents`` prorated by each round's
        hours, each rounded to the cent (exact, in float64)."""
        share = self.lengths().astype(np.float64) / HOURS
        cents = np.asarray(cents, np.float64)
        return np.round(cents[None] * share.reshape((-1,) + (1,) * cents.ndim)).astype(np.int32)
