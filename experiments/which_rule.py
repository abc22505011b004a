"""Which eviction rule? Each rule family calibrated on lemon pools (SPEC §1.5, §6).

On the lemon hunter's pool (32 flagships, run set to each round's peak, daily
rounds, each evicted card replaced) at each lemon rate × headroom of the eviction
study (experiments/eviction_pays.py; the pool short of its peak is left out, see
``HEADROOM``), every rule family is calibrated on its own grid (window × its knob ×
strikes 1 and 2) under the same limits (the defaults of
``mc.studies.calibrate.calibrate``: P(capacity failure) <= 5% and P(any wrong
eviction) <= 5%, each on the upper end of its 95% interval). The yardstick is no
eviction (share 0), its window calibrated under the same limits: the cheapest
autoscaler that never evicts. Each family's answer (or, where none of its settings
meets the limits, the closest) then runs again on fresh months beside the
yardstick, so its saving, risks and the lemons left at month end are not measured
on the months it was chosen on. All runs share their months (common random
numbers), so every saving is paired month by month.

Writes results/which_rule/candidates.parquet (every distinct setting each
calibration raced, no eviction's included, with its saving against the yardstick
on the months it ran), results/which_rule/best.parquet (one row per pool and rule:
its pick on fresh months, with the yardstick's setting, capacity risk and lemons
left) and manifest.json. ``lemons_end`` is the autoscaler month's count of lemons in
slots at month end (SPEC §6).
"""

from __future__ import annotations

import itertools
import sys
import time

import _study
import eviction_pays
from eviction_pays import level

LEMONS = (0.1, 0.2)
# The eviction study's pools that are big enough for their peak. Short of it (0.95),
# no setting of any rule passes the capacity check without wrong evictions in most
# months, so no rule can meet the limits there.
HEADROOM = tuple(h for h in eviction_pays.HEADROOM if h >= 1.0)
WINDOWS = (1.0, 4.0, 24.0)
STRIKES = (1, 2)
# Each family's knob and the values its calibration searches (max_share stays at its default).
RULES = {
    "share": ("eviction.share", (0.05, 0.1, 0.15, 0.2, 0.3)),
    "threshold": ("eviction.theta", (0.6, 0.7, 0.8, 0.9, 0.95)),
    "zscore": ("eviction.k", (1.0, 2.0, 3.0, 4.0)),
    "floor": ("eviction.floor", (0.6, 0.7, 0.8, 0.9, 0.95)),
}
MAX_WRONG, MAX_CAPACITY_RISK = 0.05, 0.05  # the calibration's default limits
NONE = "none"  # the yardstick: no eviction (share 0), its window calibrated under the same limits
FILES = ("candidates.parquet", "best.parquet")
# A calibration table's columns kept besides its fields and figures.
KEPT = ["names", "settings", "months", "status", "feasible", "pareto"]


def month(out: dict) -> dict:
    """What the fresh-month runs keep of each month."""
    import jax.numpy as jnp

    return {"bill": out["bill"].astype(jnp.int32), "wrong": ~out["pass_eviction"], "cap_fail": ~out["pass_capacity"],
            "lemons_end": out["lemons_end"].astype(jnp.int32),
            "lemons_evicted": out["lemons_evicted"].astype(jnp.int32),
            "n_evicted": out["n_evicted"].astype(jnp.int32)}


def grid(family: str) -> dict:
    """A family's calibration grid: windows × its knob × strikes; for no eviction,
    the windows alone (share 0 marks nothing, so strikes change nothing)."""
    if family == NONE:
        return {"window.hours": list(WINDOWS), "eviction.policy": ["share"], "eviction.share": [0.0]}
    field, values = RULES[family]
    return {"window.hours": list(WINDOWS), "eviction.policy": [family], field: list(values),
            "autoscaler.strikes": list(STRIKES)}


def config(args) -> dict:
    return {"lemons": LEMONS, "headroom": HEADROOM, "windows": WINDOWS, "strikes": STRIKES,
            "rules": {r: {"field": f, "values": vals} for r, (f, vals) in RULES.items()},
            "limits": {"max_capacity_risk": MAX_CAPACITY_RISK, "max_wrong": MAX_WRONG, "judged_on": "upper"},
            "yardstick": "no eviction (share 0), its window calibrated under the same limits",
            "n": args.n, "seed": args.seed, "base": "lemon-hunter", "fresh_months": [args.n, 2 * args.n]}


def mean_ci(x) -> tuple[float, float, float]:
    """A mean over months with its normal 95% interval."""
    from mc.engine import mean_interval

    return mean_interval(x)


def rate_ci(x) -> tuple[float, float, float]:
    """A share of months with its Wilson 95% interval."""
    import numpy as np

    from mc.engine import pass_count

    p = pass_count(int(np.count_nonzero(x)), len(x))
    return p["rate"], p["lo"], p["hi"]


def calibrate_family(base, family: str, args):
    """One family's calibration on one pool: its candidates (one row per distinct
    setting) and its pick (the answer, else the closest) as ``(row, meets the
    limits, settings searched)``."""
    from mc.studies import calibrate as cal

    g = grid(family)
    # The base is the grid's first setting, so the calibration runs nothing beside the grid.
    res = cal.calibrate(base.replace({f: vals[0] for f, vals in g.items()}), g, max_wrong=MAX_WRONG,
                        max_capacity_risk=MAX_CAPACITY_RISK, n=args.n, first=min(cal.DEFAULT_FIRST, args.n),
                        seed=args.seed, progress=_study.progress(args))
    figs = [c for f in cal.FIGURES for c in (f, f"{f}_lo", f"{f}_hi")]
    t = res.table[res.fields + KEPT[:2] + figs + KEPT[2:]].copy()
    knob = knob_field(family)
    t = t.rename(columns={knob: "knob"}).drop(columns=["eviction.policy"])
    t.insert(0, "rule", family)
    t["knob_field"] = knob
    pick = res.table.loc[res.best if res.best is not None else res.closest]
    return t, (pick, res.best is not None, res.searched)


def knob_field(family: str) -> str:
    return "eviction.share" if family == NONE else RULES[family][0]


def scenario(base, family: str, row):
    """The scenario of a calibration row (its grid fields' values on ``base``)."""
    from mc.studies import manifest

    return base.replace({f: manifest.plain(row[f]) for f in grid(family)})


def on_fresh_months(base, picks: dict, ref: dict, args) -> list[dict]:
    """Each family's pick on months n..2n beside no eviction's (``ref``: its months
    0..2n), every figure with its 95% interval (the saving paired month by month);
    ``behind``: its bill less that of the pool's best rule (the largest saving among
    the picks that meet the limits), paired too."""
    import numpy as np

    from mc.studies import blocks

    n = args.n
    chosen = [scenario(base, rule, row) for rule, (row, _, _) in picks.items()]
    got = blocks.run(chosen, month, n, first=n, seed=args.seed, progress=_study.progress(args), most=1)
    bills = got["bill"].astype(np.float64) / 100.0
    ref_bill = ref["bill"][n:, 0].astype(np.float64) / 100.0
    rows = []
    for j, (rule, (row, meets, searched)) in enumerate(picks.items()):
        r = {"rule": rule, "setting": row["names"].split("; ")[0], "knob_field": RULES[rule][0],
             "knob": float(row[RULES[rule][0]]), "window": float(row["window.hours"]),
             "strikes": int(row["autoscaler.strikes"]), "meets_limits": meets, "settings": searched,
             "calibration_bill": float(row["bill"]), "calibration_months": int(row["months"])}
        figs = {"saving": mean_ci(ref_bill - bills[:, j]), "bill": mean_ci(bills[:, j]),
                "p_wrong_eviction": rate_ci(got["wrong"][:, j]), "p_capacity_fail": rate_ci(got["cap_fail"][:, j]),
                "lemons_end": mean_ci(got["lemons_end"][:, j]), "lemons_evicted": mean_ci(got["lemons_evicted"][:, j]),
                "n_evicted": mean_ci(got["n_evicted"][:, j])}
        for name, (val, lo, hi) in figs.items():
            r[name], r[f"{name}_lo"], r[f"{name}_hi"] = val, lo, hi
        rows.append(r)
    ok = [j for j, r in enumerate(rows) if r["meets_limits"]]
    top = max(ok, key=lambda j: rows[j]["saving"]) if ok else None
    for j, r in enumerate(rows):
        r["top"] = j == top
        gap = (np.nan,) * 3 if top is None else mean_ci(bills[:, j] - bills[:, top])
        r["behind"], r["behind_lo"], r["behind_hi"] = gap
    return rows


def pool_study(base, pool: dict, args) -> tuple[list, list[dict]]:
    """One lemon pool: no eviction calibrated first (the yardstick), then each rule;
    every candidate's saving is against no eviction's pick over the months it ran."""
    import numpy as np

    from mc.studies import blocks

    n = args.n
    none_table, (none, none_ok, _) = calibrate_family(base, NONE, args)
    # No eviction's pick on months 0..n (the calibrations') and n..2n (the fresh runs').
    ref = blocks.run([scenario(base, NONE, none)], month, 2 * n, seed=args.seed, progress=_study.progress(args),
                     most=1)
    ref_bill = ref["bill"][:, 0].astype(np.float64) / 100.0
    tables, picks = [none_table], {}
    for rule in RULES:
        t, picks[rule] = calibrate_family(base, rule, args)
        tables.append(t)
    tables = [t.assign(saving=[ref_bill[:m].mean() - b for m, b in zip(t["months"], t["bill"])], **pool)
              for t in tables]
    yardstick = {"none_setting": none["names"].split("; ")[0], "none_meets_limits": none_ok,
                 "none_bill": float(ref_bill[n:].mean())}
    for name, col, ci in (("none_p_capacity_fail", "cap_fail", rate_ci), ("none_lemons_end", "lemons_end", mean_ci)):
        yardstick[name], yardstick[f"{name}_lo"], yardstick[f"{name}_hi"] = ci(ref[col][n:, 0])
    return tables, [{**pool, **r, **yardstick} for r in on_fresh_months(base, picks, ref, args)]


def run_pools(name: str, args, cfg: dict, pools: list) -> None:
    """``pool_study`` on each ``(base, labels)`` of ``pools``; writes
    ``args.out``/candidates.parquet and best.parquet (labels first) with a sealed
    manifest of ``cfg``, and says what each rule picked unless quiet."""
    import pandas as pd

    from mc.studies import manifest
    from mc.studies.store import tag

    start = time.perf_counter()
    candidates, best = [], []
    for base, labels in pools:
        tables, rows = pool_study(base, labels, args)
        candidates += tables
        best += rows
    front = list(pools[0][1])
    cand = pd.concat(candidates, ignore_index=True)
    cand = cand[front + [c for c in cand.columns if c not in front]]
    table = pd.DataFrame(best).assign(months=args.n)
    wall = time.perf_counter() - start
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    what = {"config_hash": manifest.config_hash(cfg), "n": args.n, "seed": args.seed}
    manifest.write_sealed(out / "manifest.json",
                          manifest.build(cfg, seed=args.seed, n=args.n, pools=len(pools), candidates=len(cand),
                                         wall_s=round(wall, 1)),
                          {out / "candidates.parquet": (cand, tag(cand, what=f"{name} candidates", **what)),
                           out / "best.parquet": (table, tag(table, what=f"{name} best per rule", **what))})
    if args.quiet:
        return
    print(f"{name}: {len(pools)} pools x {len(RULES)} rules calibrated ({len(cand)} distinct settings) in "
          f"{wall:.0f} s -> {out}", file=sys.stderr)
    for _, r in table.iterrows():
        print(f"  {r['variant'] + ', ' if 'variant' in r else ''}lemons {r['lemon_rate']:.0%}, headroom "
              f"{r['headroom']:g}, {r['rule']}: {r['setting']}"
              f"{'' if r['meets_limits'] else ' (closest: none meets the limits)'}; saving ${r['saving']:,.0f} "
              f"[{r['saving_lo']:,.0f}, {r['saving_hi']:,.0f}] against {r['none_setting']}, "
              f"P(wrong) {r['p_wrong_eviction']:.1%}, lemons left {r['lemons_end']:.2f} "
              f"(no eviction: {r['none_lemons_end']:.2f})", file=sys.stderr)


def main(argv=None) -> int:
    p = _study.parser("which_rule", __doc__.splitlines()[0], n=512)
    p.add_argument("--quick", action="store_true", help="a smoke-test size: 64 fleet-months per setting")
    args = p.parse_args(argv)
    if args.quick:
        args.n = 64
    if _study.up_to_date("which_rule", args, FILES, config(args)):
        return 0
    from mc.fleet import presets

    lemon_hunter = presets.get("lemon-hunter")
    pools = [(lemon_hunter.replace({"lottery.lemon_rate": lemon, "demand.level": level(head)}),
              {"lemon_rate": lemon, "headroom": head}) for lemon, head in itertools.product(LEMONS, HEADROOM)]
    run_pools("which_rule", args, config(args), pools)
    return 0


if __name__ == "__main__":
    sys.exit(main())
