"""A scenario or plan written out as ``mc show`` writes it: each field's comment
(unit; meaning, and its default where the value is another), which fields a file
or preset sets, and which kind of file a TOML table is."""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from ..buy import presets as buy_presets
from ..buy.catalogue import chip_name
from ..fleet import presets as fleet_presets
from . import fielddocs

PER_CHIP = ("owned", "rent_cap", "rent_spot", "price_month", "price_hour", "slots", "spot_slots")


def file_kind(raw: dict) -> str:
    """``"buy"`` for a plan file (its preset a buying preset, or a plan's own
    top-level key and no scenario's), else ``"fleet"``."""
    preset = raw.get("preset")
    if isinstance(preset, str) and preset in buy_presets.names():
        return "buy"
    if isinstance(preset, str) and preset in fleet_presets.names():
        return "fleet"
    own = {kind: (set(fielddocs.FIELDS[kind]) | set(fielddocs.FIELDS[kind][""])) - {"", "pool"} for kind in
           ("fleet", "buy")}
    own["fleet"].add("pool")
    buy_only, fleet_only = own["buy"] - own["fleet"], own["fleet"] - own["buy"]
    return "buy" if set(raw) & buy_only and not set(raw) & fleet_only else "fleet"


def _same(a, b) -> bool:
    """Whether a shown value equals a default (numbers as float64 or float32)."""
    if isinstance(a, (list, tuple, dict, np.ndarray)) or isinstance(b, (list, tuple, dict, np.ndarray)):
        return False
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return float(a) == float(b) or np.float32(a) == np.float32(b)
    return a == b


def _short(x) -> str:
    """A default as a comment shows it: ``168``, ``0.15``, ``1e+13``, ``"share"``, ``true``."""
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (float, np.floating)):
        return f"{float(x):g}"
    if isinstance(x, str):
        return f'"{x}"'
    return str(x)


def comments(kind: str, data: dict, marks: set[str] | None = None) -> dict[str, str]:
    """``{dotted field: "unit; meaning"}`` for every field of ``data`` (a plain
    scenario or plan), ``(default X)`` added where the value is not the default;
    with ``marks`` (the fields set), each starts ``set:`` or ``default:``."""
    default = fielddocs.defaults(kind, data.get("model") if kind == "buy" else None)
    out = {}
    for name, x in fielddocs.flatten(data).items():
        doc = fielddocs.describe(kind, name)
        if x is None or doc is None:
            continue
        unit, meaning = doc
        text = f"{unit}; {meaning}" if unit else meaning
        if name in default and not _same(x, default[name]):
            text += f" (default {_short(default[name])})"
        if marks is not None:
            text = ("set: " if name in marks else "default: ") + text
        out[name] = text
    return out


def preset_marks(kind: str, data: dict) -> set[str]:
    """The fields a preset (as plain data) sets: those whose value is not the
    default (or that have none)."""
    default = fielddocs.defaults(kind, data.get("model") if kind == "buy" else None)
    return {name for name, x in fielddocs.flatten(data).items()
            if x is not None and (name not in default or not _same(x, default[name]))}


def file_marks(kind: str, raw: dict, data: dict) -> set[str]:
    """The fields a file sets: the keys its raw TOML holds, under the names ``mc
    show`` prints them (a trace_csv sets the trace, a log its sha256, a price_hour
    table the price_month, a chip's other names the chip), and what its
    ``preset`` sets, which is every value of ``data`` (the file read) that is not
    the default (``preset_marks``): a file without a preset sets nothing else."""
    out = preset_marks(kind, data)
    for name in fielddocs.flatten(raw):
        section, _, field = name.partition(".")
        if kind == "buy" and field and section in PER_CHIP:
            section = "price_month" if section == "price_hour" else section
            try:
                field = chip_name(field)
            except v.ParamError:
                pass
            name = f"{section}.{field}"
        out.add(name)
        if kind == "fleet" and name == "demand.trace_csv":
            out.add("demand.trace")
        if kind == "fleet" and name == "demand.log":
            out.add("demand.log_sha256")
    return out
