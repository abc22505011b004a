"""What routing buys and what a lemon costs behind each router (SPEC §9).

A pool of 16 cards (8B on H100s, continuous batcher, batch 16) whose speed factors
are drawn per replication from the lemon-hunter preset's quality lottery (a tenth
of the cards lemons at 0.67x), behind each of the four routers, under Poisson
arrivals and under the example request log's own arrivals (a moving-block
bootstrap of 600 s blocks, compressed to the rate); both take their lengths from
the log, so only arrival timing differs. Over a grid of offered loads (the pool's
rate / 16 nominal cards' capacity): the median over replications of the pool's
p95 TTFT with its 95% interval, and the same pool on the same draws with its
lemons replaced by median cards, with the paired difference (the lemons' cost).

The log: examples/traces/azure-conv-2023.csv (Azure LLM inference trace 2023,
conversation, CC-BY 4.0).

Writes results/routers/curves.parquet and manifest.json (sealing it).
"""

from __future__ import annotations

import sys
import time

import _study

LOG = "examples/traces/azure-conv-2023.csv"
CARDS = 16
ROUTERS = ["random", "round_robin", "least_requests", "least_tokens"]
TRAFFICS = [("Poisson", "poisson"), ("Azure log, bootstrapped", "log")]
LOADS = [0.3, 0.5, 0.7, 0.85]
MAX_BATCH = 16  # 256 seats: 1,500 requests after 200 is long enough for them (docs/guide/router.md)
REQUESTS, WARMUP = 1500, 200
SCENARIO = "lemon-hunter"


def config(args, log) -> dict:
    return {"log": {**log.describe(), "source": LOG}, "cards": CARDS, "routers": ROUTERS, "traffics": TRAFFICS,
            "loads": LOADS, "requests": REQUESTS, "warmup": WARMUP, "replications": args.n, "seed": args.seed,
            "scenario": SCENARIO, "model": "8b", "gpu": "h100", "batcher": "continuous", "max_batch": MAX_BATCH}


def run(args, log):
    import pandas as pd

    from mc import files
    from mc.fleet.routing import scenario_speeds
    from mc.serving import latency as L
    from mc.serving import routed as P
    from mc.studies import manifest

    sc = files.scenario(SCENARIO)
    start = time.perf_counter()
    rows = []
    for label, arrivals in TRAFFICS:
        s = L.Serving("8b", "h100", batcher="continuous", max_batch=MAX_BATCH, log=log, arrivals=arrivals,
                      lengths="log", n=REQUESTS, warmup=WARMUP)
        for router in ROUTERS:
            pools = {k: P.RoutedPool(s, cards=CARDS, router=router, lottery=scenario_speeds(sc, k))
                     for k in ("drawn", "median")}
            for load in LOADS:
                got = {k: P.simulate(pool, None, args.n, load=load, seed=args.seed, progress=False)
                       for k, pool in pools.items()}
                cost = P.paired(got["drawn"], got["median"])
                row = {"traffic": label, "router": router, "load": load, "rate": got["drawn"].rate}
                for k, r in got.items():
                    m, lo, hi = r.median_interval("ttft_p95")
                    row.update({f"{k}_p95": m, f"{k}_p95_lo": lo, f"{k}_p95_hi": hi,
                                f"{k}_slow_tail": r.median("slow_tail_share")})
                row.update(cost_p95=cost["value"], cost_p95_lo=cost.get("lo"), cost_p95_hi=cost.get("hi"))
                rows.append(row)
                if not args.quiet:
                    print(f"routers: {label}, {router}, load {load:g}: p95 {row['drawn_p95']:.4g} s, lemons "
                          f"replaced {row['median_p95']:.4g} s ({time.perf_counter() - start:.0f} s)",
                          file=sys.stderr, flush=True)
    curves = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    man = manifest.build(config(args, log), seed=args.seed, n=args.n,
                         seeding="common random numbers: every point uses the seed; replication i uses "
                                 "fold_in(key(seed), i), the same arrivals, router draws and lottery tickets at "
                                 "every load and router",
                         rows=len(curves), wall_s=round(time.perf_counter() - start, 1))
    manifest.write_sealed(args.out / "manifest.json", man, {args.out / "curves.parquet": (curves, None)})
    return curves


def main(argv=None) -> int:
    from mc.files import read_request_log

    p = _study.parser("routers", __doc__.splitlines()[0], n=12)  # --n: replications per point
    args = p.parse_args(argv)
    log = read_request_log(_study.ROOT / LOG)
    if _study.up_to_date("routers", args, ("curves.parquet",), config(args, log)):
        return 0
    run(args, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
