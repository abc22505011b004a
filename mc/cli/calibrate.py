"""``mc calibrate``: recommend the autoscaler's window and eviction setting."""

from __future__ import annotations

from pathlib import Path

from .. import files
from ..studies import calibrate as cal
from ..studies import manifest
from ..studies.reports import format_calibration
from ._common import print_json

def run(args) -> int:
    scenario = files.scenario(args.scenario)
    if args.out is not None:
        files.check_output_folder(args.out)
    result = cal.calibrate(scenario, max_wrong=args.max_wrong, max_shortfall_risk=args.max_shortfall_risk,
                           n=args.n, seed=args.seed, judge=args.judge, chunk=args.chunk,
                           progress=False if args.quiet or args.json else (True if args.progress else None))
    prov = manifest.provenance(scenario=scenario.to_dict(), seed=args.seed, n=args.n, wall_s=round(result.wall_s, 3))
    if args.out:
        report = cal.save(result, args.out, args.scenario, provenance=prov)
    else:
        report = {"scenario": args.scenario, **result.to_dict(), "provenance": prov}
    if args.json:
        print_json(report)
    else:
        print(format_calibration(args.scenario, result))
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
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--progress", action="store_true", help="a progress bar even when stderr is not a terminal")
    p.set_defaults(func=run)
