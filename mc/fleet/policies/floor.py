"""``floor`` (SPEC §1.5): an absolute rule, as a hardware SLA reads: ``s / r < floor``."""

from __future__ import annotations

from .base import Cards, Policy, cap_param, declare, rule


@rule("floor")
class Floor(Policy):
    """Marks every card scoring below ``floor`` × its own rated rate."""

    floor: float = declare(0.85, lo=0.0, hi=1.5, lo_open=True, unit="× rated", doc="evict below floor × rated rate",
                           grid=(0.6, 0.7, 0.8, 0.85, 0.9, 0.95))
    max_share: float = cap_param()

    def mark(self, cards: Cards):
        return cards.rel < cards.const(self.floor)
