"""The autoscaler's parameters (SPEC §6): rounds, replacement, boot, hysteresis."""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from .._pytree import pytree_dataclass, set_field
from ..units import HOURS


@pytree_dataclass(static=("period", "replace"))
class Autoscaler:
    """Decisions every ``period`` hours (rounds start at ``k·period``); with
    ``replace`` an evicted card's slot takes a fresh card at once, serving from
    ``boot_hours`` later; a card is evicted once marked in ``strikes``
    consecutive rounds, and only after serving ``min_age`` hours. ``period``
    and ``replace`` fix the month's shape (static)."""

    period: int = HOURS
    replace: bool = False
    boot_hours: float = 1.0
    strikes: int = 1
    min_age: float = 0.0

    def __post_init__(self):
        set_field(self, "period", v.count("autoscaler.period", self.period, lo=1, hi=HOURS))
        if not isinstance(self.replace, (bool, np.bool_)):
            v.fail("autoscaler.replace", self.replace, "must be true or false")
        set_field(self, "replace", bool(self.replace))
        set_field(self, "boot_hours", v.number("autoscaler.boot_hours", self.boot_hours, lo=0.0,
                                               hi=float(self.period), hi_open=True))
        set_field(self, "strikes", v.count("autoscaler.strikes", self.strikes, lo=1))
        set_field(self, "min_age", v.nonneg("autoscaler.min_age", self.min_age))

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
