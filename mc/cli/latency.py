"""``mc latency``: one card's queue under a batcher (SPEC §7), at a rate or to an SLO."""

from __future__ import annotations

import sys

from .. import _validate as v
from .. import engine, serving
from ..serving import catalogue
from ..serving import latency as lat
from ._common import add_progress, print_json, progress_of

_SHOWN = (("ttft_p50", "TTFT p50", "s"), ("ttft_p95", "TTFT p95", "s"), ("ttft_p99", "TTFT p99", "s"),
          ("wait_mean", "mean wait", "s"), ("itl_mean", "inter-token", "s"), ("e2e_p95", "end-to-end p95", "s"),
          ("throughput", "throughput", "tok/s"), ("utilisation", "utilisation", ""), ("mean_batch", "mean batch", ""))


def _config(args) -> lat.Serving:
    return lat.Serving(args.model, args.gpu, batcher=args.batcher, max_batch=args.max_batch,
                       max_wait=args.max_wait, prompt_mean=args.prompt_mean, prompt_cv=args.prompt_cv,
                       prompt_max=args.prompt_max, answer_mean=args.answer_mean, answer_cv=args.answer_cv,
                       answer_max=args.answer_max, n=args.requests, warmup=args.warmup,
                       prefill_util=args.prefill_util, weight_bytes=args.weight_bytes, kv_bytes=args.kv_bytes)


def _check(args) -> tuple[lat.Serving, float | None]:
    """Every number the command takes, validated before anything runs (one-line
    errors naming the field): the configuration's, the rate or SLO's, the
    replications, seed and chunk, and the price. Returns the configuration and
    tokens per dollar per tok/s (None without ``--price-hour``)."""
    v.count("requests", args.requests, lo=1, hi=lat.MAX_REQUESTS)  # the configuration's n, by its flag's name
    s = _config(args)
    lat.check_slo(1.0 if args.slo_ttft is None else args.slo_ttft, args.percentile, args.share, args.rel_tol)
    s.params(s.capacity_rate() if args.rate is None else args.rate, percentile=args.percentile,
             slo_ttft=args.slo_ttft)
    v.count("replications", args.replications, lo=2, hi=lat.MAX_REPLICATIONS)
    engine.check_run_args(1, args.seed, args.chunk)
    if args.price_hour is None:
        return s, None
    return s, serving.tokens_per_dollar(1.0, v.positive("price-hour", args.price_hour))


def _table(res: lat.LatencyResult) -> list[str]:
    lines = [f"  {'':16s} {'median':>11s}   {'p5 .. p95 over replications':s}"]
    figs = res.figures()
    for col, label, unit in _SHOWN:
        f = figs[col]
        lines.append(f"  {label:16s} {f['median']:11.4g}   {f['p5']:.4g} .. {f['p95']:.4g} {unit}")
    return lines


def run(args) -> int:
    s, price = _check(args)
    progress = progress_of(args)
    head = (f"{s.model} on {s.gpu}, {s.batcher} batcher (max batch {s.max_batch}"
            + (f", max wait {s.max_wait:g} s" if s.batcher == "static" else "") + f"; {s.slots} slots)")
    if args.slo_ttft is None:
        res = lat.simulate(s, args.rate, args.replications, seed=args.seed, percentile=args.percentile,
                           chunk=args.chunk, progress=progress)
        if not res.replications:  # Ctrl-C before the first replications: no figure to print
            raise KeyboardInterrupt
        out = {"serving": s.as_dict(), "rate": res.rate, "replications": res.replications, "seed": args.seed,
               "figures": res.figures()}
        if price is not None:
            out["tokens_per_dollar"] = res.median("throughput") * price
        if res.summary.get("partial"):
            out["partial"] = True
        if args.json:
            print_json(out)
        else:
            partial = (f"  (PARTIAL: stopped early, {res.replications} of {args.replications} replications)"
                       if res.summary.get("partial") else "")
            print(f"{head}\nat {res.rate:.4g} requests/s, {res.replications} replications of {s.n:,} requests "
                  f"(after {s.warmup:,} warm-up){partial}:")
            print("\n".join(_table(res)))
            if price is not None:
                print(f"  tokens per dollar {out['tokens_per_dollar']:,.0f} at ${args.price_hour:g}/h")
        return 130 if res.summary.get("partial") else 0
    log = None if args.quiet or (args.json and not args.progress) else (lambda msg: print(msg, file=sys.stderr))
    got = lat.slo_rate(s, args.slo_ttft, percentile=args.percentile, share=args.share,
                       replications=args.replications, seed=args.seed, rel_tol=args.rel_tol, chunk=args.chunk,
                       progress=progress, log=log)
    res = got.result
    slo = {"slo_ttft": got.slo_ttft, "percentile": got.percentile, "share": got.share, "rate": got.rate,
           "share_meeting": res.summary["pass"]["slo"], "slo_rated_tok_s": got.tok_s, "tried": got.tried}
    if price is not None:
        slo["tokens_per_dollar"] = got.tokens_per_dollar(args.price_hour)
    out = {"serving": s.as_dict(), "rate": res.rate, "replications": res.replications, "seed": args.seed,
           "figures": res.figures(), "slo": slo}
    if args.json:
        print_json(out)
    else:
        m = res.summary["pass"]["slo"]
        print(f"{head}\nSLO p{got.percentile:g} TTFT <= {got.slo_ttft:g} s in at least {got.share:.0%} of "
              f"replications: {got.rate:.4g} requests/s (met in {m['rate']:.0%}, 95% interval "
              f"{m['lo']:.0%}..{m['hi']:.0%}); SLO-rated {got.tok_s:,.0f} tok/s")
        print("\n".join(_table(res)))
        if price is not None:
            print(f"  tokens per dollar {slo['tokens_per_dollar']:,.0f} at ${args.price_hour:g}/h")
    return 0


def register(sub) -> None:
    models = ", ".join(catalogue.MODELS)
    gpus = ", ".join(list(catalogue.GPUS) + list(catalogue.GPU_ALIASES))
    d = lat.Serving("8b", "h100")
    p = sub.add_parser("latency", help="p95 time to first token of one card under a batcher, or its SLO rate",
                       description="Simulate one card's queue (SPEC §7): Poisson arrivals, lognormal prompt "
                       "and answer lengths, a static or continuous batcher, prefill and decode times from the "
                       "serving arithmetic. Either at a fixed --rate, or the highest rate meeting an SLO "
                       "(--slo-ttft) by bisection. Figures are medians over replications with their p5..p95 "
                       "bands; replication i uses fold_in(key(seed), i).")
    p.add_argument("--model", required=True, help=f"model ({models})")
    p.add_argument("--gpu", required=True, help=f"GPU ({gpus})")
    p.add_argument("--batcher", choices=lat.BATCHERS, default=d.batcher,
                   help=f"static: a batch runs to its last answer; continuous: requests join before every "
                   f"decode step (default {d.batcher})")
    p.add_argument("--max-batch", type=int, default=d.max_batch,
                   help=f"most requests in a batch or step, also capped by seats (default {d.max_batch})")
    p.add_argument("--max-wait", type=float, default=d.max_wait,
                   help=f"static: s the oldest request waits before a short batch starts (default {d.max_wait:g})")
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--rate", type=float, help="arrivals per second (Poisson)")
    q.add_argument("--slo-ttft", type=float, metavar="S",
                   help="find the highest rate whose --percentile TTFT is at most S seconds")
    p.add_argument("--percentile", type=float, default=95.0, help="the SLO's percentile of TTFT (default 95)")
    p.add_argument("--share", type=float, default=0.9,
                   help="share of replications that must meet the SLO (default 0.9)")
    p.add_argument("--rel-tol", type=float, default=0.01, help="bisection stops when hi/lo <= 1 + this "
                   "(default 0.01)")
    for what in ("prompt", "answer"):
        mean, cv, cap = (getattr(d, f"{what}_{f}") for f in ("mean", "cv", "max"))
        p.add_argument(f"--{what}-mean", type=float, default=mean, help=f"mean {what} tokens (default {mean:g})")
        p.add_argument(f"--{what}-cv", type=float, default=cv,
                       help=f"coefficient of variation of the lognormal; 0: fixed (default {cv:g})")
        p.add_argument(f"--{what}-max", type=int, default=cap, help=f"longest {what}, tokens (default {cap})")
    p.add_argument("--prefill-util", type=float, default=d.prefill_util,
                   help=f"fraction of peak FLOP/s prefill reaches (default {d.prefill_util:g})")
    p.add_argument("--weight-bytes", type=float, default=d.weight_bytes, help="bytes per parameter (default 2)")
    p.add_argument("--kv-bytes", type=float, default=d.kv_bytes, help="bytes per KV element (default 2)")
    p.add_argument("--replications", type=int, default=100, help="replications (default 100)")
    p.add_argument("--requests", type=int, default=d.n, help=f"measured requests per replication (default {d.n})")
    p.add_argument("--warmup", type=int, default=d.warmup,
                   help=f"requests dropped at the start of each replication (default {d.warmup})")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="replications per device batch (default: automatic)")
    p.add_argument("--price-hour", type=float, default=None, help="$ per card-hour, to add tokens per dollar")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    add_progress(p)
    p.set_defaults(func=run)
