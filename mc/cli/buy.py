"""``mc buy``: a procurement mix's month as a distribution (SPEC §4)."""

from __future__ import annotations

import time

from .. import buy, files
from ..studies import figures, manifest
from ..studies.reports import buy_headline, format_buy
from ._common import add_progress, print_json, progress_of


def run(args) -> int:
    plan = files.procurement(args.plan)
    t0 = time.perf_counter()
    result = buy.simulate(plan, args.n, seed=args.seed, chunk=args.chunk, progress=progress_of(args))
    if args.json:
        print_json({"plan": args.plan, "describe": plan.describe(), "n": result.n, "seed": result.seed,
                    "owned": dict(zip(buy.CHIP_NAMES, plan.owned)),
                    "rented": dict(zip(buy.CHIP_NAMES, plan.rented)),
                    **buy_headline(result), "summary": result.summary,
                    "figures": figures.of_summary(result.summary, figures.BUY_UNITS),
                    "provenance": manifest.provenance(scenario=plan.to_dict(), seed=result.seed, n=result.n,
                                                      wall_s=round(time.perf_counter() - t0, 3))})
    else:
        print(format_buy(args.plan, result))
    return 0


def register(sub) -> None:
    p = sub.add_parser("buy", help="own, rent or API: a procurement mix's month",
                       description="Simulate a month of demand served by owned cards, then rented "
                       "cards, then an API (SPEC §4), and report the bill and the idle, margin and "
                       "overflow checks. Presets: " + ", ".join(buy.presets.names()) + ".")
    p.add_argument("plan", metavar="PRESET|FILE.toml")
    p.add_argument("--n", type=int, default=2000, help="months to simulate (default 2,000)")
    p.add_argument("--seed", type=int, default=0, help="seed; month i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="months per device batch (default: automatic)")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    add_progress(p)
    p.set_defaults(func=run)
