"""``mc buy``: a procurement mix's month as a distribution (SPEC §4)."""

from __future__ import annotations

import os
from pathlib import Path

from .. import _validate as v
from .. import procurement, procurement_presets
from ._common import print_json

ROWS = (("bill", "bill ($)", "{:>16,.0f}"), ("api_bill", "API bill ($)", "{:>16,.0f}"),
        ("idle_share", "idle share", "{:>16.1%}"), ("blended_ratio", "blended / API", "{:>16.1%}"),
        ("api_share", "API share", "{:>16.1%}"), ("demand_tokens", "demand (T tok)", "{:>16,.2f}"))
CHECKS = (("idle", "idle_share", "idle_max"), ("margin", "blended_ratio", "margin_max"),
          ("overflow", "api_share", "overflow_max"))


def plan_arg(spec: str) -> procurement.Procurement:
    """A buying preset name or a path to a procurement TOML file."""
    if spec.endswith(".toml") or os.sep in spec or Path(spec).exists():
        return procurement.load(spec)
    if spec not in procurement_presets.names():
        v.fail("plan", spec, "must be a preset (" + ", ".join(procurement_presets.names()) + ") or a .toml file")
    return procurement_presets.get(spec)


def headline(result: procurement.BuyResult) -> dict:
    """The figures a reader wants first: p50s and pass rates (all ratios in [0, 1])."""
    s = result.summary
    out = {f"{key}_p50": s["stats"][col]["p50"] for key, col in
           (("bill", "bill"), ("idle", "idle_share"), ("blended_ratio", "blended_ratio"),
            ("api_share", "api_share"))}
    out.update({f"pass_{k}": s["pass"][k]["rate"] for k in ("idle", "margin", "overflow", "all")})
    return out


def format_result(name: str, r: procurement.BuyResult) -> str:
    s, p = r.summary, r.plan
    lines = [f"{name}: {s['n']:,} months, seed {r.seed}", p.describe(), "",
             f"{'':<16}" + "".join(f"{q:>16}" for q in ("p5", "p50", "p95"))]
    for col, label, fmt in ROWS:
        st = dict(s["stats"][col])
        if col == "demand_tokens":
            st = {k: x / 1e12 for k, x in st.items()}
        lines.append(f"{label:<16}" + "".join(fmt.format(st[q]) for q in ("p5", "p50", "p95")))
    lines.append("")
    for check, col, limit in CHECKS:
        pr = s["pass"][check]
        lines.append(f"pass {check:<9} {pr['rate']:7.1%}  95% CI [{pr['lo']:.1%}, {pr['hi']:.1%}]  "
                     f"({col} <= {getattr(p.checks, limit):g})")
    pr = s["pass"]["all"]
    lines.append(f"pass {'all':<9} {pr['rate']:7.1%}  95% CI [{pr['lo']:.1%}, {pr['hi']:.1%}]")
    return "\n".join(lines)


def run(args) -> int:
    plan = plan_arg(args.plan)
    result = procurement.simulate(plan, args.n, seed=args.seed, chunk=args.chunk)
    if args.json:
        print_json({"plan": args.plan, "describe": plan.describe(), "n": result.n, "seed": result.seed,
                    "owned": dict(zip(procurement.CHIP_NAMES, plan.owned)),
                    "rented": dict(zip(procurement.CHIP_NAMES, plan.rented)),
                    **headline(result), "summary": result.summary})
    else:
        print(format_result(args.plan, result))
    return 0


def register(sub) -> None:
    p = sub.add_parser("buy", help="own, rent or API: a procurement mix's month",
                       description="Simulate a month of demand served by owned cards, then rented "
                       "cards, then an API (SPEC §4), and report the bill and the idle, margin and "
                       "overflow checks. Presets: " + ", ".join(procurement_presets.names()) + ".")
    p.add_argument("plan", metavar="PRESET|FILE.toml")
    p.add_argument("--n", type=int, default=2000, help="months to simulate (default 2,000)")
    p.add_argument("--seed", type=int, default=0, help="seed; month i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="months per device batch (default: automatic)")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(func=run)
