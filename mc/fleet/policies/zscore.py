"""``zscore`` (SPEC §1.5): a robust outlier rule, below ``median − k · 1.4826 · MAD``."""

from __future__ import annotations

from .base import Cards, Policy, cap_param, declare, rule

# MAD × 1.4826 estimates a normal spread's standard deviation.
MAD_SCALE = 1.4826


@rule("zscore")
class ZScore(Policy):
    """Marks every card whose relative score is below ``median − k · 1.4826 · MAD``,
    the median and MAD (the median of ``|rel − median|``) taken over the eligible
    cards: the line follows the pool's own spread, so a tight pool evicts a card
    that is only a little slow and a noisy window protects healthy cards."""

    k: float = declare(3.0, lo=0.0, lo_open=True, unit="× 1.4826 MAD",
                       doc="evict below the median less k × 1.4826 × MAD of the relative scores",
                       grid=(1.0, 1.5, 2.0, 2.5, 3.0, 4.0))
    max_share: float = cap_param()

    def mark(self, cards: Cards):
        mid = cards.median(cards.rel)
        mad = cards.median(cards.xp.abs(cards.rel - mid))
        return cards.rel < mid - cards.const(self.k) * cards.const(MAD_SCALE) * mad
