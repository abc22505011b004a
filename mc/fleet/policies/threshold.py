"""``threshold`` (SPEC §1.5): below ``theta`` times the median relative score."""

from __future__ import annotations

from .base import Cards, Policy, cap_param, declare, rule


@rule("threshold")
class Threshold(Policy):
    """Marks every card whose relative score is below ``theta`` × the median
    relative score of the eligible cards (the whole pool in §1)."""

    theta: float = declare(0.8, lo=0.0, lo_open=True, unit="× median",
                           doc="evict below theta × the median relative score",
                           grid=(0.6, 0.7, 0.8, 0.85, 0.9, 0.95))
    max_share: float = cap_param()

    def mark(self, cards: Cards):
        return cards.rel < cards.const(self.theta) * cards.median(cards.rel)
