"""What every field of a scenario file or a buying-plan file means: its unit and a
few words, as docs/model.md's tables give them (§1 for a scenario, §4 for a plan),
and its default (from the dataclasses' own defaults).

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
from .._fields import declarations
from ..fleet import Eviction, policies
from ..fleet.swing import Swing
from ..fleet.wander import Wander
from ..fleet.window import Window
from ..fleet import scenario as fleet_scenario
from ..units import HOURS

PRESET = ("", "a preset to start from; every field not written comes from it")

def declared_docs(cls) -> dict[str, tuple[str, str]]:
    """``{field: (unit, meaning)}`` of a section from its fields' declarations."""
    return {name: (d.unit, d.doc) for name, d in declarations(cls).items()}


WINDOW = declared_docs(Window)



def eviction_docs() -> dict[str, tuple[str, str]]:
    """The ``[eviction]`` table's fields: the policy, each registered rule's own
    fields as the rule declares them (``mc.fleet.policies``), the churn fee."""
    names = [c.name for c in policies.BUILTINS]
    out = {"policy": ("", f"eviction rule: {', '.join(names)} or \"file.py:Class\" (your own)")}
    for field in policies.fields():
        d = policies.declaration(field)
        out[field] = (d.unit, d.doc)
    out["churn"] = ("× price", "churn fee of an evicted card")
    return out


EVICTION = eviction_docs()

DEMAND = {
    "shape": ("", "profile: flat, diurnal, weekly, bursty, trace or log"),
    "level": ("tok/s", "base or mean demand"),
    "amplitude": ("share of level", "daily swing either side"),
    "peak_hour": ("hour of day", "busiest hour"),
    "weekend_factor": ("×", "weekend demand, × weekday (weekly)"),
    "burst_rate": ("bursts per month", "mean number of bursts (bursty)"),
    "burst_height": ("tok/s", "extra demand during a burst"),
    "burst_hours": ("h", "burst duration"),
    "max_bursts": ("bursts", "cap on bursts a month"),
    "trace": ("tok/s", "730 hourly demands (trace)"),
    "trace_csv": ("path", "CSV file holding the trace"),
    "log": ("path", "request log the demand is read from (log)"),
    "columns": ("", "the log's time, prompt and answer columns"),
    "scale": ("×", "multiplies the log's hourly profile"),
    "log_sha256": ("", "the log's content hash; the log must match it"),
}

LOTTERY = {
    "mean": ("× rated", "centre of a card's quality q"),
    "sd": ("× rated", "spread (1 sd) of q"),
    "lo": ("× rated", "lowest q (clip)"),
    "hi": ("× rated", "highest q (clip)"),
    "lemon_rate": ("share of cards", "chance a card is a lemon"),
    "lemon_factor": ("× q", "a lemon's quality multiplier"),
}

DIPS = {
    "rate": ("dips per card-month", "how often a card's rate dips silently"),
    "mean_hours": ("h", "mean dip duration"),
    "depth_lo": ("share of true rate", "shallowest dip"),
    "depth_hi": ("share of true rate", "deepest dip"),
    "max_count": ("dips per card", "cap on dips (fixes array shapes)"),
}

CHECKS = {
    "max_shortfall": ("share of demand", "most unmet demand that passes"),
    "min_convergence": ("", "least ideal bill / bill that passes"),
    "max_wrong": ("cards", "most wrong evictions that pass"),
}

AUTOSCALER = {
    "period": ("h", "hours between decisions"),
    "replace": ("", "an evicted card's slot takes a fresh card"),
    "boot_hours": ("h", "a replacement serves this long after placement"),
    "strikes": ("rounds", "consecutive marked rounds before an eviction"),
    "min_age": ("h", "hours served before a card may be evicted"),
}

# A pool entry (an inline table of ``pool = [...]``): §1.1, a hardware card's §5
# inputs, an SLO-rated card's §7 search and queue.
_QUEUE = {
    "batcher": ("", "batching policy: static or continuous"),
    "max_batch": ("requests", "most requests in a batch or step"),
    "max_wait": ("s", "static: longest wait before a short batch starts"),
    "prompt_mean": ("tokens", "mean prompt"),
    "prompt_cv": ("", "prompt coefficient of variation"),
    "prompt_max": ("tokens", "longest prompt"),
    "answer_mean": ("tokens", "mean answer"),
    "answer_cv": ("", "answer coefficient of variation"),
    "answer_max": ("tokens", "longest answer"),
    "n": ("requests", "measured per replication"),
    "warmup": ("requests", "dropped at the start of each replication"),
    "arrivals": ("", "arrival process: poisson, gamma or log"),
    "cv": ("", "gamma gaps' coefficient of variation"),
    "lengths": ("", "where lengths come from: lognormal or log"),
    "log": ("path", "request log of the card's traffic"),
    "block": ("s", "bootstrap block of log time"),
    "replay": ("", "play the whole log once"),
}
POOL_ENTRY = {
    "count": ("cards", "cards of this class"),
    "card": ("", "built-in class to start from: flagship or bargain"),
    "name": ("", "the class's name in reports"),
    "rated": ("tok/s", "rated rate r"),
    "price_month": ("$ per card-month", "price p"),
    "price": ("$ per card-month", "price p (older name of price_month)"),
    "price_hour": ("$ per card-hour", "price p ÷ 730"),
    "gpu": ("", "catalogue GPU"),
    "model": ("", "catalogue model"),
    "batch": ("requests", "concurrent requests"),
    "context": ("tokens", "KV cache each request holds"),
    "prompt": ("tokens", "prompt prefilled before the first token"),
    "weight_bytes": ("bytes per parameter", "weight precision"),
    "kv_bytes": ("bytes per element", "KV cache precision"),
    "mem_util": ("share", "usable share of memory"),
    "prefill_util": ("share", "share of peak FLOP/s reached in prefill"),
    "rated_from": ("", "slo: rate the card at its latency SLO"),
    "slo_ttft": ("s", "SLO on the TTFT percentile"),
    "percentile": ("percent", "which TTFT percentile the SLO bounds"),
    "share": ("share of replications", "probability over replications with which the SLO must hold"),
    "replications": ("", "independent replications per rate"),
    "seed": ("", "seed of the replications"),
    "rel_tol": ("", "the SLO search's rate grid: largest step ratio less one"),
    "columns": ("", "the log's time, prompt and answer columns"),
    **_QUEUE,
}

FLEET: dict[str, dict[str, tuple[str, str]]] = {
    "": {
        "preset": PRESET,
        "pool": ("", "the cards that may run, e.g. \"32 x flagship\""),
        "runset": ("", "survivors kept warm: steady (mean), peak or all"),
    },
    "pool": POOL_ENTRY,
    "window": WINDOW,
    "eviction": EVICTION,
    "demand": DEMAND,
    "lottery": LOTTERY,
    "dips": DIPS,
    "wander": declared_docs(Wander),
    "swing": declared_docs(Swing),
    "checks": CHECKS,
    "autoscaler": AUTOSCALER,
}


def _per_chip(unit: str, meaning: str) -> dict[str, tuple[str, str]]:
    return {chip: (unit, meaning.format(chip=chip)) for chip in CHIP_NAMES}


_BUY_DEMAND = {k: x for k, x in DEMAND.items() if k not in ("trace_csv", "log", "columns", "scale", "log_sha256")}
_BUY_DEMAND["shape"] = ("", "hourly shape: flat, diurnal, weekly or trace")
_BUY_DEMAND["level"] = ("tok/s", "ignored: the shape is scaled to the forecast")

BUY: dict[str, dict[str, tuple[str, str]]] = {
    "": {
        "preset": PRESET,
        "model": ("", "the model served: chat-8b or premium-70b"),
        "forecast_tokens": ("tokens per month", "the month's expected demand"),
        "sigma": ("log-sd", "spread of the forecast error"),
        "api": ("", "an API serves what the cards cannot"),
        "api_price": ("$ per 1M tokens", "API price"),
        "h100_rate": ("tok/s", "one H100's rate for this model"),
        "rent_premium": ("× owned price", "a rented card-month's price"),
        "slots": ("cards per chip", "quality draws per chip (padding)"),
    },
    "demand": _BUY_DEMAND,
    "owned": _per_chip("cards", "{chip} cards bought before the month"),
    "rent_cap": _per_chip("cards", "most {chip} cards that may be rented"),
    "price_month": _per_chip("$ per card-month", "an owned {chip} card's price"),
    "prices": _per_chip("$ per card-month", "an owned {chip} card's price (older name of price_month)"),
    "price_hour": _per_chip("$ per card-hour", "an owned {chip} card's price ÷ 730"),
    "slots": _per_chip("cards", "{chip} quality draws (padding)"),
    "lottery": LOTTERY,
    "checks": {
        "idle_max": ("share of owned capacity", "most idle tokens that pass"),
        "margin_max": ("× API bill", "most bill / the API's bill for the tokens served"),
        "overflow_max": ("share of demand", "most API tokens that pass"),
        "unserved_max": ("share of demand", "most unserved tokens that pass"),
    },
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
        elif f.name in ("owned", "rent_cap"):
            out.update({f"{f.name}.{c}": 0 for c in CHIP_NAMES})
        elif f.name == "prices":
            out.update({f"{name}.{c}": CHIPS[c].price for name in ("price_month", "prices") for c in CHIP_NAMES})
            out.update({f"price_hour.{c}": CHIPS[c].price / HOURS for c in CHIP_NAMES})
        elif value is not None:
            out[f.name] = value
    spec = MODELS[model if model in MODELS else out["model"]]
    out["api_price"], out["h100_rate"] = spec.api_price, spec.h100_rate
    return out
