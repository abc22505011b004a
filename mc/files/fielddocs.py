"""What every field of a scenario file or a buying-plan file means: its unit and a
few words, read from the fields' declarations (``mc._fields.declare``: docs/model.md's
tables are checked against them), and its default (from the dataclasses' own defaults).
A few keys a file may hold that no dataclass field declares (a pool entry's, a
plan's ``price_hour``, ``trace_csv``) are written here.

A registry is ``{section: {field: (unit, meaning)}}``; the top level is section
``""``. A unit is short (``h``, ``tok/s``, ``$ per card-month``, ``share``, ``×``)
or empty for a label or a plain ratio. Fields are named dotted, ``"window.hours"``,
or bare at the top level, ``"runset"``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..buy import Procurement
from ..buy import plan as buy_plan
from ..buy.catalogue import CHIP_NAMES, CHIPS, MODELS
from ..buy.plan import BuyChecks
from ..buy.terms import Repairs, SpotMarket
from .._fields import declarations
from ..fleet import Eviction, policies
from ..fleet.checks import Checks
from ..fleet.demand import LOG_FIELDS, Demand
from ..fleet.dips import Dips
from ..fleet.lottery import Lottery
from ..fleet.outages import Failures, Spot
from ..fleet.rounds import Autoscaler
from ..fleet.swing import Swing
from ..fleet.wander import Wander
from ..fleet.window import Window
from ..fleet import scenario as fleet_scenario
from ..fleet.pool import COUNT, CardClass
from ..serving.arithmetic import INPUTS
from ..serving.queue import Serving
from ..serving.slo import SEARCH as SLO_FIELDS

SERVING = declarations(Serving)
from ..units import HOURS

PRESET = ("", "a preset to start from; every field not written comes from it")


def declared_docs(cls, *, skip: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """``{field: (unit, meaning)}`` of a section from its fields' declarations."""
    return {name: (d.unit, d.doc) for name, d in declarations(cls).items() if name not in skip}


def eviction_docs() -> dict[str, tuple[str, str]]:
    """The ``[eviction]`` table's fields: the policy, each registered rule's own
    fields as the rule declares them (``mc.fleet.policies``), the churn fee."""
    names = [c.name for c in policies.BUILTINS]
    out = {"policy": ("", f"eviction rule: {', '.join(names)} or \"file.py:Class\" (your own)")}
    for field in policies.fields():
        d = policies.declaration(field)
        out[field] = (d.unit, d.doc)
    out.update(declared_docs(Eviction))
    return out


EVICTION = eviction_docs()

# A file's ``trace_csv`` is read into ``trace`` (``mc.files``): no field of its own.
DEMAND = {**declared_docs(Demand), "trace_csv": ("path", "CSV file holding the trace")}

# A pool entry (an inline table of ``pool = [...]``): §1.1's class, a hardware card's
# §5 inputs, an SLO-rated card's §7 search and queue, each as its module declares it;
# the keys below that no field declares are a file's own.
_CLASS = declared_docs(CardClass)
POOL_ENTRY = {
    "count": (COUNT.unit, COUNT.doc),
    "card": ("", "built-in class to start from: flagship or bargain"),
    "name": _CLASS["name"],
    "rated": _CLASS["rated"],
    "price_month": _CLASS["price"],
    "price_hour": ("$ per card-hour", _CLASS["price"][1] + " ÷ 730"),
    "market": _CLASS["market"],
    **{name: (d.unit, d.doc) for name, d in INPUTS.items()},
    "gpu": (SERVING["gpu"].unit, SERVING["gpu"].doc),
    "model": (SERVING["model"].unit, SERVING["model"].doc),
    "rated_from": ("", "slo: rate the card at its latency SLO"),
    **{name: (d.unit, d.doc) for name, d in SLO_FIELDS.items()},
    "columns": ("", "the log's time, prompt and answer columns"),
    **declared_docs(Serving, skip=("model", "gpu")),
}

FLEET: dict[str, dict[str, tuple[str, str]]] = {
    "": {
        "preset": PRESET,
        "pool": ("", "the cards that may run, e.g. \"32 x flagship\""),
        "runset": ("", "survivors kept warm: steady (mean), peak or all"),
    },
    "pool": POOL_ENTRY,
    "window": declared_docs(Window),
    "eviction": EVICTION,
    "demand": DEMAND,
    "lottery": declared_docs(Lottery),
    "dips": declared_docs(Dips),
    "wander": declared_docs(Wander),
    "swing": declared_docs(Swing),
    "checks": declared_docs(Checks),
    "autoscaler": declared_docs(Autoscaler),
    "failures": declared_docs(Failures),
    "spot": declared_docs(Spot),
}

_PLAN = declarations(Procurement)
# A plan's per-chip tables (``[owned]``, ...), each a declared field of ``Procurement``.
_PER_CHIP = {"owned": "owned", "rent_cap": "rent_cap", "rent_spot": "rent_spot", "price_month": "prices",
             "slots": "slots", "spot_slots": "spot_slots"}


def _per_chip(unit: str, meaning: str) -> dict[str, tuple[str, str]]:
    return {chip: (unit, f"{chip}: {meaning}") for chip in CHIP_NAMES}


_BUY_DEMAND = {k: x for k, x in DEMAND.items() if k not in ("trace_csv", *LOG_FIELDS)}
_BUY_DEMAND["shape"] = ("", "hourly shape: flat, diurnal, weekly or trace")
_BUY_DEMAND["level"] = ("tok/s", "ignored: the shape is scaled to the forecast")

BUY: dict[str, dict[str, tuple[str, str]]] = {
    "": {
        "preset": PRESET,
        **{name: (d.unit, d.doc) for name, d in _PLAN.items() if d.kind != "any" or name == "model"},
        "slots": (_PLAN["slots"].unit + " per chip", _PLAN["slots"].doc),
        "spot_slots": (_PLAN["spot_slots"].unit + " per chip", _PLAN["spot_slots"].doc),
    },
    "demand": _BUY_DEMAND,
    **{table: _per_chip(_PLAN[name].unit, _PLAN[name].doc) for table, name in _PER_CHIP.items()},
    "price_hour": _per_chip("$ per card-hour", _PLAN["prices"].doc + " ÷ 730"),
    "lottery": declared_docs(Lottery),
    "checks": declared_docs(BuyChecks),
    "failures": declared_docs(Repairs),
    "spot": declared_docs(SpotMarket),
}

FIELDS = {"fleet": FLEET, "buy": BUY}


def describe(kind: str, name: str) -> tuple[str, str] | None:
    """``(unit, meaning)`` of field ``name`` (``"window.hours"``, ``"runset"``) of
    a ``kind`` file (``"fleet"`` or ``"buy"``); None for a field it does not know."""
    section, _, field = name.partition(".") if "." in name else ("", "", name)
    if kind == "fleet" and section == "eviction":  # rules registered since import too
        return eviction_docs().get(field)
    return FIELDS[kind].get(section, {}).get(field)


def flatten(data: dict) -> dict[str, Any]:
    """Plain data (a TOML document) as ``{dotted name: value}``: a table's fields
    as ``"section.field"``, a top-level value under its own name."""
    out: dict[str, Any] = {}
    for key, x in data.items():
        if isinstance(x, dict):
            out.update({f"{key}.{k}": y for k, y in x.items()})
        else:
            out[key] = x
    return out


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _section(obj) -> dict[str, Any]:
    """A section's defaults: the fields of its default instance (``None`` left out);
    for ``[eviction]`` also every registered rule's fields' defaults."""
    if hasattr(obj, "to_fields"):
        out = {k: x for k, x in obj.to_fields().items() if x is not None}
        if isinstance(obj, Eviction):
            for field in policies.fields():
                out.setdefault(field, policies.declaration(field).default)
        return out
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)
            if f.init and getattr(obj, f.name) is not None}


def defaults(kind: str, model: str | None = None) -> dict[str, Any]:
    """Each field's default as ``{dotted name: value}``, from the dataclasses'
    defaults (a section's are its default instance's fields, so ``demand.level``
    is 60,000 tok/s). Fields with no default (``pool``) or a None one are left
    out, as are a pool entry's. For a plan, ``api_price`` and ``h100_rate``
    default to ``model``'s (the default model's when None), a chip's price to the
    catalogue's, its owned and rent-cap cards to 0."""
    out: dict[str, Any] = {}
    if kind == "fleet":
        sections = {**fleet_scenario.SECTIONS, **fleet_scenario.OPTIONAL}
        for f in dataclasses.fields(fleet_scenario.Scenario):
            if not f.init or f.name == "pool":
                continue
            value = sections[f.name]() if f.name in fleet_scenario.OPTIONAL else _default(f)
            if f.name in sections:
                out.update({f"{f.name}.{k}": x for k, x in _section(value).items()})
            elif value is not None and value is not dataclasses.MISSING:
                out[f.name] = value
        return out
    if kind != "buy":
        raise ValueError(f"kind: must be 'fleet' or 'buy', not {kind!r}")
    for f in dataclasses.fields(Procurement):
        if not f.init:
            continue
        value = _default(f)
        if f.name in buy_plan.SECTIONS:
            out.update({f"{f.name}.{k}": x for k, x in _section(value).items()})
        elif f.name in ("owned", "rent_cap", "rent_spot"):
            out.update({f"{f.name}.{c}": 0 for c in CHIP_NAMES})
        elif f.name == "prices":
            out.update({f"{name}.{c}": CHIPS[c].price for name in ("price_month",) for c in CHIP_NAMES})
            out.update({f"price_hour.{c}": CHIPS[c].price / HOURS for c in CHIP_NAMES})
        elif value is not None:
            out[f.name] = value
    spec = MODELS[model if model in MODELS else out["model"]]
    out["api_price"], out["h100_rate"] = spec.api_price, spec.h100_rate
    return out
