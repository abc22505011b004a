"""p95 time to first token against arrival rate, and SLO-rated tokens per dollar (SPEC §7).

Part 1: one 8B model on one H100 at the CLI's default lengths (lognormal prompts of
1,024 tokens and answers of 256, cv 1), for the static batcher at two size/wait
caps and the continuous batcher at two size caps, over a grid of arrival rates:
the median over replications of each replication's p95 TTFT, with a 95%
distribution-free interval for that median, and the p5..p95 band.

Part 2: the SLO-rated tok/s (highest rate whose p95 TTFT <= 0.5 s, or 2 s, with
probability 90% over replications, ``mc.serving.slo``; that rate times the mean answer, with the
rate's 95% interval carried over) of H100, H200 and B200 for an 8B model (bf16)
and a 70B model (8-bit weights, so it fits one H100), under the continuous batcher,
and tokens per dollar at assumed rental prices (PRICES; tokens per dollar scales
as 1 / price, so rescale to yours).

Writes results/latency/{curves,slo}.parquet and manifest.json beside them.
"""

from __future__ import annotations

import sys
import time

import _study

CONFIGS = [  # label, batcher, max batch, max wait (s)
    ("static, batch 8, wait 20 ms", "static", 8, 0.02),
    ("static, batch 32, wait 100 ms", "static", 32, 0.1),
    ("continuous, batch 16", "continuous", 16, 0.0),
    ("continuous, batch 64", "continuous", 64, 0.0),
]
RATES = [0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
CARDS = [  # model, gpu, bytes per weight
    ("8b", "h100", 2.0), ("8b", "h200", 2.0), ("8b", "b200", 2.0),
    ("70b", "h100", 1.0), ("70b", "h200", 1.0), ("70b", "b200", 1.0),
]
# Assumed on-demand rental prices, $ per card-hour: round figures of the kind
# GPU clouds list, not quotes. Tokens per dollar is tok/s · 3600 / price.
PRICES = {"h100-sxm": 2.50, "h200": 3.50, "b200": 5.00}
SLO = {"percentile": 95.0, "share": 0.9}
SLO_TTFT = (0.5, 2.0)  # s
REQUESTS, WARMUP = 600, 100


def config(args) -> dict:
    return {"configs": CONFIGS, "rates": RATES, "cards": CARDS, "prices": PRICES, "slo": SLO, "slo_ttft": SLO_TTFT,
            "requests": REQUESTS, "warmup": WARMUP, "replications": args.n, "seed": args.seed,
            "slo_batcher": {"batcher": "continuous", "max_batch": 64}, "rel_tol": 0.02}


def run(args):
    import pandas as pd

    from mc import ParamError
    from mc.files import atomic_write
    from mc.serving import latency as L
    from mc.serving import slo as S
    from mc.studies import manifest

    cfg = config(args)
    start = time.perf_counter()
    rows = []
    for label, batcher, mb, mw in CONFIGS:
        s = L.Serving("8b", "h100", batcher=batcher, max_batch=mb, max_wait=mw, n=REQUESTS, warmup=WARMUP)
        for rate in RATES:
            r = L.simulate(s, rate, args.n, seed=args.seed)
            med, lo, hi = r.median_interval("ttft_p95")
            b5, b95 = r.band("ttft_p95")
            rows.append({"config": label, "batcher": batcher, "max_batch": mb, "max_wait": mw, "rate": r.rate,
                         "ttft_p95": med, "ttft_p95_lo": lo, "ttft_p95_hi": hi, "ttft_p95_p5": b5,
                         "ttft_p95_p95": b95, "throughput": r.median("throughput"),
                         "utilisation": r.median("utilisation"), "mean_batch": r.median("mean_batch"),
                         "replications": r.replications})
        if not args.quiet:
            print(f"latency: {label}: {len(RATES)} rates in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    curves = pd.DataFrame(rows)
    slo_rows = []
    for (model, gpu, wb), ttft in ((c, t) for t in SLO_TTFT for c in CARDS):
        s = L.Serving(model, gpu, weight_bytes=wb, n=REQUESTS, warmup=WARMUP, **cfg["slo_batcher"])
        try:
            got = S.slo_rate(s, ttft, replications=args.n, seed=args.seed, rel_tol=cfg["rel_tol"], **SLO)
        except ParamError as err:  # no rate meets the SLO: the card is recorded with none
            idle = L.simulate(s, 1e-3, args.n, seed=args.seed, slo_ttft=ttft)
            slo_rows.append({"model": model, "gpu": s.gpu, "slo_ttft": ttft, "weight_bytes": wb, "slots": s.slots,
                             "kv_tokens": s.kv_tokens, "rate": 0.0, "tok_s": 0.0, "tok_s_lo": 0.0,
                             "tok_s_hi": 0.0, "throughput": 0.0, "share_meeting": idle.summary["pass"]["slo"]["rate"],
                             "price_hour": PRICES[s.gpu], "tokens_per_dollar": 0.0, "tokens_per_dollar_lo": 0.0,
                             "tokens_per_dollar_hi": 0.0, "evaluations": 0,
                             "idle_ttft_p95": idle.median("ttft_p95"), "note": str(err)})
            if not args.quiet:
                print(f"latency: {model} on {s.gpu}: {err}", file=sys.stderr)
            continue
        tok_lo, tok_hi = S.rated_tok_s(s, got.rate_lo), S.rated_tok_s(s, got.rate_hi)  # the rate's 95% interval
        slo_rows.append({"model": model, "gpu": s.gpu, "slo_ttft": ttft, "weight_bytes": wb, "slots": s.slots,
                         "kv_tokens": s.kv_tokens, "rate": got.rate, "tok_s": got.tok_s, "tok_s_lo": tok_lo,
                         "tok_s_hi": tok_hi, "throughput": got.throughput,
                         "share_meeting": got.result.summary["pass"]["slo"]["rate"],
                         "price_hour": PRICES[s.gpu], "tokens_per_dollar": got.tokens_per_dollar(PRICES[s.gpu]),
                         "tokens_per_dollar_lo": tok_lo * 3600 / PRICES[s.gpu],
                         "tokens_per_dollar_hi": tok_hi * 3600 / PRICES[s.gpu],
                         "evaluations": len(got.tried), "idle_ttft_p95": float("nan"), "note": ""})
        if not args.quiet:
            print(f"latency: {model} on {s.gpu}, SLO {ttft:g} s: {got.rate:.3g} req/s, {got.tok_s:,.0f} tok/s, "
                  f"{slo_rows[-1]['tokens_per_dollar'] / 1e6:.2f}M tok/$ "
                  f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    slo = pd.DataFrame(slo_rows)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / "curves.parquet", lambda tmp: curves.to_parquet(tmp, index=False))
    atomic_write(args.out / "slo.parquet", lambda tmp: slo.to_parquet(tmp, index=False))
    man = manifest.build(cfg, seed=args.seed, n=args.n,
                         seeding="common random numbers: every point uses the seed; replication i uses "
                                 "fold_in(key(seed), i) and the same unit-rate draws at every rate",
                         rows=len(curves), slo=slo_rows, wall_s=round(time.perf_counter() - start, 1))
    manifest.write(args.out, man)
    return curves, slo


def main(argv=None) -> int:
    p = _study.parser("latency", __doc__.splitlines()[0], n=32)
    args = p.parse_args(argv)
    if _study.up_to_date("latency", args, ("curves.parquet", "slo.parquet"), config(args)):
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
