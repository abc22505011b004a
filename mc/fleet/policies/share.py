"""``share`` (SPEC §1.5): evict the ``floor(share · P + 1e-9)`` lowest relative scores."""

from __future__ import annotations

from .base import Cards, Policy, declare, rule


@rule("share")
class Share(Policy):
    """Marks every eligible card: the package's cap, ``floor(share · P + 1e-9)``,
    keeps the lowest relative scores, however healthy they are."""

    share: float = declare(0.2, lo=0.0, hi=1.0, hi_open=True, unit="share of pool", doc="cards evicted under share",
                           grid=(0.0, 0.05, 0.1, 0.15, 0.2, 0.3))

    def cap(self) -> float:
        return self.share

    def mark(self, cards: Cards):
        return cards.xp.ones(cards.rel.shape, bool)
