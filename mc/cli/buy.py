"""``mc buy``: a procurement mix's month as a distribution (SPEC §4).

Ctrl-C stops after the chunk in hand and prints the months so far, marked
partial ("interrupted after N of M months: partial"), and exits 130, as ``mc run``.
"""

from __future__ import annotations

import sys
import time

from .. import buy, files
from ..buy.report import buy_headline, format_buy
from ..studies import figures, manifest
from ._common import add_progress, print_json, progress_of


def run(args) -> int:
    plan = files.procurement(args.plan)
    t0 = time.perf_counter()
    result = buy.simulate(plan, args.n, seed=args.seed, chunk=args.chunk, progress=progress_of(args))
    partial = bool(result.summary.get("partial"))
    if args.json:
        # a run stopped before its first months has no stats: its figures are empty
        summary = {"stats": {}, "pass": {}, **result.summary}
        print_json({"plan": args.plan, "describe": plan.describe(), "n": result.n, "seed": result.seed,
                    **({"partial": True, "requested": result.requested} if partial else {}),
                    "owned": dict(zip(buy.CHIP_NAMES, plan.owned)),
                    "rented": dict(zip(buy.CHIP_NAMES, plan.rented)),
                    "rent_spot": dict(zip(buy.CHIP_NAMES, plan.rent_spot)),
                    **buy_headline(result), "summary": result.summary,
                    "figures": figures.of_summary(summary, figures.column_units(buy.COLUMNS)),
                    "provenance": manifest.provenance(scenario=plan.to_dict(), seed=result.seed, n=result.n,
                                                      wall_s=round(time.perf_counter() - t0, 3))})
    else:
        print(format_buy(args.plan, result))
    sys.stdout.flush()
    return 130 if partial else 0


def register(sub) -> None:
    p = sub.add_parser("buy", help="own, rent or API: a procurement mix's month",
                       description="Simulate a month of demand served by owned cards, then rented "
                       "cards, then spot cards, then an API (docs/model.md §4; owned cards may fail and spot cards be "
                       "taken back: [failures], [rent_spot], [spot]), and report the bill, the unserved tokens (a plan "
                       "with api = false leaves what its cards cannot carry unserved) and the idle, "
                       "margin, overflow and served checks. Ctrl-C stops early and prints the months "
                       "so far, marked partial (exit 130). Presets: " + ", ".join(buy.presets.names()) + ".")
    p.add_argument("plan", metavar="PRESET|FILE.toml")
    p.add_argument("--n", type=int, default=2000, help="months to simulate (default 2,000)")
    p.add_argument("--seed", type=int, default=0, help="seed; month i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="months per device batch (default: automatic)")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    add_progress(p)
    p.set_defaults(func=run)
