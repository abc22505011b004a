"""Autoscaler calibration for the golden idler with and without its fix: the recommended
window and eviction setting under P(wrong eviction) <= 5% and P(capacity fail) <= 5%.

Writes results/calibration/<preset>/candidates.parquet and calibration.json.
"""

from __future__ import annotations

import sys

import _study

PRESETS = ("golden-idler-steady", "golden-idler")


def main(argv=None) -> int:
    p = _study.parser("calibration", __doc__.splitlines()[0], n=2_500)
    p.add_argument("--max-wrong", type=float, default=0.05)
    p.add_argument("--max-shortfall-risk", type=float, default=0.05)
    args = p.parse_args(argv)
    from mc.fleet import presets
    from mc.studies import calibrate as cal
    from mc.studies.reports import format_calibration

    for name in PRESETS:
        res = cal.calibrate(presets.get(name), max_wrong=args.max_wrong, max_shortfall_risk=args.max_shortfall_risk,
                            n=args.n, seed=args.seed, chunk=_study.chunk(args.n), progress=_study.progress(args))
        cal.save(res, args.out / name, name)
        if not args.quiet:
            print(format_calibration(name, res), "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
