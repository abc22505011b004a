"""``floor`` (SPEC §1.5): an absolute rule, as a hardware SLA reads: ``s / r < floor``."""

from __future__ import annotations

import jax
import numpy as np

from .base import Cards, NumpyCards, Policy, cap_param, param, rule


@rule("floor")
class Floor(Policy):
    """Marks every card scoring below ``floor`` × its own rated rate."""

    floor: float = param(0.85, lo=0.0, hi=1.5, lo_open=True, unit="× rated", doc="evict below floor × rated rate",
                         grid=(0.6, 0.7, 0.8, 0.85, 0.9, 0.95))
    max_share: float = cap_param()

    def mark(self, cards: Cards) -> jax.Array:
        return cards.rel < cards.const(self.floor)

    def mark_numpy(self, cards: NumpyCards) -> np.ndarray:
        return cards.rel < cards.const(self.floor)
