"""``mc show``: a preset (or a scenario file, with every default filled in) as a
complete TOML file to start from."""

from __future__ import annotations

import sys
import warnings

import numpy as np

from .. import _validate as v
from .. import files
from ..buy import presets as buy_presets
from ..fleet import logdemand
from ..fleet import presets as fleet_presets

HEADER = {
    "fleet": ("A fleet-month scenario (SPEC §1): every field, defaults included.\n"
              "Prices are $ per card-month; rates tok/s; hours of 730 a month.\n"
              "Run it with: mc run FILE.toml"),
    "buy": ("A month of buying (SPEC §4): every field, defaults included.\n"
            "Prices are $ per card-month; tokens a month; the API price $ per million tokens.\n"
            "Run it with: mc buy FILE.toml"),
}


def run(args) -> int:
    name = args.name
    scenario = None
    if name in fleet_presets.names():
        scenario = fleet_presets.get(name)
    elif name in buy_presets.names():
        kind, data = "buy", buy_presets.get(name).to_dict()
    elif name.endswith(".toml"):
        scenario = load_scenario(name, "show")
    else:
        v.fail("name", name, "must be a preset (" + ", ".join(fleet_presets.names() + buy_presets.names())
               + ") or a scenario .toml file")
    if scenario is not None:
        kind, data = "fleet", scenario.to_dict()
    trace = data.get("demand", {}).get("trace") if kind == "fleet" else None
    if trace is not None:  # the float32 values the scenario holds, not their float64 widening
        data["demand"]["trace"] = np.asarray(trace, np.float32)
    text = files.to_toml(data, f"{name}\n{HEADER[kind]}")
    line = demand_line(scenario.demand) if scenario is not None else None
    if line is not None:  # a comment beside the [demand] table, so the text stays TOML
        text = text.replace("\n[demand]\n", f"\n# {line}\n[demand]\n", 1)
    print(text, end="")
    return 0


def load_scenario(spec: str, command: str):
    """``files.scenario(spec)``, each warning met on the way (a request log too
    short to tile, used as its mean) printed as one line on stderr."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        scenario = files.scenario(spec)
    for w in seen:
        print(f"mc {command}: warning: {w.message}", file=sys.stderr)
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
                       description="Print a fleet or buying preset (or a scenario file with every default "
                       "filled in) as a complete TOML file: mc show noise-evictor > mine.toml, edit, "
                       "then mc run mine.toml.")
    p.add_argument("name", metavar="PRESET|FILE.toml")
    p.set_defaults(func=run)
