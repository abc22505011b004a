"""``mc presets``: the stories of SPEC §3 and §6 side by side."""

from __future__ import annotations

import sys
import time

from ..engine import progress_bar
from ..fleet import presets as registry
from ..fleet import simulate
from ..studies import manifest
from ..studies.presets import preset_row, presets_table
from ._common import add_sampling, print_json, progress_of


def run(args) -> int:
    names = registry.names()
    rows = []
    stopped = None  # what a Ctrl-C stopped: the rows shown are whole presets only
    # One bar over every preset's months (months/s, ETA), on stderr.
    with progress_bar(len(names) * args.n, progress_of(args), desc="presets") as bar:
        for name in names:
            scenario = registry.get(name)
            t0 = time.perf_counter()
            bar.set_postfix_str(name, refresh=False)
            result = simulate(scenario, args.n, seed=args.seed, chunk=args.chunk, progress=bar)
            if result.summary.get("partial"):
                stopped = f"{name} stopped after {result.n:,} of {args.n:,} months and is left out"
                break
            row = preset_row(name, result)
            row["provenance"] = manifest.provenance(scenario=scenario.to_dict(), seed=args.seed, n=result.n,
                                                    wall_s=round(time.perf_counter() - t0, 3))
            rows.append(row)
            if result.summary.get("interrupted") and name != names[-1]:
                stopped = f"stopped after {name}"
                break
    if args.json:
        print_json(rows)
    elif rows:
        print(f"{args.n:,} fleet-months per preset, seed {args.seed}\n")
        print(presets_table(rows))
    if stopped is not None:
        sys.stdout.flush()
        print(f"mc presets: interrupted: {stopped}; {len(rows)} of {len(names)} presets shown", file=sys.stderr)
        return 130
    return 0


def register(sub) -> None:
    p = sub.add_parser("presets", help="the presets side by side",
                       description="Simulate every preset (the six seed stories of docs/model.md §3, then the §6 "
                       "autoscaler stories, the field-grounded ones and the services on replicas of §11) and print "
                       "them side by side: the last four cost far more a month than the others. Ctrl-C keeps the presets already whole "
                       "and exits 130. --json: one object per preset, "
                       "with a figures block (means with 95% intervals, pass rates with Wilson intervals) "
                       "and its provenance.")
    add_sampling(p, n=100_000)
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per preset")
    p.set_defaults(func=run)
