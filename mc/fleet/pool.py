"""Card classes and pools (SPEC §1.1)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from .. import _validate as v
from .._fields import Field, check_fields, declare
from .._pytree import set_field
from ..serving import card as serving_card
from ..units import HOURS
from ..serving import latency, routed, slo

# Where a class is rented (SPEC §10): on-demand, or spot (cheaper, and taken back).
MARKETS = ("on-demand", "spot")

# A month's bill is summed on the device in int32 cents; this bounds it.
MAX_POOL_CENTS = v.INT32_MAX


def _name(field: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        v.fail("card.name", name, "must be a non-empty string")
    return name


# A pool entry's count of cards of its class.
COUNT = Field(dataclasses.MISSING, lo=1, hi=100_000, kind="integer", unit="cards", doc="cards of this class")


@dataclass(frozen=True)
class CardClass:
    """A kind of card: its rated rate (tok/s) and monthly price ($ per card-month,
    at least $0.01, billed in whole cents)."""

    name: str = declare(kind="any", parse=_name, doc="the class's name in reports")
    rated: float = declare(lo=0.0, lo_open=True, unit="tok/s", doc="rated rate r")
    # A price rounds to whole cents; below one cent it would bill $0.
    price: float = declare(lo=0.01, hi=MAX_POOL_CENTS / 100, unit="$ per card-month", doc="price p")
    # SPEC §10: a spot card bills ``spot.price_factor`` × price and can be preempted.
    market: str = declare("on-demand", kind="choice", options=MARKETS,
                          doc="where the class is rented: on-demand, or spot (§10)")
    # SPEC §11: a class served by replicas of ``tp`` cards that step together (rated and
    # price stay per card: a replica is rated ``tp × rated`` and bills ``tp × price``).
    tp: int = declare(1, lo=1, hi=64, kind="integer", unit="cards",
                      doc="cards per replica (tensor parallel, §11): the replica runs at its slowest card's pace")

    def __post_init__(self):
        _name("card.name", self.name)  # first: the other fields' errors are named by it
        check_fields(self, self.name)

    @property
    def price_cents(self) -> int:
        return int(round(self.price * 100))

    @property
    def spot(self) -> bool:
        return self.market == "spot"

    @classmethod
    def from_serving(cls, model: str, gpu: str, price: float, *, batch: int, name: str | None = None,
                     **kw) -> "CardClass":
        """A class (named ``model@gpu`` unless ``name``) whose rated rate is what
        ``mc.serving`` says one ``gpu`` serves of ``model`` at ``batch`` concurrent
        requests (aggregate tok/s); ``price`` is $ per card-month and ``kw`` go to
        ``mc.serving.card``. A batch beyond the card's seats is refused, saying how
        many there are."""
        price = v.positive("price", price)
        if name is None or isinstance(name, str) and not name:
            name = f"{model}@{gpu}"
        c = serving_card(model, gpu, batch=batch, **kw)  # a replica's, with ``tp`` in ``kw``
        if c.seats is not None and c.batch_requested > c.seats:
            v.fail(f"pool.{name}.batch", c.batch_requested, f"does not fit: {c.gpu} seats {c.seats} requests of "
                   f"{c.context:,} tokens of context for {c.model}; use batch <= {c.seats} or a shorter context")
        return cls(name=name, rated=c.aggregate_tok_s_per_card, price=price, tp=c.tp)


# Hardware pool entries: a catalogue GPU serving a catalogue model (SPEC §5), and
# how each entry field maps onto ``mc.serving.card``.
HARDWARE = {"batch": "batch", "context": "context", "prompt": "prompt", "weight_bytes": "weight_bytes_per_param",
            "kv_bytes": "kv_bytes_per_element", "mem_util": "mem_util", "prefill_util": "prefill_util", "tp": "tp"}
PRICES = ("price_month", "price_hour")
# A pool entry's earlier names: each a one-line error naming the new.
RENAMED = {"price": "price_month"}


def renamed(entry: Mapping[str, Any], where: str, names: Mapping[str, str]) -> None:
    """Refuse a key of ``entry`` that ``names`` maps to its new name, in one line naming it."""
    for old, new in names.items():
        if old in entry:
            v.fail(f"{where}.{old}" if where else old, entry[old], f"is the older name of {new}: write {new} instead")


def entry_price(entry: dict, where: str) -> float:
    """$ per card-month from exactly one of ``price_month`` and ``price_hour``
    (× 730 h), popped from ``entry`` (``price``, ``price_month``'s older name, is
    refused naming it)."""
    renamed(entry, where, RENAMED)
    given = [k for k in PRICES if k in entry]
    if len(given) != 1:
        v.fail(where, {k: entry[k] for k in given} or None, "needs exactly one price: price_month ($ per "
               "card-month) or price_hour ($ per card-hour, 730 hours a month)")
    key = given[0]
    x = v.positive(f"{where}.{key}", entry.pop(key))
    return x * HOURS if key == "price_hour" else x


def hardware_card(entry: Mapping[str, Any]) -> CardClass:
    """A pool entry's card from a catalogue ``gpu`` and ``model`` at a ``batch``:
    ``{gpu, model, batch, [context, prompt, weight_bytes, kv_bytes, mem_util,
    prefill_util], price_month | price_hour, [name]}``; rated at the aggregate
    tok/s of SPEC §5 at that batch."""
    entry = dict(entry)
    known = {"gpu", "model", "name", *HARDWARE, *PRICES, *RENAMED}
    for key in entry:
        if key not in known:
            v.fail(f"pool.{key}", entry[key], "is not a field of a hardware card; known: " + ", ".join(sorted(known)))
    for key in ("gpu", "model", "batch"):
        if key not in entry:
            v.fail("pool", entry, f"a hardware card needs {key} (gpu, model and batch, e.g. batch = 64)")
    name = entry.pop("name", "@".join(" ".join(str(entry[k]).split()) for k in ("model", "gpu")))  # one line
    price = entry_price(entry, f"pool.{name}")
    model, gpu = entry.pop("model"), entry.pop("gpu")
    return CardClass.from_serving(model, gpu, price, name=name, **{HARDWARE[k]: x for k, x in entry.items()})


# A pool entry rated by its SLO (SPEC §7): what the search takes besides the card's queue.
# Their defaults: slo.SEARCH's (``slo_ttft`` is required: None), replications 100 (a replay: 1).
SLO_SEARCH = {k: None if f.default is dataclasses.MISSING else f.default for k, f in slo.SEARCH.items()}
# ``tp`` among them: a replica's queue, rated per card at its tok/s over ``tp``.
SLO_QUEUE = tuple(f.name for f in dataclasses.fields(latency.Serving))


POOL_SLO = {"router": "least_requests", "speeds": None}  # a pool rated at its SLO (SPEC §9)


@lru_cache(maxsize=None)
def _slo_tok_s(queue: latency.Serving, search: tuple, pool: tuple | None = None) -> float:
    """tok/s per card: a replica's (SPEC §11) over its ``tp`` cards; a pool's over its cards."""
    if pool is None:
        return slo.slo_rate(queue, **dict(search)).tok_s / queue.tp
    replicas, router, speeds = pool
    target = routed.RoutedPool(queue, cards=replicas, router=router, speeds=speeds)
    return slo.slo_rate(target, **dict(search)).tok_s / (replicas * queue.tp)


def slo_card(entry: Mapping[str, Any], count: int | None = None) -> CardClass:
    """A card class whose rated rate is its SLO-rated tok/s (SPEC §7): the highest
    arrival rate whose ``percentile`` TTFT is at most ``slo_ttft`` with probability
    ``share`` over ``replications``, times the traffic's mean answer tokens
    (``mc.serving.slo.rated_tok_s``).

    ``entry``: ``rated_from = "slo"``, ``price_month`` ($ per card-month) or
    ``price_hour`` ($ per card-hour), ``model``,
    ``gpu``, ``slo_ttft`` (s), optionally ``name`` (default ``model@gpu``),
    ``percentile``, ``share``, ``replications`` (default 100; a replay: 1), ``seed``,
    ``rel_tol`` and any field of ``mc.serving.latency.Serving`` (batcher, max_batch,
    prompt_mean, ..., and real traffic: ``arrivals``, ``cv``, ``log``, ``lengths``,
    ``block``, ``replay``).
    The same entry is searched once per process. Refused: ``n`` or ``warmup`` too
    short for the card's seats (``mc.serving.latency.short_of_seats``).

    ``rated_from = "pool-slo"`` (SPEC §9): the entry's ``count`` cards behind
    ``router`` (default least_requests; ``speeds`` optional, one factor per card)
    are searched together, and each card is rated at the pool's SLO tok/s divided
    by the count. Refused: ``n`` or ``warmup`` too short for the pool's seats
    (``RoutedPool.short_of_seats``).
    """
    entry = dict(entry)
    kind = v.choice("rated_from", entry.pop("rated_from", None), ["slo", "pool-slo"])
    known = {"name", *PRICES, *RENAMED, *SLO_SEARCH, *SLO_QUEUE, *(POOL_SLO if kind == "pool-slo" else ())}
    for key in entry:
        if key not in known:
            v.fail(f"pool.{key}", entry[key], "is not a field of an SLO-rated card; known: " + ", ".join(sorted(known)))
    for key in ("model", "gpu", "slo_ttft"):
        if key not in entry:
            v.fail("pool", entry, f"an SLO-rated card needs {key}")
    name = entry.pop("name", "@".join(" ".join(str(entry[k]).split()) for k in ("model", "gpu")))  # one line
    price = entry_price(entry, f"pool.{name}")
    search = {k: entry.pop(k, d) for k, d in SLO_SEARCH.items()}
    pool = None
    if kind == "pool-slo":
        pool = tuple(entry.pop(k, d) for k, d in POOL_SLO.items())
    where = f"pool.{name}."
    if pool is None and count is not None:
        COUNT.check(f"{where}count", count)  # before the search, as the pool would after it
    with v.renamed(prefix=where):  # the entry's fields as its table names them
        queue = latency.Serving(**entry)
    if pool is None:
        if count is not None:
            whole_replicas(f"{where}count", count, queue.tp)
        latency.check_seats(queue, where)  # a replication that only fills the card rates nothing
    else:
        count = v.count(f"{where}count", count, lo=1, hi=routed.MAX_CARDS * queue.tp)  # the cards routed together
        whole_replicas(f"{where}count", count, queue.tp)
        with v.renamed({"cards": f"{where}count", "router": f"{where}router", "speeds": f"{where}speeds"},
                       prefix=where):  # the router sees replicas (SPEC §11): a pool of count / tp queues
            target = routed.RoutedPool(queue, cards=count // queue.tp, router=pool[0], speeds=pool[1])
        target.check_seats(where)  # a replication that only fills the pool rates nothing
        pool = (target.cards, target.router, target.speeds)
    # Checked before the search is looked up by value (a list is not hashable).
    with v.renamed(prefix=where):
        search["slo_ttft"], search["percentile"], search["share"], search["rel_tol"] = slo.check_slo(
            search["slo_ttft"], search["percentile"], search["share"], search["rel_tol"])
        search["replications"] = latency.check_replications(queue, search["replications"], default=100)
        search["seed"] = slo.SEARCH["seed"].check("seed", search["seed"])
    return CardClass(name=name, rated=_slo_tok_s(queue, tuple(sorted(search.items())), pool), price=price,
                     tp=queue.tp)


def whole_replicas(field: str, count: int, tp: int) -> None:
    """Refuse (one line) a count of cards that is not whole replicas of ``tp``."""
    if count % tp:
        v.fail(field, count, f"must be a multiple of tp = {tp}: the cards form replicas of {tp}, "
               f"e.g. {max(tp, count - count % tp)}")


FLAGSHIP = CardClass("flagship", 7000.0, 2600.0)
BARGAIN = CardClass("bargain", 0.45 * 7000.0, 1400.0)
CLASSES = {c.name: c for c in (FLAGSHIP, BARGAIN)}


def card_class(name: str) -> CardClass:
    """A built-in card class by name."""
    v.choice("card", name, CLASSES)
    return CLASSES[name]


def _pair(group: Any) -> tuple:
    """A pool group: a ``(card, count)`` pair."""
    if not isinstance(group, (tuple, list)) or len(group) != 2:
        v.fail("pool.groups", group, "each group must be a (card class, count) pair, e.g. (mc.FLAGSHIP, 32)")
    return tuple(group)


@dataclass(frozen=True)
class Pool:
    """A pool: card classes with counts, cards laid out class by class.

    Hashable, so it can be a static field: the pool fixes every array's shape.
    """

    groups: tuple[tuple[CardClass, int], ...]

    def __post_init__(self):
        if not isinstance(self.groups, (tuple, list)):
            v.fail("pool.groups", self.groups, "must be a tuple of (CardClass, count) pairs, e.g. ((mc.FLAGSHIP, 32),)")
        groups = tuple(_pair(g) for g in self.groups)
        if not groups:
            v.fail("pool", "[]", "must hold at least one card class with a count >= 1")
        checked = []
        for card, count in groups:
            if not isinstance(card, CardClass):
                v.fail("pool.card", card, "must be a CardClass")
            checked.append((card, COUNT.check(f"pool.{card.name}.count", count)))
            whole_replicas(f"pool.{card.name}.count", count, card.tp)
        names = [(c.name, c.market) for c, _ in checked]
        if len(set(names)) != len(names):
            v.fail("pool", [c.name for c, _ in checked], "must name each card class once (per market)")
        set_field(self, "groups", tuple(checked))
        rent = sum(n * c.price_cents for c, n in checked)
        if rent > MAX_POOL_CENTS:
            v.fail("pool", self.describe(), f"rents ${rent / 100:,.2f} a month, above the "
                   f"${MAX_POOL_CENTS / 100:,.2f} that int32 cents hold")

    @classmethod
    def of(cls, *groups: tuple[CardClass | str, int]) -> "Pool":
        """A pool from ``(card, count)`` pairs, a card a class or a built-in's name:
        ``Pool.of(("flagship", 24), (BARGAIN, 8))``."""
        return cls(tuple((card_class(c) if isinstance(c, str) else c, n) for c, n in map(_pair, groups)))

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

    @property
    def replicated(self) -> bool:
        """Whether a class runs replicas of several cards (SPEC §11)."""
        return any(c.tp > 1 for c in self.classes)

    @property
    def replicas(self) -> int:
        """Replicas in the pool (a card of ``tp = 1`` is one)."""
        return sum(n // c.tp for c, n in self.groups)

    def rated(self) -> np.ndarray:
        """(pool,) float32 tok/s."""
        return np.repeat([c.rated for c in self.classes], self.counts).astype(np.float32)

    def price_cents(self) -> np.ndarray:
        """(pool,) int32 cents per card-month."""
        return np.repeat([c.price_cents for c in self.classes], self.counts).astype(np.int32)

    def describe(self) -> str:
        return " + ".join(f"{n} x {c.name}" + (" (spot)" if c.spot else "") + (f" (tp {c.tp})" if c.tp > 1 else "")
                          for c, n in self.groups)

    def tp(self) -> np.ndarray:
        """(pool,) int64: the cards in each card's replica (SPEC §11)."""
        return np.repeat([c.tp for c in self.classes], self.counts).astype(np.int64)

    def spot(self) -> np.ndarray:
        """(pool,) bool: the slots of spot classes (SPEC §10)."""
        return np.repeat([c.spot for c in self.classes], self.counts).astype(bool)
