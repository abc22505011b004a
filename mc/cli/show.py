"""``mc show``: a preset (or a scenario file, with every default filled in) as a
complete TOML file to start from."""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from .. import files
from ..buy import presets as buy_presets
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
    if name in fleet_presets.names():
        kind, data = "fleet", fleet_presets.get(name).to_dict()
    elif name in buy_presets.names():
        kind, data = "buy", buy_presets.get(name).to_dict()
    elif name.endswith(".toml"):
        kind, data = "fleet", files.scenario(name).to_dict()
    else:
        v.fail("name", name, "must be a preset (" + ", ".join(fleet_presets.names() + buy_presets.names())
               + ") or a scenario .toml file")
    trace = data.get("demand", {}).get("trace") if kind == "fleet" else None
    if trace is not None:  # the float32 values the scenario holds, not their float64 widening
        data["demand"]["trace"] = np.asarray(trace, np.float32)
    print(files.to_toml(data, f"{name}\n{HEADER[kind]}"), end="")
    return 0


def register(sub) -> None:
    p = sub.add_parser("show", help="print a preset as a complete TOML file to start from",
                       description="Print a fleet or buying preset (or a scenario file with every default "
                       "filled in) as a complete TOML file: mc show noise-evictor > mine.toml, edit, "
                       "then mc run mine.toml.")
    p.add_argument("name", metavar="PRESET|FILE.toml")
    p.set_defaults(func=run)
