"""The lottery at tensor parallel: 64 H100s serving a 70B model on replicas of 1, 2, 4, 8 (SPEC §11).

The service is ``llama70b-tp4``'s (64 H100 SXM cards, Llama-3-70B, the field preset's
lottery and dips, the lemon hunter's daily rounds with replacement, a diurnal demand
at 30% amplitude), in 8-bit weights at every ``tp`` so that the one model fits every
replica (70.6 GB of weights fit one card only in 8-bit). Each ``tp`` is rated as the
presets are (SPEC §5 over a replica, 4,096 tokens of context, a batch of 32, per card:
the replica's aggregate over its cards), except that one card seats only 5 such
requests beside the weights: ``tp`` 1 runs the 5 it seats.

Demand is fixed across ``tp`` (the same diurnal profile for every replica size), at two
levels, each set by the presets' rule (the peak at 87% of a pool's rated rate) on one pool:

- ``every tp``: on the smallest pool, ``tp`` 1's (64 cards at 217 tok/s): every ``tp``
  serves it, ``tp`` 2, 4 and 8 with their pools four times the peak;
- ``tp 2-8``: on the smallest pool of the rest, ``tp`` 8's: ``tp`` 2, 4 and 8 serve it
  with 1.1 to 1.4 times the peak; ``tp`` 1 cannot (its pool is a third of the peak) and
  is left out.

The lemons are the field preset's (MegaScale's: 0.5% of machines, 10% slower, so a
lemon runs at 1/1.1 = 0.909 of its ticket), their share set to 0, 5% and 10%.

Per demand × ``tp`` × lemon rate, on the same months (common random numbers, one key
per fleet-month):

- **no eviction** (share 0, the preset's day window): the share of replicas holding a
  lemon at the month's start (against ``1 − (1 − π)^tp``), the capacity the run set
  delivered against its rating (capacity tokens over the hour-weighted run replicas'
  rated rate), the bill, and the lottery's cost (the bill less that of no lemons,
  paired);
- **eviction**, under ``evict = "replica"`` and ``"member"`` (one run at ``tp`` 1, where
  the two are the same): a threshold grid (window × θ × strikes) calibrated on the
  first ``n`` months (P(capacity failure) and P(any wrong eviction) within 5% on the
  upper end of their 95% intervals), its pick run again on ``4n`` fresh months beside no
  eviction: what it saves a month (paired 95% interval), wrong evictions (SPEC §11:
  under ``replica``, a replica whose slowest card's true rate is at or above the median
  card's; under ``member``, a card at or above it), evictions, the replicas left holding
  a lemon; and, under ``member``, its bill against ``replica``'s pick (paired): what
  per-card telemetry is worth.

Writes results/tp_lottery/service.parquet (one row per demand, ``tp`` and lemon rate),
eviction.parquet (one row per demand, ``tp``, lemon rate and form), candidates.parquet
(every setting each calibration raced) and a sealed manifest.json.
"""

from __future__ import annotations

import sys
import time

import _study
import which_rule
from which_rule import mean_ci, rate_ci

BASE = "llama70b-tp4"
MODEL, GPU, WEIGHT_BYTES, BATCH, CARDS = "llama-3-70b", "h100", 1, 32, 64
TPS = (1, 2, 4, 8)
LEMONS = (0.0, 0.05, 0.10)
FORMS = ("replica", "member")
# The presets' demand rule (docs/model.md §11.1): the diurnal peak at the lemon hunter's
# 87% of the pool's rated rate (195,000 of 224,000 tok/s), the level rounded to 100.
PEAK_SHARE = 150_000 * 1.3 / (32 * 7_000)
DEMANDS = {"every tp": TPS, "tp 2-8": (2, 4, 8)}  # the pools each level is set on (the smallest rated)
GRID = {"window.hours": [24.0, 168.0], "eviction.policy": ["threshold"], "eviction.theta": [0.85, 0.9, 0.95],
        "autoscaler.strikes": [1, 3]}
NONE = {"eviction.policy": "share", "eviction.share": 0.0, "window.hours": 24.0}
FRESH = 4  # fresh months per calibration month
FILES = ("service.parquet", "eviction.parquet", "candidates.parquet")
SHOWN = ["names", "bill", "bill_lo", "bill_hi", "p_wrong_eviction", "p_wrong_eviction_lo", "p_wrong_eviction_hi",
         "p_capacity_fail", "p_capacity_fail_hi", "n_evicted", "months", "status"]


def entry(tp: int) -> dict:
    """The pool entry of ``tp``: 64 H100s in 8-bit, at the preset's batch or the seats one replica has."""
    from mc.serving import card

    c = card(MODEL, GPU, weight_bytes_per_param=WEIGHT_BYTES, batch=BATCH, tp=tp)
    return {"gpu": GPU, "model": MODEL, "batch": c.batch, "tp": tp, "weight_bytes": WEIGHT_BYTES,
            "price_month": 2600.0, "count": CARDS}


def levels() -> dict[str, float]:
    """Each demand's mean level (tok/s): the peak at 87% of its smallest pool's rated rate."""
    from mc.fleet import presets

    base = presets.get(BASE)
    rated = {tp: base.replace({"pool": [entry(tp)]}).pool.classes[0].rated * CARDS for tp in TPS}
    return {name: float(round(PEAK_SHARE * min(rated[tp] for tp in tps) / (1 + base.demand.amplitude), -2))
            for name, tps in DEMANDS.items()}


def service(tp: int, level: float, lemon: float, form: str = "replica"):
    from mc.fleet import presets

    return presets.get(BASE).replace({"pool": [entry(tp)], "demand.level": level, "lottery.lemon_rate": lemon,
                                      "eviction.evict": form})


def month(out: dict) -> dict:
    """What the fresh months keep (``tp`` 1's cards are its replicas)."""
    import jax.numpy as jnp

    i32 = jnp.int32
    return {"bill": out["bill"].astype(i32), "wrong": out["n_wrong"].astype(i32),
            "n_evicted": out["n_evicted"].astype(i32),
            "members_evicted": out.get("members_evicted", out["n_evicted"]).astype(i32),
            "lemon_start": out.get("replicas_with_lemon", out["lemons_end"]).astype(i32),
            "lemon_end": out.get("replicas_with_lemon_end", out["lemons_end"]).astype(i32),
            "capacity": out["capacity_tokens"], "mean_run": out["mean_run"], "cap_fail": ~out["pass_capacity"]}


def capacity_ratio(got: dict, j: int, rate: float):
    """Capacity tokens over the run replicas' rated tokens (``rate``: a replica's tok/s), per month."""
    import numpy as np

    from mc.units import HOURS

    rated = got["mean_run"][:, j].astype(np.float64) * rate * HOURS * 3600.0
    return np.where(rated > 0, got["capacity"][:, j] / np.maximum(rated, 1.0), 0.0)


def put(row: dict, name: str, ci) -> None:
    row[name], row[f"{name}_lo"], row[f"{name}_hi"] = (float(x) for x in ci)


def config(args) -> dict:
    return {"base": BASE, "model": MODEL, "gpu": GPU, "weight_bytes": WEIGHT_BYTES, "batch": BATCH, "cards": CARDS,
            "tps": TPS, "lemons": LEMONS, "forms": FORMS, "peak_share": PEAK_SHARE, "demands": DEMANDS,
            "levels": levels(), "grid": GRID, "none": NONE,
            "limits": {"max_capacity_risk": which_rule.MAX_CAPACITY_RISK, "max_wrong": which_rule.MAX_WRONG,
                       "judged_on": "upper"}, "n": args.n, "fresh": FRESH * args.n, "seed": args.seed}


def calibrate(sc, args):
    """The grid raced on months 0..n of ``sc``: its table and pick (the answer, else the closest)."""
    from mc.studies import calibrate as cal, manifest

    base = sc.replace({f: vals[0] for f, vals in GRID.items()})
    res = cal.calibrate(base, GRID, max_wrong=which_rule.MAX_WRONG, max_capacity_risk=which_rule.MAX_CAPACITY_RISK,
                        n=args.n, first=max(16, args.n // 4), seed=args.seed, progress=_study.progress(args))
    pick = res.table.loc[res.best if res.best is not None else res.closest]
    chosen = sc.replace({f: manifest.plain(pick[f]) for f in GRID})
    table = res.table[[f for f in GRID if f != "eviction.policy"] + SHOWN].copy()
    return table, pick, res.best is not None, chosen


def cells() -> list[tuple[str, int, float]]:
    return [(d, tp, lemon) for d, tps in DEMANDS.items() for tp in tps for lemon in LEMONS]


def run(args) -> dict:
    """Every cell's calibrations, then every fresh month at once; the three tables."""
    import numpy as np
    import pandas as pd

    from mc.studies import blocks

    lv = levels()
    n, m = args.n, FRESH * args.n
    todo = cells()
    runs, labels, candidates, picks = [], [], [], []
    for d, tp, lemon in todo:  # no eviction, then each form's pick
        runs.append(service(tp, lv[d], lemon).replace(NONE))
        labels.append((d, tp, lemon, "none"))
    for d, tp, lemon in todo:
        for form in (FORMS[:1] if tp == 1 else FORMS):
            table, pick, meets, chosen = calibrate(service(tp, lv[d], lemon, form), args)
            candidates.append(table.assign(demand=d, tp=tp, lemon_rate=lemon, form=form))
            picks.append((d, tp, lemon, form, pick, meets))
            runs.append(chosen)
            labels.append((d, tp, lemon, form))
    got = blocks.run(runs, month, m, first=n, seed=args.seed, progress=_study.progress(args), most=1)
    bill = got["bill"].astype(np.float64) / 100.0
    col = {lab: j for j, lab in enumerate(labels)}
    rate = {tp: service(tp, 0.0, 0.0).pool.classes[0].rated * tp for tp in TPS}  # a replica's tok/s

    rows = []
    for d, tp, lemon in todo:
        j = col[(d, tp, lemon, "none")]
        r = {"demand": d, "level": lv[d], "tp": tp, "lemon_rate": lemon, "batch": entry(tp)["batch"],
             "replica_rate": rate[tp], "replicas": CARDS // tp, "peak_load": lv[d] * 1.3 / (rate[tp] * CARDS / tp),
             "lemon_share_theory": 1 - (1 - lemon) ** tp, "months": m}
        put(r, "lemon_share", mean_ci(got["lemon_start"][:, j] / (CARDS // tp)))
        put(r, "capacity_ratio", mean_ci(capacity_ratio(got, j, rate[tp])))
        put(r, "bill", mean_ci(bill[:, j]))
        put(r, "lottery_cost", mean_ci(bill[:, j] - bill[:, col[(d, tp, 0.0, "none")]]))
        put(r, "p_capacity_fail", rate_ci(got["cap_fail"][:, j]))
        rows.append(r)
    ev = []
    for d, tp, lemon, form, pick, meets in picks:
        j, j0 = col[(d, tp, lemon, form)], col[(d, tp, lemon, "none")]
        r = {"demand": d, "tp": tp, "lemon_rate": lemon, "form": "either" if tp == 1 else form,
             "setting": pick["names"].split("; ")[0], "window": float(pick["window.hours"]),
             "theta": float(pick["eviction.theta"]), "strikes": int(pick["autoscaler.strikes"]),
             "meets_limits": bool(meets), "calibration_bill": float(pick["bill"]), "months": m}
        put(r, "saving", mean_ci(bill[:, j0] - bill[:, j]))
        put(r, "bill", mean_ci(bill[:, j]))
        put(r, "wrong", mean_ci(got["wrong"][:, j]))
        put(r, "p_wrong_eviction", rate_ci(got["wrong"][:, j] > 0))
        put(r, "n_evicted", mean_ci(got["n_evicted"][:, j]))
        put(r, "members_evicted", mean_ci(got["members_evicted"][:, j]))
        put(r, "lemon_end", mean_ci(got["lemon_end"][:, j]))
        put(r, "none_lemon_end", mean_ci(got["lemon_end"][:, j0]))
        put(r, "capacity_ratio", mean_ci(capacity_ratio(got, j, rate[tp])))
        put(r, "p_capacity_fail", rate_ci(got["cap_fail"][:, j]))
        other = col.get((d, tp, lemon, "replica"))
        telemetry = (np.nan,) * 3 if form != "member" else mean_ci(bill[:, other] - bill[:, j])
        put(r, "member_over_replica", telemetry)  # replica's pick's bill less member's: what per-card scores save
        ev.append(r)
    cand = pd.concat(candidates, ignore_index=True)
    front = ["demand", "tp", "lemon_rate", "form"]
    return {"service.parquet": pd.DataFrame(rows), "eviction.parquet": pd.DataFrame(ev),
            "candidates.parquet": cand[front + [c for c in cand.columns if c not in front]]}


def say(tables: dict) -> None:
    s, e = tables["service.parquet"], tables["eviction.parquet"]
    for _, r in s.iterrows():
        print(f"  {r['demand']}, tp {r['tp']}, lemons {r['lemon_rate']:.0%}: replicas with a lemon "
              f"{r['lemon_share']:.1%} (1-(1-p)^K {r['lemon_share_theory']:.1%}), capacity/rated "
              f"{r['capacity_ratio']:.3f}, bill ${r['bill']:,.0f}, lottery ${r['lottery_cost']:,.0f} "
              f"[{r['lottery_cost_lo']:,.0f}, {r['lottery_cost_hi']:,.0f}]", file=sys.stderr)
    for _, r in e.iterrows():
        print(f"  {r['demand']}, tp {r['tp']}, lemons {r['lemon_rate']:.0%}, {r['form']}: {r['setting']}"
              f"{'' if r['meets_limits'] else ' (closest)'}: saves ${r['saving']:,.0f} "
              f"[{r['saving_lo']:,.0f}, {r['saving_hi']:,.0f}], wrong {r['wrong']:.3f}/month, evicted "
              f"{r['n_evicted']:.2f}", file=sys.stderr)


def main(argv=None) -> int:
    p = _study.parser("tp_lottery", __doc__.splitlines()[0], n=256)
    p.add_argument("--quick", action="store_true", help="a smoke-test size: 32 calibration months per setting")
    args = p.parse_args(argv)
    if args.quick:
        args.n = 32
    if args.n < 16:
        p.error(f"--n={args.n}: the calibration races at least 16 months; use --n >= 16")
    cfg = config(args)
    if _study.up_to_date("tp_lottery", args, FILES, cfg):
        return 0
    from mc.studies import manifest
    from mc.studies.store import tag

    start = time.perf_counter()
    tables = run(args)
    wall = time.perf_counter() - start
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    what = {"config_hash": manifest.config_hash(cfg), "n": args.n, "seed": args.seed}
    manifest.write_sealed(out / "manifest.json",
                          manifest.build(cfg, seed=args.seed, n=args.n, cells=len(tables["service.parquet"]),
                                         wall_s=round(wall, 1)),
                          {out / f: (t, tag(t, what=f"tp_lottery {f.split('.')[0]}", **what))
                           for f, t in tables.items()})
    if not args.quiet:
        print(f"tp_lottery: {len(tables['eviction.parquet'])} calibrations in {wall:.0f} s -> {out}", file=sys.stderr)
        say(tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
