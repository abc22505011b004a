"""Which parameter drives each check: Sobol indices for the noise evictor and the
bargain shortfall over window, share, lottery spread, lemon rate, dip rate, dip
depth and demand level.

Writes results/sensitivity/<preset>/sensitivity.parquet and manifest.json.
"""

from __future__ import annotations

import sys
import time

import _study

import mc
from mc.studies import sensitivity as sens

PRESETS = ("noise-evictor", "bargain-shortfall")


def ranges(base: mc.Scenario) -> dict:
    level = base.demand.level
    return {"window.hours": [1.0, 168.0], "eviction.share": [0.0, 0.4], "lottery.sd": [0.01, 0.15],
            "lottery.lemon_rate": [0.0, 0.2], "dips.rate": [0.0, 8.0], "dips.depth_hi": [0.2, 0.9],
            "demand.level": [0.7 * level, 1.3 * level]}


def main(argv=None) -> int:
    p = _study.parser("sensitivity", __doc__.splitlines()[0], n=1_024)
    p.add_argument("--samples", type=int, default=256, help="Saltelli base samples (default 256)")
    args = p.parse_args(argv)
    for name in PRESETS:
        out = args.out / name
        if _study.up_to_date(f"sensitivity {name}", args, ("sensitivity.parquet",), out=out):
            continue
        base = mc.presets.get(name)
        t = time.perf_counter()
        result = sens.sensitivity(base, ranges(base), samples=args.samples, months=args.n, seed=args.seed,
                                  progress=_study.progress(args))
        sens.save(result, base, out, wall_s=time.perf_counter() - t)
        if not args.quiet:
            print(f"sensitivity: {name}, {result.points.shape[0]:,} points x {args.n:,} fleet-months in "
                  f"{time.perf_counter() - t:.0f} s -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
