"""``mc presets``: the stories of SPEC §3 and §6 side by side."""

from __future__ import annotations

from ..fleet import presets as registry
from ..fleet import simulate
from ..studies.reports import preset_row, presets_table
from ._common import add_sampling, print_json

def run(args) -> int:
    rows = []
    for name in registry.names():
        result = simulate(registry.get(name), args.n, seed=args.seed, chunk=args.chunk)
        rows.append(preset_row(name, result))
    if args.json:
        print_json(rows)
    else:
        print(f"{args.n:,} fleet-months per preset, seed {args.seed}\n")
        print(presets_table(rows))
    return 0


def register(sub) -> None:
    p = sub.add_parser("presets", help="the presets side by side",
                       description="Simulate every preset (the six SPEC §3 seed stories, then the SPEC §6 "
                       "autoscaler stories) and print them side by side.")
    add_sampling(p, n=100_000)
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per preset")
    p.set_defaults(func=run)
