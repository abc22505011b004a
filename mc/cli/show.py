"""``mc show``: a preset (or a scenario or plan file, with every default filled
in) as a complete TOML file to start from, each field with its unit and meaning."""

from __future__ import annotations

import warnings

import numpy as np

from .. import _validate as v
from .. import files
from ..buy import presets as buy_presets
from ..buy.catalogue import chip_name
from ..files import fielddocs
from ..fleet import logdemand
from ..fleet import presets as fleet_presets

HEADER = {
    "fleet": ("A fleet-month scenario: every field, defaults included; each is described in docs/model.md §1.\n"
              "Prices are $ per card-month; rates tok/s; hours of 730 a month.\n"
              "Run it with: mc run FILE.toml"),
    "buy": ("A month of buying: every field, defaults included; each is described in docs/model.md §4.\n"
            "Prices are $ per card-month; tokens a month; the API price $ per million tokens.\n"
            "Run it with: mc buy FILE.toml"),
}
COMMENTS = "Each comment: unit; meaning, and (default X) where the value is not the default."
MARKS = "set: the file (or preset) sets the value; default: filled in from the field's default."
PER_CHIP = ("owned", "rent_cap", "price_month", "price_hour", "slots")


def run(args) -> int:
    name = args.name
    scenario = raw = None
    if name in fleet_presets.names():
        kind, scenario = "fleet", fleet_presets.get(name)
    elif name in buy_presets.names():
        kind, data = "buy", buy_presets.get(name).to_dict()
    elif name.endswith(".toml"):
        raw = files.read_toml(name)
        kind = file_kind(raw)
        if kind == "fleet":
            scenario = load_scenario(name)
        else:
            data = files.load_procurement(name).to_dict()
    else:
        v.fail("name", name, "must be a preset (" + ", ".join(fleet_presets.names() + buy_presets.names())
               + ") or a scenario or plan .toml file")
    if scenario is not None:
        data = scenario.to_dict()
    trace = data.get("demand", {}).get("trace") if kind == "fleet" else None
    if trace is not None:  # the float32 values the scenario holds, not their float64 widening
        data["demand"]["trace"] = np.asarray(trace, np.float32)
    marks = None
    if getattr(args, "defaults", False):
        marks = file_marks(kind, raw, data) if raw is not None else preset_marks(kind, data)
    header = f"{name}\n{HEADER[kind]}\n{COMMENTS}" + (f"\n{MARKS}" if marks is not None else "")
    text = files.to_toml(data, header, comments(kind, data, marks))
    line = demand_line(scenario.demand) if scenario is not None else None
    if line is not None:  # a comment beside the [demand] table, so the text stays TOML
        text = text.replace("\n[demand]\n", f"\n# {line}\n[demand]\n", 1)
    print(text, end="")
    return 0


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


def load_scenario(spec: str, quiet: bool = False):
    """``files.scenario(spec)``, each warning met on the way (a request log too
    short to tile, used as its mean) shown as the command shows warnings (one line
    on stderr, each message once: ``mc.cli.main``); none when ``quiet`` (``--quiet``:
    nothing on stderr but errors)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        scenario = files.scenario(spec)
    for w in seen if not quiet else ():
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return scenario


_TILING = {
    "month": "its first 730 h used hour by hour{clock}",
    "week": "repeated by hour of the week{clock}",
    "day": "repeated by hour of the day{clock}",
    "mean": "used as its mean",
}
_CLOCK = {"month": " from its first clock hour", "week": " from Monday 00:00 of its clock",
          "day": " from 00:00 of its clock"}


def log_demand(demand) -> dict | None:
    """What is reported of a log demand (None for other shapes): the log's
    source, rows, span and sha256, how it fills the month, the hourly profile's
    mean and peak (tok/s, as the month sees them) and its busiest minute."""
    if demand.shape != "log":
        return None
    log, hourly = demand.log, np.asarray(demand.trace, np.float64)
    how = logdemand.rule(log.span)
    return {"source": log.source, "rows": log.rows, "span_h": log.span / 3600, "sha256": log.sha256,
            "tiling": how, "clock": log.start is not None and how != "mean", "scale": demand.scale,
            "level": demand.level, "mean": float(hourly.mean()), "peak": float(hourly.max()),
            "minute_peak": demand.minute_peak()}


def demand_line(demand) -> str | None:
    """One line for a log demand (None for other shapes), e.g. ``demand from log
    F.csv (19,365 requests over 0.973 h, used as its mean): hourly mean 1,168
    tok/s, peak 1,168 tok/s; busiest minute 1.28x its hour's mean (median),
    1.28x (max) over its one 0.973 h window``."""
    info = log_demand(demand)
    if info is None:
        return None
    how = _TILING[info["tiling"]].format(clock=_CLOCK.get(info["tiling"], "") if info["clock"] else
                                         " from its first arrival")
    if info["scale"] is not None:
        how += f", times {info['scale']:g}"
    elif info["level"] is not None:
        how += f", scaled to mean {info['level']:,.6g} tok/s"
    m = info["minute_peak"]
    over = (f"over {m['hours']:,} whole hour{'s' if m['hours'] != 1 else ''}" if m["window_s"] >= 3600
            else f"over its one {m['window_s'] / 3600:.3g} h window")
    return (f"demand from log {info['source']} ({info['rows']:,} requests over {info['span_h']:,.3g} h, {how}): "
            f"hourly mean {info['mean']:,.0f} tok/s, peak {info['peak']:,.0f} tok/s; busiest minute "
            f"{m['median']:.3g}x its hour's mean (median), {m['max']:.3g}x (max) {over}")


def register(sub) -> None:
    p = sub.add_parser("show", help="print a preset as a complete TOML file to start from",
                       description="Print a fleet or buying preset (or a scenario or plan file with every default "
                       "filled in) as a complete TOML file, each field with a comment giving its unit and "
                       "meaning (docs/model.md §1 and §4 describe every field): mc show noise-evictor > "
                       "mine.toml, edit, then mc run mine.toml.")
    p.add_argument("name", metavar="PRESET|FILE.toml")
    p.add_argument("--defaults", action="store_true",
                   help="begin each field's comment with set: (the file, or the preset, sets it) or default: "
                   "(filled in from the field's default)")
    p.set_defaults(func=run)
