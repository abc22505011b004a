"""Autoscaler calibration for the golden idler with and without its fix: the recommended
window and eviction setting under P(wrong eviction) <= 5% and P(capacity fail) <= 5%.

Writes results/calibration/<preset>/candidates.parquet and calibration.json.
"""

from __future__ import annotations

import json
import sys

import _study

PRESETS = ("golden-idler-steady", "golden-idler")


def main(argv=None) -> int:
    p = _study.parser("calibration", __doc__.splitlines()[0], n=2_500)
    p.add_argument("--max-wrong", type=float, default=0.05)
    p.add_argument("--max-shortfall-risk", type=float, default=0.05)
    args = p.parse_args(argv)
    from mc import calibrate as cal
    from mc import presets
    from mc.commands._common import atomic_write
    from mc.commands.calibrate import format_table

    for name in PRESETS:
        res = cal.calibrate(presets.get(name), max_wrong=args.max_wrong, max_shortfall_risk=args.max_shortfall_risk,
                            n=args.n, seed=args.seed, chunk=_study.chunk(args.n), progress=_study.progress(args))
        out = args.out / name
        report = {"scenario": name, **res.to_dict()}
        atomic_write(out / "candidates.parquet", lambda tmp: res.candidates.to_parquet(tmp, index=False))
        atomic_write(out / "calibration.json",
                     lambda tmp: open(tmp, "w").write(json.dumps(report, indent=2, default=float) + "\n"))
        if not args.quiet:
            print(format_table(name, res), "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
