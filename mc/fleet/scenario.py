"""A fleet-month scenario: every parameter of SPEC §1 (and §6's autoscaler),
validated on entry.

Scenarios convert to and from plain dicts (TOML tables), and ``replace`` takes
dotted field names (``"eviction.share"``), which sweeps use.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _validate as v
from .._pytree import field_keys, fields_dict, pytree_dataclass, section, set_field
from . import limits, structure
from .outages import plan as outage_plan
from .outages.fields import Failures, Spot
from .outages.fields import split as split_pool
from .accounting import churn_cents
from .checks import Checks
from .demand import Demand
from .dips import Dips
from .eviction import Eviction
from .lottery import Lottery
from .outages.fields import MARKETS
from .pool import CLASSES, PRICES, RENAMED, CardClass, Pool, card_class, entry_price, hardware_card, slo_card
from .rounds import Autoscaler
from .runset import check_mode
from .swing import Swing
from .wander import Wander
from .window import Window

SECTIONS = {"window": Window, "eviction": Eviction, "demand": Demand, "lottery": Lottery,
            "dips": Dips, "wander": Wander, "swing": Swing, "checks": Checks}
# Sections present only when given: a scenario with ``[autoscaler]`` is a SPEC §6 month.
OPTIONAL = {"autoscaler": Autoscaler, "failures": Failures, "spot": Spot}


@pytree_dataclass(static=("pool", "runset", "structure", "outages", "written_pool"))
class Scenario:
    """One fleet-month's parameters. ``pool`` and ``runset`` fix shapes and modes
    (static); the rest are pytree leaves, so a sweep over them compiles once.
    ``autoscaler`` (None: the §1 month) makes the month SPEC §6's."""

    pool: Pool
    window: Window = dataclasses.field(default_factory=Window)
    eviction: Eviction = dataclasses.field(default_factory=Eviction)
    runset: str = "steady"
    demand: Demand = dataclasses.field(default_factory=Demand)
    lottery: Lottery = dataclasses.field(default_factory=Lottery)
    dips: Dips = dataclasses.field(default_factory=Dips)
    wander: Wander = dataclasses.field(default_factory=Wander)
    swing: Swing = dataclasses.field(default_factory=Swing)
    checks: Checks = dataclasses.field(default_factory=Checks)
    autoscaler: Autoscaler | None = None
    # SPEC §10 (None: every term off): hard failures, and the spot market's zones.
    failures: Failures | None = None
    spot: Spot | None = None
    # Derived on the host in float64, so counts and cents are exact:
    evict_limit: int = dataclasses.field(init=False, default=0)  # most cards evicted
    churn_cents: np.ndarray = dataclasses.field(init=False, default=None)  # (pool,) int32
    # Which SPEC §1.4.1 terms run and the window's hours on their grid (static);
    # None when every term is zero: the month is then §1.4's bit for bit.
    structure: structure.Static | None = dataclasses.field(init=False, default=None)
    # SPEC §10's static shape (``outages.plan.static``); None when every term is off:
    # the month is then §6's bit for bit.
    outages: outage_plan.Static | None = dataclasses.field(init=False, default=None)
    # The pool as written when ``spot.share`` split it (``pool`` is then the split
    # one, which the month reads); None otherwise. The dict form writes this one.
    written_pool: Pool | None = dataclasses.field(init=False, default=None)

    def __post_init__(self):
        if not isinstance(self.pool, Pool):
            v.fail("pool", self.pool, "must be a Pool")
        check_mode(self.runset)
        for name, cls in SECTIONS.items():
            if not isinstance(getattr(self, name), cls):
                v.fail(name, getattr(self, name), f"must be a {cls.__name__}")
        for name, cls in OPTIONAL.items():
            if getattr(self, name) is not None and not isinstance(getattr(self, name), cls):
                v.fail(name, getattr(self, name), f"must be a {cls.__name__} or absent")
        self._split()
        set_field(self, "structure", structure.static(self.window, self.wander, self.swing))
        limits.check_money(self.pool, self.eviction.churn)
        limits.check_floats(self.pool, self.lottery, self.window, self.demand)
        # SPEC §11: the rule ranks replicas, or every card under ``evict = "member"``.
        ranked = self.pool.size if self.eviction.evict == "member" else self.pool.replicas
        set_field(self, "evict_limit", self.eviction.limit(ranked))
        set_field(self, "churn_cents", churn_cents(self.pool, self.eviction.churn))
        self._replicas()
        self._outages()
        if self.autoscaler is not None:  # a replica evicted whole bills its cards' fees (SPEC §11)
            whole = self.by_replica and self.eviction.evict == "replica"
            fees = self.churn_cents.astype(np.int64) * (self.pool.tp() if whole else 1)
            limits.check_rounds_money(self.pool, self.autoscaler, self.evict_limit, fees)

    @property
    def by_replica(self) -> bool:
        """Whether the month runs SPEC §11's replicas: a class of ``tp > 1``, or a
        rule that ranks members (each card its own replica then)."""
        return self.pool.replicated or self.eviction.evict == "member"

    def _replicas(self) -> None:
        """SPEC §11 runs in §1's month (beside the fleet's swing) and in §6's rounds,
        not yet with the wander or §10's terms."""
        if not self.by_replica:
            return
        what = "replicas (a pool entry with tp > 1)" if self.pool.replicated else "evict = \"member\""
        if self.structure is not None and self.structure.wander:
            v.fail("wander.sd", self.wander.sd, f"the cards' wander does not run beside {what} yet: set "
                   "wander.sd = 0 (the fleet's swing runs)")
        if self.autoscaler is not None and self.structure is not None:
            v.fail("swing.diurnal" if self.swing.diurnal else "window.common_hour" if self.window.common_hour
                   else "swing.sd", "on", f"the autoscaler's rounds take {what} without wander or swing for now: "
                   "set them to 0, or remove [autoscaler]")

    def _split(self) -> None:
        """``spot.share``: each entry of an all on-demand pool split between the
        markets (``outages.fields.split``); the pool as written is kept for the dict form."""
        share = None if self.spot is None else self.spot.share
        if share is None:
            return
        if self.pool.replicated:  # SPEC §11's replicas take no spot card yet (``_replicas``)
            v.fail("spot.share", share, "spot cards do not run beside replicas (a pool entry with tp > 1) yet: "
                   "drop spot.share")
        if self.pool.spot().any():
            name = next(c.name for c in self.pool.classes if c.spot)
            v.fail("spot.share", share, f"splits on-demand pool entries, but pool entry {name} is already "
                   "market = \"spot\"; give its count there or drop spot.share")
        set_field(self, "written_pool", self.pool)
        set_field(self, "pool", split_pool(self.pool, share))

    def _outages(self) -> None:
        """SPEC §10: spot fields need a spot card (or a ``spot.share``, which may give
        none: share 0 is the pool on demand); the terms run in §6's month (an
        ``[autoscaler]`` of its defaults when none is given) and not beside §1.4.1's."""
        if self.spot is not None and self.spot.share is None and not self.pool.spot().any():
            v.fail("spot", fields_dict(self.spot), "needs a spot card in the pool (a pool entry with "
                   "market = \"spot\"); remove [spot], rent some cards on spot or give spot.share")
        a = self.autoscaler
        static = outage_plan.static(self.pool, self.failures, self.spot if self.spot is not None else Spot(),
                                    True if a is None else a.failover)
        if static is None:
            return
        if self.by_replica:
            what = "replicas (a pool entry with tp > 1)" if self.pool.replicated else "evict = \"member\""
            v.fail("failures" if static.failures else "spot", "on", f"failures and spot cards do not run beside "
                   f"{what} yet: set failures.rate = 0 and rent the pool on demand")
        if self.structure is not None:
            v.fail("failures" if static.failures else "spot", "on", "failures and spot cards do not run with "
                   "wander, swing or window.common_hour yet: set those to 0")
        if a is None:
            set_field(self, "autoscaler", Autoscaler())
        if self.spot is None and static.any_spot:
            set_field(self, "spot", Spot())
        set_field(self, "outages", static)

    # -- dict form -------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain-data form (the TOML layout); ``from_dict`` inverts it. A log
        demand is its path and sha256 (``Demand.to_data``): the files layer
        (``mc.files.scenario_from_data``) reads it back."""
        out = self._fields()
        out["demand"] = self.demand.to_data()
        return out

    def _fields(self) -> dict[str, Any]:
        """The sections' fields as given (a log as its ``RequestLog``): the base
        ``from_dict`` merges onto."""
        pool = self.pool if self.written_pool is None else self.written_pool
        out: dict[str, Any] = {"pool": pool_to_data(pool), "runset": self.runset}
        out.update({name: fields_dict(getattr(self, name)) for name in SECTIONS})
        out.update({name: fields_dict(getattr(self, name)) for name in OPTIONAL if getattr(self, name) is not None})
        return out

    @classmethod
    def from_dict(cls, data: dict, base: "Scenario | None" = None) -> "Scenario":
        """Build from plain data; fields not given come from ``base`` (or defaults).

        Unknown sections or fields are errors naming them. An optional section
        (``autoscaler``) is present when given (an empty table: its defaults) or in
        ``base``; given as None it is removed.
        """
        v.instance("data", data, Mapping, "a dict of scenario fields (the TOML layout)")
        v.instance("base", base, (Scenario, type(None)), "a Scenario or None")
        data = dict(data)
        merged = base._fields() if base is not None else {}
        for key in data:
            if key not in ("pool", "runset") and key not in SECTIONS and key not in OPTIONAL:
                v.fail(key, data[key], "is not a scenario field; known: pool, runset, "
                       + ", ".join(list(SECTIONS) + list(OPTIONAL)))
        sections = {name: section(name, scls, data.get(name, {}), merged.get(name))
                    for name, scls in SECTIONS.items()}
        for name, scls in OPTIONAL.items():
            given = data.get(name, {} if name in merged else None)
            sections[name] = None if given is None else section(name, scls, given, merged.get(name))
        if "pool" not in data and "pool" not in merged:
            v.fail("pool", None, "must be given, e.g. \"32 x flagship\"")
        pool = pool_from_data(data.get("pool", merged.get("pool")))
        return cls(pool=pool, runset=data.get("runset", merged.get("runset", "steady")), **sections)

    def replace(self, updates: dict[str, Any] | None = None, **kw) -> "Scenario":
        """A copy with fields changed, by dotted name: ``replace({"window.hours": 24})``."""
        v.instance("updates", updates, (Mapping, type(None)),
                   "a dict of dotted field names, e.g. {'window.hours': 24}")
        nested: dict[str, Any] = {}
        for key, val in {**(updates or {}), **kw}.items():
            if not isinstance(key, str):
                raise TypeError(f"updates: a field name must be a str such as 'window.hours', not "
                                f"{type(key).__name__} {key!r}")
            head, _, tail = key.partition(".")
            if tail:
                if head not in SECTIONS and head not in OPTIONAL:
                    v.fail(key, val, "is not a scenario field; sections: " + ", ".join(list(SECTIONS) + list(OPTIONAL)))
                nested.setdefault(head, {})[tail] = val
            else:
                nested[head] = val
        return Scenario.from_dict(nested, base=self)


def field_names() -> list[str]:
    """Every dotted field name a sweep may vary."""
    names = ["pool", "runset"]
    for name, scls in {**SECTIONS, **OPTIONAL}.items():
        names += [f"{name}.{key}" for key in field_keys(scls)]
    return names


_GROUP = re.compile(r"^\s*(\d+)\s*[x×*]\s*([A-Za-z0-9_.@-]+)\s*$")


def pool_from_data(data: Any) -> Pool:
    """A pool from ``"32 x flagship"``, ``"24 x bargain + 8 x flagship"``, or a list of
    tables ``{card = "flagship", count = 32}`` / ``{name, rated, price, count}`` /
    ``{rated_from = "slo", model, gpu, slo_ttft, price, count, ...}`` (rated at its
    SLO tok/s, ``mc.fleet.pool.slo_card``)."""
    if isinstance(data, Pool):
        return data
    if isinstance(data, str):
        groups = []
        for part in data.split("+"):
            m = _GROUP.match(part)
            if not m:
                v.fail("pool", data, "must look like '32 x flagship' or '24 x bargain + 8 x flagship'")
            groups.append((card_class(m.group(2)), int(m.group(1))))
        return Pool(tuple(groups))
    if isinstance(data, (list, tuple)) and data:
        groups = []
        for item in data:
            if not isinstance(item, dict) or "count" not in item:
                v.fail("pool", item, "each entry must be a table with a count and a card (or name, rated, price)")
            item = dict(item)
            n = item.pop("count")
            market = item.pop("market", None)
            if "rated_from" in item:
                card = slo_card(item, count=n)
            elif "gpu" in item:
                card = hardware_card(item)
            elif "card" in item:
                card = card_class(item.pop("card"))
                unknown = sorted(set(item) - {"name", "rated", "market", "tp", *PRICES, *RENAMED})
                if unknown:
                    v.fail(f"pool.{card.name}.{unknown[0]}", item[unknown[0]],
                           "is not a pool entry field; known: card, count, name, rated, price_month, price_hour, "
                           "market, tp")
                price = entry_price(item, f"pool.{card.name}") if any(k in item for k in (*PRICES, *RENAMED)) else card.price
                card = CardClass(**{"name": card.name, "rated": card.rated, **item, "price": price})
            else:
                unknown = sorted(set(item) - {"name", "rated", "market", "tp", *PRICES, *RENAMED})
                if unknown or "name" not in item or "rated" not in item:
                    v.fail("pool", item, "a custom card needs name, rated and price_month or price_hour "
                           "(or card = a built-in class, or gpu, model and batch)")
                name = item["name"]
                card = CardClass(name=name, rated=item["rated"], price=entry_price(item, f"pool.{name}"),
                                 **({"tp": item["tp"]} if "tp" in item else {}))
            if market is not None:  # SPEC §10: where the entry's cards are rented
                card = dataclasses.replace(card, market=v.choice(f"pool.{card.name}.market", market, MARKETS))
            groups.append((card, n))
        return Pool(tuple(groups))
    v.fail("pool", data, "must be a string like '32 x flagship' or a list of tables")


def pool_to_data(pool: Pool) -> Any:
    if all(CLASSES.get(c.name) == c for c in pool.classes):
        return " + ".join(f"{n} x {c.name}" for c, n in pool.groups)
    return [{"name": c.name, "rated": c.rated, "price_month": c.price, "count": n,
             **({"market": c.market} if c.spot else {}), **({"tp": c.tp} if c.tp > 1 else {})}
            for c, n in pool.groups]
