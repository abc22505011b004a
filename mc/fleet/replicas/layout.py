"""Which cards form which replica (SPEC §11): a pool's static layout.

A class with ``tp = K`` groups its cards into replicas of ``K`` consecutive cards, class by
class, so replica ``j`` of the pool holds the cards ``members[j]``. A card of ``tp = 1`` is a
replica of one. Replicas of fewer members than the pool's largest ``tp`` repeat their
first member to fill the row: a minimum, an "any" or a first member is the same either
way, so every per-replica reduction runs on one (replicas, K) array.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..pool import CardClass, Pool


@dataclass(frozen=True, eq=False)
class Layout:
    """A pool's replicas (static, from the pool alone).

    members: (replicas, K) int32 the cards of each replica (K the pool's largest ``tp``).
    first: (replicas,) int32 each replica's first card. tp: (replicas,) int32 its size.
    unit_of: (pool,) int32 each card's replica. own: (replicas, K) bool a row's real
        cards (not its filler).
    pool: the pool of replica classes: one class per card class, rated ``tp × rated``
        and priced ``tp ×`` the card's cents, counting replicas.
    cents: (replicas,) int32 a replica's month. rated: (replicas,) float32 tok/s.
    """

    members: np.ndarray
    first: np.ndarray
    tp: np.ndarray
    pool: Pool
    cents: np.ndarray
    rated: np.ndarray
    unit_of: np.ndarray
    own: np.ndarray

    @property
    def size(self) -> int:
        return int(self.members.shape[1])


def replica_class(card: CardClass) -> CardClass:
    """A replica of ``card.tp`` cards as a class of its own: its rated rate and its
    price in whole cents (``tp ×`` the card's cents, exactly)."""
    return CardClass(name=card.name, rated=card.tp * card.rated, price=card.tp * card.price_cents / 100,
                     market=card.market)


@lru_cache(maxsize=64)
def layout(pool: Pool) -> Layout:
    """The replicas of ``pool`` (cached: the pool is static)."""
    k = max(c.tp for c in pool.classes)
    rows = []
    for (card, n), s in zip(pool.groups, pool.slices):
        for start in range(s.start, s.stop, card.tp):
            row = list(range(start, start + card.tp))
            rows.append(row + [start] * (k - card.tp))
    members = np.array(rows, np.int32).reshape(-1, k)
    tp = np.repeat([c.tp for c in pool.classes], [n // c.tp for c, n in pool.groups]).astype(np.int32)
    replicas = Pool(tuple((replica_class(c), n // c.tp) for c, n in pool.groups))
    unit_of = np.repeat(np.arange(len(tp), dtype=np.int32), tp)
    own = np.arange(k)[None, :] < tp[:, None]
    return Layout(members, members[:, 0].copy(), tp, replicas, replicas.price_cents(), replicas.rated(), unit_of, own)


__all__ = ["Layout", "layout", "replica_class"]
