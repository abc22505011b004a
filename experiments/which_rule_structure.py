"""Which eviction rule, once cards wander and the fleet swings (SPEC §1.4.1, §6).

The which-rule study (experiments/which_rule.py) again, on its pools that are just
big enough for their peak (10% and 20% lemons, headroom 1.1; with ample headroom
every rule costs money and structure cannot change that), under four variants of
the lemon hunter's variability:

- ``none``: §1.4 as before (the which-rule study's own answer);
- ``wander``: each card's level wanders as in ``lemon-hunter-field`` (sd 3.6% with a
  week's correlation time): two daily strikes are no longer independent evidence;
- ``swing``: the fleet swings together by the field preset's diurnal (±0.75%) and the
  daily check runs at the hot hour (``swing.start_hour`` = ``swing.hot_hour``), where
  an absolute floor sees every card at its slowest; the demand's busiest hour stays at
  its clock hour (``demand.peak_hour`` moved with the month's start);
- ``field``: both.

The structure's draws come from their own stream of each month's key, so every
variant runs the same lotteries, dips and noise as ``none``: the change a variant
makes is paired month by month. Every rule family is calibrated on its own grid under
the same 5% limits, and its pick runs again on fresh months beside no eviction
calibrated under the same variant.

Writes results/which_rule_structure/candidates.parquet, best.parquet (one row per
variant, pool and rule) and manifest.json.
"""

from __future__ import annotations

import itertools
import sys

import _study
import which_rule
from eviction_pays import level

LEMONS = which_rule.LEMONS
HEADROOM = (1.1,)
FIELD = "lemon-hunter-field"
VARIANTS = ("none", "wander", "swing", "field")
FILES = which_rule.FILES


def variant_fields(name: str) -> dict:
    """The fields a variant sets on the lemon hunter, from the field preset."""
    from mc.fleet import presets

    f, base = presets.get(FIELD), presets.get("lemon-hunter")
    wander = {"wander.sd": f.wander.sd, "wander.hours": f.wander.hours}
    # The month starts at the hot hour, so every daily round reads the fleet at its
    # slowest; the demand's busiest hour stays where it was on the clock (month hours
    # count from the start).
    swing = {"swing.diurnal": f.swing.diurnal, "swing.hot_hour": f.swing.hot_hour,
             "swing.start_hour": f.swing.hot_hour,
             "demand.peak_hour": (base.demand.peak_hour - f.swing.hot_hour) % 24.0}
    return {"none": {}, "wander": wander, "swing": swing, "field": {**wander, **swing}}[name]


def config(args) -> dict:
    return {**which_rule.config(args), "headroom": HEADROOM, "variants": {v: variant_fields(v) for v in VARIANTS},
            "field_preset": FIELD}


def main(argv=None) -> int:
    p = _study.parser("which_rule_structure", __doc__.splitlines()[0], n=512)
    p.add_argument("--quick", action="store_true", help="a smoke-test size: 64 fleet-months per setting")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help=f"which variants to run, comma-separated (default {','.join(VARIANTS)})")
    args = p.parse_args(argv)
    if args.quick:
        args.n = 64
    variants = [x.strip() for x in args.variants.split(",") if x.strip()]
    for x in variants:
        if x not in VARIANTS:
            p.error(f"--variants: {x!r} is not one of {', '.join(VARIANTS)}")
    cfg = {**config(args), "run": variants}
    if _study.up_to_date("which_rule_structure", args, FILES, cfg):
        return 0
    from mc.fleet import presets

    lemon_hunter = presets.get("lemon-hunter")
    pools = [(lemon_hunter.replace({"lottery.lemon_rate": lemon, "demand.level": level(head), **variant_fields(var)}),
              {"variant": var, "lemon_rate": lemon, "headroom": head})
             for var, lemon, head in itertools.product(variants, LEMONS, HEADROOM)]
    which_rule.run_pools("which_rule_structure", args, cfg, pools)
    return 0


if __name__ == "__main__":
    sys.exit(main())
