"""The cheapest mix that passes, as the forecast's uncertainty grows (SPEC §4, mc.buy.mix).

For one product (default chat-8b at 10T tokens/month, a daily cycle of ±30%), and
each forecast uncertainty sigma, every candidate mix (owned cards of one chip,
rent cap of one chip, API on) is run on the same months; the study keeps each
candidate's mean bill and pass rates, and marks the cheapest mix passing all
four checks with probability >= the target.

Writes results/mix_study/mixes.parquet (one row per sigma x candidate) and
manifest.json beside it.
"""

from __future__ import annotations

import sys
import time

import _study

SIGMAS = (0.05, 0.15, 0.30)


def config(args) -> dict:
    return {"model": args.model, "forecast_tokens": args.forecast_tokens, "sigmas": list(args.sigmas),
            "demand": {"shape": "diurnal", "amplitude": 0.3, "peak_hour": 14.0}, "target": args.target,
            "n": args.n, "seed": args.seed}


def base(args, sigma: float):
    """The product the study buys for, at forecast uncertainty ``sigma``."""
    from mc.buy import Procurement
    from mc.fleet import Demand

    return Procurement(model=args.model, forecast_tokens=args.forecast_tokens, sigma=sigma,
                       demand=Demand(**config(args)["demand"]))


def run(args):
    import pandas as pd

    from mc.buy import mix
    from mc.files import atomic_write
    from mc.studies import manifest

    cfg = config(args)
    frames, best = [], {}
    start = time.perf_counter()
    for sigma in args.sigmas:
        r = mix.optimise(base(args, sigma), target=args.target, n=args.n, seed=args.seed)
        t = r.table.assign(sigma=sigma)
        best[str(sigma)] = None if r.best is None else {**{k: r.best_row[k] for k in (
            "owned_chip", "owned", "rent_chip", "rent_cap", "rented", "bill_mean", "pass_all",
            "pass_all_lo", "pass_all_hi")}, "describe": r.best.describe()}
        frames.append(t)
        if not args.quiet:
            line = "no mix reaches the target" if r.best is None else r.best.describe()
            print(f"sigma {sigma:g}: {len(t)} mixes; cheapest passing: {line}", file=sys.stderr)
    table = pd.concat(frames, ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / "mixes.parquet", lambda tmp: table.to_parquet(tmp, index=False))
    man = manifest.build(cfg, seed=args.seed, n=args.n,
                         seeding="common random numbers: every candidate and sigma uses the seed; month i "
                                 "uses fold_in(key(seed), i)",
                         best=best, rows=len(table), wall_s=round(time.perf_counter() - start, 1))
    manifest.write(args.out, man)
    return table, man


def parser():
    p = _study.parser("mix_study", __doc__.splitlines()[0], n=1000)
    p.add_argument("--model", default="chat-8b", help="procurement model (default chat-8b)")
    p.add_argument("--forecast-tokens", type=float, default=10e12, help="tokens/month (default 10e12)")
    p.add_argument("--sigmas", type=float, nargs="+", default=list(SIGMAS), help="forecast uncertainties")
    p.add_argument("--target", type=float, default=0.9, help="pass-all probability to reach (default 0.9)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if _study.up_to_date("mix_study", args, ("mixes.parquet",), config(args)):
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
