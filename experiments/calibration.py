"""Autoscaler calibration for three stories: the golden idler and the noise evictor
(§1, one decision; the grid searches the run set, so the golden idler's fix is in it)
and the lemon hunter (§6, daily rounds with replacement). Each
is the cheapest setting of the default grid (window × policy × share/θ × run set,
strikes for §6) under P(wrong eviction) <= 5% and P(capacity fail) <= 5%, judged on
the upper ends of their 95% intervals.

Writes results/calibration/<preset>/candidates.parquet and calibration.json.
"""

from __future__ import annotations

import sys

import _study

PRESETS = ("golden-idler", "noise-evictor", "lemon-hunter")


def main(argv=None) -> int:
    p = _study.parser("calibration", __doc__.splitlines()[0], n=2_048)
    p.add_argument("--max-wrong", type=float, default=0.05)
    p.add_argument("--max-capacity-risk", type=float, default=0.05)
    args = p.parse_args(argv)
    from mc.fleet import presets
    from mc.studies import calibrate as cal
    from mc.studies import manifest
    from mc.studies.calibrate import format_calibration

    config = {"presets": list(PRESETS), "n": args.n, "seed": args.seed, "max_wrong": args.max_wrong,
              "max_capacity_risk": args.max_capacity_risk}
    for name in PRESETS:
        out = args.out / name
        if _study.up_to_date(f"calibration {name}", args, ("candidates.parquet", "calibration.json"),
                             config={**config, "preset": name}, out=out):
            continue
        res = cal.calibrate(presets.get(name), max_wrong=args.max_wrong, max_capacity_risk=args.max_capacity_risk,
                            n=args.n, first=min(cal.DEFAULT_FIRST, args.n), seed=args.seed,
                            progress=_study.progress(args))
        cal.save(res, out, name)
        manifest.write(out, manifest.build({**config, "preset": name}, seed=args.seed, n=args.n,
                                           wall_s=round(res.wall_s, 1)))
        if not args.quiet:
            print(format_calibration(name, res), "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
