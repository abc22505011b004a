"""``mc calibrate``: recommend the autoscaler's window and eviction setting."""

from __future__ import annotations

import json
from pathlib import Path

from .. import calibrate as cal
from ._common import atomic_write, print_json, scenario_arg

WINDOW_NAMES = {1.0: "1 hour", 4.0: "4 hours", 24.0: "1 day", 72.0: "3 days", 168.0: "1 week"}


def _window(hours: float) -> str:
    return WINDOW_NAMES.get(float(hours), f"{hours:g} h")


def _setting(row) -> str:
    return f"share {row['share']:.2f}" if row["policy"] == "share" else f"theta {row['theta']:.2f}"


def format_table(name: str, result: cal.Calibration, k: int = 4) -> str:
    c = result.candidates
    judged = "upper end of the 95% Wilson interval" if result.judge == "upper" else "point estimate"
    lines = [f"{name}: {len(c)} settings x {result.n:,} fleet-months, seed {result.seed}, "
             f"{result.wall_s:.0f} s",
             f"limits: P(wrong eviction) <= {result.max_wrong:.1%}, P(capacity fail) <= "
             f"{result.max_shortfall_risk:.1%}, judged on the {judged}; "
             f"{int(c['feasible'].sum())} of {len(c)} settings meet them", ""]
    head = f"{'':<13}{'window':<9}{'setting':<13}{'convergence mean [95% CI]':<28}" \
           f"{'P(wrong evict) [95% CI]':<26}{'P(cap fail) [95% CI]':<24}{'mean bill':>11}"
    lines.append(head)

    def line(tag, row):
        return (f"{tag:<13}{_window(row['window_hours']):<9}{_setting(row):<13}"
                f"{row['conv_mean']:.4f} [{row['conv_lo']:.4f}, {row['conv_hi']:.4f}]   "
                f"{row['wrong_risk']:6.2%} [{row['wrong_lo']:.2%}, {row['wrong_hi']:.2%}]   "
                f"{row['cap_risk']:6.2%} [{row['cap_lo']:.2%}, {row['cap_hi']:.2%}]  "
                f"${row['bill_mean']:>9,.0f}")

    if result.best is None:
        lines.append("no setting meets the limits; the closest by risk:")
        order = c.assign(worst=c[["wrong_hi", "cap_hi"]].max(axis=1)).sort_values("worst")
        lines += [line("  candidate", r) for _, r in order.head(k).iterrows()]
    else:
        lines.append(line("recommended", c.loc[result.best]))
        lines += [line(f"runner-up {i}", r) for i, (_, r) in enumerate(result.runners_up(k).iterrows(), 1)]
    cur = c[c["current"]]
    if len(cur):
        lines.append(line("current", cur.iloc[0]))
    front = c[c["pareto"]].sort_values("wrong_risk")
    lines += ["", f"Pareto front (convergence vs wrong-eviction risk): {len(front)} settings"]
    lines += [line("  front", r) for _, r in front.iterrows()]
    return "\n".join(lines)


def run(args) -> int:
    scenario = scenario_arg(args.scenario)
    result = cal.calibrate(scenario, max_wrong=args.max_wrong, max_shortfall_risk=args.max_shortfall_risk,
                           n=args.n, seed=args.seed, judge=args.judge, chunk=args.chunk,
                           progress=False if args.json else None)
    report = {"scenario": args.scenario, **result.to_dict()}
    if args.out:
        out = Path(args.out)
        atomic_write(out / "candidates.parquet", lambda tmp: result.candidates.to_parquet(tmp, index=False))
        atomic_write(out / "calibration.json",
                     lambda tmp: Path(tmp).write_text(json.dumps(report, indent=2, default=float) + "\n"))
    if args.json:
        print_json(report)
    else:
        print(format_table(args.scenario, result))
        if args.out:
            print(f"\ncandidates written to {Path(args.out) / 'candidates.parquet'}")
    return 0 if result.best is not None else 1


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="recommend the autoscaler's window and eviction setting",
                       description="Search window (1 h, 4 h, 1 day, 3 days, 1 week) x policy (share, "
                       "threshold) x share or theta, and recommend the setting with the highest mean "
                       "convergence whose risks of a wrong eviction and of a capacity failure stay "
                       "within the limits. Exits 1 when no setting does.")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    p.add_argument("--max-wrong", type=float, default=0.05, metavar="P",
                   help="limit on P(any wrong eviction in a month) (default 0.05)")
    p.add_argument("--max-shortfall-risk", type=float, default=0.05, metavar="P",
                   help="limit on P(capacity check fails) (default 0.05)")
    p.add_argument("--judge", choices=cal.JUDGES, default="upper",
                   help="judge the limits on the Wilson upper bound (default) or the point estimate")
    p.add_argument("--n", type=int, default=cal.DEFAULT_N,
                   help=f"fleet-months per setting (default {cal.DEFAULT_N:,})")
    p.add_argument("--seed", type=int, default=0, help="seed of every setting (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="also write DIR/candidates.parquet and DIR/calibration.json")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)
