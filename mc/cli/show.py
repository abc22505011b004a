"""``mc show``: a preset (or a scenario or plan file, with every default filled
in) as a complete TOML file to start from, each field with its unit and meaning."""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from .. import files
from ..buy import presets as buy_presets
from ..files.comments import comments, file_kind, file_marks, preset_marks
from ..fleet import presets as fleet_presets
from ..fleet.logdemand import demand_line
from ._common import load_scenario

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
