"""How much of a pool can be spot? (SPEC §10)

A pool of 64 flagship cards sized for its demand (the demand 64 lemon-free cards at
their mean rate meet at the daily peak exactly), plus 0, 2 or 4 spare cards, run
by the ``spot-field`` preset's autoscaler (daily rounds on a day's window, the run
set to each round's peak, replacement, failover to the best spare) with its
lottery, dips and hard failures. Each pool entry's cards are split between the
markets by ``spot.share`` (0 to 100%), the spot slots spread over 1 or 3 zones, with
or without an on-demand card taking an emptied spot slot after an hour
(``spot.fallback_hours`` = 1). The spot market comes in two regimes that share the
preset's figure for how often a zone's wave strikes (0.125 a month, the AWS middle
interruption band) and differ in how long the zone then stays away:

- ``hours``: the preset's down spell, 1.7 h on average (the spot traces' middle);
- ``days``: 48 h on average, the long outages a spot market's traces show in their
  tail ("hours or even days"), the top of the range docs/model.md §10.4 says to sweep.

Every setting runs the same months (one key per month), so differences between
settings are paired month by month. A setting passes the planner's bar when the
capacity check (shortfall ≤ 1% of the month's demand tokens) holds in at least
99% of months with 95% confidence (the Wilson interval's lower end ≥ 99%).

What failover buys: the pools at 0% and 50% spot (one zone, no fallback) again
with ``failover = false``. What hard failures alone cost an owned fleet: the
``used-chip-bargain`` buying story (§4: owned used A100s carrying the forecast,
more rented for the peak, the API for the rest) with Llama 3's failure rate and
repairs taking 4 h to a week, against the same months without failures.

Writes results/spot_share/months.parquet (one row per setting and month: the
month's bill, shortfall and §10 outputs), points.parquet (one row per setting:
means and pass rates with 95% intervals), effects.parquet (what the failover, a
spare and the fallback buy, paired month by month), owned.parquet (the owned
fleet's extra bill per repair time, paired) and manifest.json.
"""

from __future__ import annotations

import itertools
import sys
import time

import _study
from which_rule import mean_ci, rate_ci

CARDS, CARD_RATE, AMPLITUDE = 64, 7000 * 0.96, 0.3  # the pool, a lemon-free card's mean true rate (tok/s)
LEVEL = CARDS * CARD_RATE / (1 + AMPLITUDE)  # tok/s mean demand: 64 cards meet its peak exactly
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
ZONES = (1, 3)
# h; NEVER: a spot slot waits for its zone. Written as an hour count past any month's end
# rather than as "never" (which a scenario holds as None), so both fallbacks run in one
# compiled program: a fallback card due after the month's end never serves in it, and
# the months are the same to the bit (tests/studies/test_spot_share_study.py).
NEVER = 1e5
FALLBACK = (NEVER, 1.0)
SPARES = (0, 2, 4)
REGIMES = {"hours": 1.7, "days": 48.0}  # spot.down_hours; up spells as the preset's
FAILOVER_OFF_SHARES = (0.0, 0.5)
REPAIR_HOURS = (4.0, 24.0, 72.0, 168.0)
TARGET = 0.99  # share of months passing the capacity check
COLUMNS = ("bill", "warm_bill", "churn_bill", "spot_bill", "shortfall", "pass_capacity", "n_failed", "n_preempted",
           "empty_slot_hours", "fallback_hours", "n_run")
FILES = ("months.parquet", "points.parquet", "effects.parquet", "owned.parquet")
KEYS = ("regime", "share", "zones", "fallback", "spares", "failover")


def settings() -> list[dict]:
    """Every setting the study runs, in a fixed order (share 0 once: no spot card,
    so its zones, fallback and regime do not exist)."""
    rows = []
    for spares, share in itertools.product(SPARES, SHARES):
        if share == 0:
            rows.append(dict(regime="none", share=0.0, zones=1, fallback=NEVER, spares=spares, failover=True))
            continue
        for regime, zones, fb in itertools.product(REGIMES, ZONES, FALLBACK):
            rows.append(dict(regime=regime, share=share, zones=zones, fallback=fb, spares=spares, failover=True))
    for spares, share in itertools.product(SPARES, FAILOVER_OFF_SHARES):
        for regime in (("none",) if share == 0 else tuple(REGIMES)):
            rows.append(dict(regime=regime, share=share, zones=1, fallback=NEVER, spares=spares, failover=False))
    return rows


def scenario(s: dict):
    """The spot-field preset at setting ``s``."""
    from mc.fleet import presets

    fields = {"pool": f"{CARDS + s['spares']} x flagship", "demand.level": LEVEL, "spot.share": s["share"],
              "autoscaler.failover": s["failover"]}
    if s["share"] > 0:
        fields.update({"spot.zones": s["zones"], "spot.fallback_hours": s["fallback"],
                       "spot.down_hours": REGIMES[s["regime"]]})
    return presets.get("spot-field").replace(fields)


def key(s: dict) -> str:
    fb = "never" if s["fallback"] >= NEVER else f"{s['fallback']:g}h"
    return (f"{s['regime']}-share{s['share']:g}-zones{s['zones']}-fallback{fb}-spares{s['spares']}"
            f"-failover{int(s['failover'])}")


def config(args) -> dict:
    return {"preset": "spot-field", "cards": CARDS, "level": LEVEL, "shares": SHARES, "zones": ZONES,
            "fallback_hours": FALLBACK, "spares": SPARES, "down_hours": REGIMES,
            "failover_off_shares": FAILOVER_OFF_SHARES, "repair_hours": REPAIR_HOURS, "owned_story": "used-chip-bargain",
            "target": TARGET, "n": args.n, "seed": args.seed}


def months_of(s: dict, args, pdir, warn):
    """The setting's months (one row each), from its piece on disk or simulated."""
    from mc.fleet import simulate
    from mc.studies.store import reusable, write_piece

    ident = {"setting": key(s), "n": args.n, "seed": args.seed}
    path = pdir / f"{key(s)}.parquet"
    got = None if args.fresh else reusable(path, ident, warn, f"setting {key(s)}")
    if got is not None:
        return got
    r = simulate(scenario(s), args.n, seed=args.seed, chunk=_study.chunk(args.n), keep_samples=True, progress=False)
    frame = r.samples[list(COLUMNS)].copy()  # every setting has §10's columns: its cards fail
    frame.insert(0, "month", range(len(frame)))
    write_piece(path, ident, frame)
    return frame


def summary(s: dict, m) -> dict:
    """One setting's figures: means with normal 95% intervals, pass rates with
    Wilson intervals."""
    row = dict(s)
    for c in ("bill", "spot_bill", "shortfall", "n_failed", "n_preempted", "empty_slot_hours", "fallback_hours"):
        row[c], row[f"{c}_lo"], row[f"{c}_hi"] = mean_ci(m[c].to_numpy(float))
    row["p_fail"], row["p_fail_lo"], row["p_fail_hi"] = rate_ci(~m["pass_capacity"].to_numpy(bool))
    row["meets"] = bool(1.0 - row["p_fail_hi"] >= TARGET)
    return row


def effects(months):
    """What the failover, a spare card and the fallback each buy, paired month by
    month: for every setting with one of them (failover on; 2 or 4 spares; an hour's
    fallback), its months less the same setting's without it (failover off; no spare;
    no fallback), as mean differences with normal 95% intervals of the bill, the
    shortfall and the capacity check's failure (a month's 1 or 0)."""
    import pandas as pd

    by = {k: g.sort_values("month") for k, g in months.groupby(list(KEYS))}
    fewest = min(months["spares"])
    rows = []
    for k, g in by.items():
        s = dict(zip(KEYS, k))
        for what, base in (("failover", dict(s, failover=False)), ("spares", dict(s, spares=fewest)),
                           ("fallback", dict(s, fallback=NEVER))):
            ref = by.get(tuple(base[c] for c in KEYS))
            if ref is None or base == s or (what == "spares" and not s["failover"]):
                continue
            row = dict(s, effect=what, against=base[what])
            for c, x in (("bill", "bill"), ("shortfall", "shortfall"), ("p_fail", "pass_capacity")):
                d = g[x].to_numpy(float) - ref[x].to_numpy(float)
                if c == "p_fail":
                    d = -d  # a failure is a pass lost
                row[f"d_{c}"], row[f"d_{c}_lo"], row[f"d_{c}_hi"] = mean_ci(d)
            rows.append(row)
    return pd.DataFrame(rows)


def owned(args):
    """The owned fleet's extra bill from hard failures, per repair time: the buying
    story against the same months without failures (paired)."""
    import dataclasses

    import pandas as pd

    from mc.buy import presets as buy_presets
    from mc.buy.settle import simulate
    from mc.buy.terms import Repairs
    from mc.fleet import presets

    story = buy_presets.get("used-chip-bargain")
    rate = presets.get("spot-field").failures.rate
    base = simulate(story, args.n, seed=args.seed, keep_samples=True).samples
    rows = []
    for hours in REPAIR_HOURS:
        p = dataclasses.replace(story, failures=Repairs(rate=rate, repair_hours=hours))
        m = simulate(p, args.n, seed=args.seed, keep_samples=True).samples
        extra = (m["bill"] - base["bill"]).to_numpy(float)
        row = {"repair_hours": hours, "failure_rate": rate, "bill": float(m["bill"].mean()),
               "owned_cards": int(sum(story.owned_cards))}
        row["extra"], row["extra_lo"], row["extra_hi"] = mean_ci(extra)
        row["extra_share"] = row["extra"] / float(base["bill"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = _study.parser("spot_share", __doc__.splitlines()[0], n=1000)
    p.add_argument("--quick", action="store_true", help="a smoke-test size: 64 fleet-months per setting")
    args = p.parse_args(argv)
    if args.quick:
        args.n = 64
    cfg = config(args)
    if _study.up_to_date("spot_share", args, FILES, cfg):
        return 0
    import pandas as pd

    from mc.studies import manifest
    from mc.studies.store import FolderLock, tag

    start = time.perf_counter()
    out = args.out
    pdir = out / "settings"
    todo = settings()
    warn = (lambda msg: None) if args.quiet else (lambda msg: print(f"spot_share: warning: {msg}", file=sys.stderr))
    with FolderLock(out, "spot_share study"):
        pdir.mkdir(parents=True, exist_ok=True)
        months, points = [], []
        for i, s in enumerate(todo):
            t = time.perf_counter()
            m = months_of(s, args, pdir, warn)
            months.append(m.assign(**s))
            points.append(summary(s, m))
            if not args.quiet:
                r = points[-1]
                print(f"spot_share: [{i + 1}/{len(todo)}] {key(s)}: bill ${r['bill']:,.0f}, P(capacity fails) "
                      f"{r['p_fail']:.1%} [{r['p_fail_lo']:.1%}, {r['p_fail_hi']:.1%}] "
                      f"({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
        months_t = pd.concat(months, ignore_index=True)
        points_t = pd.DataFrame(points)
        effects_t = effects(months_t)
        owned_t = owned(args)
        wall = time.perf_counter() - start
        what = {"config_hash": manifest.config_hash(cfg), "n": args.n, "seed": args.seed}
        manifest.write_sealed(out / "manifest.json",
                              manifest.build(cfg, seed=args.seed, n=args.n, settings=len(todo), wall_s=round(wall, 1)),
                              {out / "months.parquet": (months_t, tag(months_t, what="spot_share months", **what)),
                               out / "points.parquet": (points_t, tag(points_t, what="spot_share settings", **what)),
                               out / "effects.parquet": (effects_t, tag(effects_t, what="spot_share effects", **what)),
                               out / "owned.parquet": (owned_t, tag(owned_t, what="spot_share owned fleet", **what))})
    if not args.quiet:
        ok = points_t[points_t.meets & points_t.failover]
        for regime in REGIMES:
            best = ok[ok.regime.isin([regime, "none"])].sort_values("bill").head(1)
            for _, r in best.iterrows():
                print(f"spot_share: {regime}: cheapest setting meeting the bar: {key(r.to_dict())}, "
                      f"${r['bill']:,.0f} a month", file=sys.stderr)
        print(f"spot_share: {len(todo)} settings x {args.n:,} months in {wall:.0f} s -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
