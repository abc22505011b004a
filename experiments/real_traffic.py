"""Latency under real traffic: what burstiness costs one card and a fleet (SPEC §7, §7.1).

Part 1: one 8B model on one H100 under the static batcher (batch 32, wait 100 ms)
and the continuous batcher (batch 64), for four kinds of traffic at the same
lengths: Poisson arrivals, gamma renewal arrivals of CV 2 and of CV 4, and the
example request log's own arrivals (a moving-block bootstrap of 600 s blocks of
log time, compressed to the rate). Every traffic takes its prompt and answer
lengths from the log (``lengths = "log"``), so only arrival timing differs. Over a
grid of offered loads (rate / capacity rate): the median over replications of
each replication's p95 TTFT, its 95% distribution-free interval, and the p5..p95
band. Beside them, the replay of the whole log once at its own rate (one point a
batcher). A replication's 1,200 requests span about 220 s of log time at the log's
5.53 req/s, so each replication sees one stretch of the hour (within its first block),
and the p5..p95 band shows how the hour's quiet and busy stretches differ.

Part 2: the SLO-rated tok/s of each traffic under the continuous batcher (the
highest rate whose p95 TTFT is at most 0.5 s with probability 90% over replications,
``mc.serving.slo``: the 10% quantile of the replications' own crossing rates, with its
95% interval; the rating is that rate times the log's mean answer, the measured
throughput there a figure beside it), and what it means for a fleet: the cards a demand
of DEMAND generated tok/s needs, ceil(DEMAND / SLO-rated tok/s), and their rent a
month at PRICE_HOUR per card-hour.

The log: examples/traces/azure-conv-2023.csv, one hour (19,366 requests, 5.53
req/s) of the conversation service in the Azure LLM inference trace 2023
(CC-BY 4.0).

Writes results/real_traffic/{curves,slo}.parquet and manifest.json (sealing them).
"""

from __future__ import annotations

import math
import sys
import time

import _study

LOG = "examples/traces/azure-conv-2023.csv"
TRAFFICS = [  # label, arrivals, cv of the gaps (gamma only)
    ("Poisson", "poisson", 1.0),
    ("gamma, CV 2", "gamma", 2.0),
    ("gamma, CV 4", "gamma", 4.0),
    ("Azure log, bootstrapped", "log", 1.0),
]
BATCHERS = [  # label, batcher, max batch, max wait (s)
    ("static, batch 32, wait 100 ms", "static", 32, 0.1),
    ("continuous, batch 64", "continuous", 64, 0.0),
]
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # offered load: rate / capacity rate
SLO = {"percentile": 95.0, "share": 0.9}
SLO_TTFT = 0.5  # s
SLO_BATCHER = "continuous, batch 64"
DEMAND = 60_000.0  # generated tok/s the fleet must serve under the SLO
# Assumed on-demand rental price of an H100, $ per card-hour: the same round figure
# the latency study assumes (the serving catalogue and the fleet presets hold no
# rental price; mc.buy's card-months are owned cards'); a month is
# mc.units.HOURS = 730 h. The cards needed do not depend on it; $ scale with it.
PRICE_HOUR = 2.50
REQUESTS, WARMUP = 1000, 200  # measured and dropped requests per replication
REL_TOL = 0.02  # the SLO search's rate grid: steps of at most 2%


def read_log():
    from mc.files import read_request_log

    return read_request_log(_study.ROOT / LOG)


def config(args, log) -> dict:
    block = serving(log, BATCHERS[-1], next(t for t in TRAFFICS if t[1] == "log")).block  # s of log time
    return {"log": {**log.describe(), "source": LOG}, "traffics": TRAFFICS, "batchers": BATCHERS, "loads": LOADS,
            "slo": SLO, "slo_ttft": SLO_TTFT, "slo_batcher": SLO_BATCHER, "demand_tok_s": DEMAND,
            "price_hour": PRICE_HOUR, "requests": REQUESTS, "warmup": WARMUP, "replications": args.n,
            "seed": args.seed, "rel_tol": REL_TOL, "model": "8b", "gpu": "h100", "block": block}


def serving(log, batcher, traffic, **kw):
    from mc.serving import latency as L

    _, arrivals, cv = traffic
    _, kind, mb, mw = batcher
    return L.Serving("8b", "h100", batcher=kind, max_batch=mb, max_wait=mw, arrivals=arrivals, cv=cv,
                     lengths="log", log=log, **kw)


def row(r, batcher, traffic, kind: str) -> dict:
    med, lo, hi = r.median_interval("ttft_p95")
    b5, b95 = r.band("ttft_p95")
    return {"batcher": batcher[0], "traffic": traffic[0], "arrivals": traffic[1], "cv": traffic[2], "kind": kind,
            "load": r.load, "rate": r.rate, "ttft_p95": med, "ttft_p95_lo": lo, "ttft_p95_hi": hi,
            "ttft_p95_p5": b5, "ttft_p95_p95": b95, "ttft_p50": r.median("ttft_p50"),
            "throughput": r.median("throughput"), "utilisation": r.median("utilisation"),
            "mean_batch": r.median("mean_batch"), "replications": r.replications}


def run(args, log):
    import pandas as pd

    from mc import ParamError
    from mc.serving import latency as L
    from mc.serving import slo as S
    from mc.studies import manifest
    from mc.units import HOURS

    cfg = config(args, log)
    start = time.perf_counter()
    rows = []
    for batcher in BATCHERS:
        for traffic in TRAFFICS:
            s = serving(log, batcher, traffic, n=REQUESTS, warmup=WARMUP)
            for load in LOADS:
                rows.append(row(L.simulate(s, load=load, replications=args.n, seed=args.seed), batcher, traffic,
                                "grid"))
            if not args.quiet:
                print(f"real_traffic: {batcher[0]}, {traffic[0]}: {len(LOADS)} loads "
                      f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
        replay = serving(log, batcher, ("Azure log, replayed", "log", 1.0), replay=True)
        rows.append(row(L.simulate(replay, seed=args.seed), batcher, ("Azure log, replayed", "log", 1.0), "replay"))
        if not args.quiet:
            print(f"real_traffic: {batcher[0]}, the log replayed at load {rows[-1]['load']:.3f}: p95 TTFT "
                  f"{rows[-1]['ttft_p95']:.3g} s ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    curves = pd.DataFrame(rows)

    slo_rows = []
    month = PRICE_HOUR * HOURS
    batcher = next(b for b in BATCHERS if b[0] == SLO_BATCHER)
    for traffic in TRAFFICS:
        s = serving(log, batcher, traffic, n=REQUESTS, warmup=WARMUP)
        base = {"batcher": batcher[0], "traffic": traffic[0], "arrivals": traffic[1], "cv": traffic[2],
                "slo_ttft": SLO_TTFT, "demand_tok_s": DEMAND, "price_hour": PRICE_HOUR}
        try:
            got = S.slo_rate(s, SLO_TTFT, replications=args.n, seed=args.seed, rel_tol=REL_TOL, **SLO)
        except ParamError as err:  # no rate meets the SLO: the traffic is recorded with none
            slo_rows.append({**base, "rate": 0.0, "rate_lo": 0.0, "rate_hi": 0.0, "load": 0.0, "tok_s": 0.0,
                             "tok_s_lo": 0.0, "tok_s_hi": 0.0, "throughput": 0.0,
                             "share_meeting": float("nan"), "evaluations": 0, "cards": float("nan"),
                             "usd_month": float("nan"), "note": str(err)})
            if not args.quiet:
                print(f"real_traffic: {traffic[0]}: {err}", file=sys.stderr)
            continue
        lo, hi = S.rated_tok_s(s, got.rate_lo), S.rated_tok_s(s, got.rate_hi)  # the rate's 95% interval
        cards = math.ceil(DEMAND / got.tok_s)
        slo_rows.append({**base, "rate": got.rate, "rate_lo": got.rate_lo, "rate_hi": got.rate_hi, "load": got.load,
                         "tok_s": got.tok_s, "tok_s_lo": lo, "tok_s_hi": hi, "throughput": got.throughput,
                         "share_meeting": got.result.summary["pass"]["slo"]["rate"],
                         "evaluations": len(got.tried), "cards": float(cards), "usd_month": cards * month,
                         "note": ""})
        if not args.quiet:
            print(f"real_traffic: {traffic[0]}, SLO {SLO_TTFT:g} s: {got.rate:.3g} req/s (load {got.load:.3f}), "
                  f"{got.tok_s:,.0f} tok/s -> {cards} cards, ${cards * month:,.0f} a month "
                  f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    slo = pd.DataFrame(slo_rows)

    args.out.mkdir(parents=True, exist_ok=True)
    man = manifest.build(cfg, seed=args.seed, n=args.n,
                         seeding="common random numbers: every point uses the seed; replication i uses "
                                 "fold_in(key(seed), i) and the same unit-rate (or log-time) draws at every load",
                         rows=len(curves), wall_s=round(time.perf_counter() - start, 1))
    manifest.write_sealed(args.out / "manifest.json", man,
                          {args.out / "curves.parquet": (curves, None), args.out / "slo.parquet": (slo, None)})
    return curves, slo


def main(argv=None) -> int:
    p = _study.parser("real_traffic", __doc__.splitlines()[0], n=32)  # --n: replications per point
    args = p.parse_args(argv)
    log = read_log()
    if _study.up_to_date("real_traffic", args, ("curves.parquet", "slo.parquet"), config(args, log)):
        return 0
    run(args, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
