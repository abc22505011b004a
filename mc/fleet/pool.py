"""Card classes and pools (SPEC §1.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _validate as v
from ..serving import card as serving_card

# A month's bill is summed on the device in int32 cents; this bounds it.
MAX_POOL_CENTS = 2**31 - 1


@dataclass(frozen=True)
class CardClass:
    """A kind of card: its rated rate (tok/s) and monthly price ($ per card-month,
    at least $0.01, billed in whole cents)."""

    name: str
    rated: float  # tok/s
    price: float  # $ per card-month

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            v.fail("card.name", self.name, "must be a non-empty string")
        object.__setattr__(self, "rated", v.positive(f"{self.name}.rated", self.rated))
        # A price rounds to whole cents; below one cent it would bill $0.
        object.__setattr__(self, "price", v.number(f"{self.name}.price", self.price, lo=0.01, hi=MAX_POOL_CENTS / 100))

    @property
    def price_cents(self) -> int:
        return int(round(self.price * 100))

    @classmethod
    def from_serving(cls, model: str, gpu: str, price: float, **kw) -> "CardClass":
        """A class named ``model@gpu`` whose rated rate is what ``mc.serving`` says
        one ``gpu`` serves of ``model`` (aggregate tok/s); ``price`` is $ per
        card-month and ``kw`` go to ``mc.serving.card``."""
        price = v.positive("price", price)
        return cls(name=f"{model}@{gpu}", rated=serving_card(model, gpu, **kw).aggregate_tok_s, price=price)


FLAGSHIP = CardClass("flagship", 7000.0, 2600.0)
BARGAIN = CardClass("bargain", 0.45 * 7000.0, 1400.0)
CLASSES = {c.name: c for c in (FLAGSHIP, BARGAIN)}


def card_class(name: str) -> CardClass:
    """A built-in card class by name."""
    v.choice("card", name, CLASSES)
    return CLASSES[name]


@dataclass(frozen=True)
class Pool:
    """A pool: card classes with counts, cards laid out class by class.

    Hashable, so it can be a static field: the pool fixes every array's shape.
    """

    groups: tuple[tuple[CardClass, int], ...]

    def __post_init__(self):
        groups = tuple(self.groups)
        if not groups:
            v.fail("pool", "[]", "must hold at least one card class with a count >= 1")
        checked = []
        for card, count in groups:
            if not isinstance(card, CardClass):
                v.fail("pool.card", card, "must be a CardClass")
            checked.append((card, v.count(f"pool.{card.name}.count", count, lo=1, hi=100_000)))
        names = [c.name for c, _ in checked]
        if len(set(names)) != len(names):
            v.fail("pool", names, "must name each card class once")
        object.__setattr__(self, "groups", tuple(checked))
        rent = sum(n * c.price_cents for c, n in checked)
        if rent > MAX_POOL_CENTS:
            v.fail("pool", self.describe(), f"rents ${rent / 100:,.2f} a month, above the "
                   f"${MAX_POOL_CENTS / 100:,.2f} that int32 cents hold")

    @classmethod
    def of(cls, *groups: tuple[CardClass | str, int]) -> "Pool":
        return cls(tuple((card_class(c) if isinstance(c, str) else c, n) for c, n in groups))

    @property
    def size(self) -> int:
        return sum(n for _, n in self.groups)

    @property
    def classes(self) -> tuple[CardClass, ...]:
        return tuple(c for c, _ in self.groups)

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(n for _, n in self.groups)

    @property
    def slices(self) -> tuple[slice, ...]:
        """Each class's cards, as a slice of the pool axis."""
        ends = np.cumsum(self.counts)
        return tuple(slice(int(e - n), int(e)) for e, n in zip(ends, self.counts))

    def rated(self) -> np.ndarray:
        """(pool,) float32 tok/s."""
        return np.repeat([c.rated for c in self.classes], self.counts).astype(np.float32)

    def price_cents(self) -> np.ndarray:
        """(pool,) int32 cents per card-month."""
        return np.repeat([c.price_cents for c in self.classes], self.counts).astype(np.int32)

    def describe(self) -> str:
        return " + ".join(f"{n} x {c.name}" for c, n in self.groups)
