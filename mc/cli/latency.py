"""``mc latency``: one card's queue under a batcher (SPEC §7, §7.1), or one replica's of
several cards (``--tp``, SPEC §11), at a rate, a load or to an SLO, under Poisson, gamma
or a request log's traffic."""

from __future__ import annotations

import sys

from .. import _validate as v
from .. import engine, files, serving
from ..serving import catalogue
from ..serving import latency as lat
from ..serving import queue, slo
from . import routed as routed_cli
from ._common import add_progress, print_json, progress_of

_SHOWN = (("ttft_p50", "TTFT p50"), ("ttft_p95", "TTFT p95"), ("ttft_p99", "TTFT p99"), ("wait_mean", "mean wait"),
          ("itl_mean", "inter-token"), ("e2e_p95", "end-to-end p95"), ("throughput", "throughput"),
          ("utilisation", "utilisation"), ("mean_batch", "mean batch"))


def _config(args, log) -> lat.Serving:
    """The card's configuration from the flags (one card or a pool's), each refusal
    naming the flag the user gave (``--requests``, not the configuration's ``n``)."""
    if args.requests is not None:
        v.count("--requests", args.requests, lo=1, hi=lat.MAX_REQUESTS)
    with v.renamed({"n": "--requests", "warmup": "--warmup"}):
        return _serving(args, log)


def _serving(args, log) -> lat.Serving:
    return lat.Serving(args.model, args.gpu, batcher=args.batcher, max_batch=args.max_batch,
                       max_wait=args.max_wait, prompt_mean=args.prompt_mean, prompt_cv=args.prompt_cv,
                       prompt_max=args.prompt_max, answer_mean=args.answer_mean, answer_cv=args.answer_cv,
                       answer_max=args.answer_max, n=args.requests, warmup=args.warmup,
                       prefill_util=args.prefill_util, weight_bytes=args.weight_bytes, kv_bytes=args.kv_bytes,
                       arrivals=args.arrivals, cv=args.cv, lengths=args.lengths, log=log,
                       block=args.block, replay=args.replay, tp=args.tp)


def _check(args) -> tuple[lat.Serving, float, float | None]:
    """Every input the command takes, validated before anything runs (one-line
    errors naming the field): the log, the configuration, the rate (or load) or
    SLO, the replications, seed and chunk, and the price. Returns the
    configuration, the rate (the SLO search's start when searching) and tokens per
    dollar per tok/s (None without ``--price-hour``)."""
    if args.columns is not None and args.log is None:
        v.fail("columns", args.columns, "maps a request log's columns: give --log FILE")
    log = None if args.log is None else files.read_request_log(args.log, columns=args.columns)
    s = _config(args, log)
    if args.slo_ttft is not None and (args.rate is not None or args.load is not None):
        v.fail("slo-ttft", args.slo_ttft, "searches for the rate: leave out --rate and --load")
    slo.check_slo(1.0 if args.slo_ttft is None else args.slo_ttft, args.percentile, args.share, args.rel_tol)
    rate = s.capacity_rate() if args.slo_ttft is not None else s.rate_of(args.rate, args.load)
    s.params(rate, percentile=args.percentile, slo_ttft=args.slo_ttft)
    lat.check_replications(s, args.replications, default=100)
    engine.check_run_args(1, args.seed, args.chunk)
    if args.price_hour is None:
        return s, rate, None
    # a replica's hour costs tp card-hours
    return s, rate, serving.tokens_per_dollar(1.0, s.tp * v.positive("price-hour", args.price_hour))


def traffic(s: lat.Serving, rate: float) -> dict:
    """What the requests were: arrivals (and cv), lengths, the log (source, rows,
    span, own rate), the compression factor and the bootstrap's block; the rate
    and offered load."""
    out = {"arrivals": s.arrivals, "lengths": s.lengths, "rate": rate, "load": s.load_of(rate),
           "capacity_rate": s.capacity_rate()}
    if s.arrivals == "gamma":
        out["cv"] = s.cv
    if s.log is not None:
        out["log"] = s.log.describe()
    if s.arrivals == "log":
        out["compression"] = rate / s.log.rate
        out["replay" if s.replay else "block_s"] = True if s.replay else s.block
    return out


def _traffic_lines(s: lat.Serving, rate: float) -> list[str]:
    t = traffic(s, rate)
    if s.arrivals == "log":
        what = "replayed once, every request" if s.replay else f"moving-block bootstrap, blocks of {s.block:g} s of log"
        arrive = f"arrivals from the log, compressed {t['compression']:.4g}x ({what})"
    elif s.arrivals == "gamma":
        arrive = f"gamma arrivals, gaps with coefficient of variation {s.cv:g}"
    else:
        arrive = "Poisson arrivals"
    lines = []
    if s.log is not None:
        lg = s.log
        lines.append(f"log {lg.source}: {lg.rows:,} requests over {lg.span:,.1f} s ({lg.span / 3600:.3g} h), "
                     f"own rate {lg.rate:.4g} req/s; mean prompt {lg.mean('prompt'):,.0f}, answer "
                     f"{lg.mean('answer'):,.0f} tokens")
    lengths = "lengths from the log's rows" if s.lengths == "log" else "lognormal lengths"
    lines.append(f"{arrive}; {lengths}")
    lines.append(f"at {rate:.4g} requests/s: offered load {t['load']:.3g} (a full batch clears "
                 f"{t['capacity_rate']:.4g} req/s)")
    return lines


def _table(res: lat.LatencyResult) -> list[str]:
    one = res.replications < 2
    lines = [f"  {'':16s} {'value' if one else 'median':>11s}   " + ("" if one else f"{'95% interval':>21s}   p5 .. p95 over replications")]
    figs, bands = res.figures(), res.bands()
    for col, label in _SHOWN:
        f, b = figs[col], bands[col]
        unit = f["units"] if f["units"] not in ("share", "requests") else ""
        if one:
            lines.append(f"  {label:16s} {f['value']:11.4g}   {unit}")
        elif "lo" in f:
            lines.append(f"  {label:16s} {f['value']:11.4g}   {f['lo']:9.4g} .. {f['hi']:<9.4g}   "
                         f"{b['p5']:.4g} .. {b['p95']:.4g} {unit}")
        else:
            lines.append(f"  {label:16s} {'-':>11s}   (undefined: every answer is one token)")
    return lines


def _head(s: lat.Serving) -> str:
    on = s.gpu if s.tp == 1 else f"a replica of {s.tp} x {s.gpu} (tensor parallel)"
    return (f"{s.model} on {on}, {s.batcher} batcher (max batch {s.max_batch}"
            + (f", max wait {s.max_wait:g} s" if s.batcher == "static" else "") + f"; {s.slots} slots)")


def run(args) -> int:
    if routed_cli.wanted(args):
        log = None if args.log is None else files.read_request_log(args.log, columns=args.columns)
        return routed_cli.run(args, _config(args, log), traffic, _head, _table, progress_of(args))
    s, rate, price = _check(args)
    progress = progress_of(args)
    reps = lat.check_replications(s, args.replications, default=100)
    note = lat.seats_note(s)  # a replication too short for the card's seats: said, not refused
    if note is not None and not args.quiet:
        print(f"mc latency: warning: {note} (--requests, --warmup)", file=sys.stderr)
    notes = [] if note is None else [note]
    if args.slo_ttft is None:
        res = lat.simulate(s, rate, reps, seed=args.seed, percentile=args.percentile, chunk=args.chunk,
                           progress=progress)
        if not res.replications:  # Ctrl-C before the first replications: no figure to print
            raise KeyboardInterrupt
        out = {"serving": s.as_dict(), "traffic": traffic(s, res.rate), "replications": res.replications,
               "seed": args.seed, "figures": res.figures(), "bands": res.bands(), "notes": notes}
        if price is not None:
            out["tokens_per_dollar"] = engine.figure(res.median("throughput") * price, units="tok/$")
        if res.summary.get("partial"):
            out["partial"] = True
        if args.json:
            print_json(out)
        else:
            partial = (f"  (PARTIAL: stopped early, {res.replications} of {reps} replications)"
                       if res.summary.get("partial") else "")
            runs = "one replay" if s.replay else f"{res.replications} replications"
            print("\n".join([_head(s)] + _traffic_lines(s, res.rate)))
            print(f"{runs} of {s.n:,} requests (after {s.warmup:,} warm-up){partial}:")
            print("\n".join(_table(res)))
            if price is not None:
                print(f"  tokens per dollar {out['tokens_per_dollar']['value']:,.0f} at ${args.price_hour:g}/h")
        return 130 if res.summary.get("partial") else 0
    log = None if args.quiet or (args.json and not args.progress) else (lambda msg: print(msg, file=sys.stderr))
    got = slo.slo_rate(s, args.slo_ttft, percentile=args.percentile, share=args.share, replications=reps,
                       seed=args.seed, rel_tol=args.rel_tol, chunk=args.chunk, progress=progress, log=log)
    res = got.result
    m = res.summary["pass"]["slo"]
    found = {"slo_ttft": got.slo_ttft, "percentile": got.percentile, "share": got.share,
             "rate": engine.figure(got.rate, None if s.replay else got.rate_lo, None if s.replay else got.rate_hi,
                                   "req/s"),
             "load": engine.figure(got.load, units=""),
             "share_meeting": engine.figure(m["rate"], m["lo"], m["hi"], "share"),
             "slo_rated_tok_s": engine.figure(got.tok_s, units="tok/s"),
             "mean_answer": engine.figure(s.drawn_mean("answer"), units="tokens"), "tried": got.tried}
    if price is not None:
        found["tokens_per_dollar"] = engine.figure(got.tokens_per_dollar(s.tp * args.price_hour), units="tok/$")
    out = {"serving": s.as_dict(), "traffic": traffic(s, res.rate), "replications": res.replications,
           "seed": args.seed, "figures": res.figures(), "bands": res.bands(), "slo": found, "notes": notes}
    if args.json:
        print_json(out)
    else:
        what = "in the replay" if s.replay else f"with probability {got.share:.0%} over replications"
        print("\n".join([_head(s)] + _traffic_lines(s, res.rate)))
        met = "" if s.replay else (f" (95% interval {got.rate_lo:.4g}..{got.rate_hi:.4g}; met in {m['rate']:.0%} "
                                   "of replications there)")
        print(f"SLO p{got.percentile:g} TTFT <= {got.slo_ttft:g} s {what}: {got.rate:.4g} requests/s, "
              f"offered load {got.load:.3g}{met}; SLO-rated {got.tok_s:,.0f} tok/s (the rate times the mean "
              f"answer, {s.drawn_mean('answer'):,.1f} tokens)")
        print("\n".join(_table(res)))
        if price is not None:
            print(f"  tokens per dollar {found['tokens_per_dollar']['value']:,.0f} at ${args.price_hour:g}/h")
    return 0


def register(sub) -> None:
    models = ", ".join(catalogue.MODELS)
    gpus = ", ".join(list(catalogue.GPUS) + list(catalogue.GPU_ALIASES))
    d = lat.Serving("8b", "h100")
    p = sub.add_parser("latency", help="p95 time to first token of one card (or replica) under a batcher, or its "
                       "SLO rate",
                       description="Simulate one card's queue: arrivals (Poisson, gamma, or a request log's, "
                       "bootstrapped in blocks or replayed), prompt and answer lengths (lognormal or the log's), a "
                       "static or continuous batcher, prefill and decode times from the serving arithmetic. At a "
                       "--rate, an offered --load, a log's own rate, or the highest rate meeting an SLO "
                       "(--slo-ttft) by bisection. Figures are medians over replications with a 95% interval "
                       "and the p5..p95 spread; replication i uses fold_in(key(seed), i). Every result states "
                       "the offered load: rate / the rate a full batch of mean-length requests clears. With --tp K the queue is a "
                       "replica of K cards (tensor parallel): one queue whose steps and prefills are the replica's, "
                       "all-reduces included; --cards then counts replicas.")
    p.add_argument("--model", required=True, help=f"model ({models})")
    p.add_argument("--gpu", required=True, help=f"GPU ({gpus})")
    p.add_argument("--batcher", choices=lat.BATCHERS, default=d.batcher,
                   help=f"static: a batch runs to its last answer; continuous: requests join before every "
                   f"decode step (default {d.batcher})")
    p.add_argument("--max-batch", type=int, default=d.max_batch,
                   help=f"most requests in a batch or step, also capped by seats (default {d.max_batch})")
    p.add_argument("--max-wait", type=float, default=d.max_wait,
                   help=f"static: s the oldest request waits before a short batch starts (default {d.max_wait:g})")
    t = p.add_argument_group("traffic")
    t.add_argument("--arrivals", choices=lat.ARRIVALS, default=None,
                   help="poisson; gamma (bursty renewals, see --cv); log (the log's own arrivals and lengths). "
                   "Default: log when --log is given, else poisson")
    t.add_argument("--cv", type=float, default=1.0,
                   help="gamma arrivals: coefficient of variation of the gaps; 1 is Poisson, above 1 burstier "
                   "(default 1)")
    t.add_argument("--log", metavar="FILE", default=None,
                   help="a request log: Azure LLM trace CSV, BurstGPT CSV, Mooncake JSONL, or any CSV/Parquet "
                   "with --columns")
    t.add_argument("--columns", metavar="TIME,PROMPT,ANSWER", default=None,
                   help="the log's time, prompt-token and answer-token columns (times as datetimes or seconds)")
    t.add_argument("--replay", action="store_true",
                   help="replay the whole log once from its first arrival, every request measured (exact for "
                   "that log; one path, no replications)")
    t.add_argument("--block", type=float, default=None, metavar="S",
                   help=f"bootstrap block, s of log time (default {queue.BLOCK:g}, or the log's span when shorter)")
    t.add_argument("--lengths", choices=lat.LENGTHS, default=None,
                   help="lognormal (the --prompt-*/--answer-* flags) or log (rows drawn from --log with Poisson "
                   "or gamma arrivals). Default: log when --log is given")
    q = p.add_mutually_exclusive_group()
    q.add_argument("--rate", type=float, help="arrivals per second (with a log: compresses its time to this rate)")
    q.add_argument("--load", type=float, help="offered load instead of a rate: rate / the full-batch capacity rate")
    p.add_argument("--slo-ttft", type=float, metavar="S",
                   help="find the highest rate whose --percentile TTFT is at most S seconds (with a log: the "
                   "highest compression)")
    p.add_argument("--percentile", type=float, default=95.0, help="the SLO's percentile of TTFT (default 95)")
    p.add_argument("--share", type=float, default=0.9,
                   help="probability over replications with which the SLO must hold (default 0.9)")
    p.add_argument("--rel-tol", type=float, default=0.05, help="the rate grid's step: rates tried differ by at "
                   "most a factor 1 + this; the rate found is interpolated between them (default 0.05)")
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
    p.add_argument("--tp", type=int, default=d.tp, metavar="K",
                   help="cards per replica (tensor parallel): 1, 2, 4, 8, 16, 32 or 64; the queue is the replica's "
                   "and --cards counts replicas (default 1: one card)")
    p.add_argument("--replications", type=int, default=None, help="replications (default 100; a replay: 1)")
    p.add_argument("--requests", type=int, default=None,
                   help=f"measured requests per replication (default {d.n}; a replay: every row after warm-up)")
    p.add_argument("--warmup", type=int, default=None,
                   help=f"requests dropped at the start of each replication (default {d.warmup}; a replay: 0)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="replications per device batch (default: automatic)")
    p.add_argument("--price-hour", type=float, default=None,
                   help="$ per card-hour, to add tokens per dollar (a replica costs --tp times that)")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    routed_cli.add_args(p)
    add_progress(p, unit="replications")
    p.set_defaults(func=run)
