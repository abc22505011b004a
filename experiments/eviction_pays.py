"""Does eviction pay once evicted cards are replaced? (SPEC §6)

A grid over lemon rate × pool headroom (the pool's cards against the cards needed
at peak) × window × θ × period × strikes, under diurnal demand, on the lemon
hunter's pool (32 flagships, run set to each round's peak, replacement on). Each
setting's bill is compared month by month with the same autoscaler that evicts
nothing (share 0, same window and period): the saving's 95% interval is paired.
Then, per lemon rate, the calibration's answer at the middle headroom.

Writes results/eviction_pays/settings.parquet (one row per setting),
results/eviction_pays/calibration.parquet (one row per lemon rate) and manifest.json.
"""

from __future__ import annotations

import itertools
import sys
import time

import _study

LEMONS = (0.0, 0.1, 0.2)
HEADROOM = (0.95, 1.1, 1.5)  # cards in the pool / cards needed at the diurnal peak
WINDOWS = (4.0, 24.0)
THETAS = (0.7, 0.8, 0.9)
PERIODS = (24, 168)
STRIKES = (1, 2)
CARDS, CARD_RATE, AMPLITUDE = 32, 7000 * 0.96, 0.3  # the pool, a lemon-free card's mean true rate (tok/s)


def level(headroom: float) -> float:
    """Mean demand (tok/s) whose diurnal peak needs ``CARDS / headroom`` average cards."""
    return CARDS * CARD_RATE / headroom / (1 + AMPLITUDE)


def month(out: dict) -> dict:
    """What the study keeps of each month."""
    import jax.numpy as jnp

    return {"bill": out["bill"].astype(jnp.int32), "wrong": out["n_wrong"] > 0, "quality_end": out["quality_end"],
            "lemons_end": out["lemons_end"].astype(jnp.int32), "cap_fail": ~out["pass_capacity"],
            "n_evicted": out["n_evicted"].astype(jnp.int32)}


def config(args) -> dict:
    return {"lemons": LEMONS, "headroom": HEADROOM, "windows": WINDOWS, "thetas": THETAS, "periods": PERIODS,
            "strikes": STRIKES, "n": args.n, "seed": args.seed, "base": "lemon-hunter"}


def main(argv=None) -> int:
    args = _study.parser("eviction_pays", __doc__.splitlines()[0], n=1_024).parse_args(argv)
    if _study.up_to_date("eviction_pays", args, ("settings.parquet", "calibration.parquet"), config(args)):
        return 0
    import numpy as np
    import pandas as pd

    from mc.engine import mean_interval, wilson
    from mc.files import write_table
    from mc.fleet import presets
    from mc.studies import blocks, calibrate as cal, manifest

    start = time.perf_counter()
    base = presets.get("lemon-hunter")
    rows, scenarios = [], []
    for lemon, head, window, period in itertools.product(LEMONS, HEADROOM, WINDOWS, PERIODS):
        common = {"lottery.lemon_rate": lemon, "demand.level": level(head), "window.hours": window,
                  "autoscaler.period": period}
        rows.append({"lemon_rate": lemon, "headroom": head, "window": window, "period": period, "theta": np.nan,
                     "strikes": 0, "evicts": False})
        scenarios.append(base.replace({**common, "eviction.policy": "share", "eviction.share": 0.0}))
        for theta, strikes in itertools.product(THETAS, STRIKES):
            rows.append({"lemon_rate": lemon, "headroom": head, "window": window, "period": period, "theta": theta,
                         "strikes": strikes, "evicts": True})
            scenarios.append(base.replace({**common, "eviction.theta": theta, "autoscaler.strikes": strikes}))
    got = blocks.run(scenarios, month, args.n, seed=args.seed, progress=_study.progress(args), most=1)
    table = pd.DataFrame(rows)
    bill = got["bill"].astype(np.float64) / 100.0  # (months, settings) $
    keys = ["lemon_rate", "headroom", "window", "period"]
    baseline = table[~table["evicts"]].reset_index().set_index(keys)["index"]
    ref = baseline.loc[[tuple(r) for r in table[keys].to_numpy()]].to_numpy()
    saving = bill[:, ref] - bill  # paired: the no-eviction autoscaler's bill less this one's
    table["bill"] = bill.mean(axis=0)
    table["saving"], table["saving_lo"], table["saving_hi"] = mean_interval(saving)
    for name, col in (("p_wrong_eviction", "wrong"), ("p_capacity_fail", "cap_fail")):
        k = got[col].sum(axis=0)
        table[name] = k / args.n
        bounds = np.array([wilson(int(x), args.n) for x in k])
        table[f"{name}_lo"], table[f"{name}_hi"] = bounds[:, 0], bounds[:, 1]
    table["quality_end"], table["quality_end_lo"], table["quality_end_hi"] = mean_interval(got["quality_end"])
    table["lemons_end"] = got["lemons_end"].mean(axis=0)
    table["n_evicted"] = got["n_evicted"].mean(axis=0)
    table["months"] = args.n

    # The calibration's answer per lemon rate at the middle headroom.
    answers = []
    grid = {"window.hours": list(WINDOWS), "eviction.policy": ["share", "threshold"], "eviction.share": [0.0],
            "eviction.theta": list(THETAS), "autoscaler.period": list(PERIODS), "autoscaler.strikes": list(STRIKES)}
    for lemon in LEMONS:
        sc = base.replace({"lottery.lemon_rate": lemon, "demand.level": level(HEADROOM[1])})
        res = cal.calibrate(sc, grid, n=args.n, first=min(cal.DEFAULT_FIRST, args.n), seed=args.seed,
                            progress=_study.progress(args))
        r = res.recommendation
        answers.append({"lemon_rate": lemon, "headroom": HEADROOM[1],
                        "recommended": None if r is None else r["names"],
                        "bill": np.nan if r is None else r["bill"],
                        "bill_lo": np.nan if r is None else r["bill_lo"],
                        "bill_hi": np.nan if r is None else r["bill_hi"],
                        "p_wrong_eviction_hi": np.nan if r is None else r["p_wrong_eviction_hi"],
                        "evicts": bool(r is not None and r["n_evicted"] > 0),
                        "settings": res.searched, "rows": len(res.table)})
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_table(table, out / "settings.parquet")
    write_table(pd.DataFrame(answers), out / "calibration.parquet")
    wall = time.perf_counter() - start
    manifest.write(out, manifest.build(config(args), seed=args.seed, n=args.n, settings=len(table),
                                       wall_s=round(wall, 1)))
    if not args.quiet:
        print(f"eviction_pays: {len(table)} settings x {args.n:,} months and {len(LEMONS)} calibrations in "
              f"{wall:.0f} s -> {out}", file=sys.stderr)
        for a in answers:
            print(f"  lemon rate {a['lemon_rate']:.0%}: {a['recommended']}  (${a['bill']:,.0f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
