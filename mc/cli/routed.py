"""``mc latency --cards N --router NAME``: a pool of cards behind a router (SPEC §9),
its speeds given (``--speeds``) or drawn from a scenario's lottery (``--scenario``).
With a lottery that has lemons, the same pool with its lemons replaced by median
cards runs on the same draws beside it: the lemons' cost in p95."""

from __future__ import annotations

import sys

from .. import _validate as v
from .. import engine
from ..fleet.routing import scenario_speeds
from ..serving import latency as lat
from ..serving import routed, slo
from ..serving.routers import ROUTERS
from ._common import print_json


def add_args(p) -> None:
    g = p.add_argument_group("a pool behind a router (docs/model.md §9)")
    g.add_argument("--cards", type=int, default=None,
                   help="simulate N cards of this configuration behind a router, at the pool's --rate or --load "
                   "(with --tp K: N replicas of K cards)")
    g.add_argument("--router", default=None, metavar="NAME",
                   help=f"{', '.join(ROUTERS)} (default least_requests): "
                   + "; ".join(f"{r.name}: {r.doc}" for r in ROUTERS.values()))
    s = g.add_mutually_exclusive_group()
    s.add_argument("--speeds", default=None, metavar="F1,F2,...",
                   help="each card's speed factor (its step and prefill times divided by it; with --tp, each "
                   "replica's: its slowest card's); default all 1")
    s.add_argument("--scenario", default=None, metavar="FILE|PRESET",
                   help="draw the cards' factors from this scenario's quality lottery, lemons included, per "
                   "replication (with --tp K, K cards per replica, each replica at its slowest card's factor); with "
                   "lemons, the same pool with lemons replaced by median cards runs beside it")


def wanted(args) -> bool:
    """Whether the command simulates a pool; pool flags without ``--cards`` are refused."""
    if args.cards is None:
        for flag in ("router", "speeds", "scenario"):
            if getattr(args, flag) is not None:
                v.fail(flag, getattr(args, flag), "describes a pool: give --cards N")
        return False
    return True


def _speeds(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        v.fail("speeds", text, "must be comma-separated numbers, one per card")


def check(args, s: lat.Serving) -> tuple[routed.RoutedPool, routed.RoutedPool | None]:
    """The pool (and, for a lottery with lemons, the pool with lemons replaced), validated."""
    from .show import load_scenario  # the scenario reader the other commands use

    router = "least_requests" if args.router is None else args.router
    kw = dict(serving=s, cards=args.cards, router=router)
    if args.scenario is not None:
        sc = load_scenario(args.scenario, "latency")
        drawn = routed.RoutedPool(lottery=scenario_speeds(sc), **kw)
        fair = routed.RoutedPool(lottery=scenario_speeds(sc, "median"), **kw) if sc.lottery.lemon_rate > 0 else None
        return drawn, fair
    return routed.RoutedPool(speeds=None if args.speeds is None else _speeds(args.speeds), **kw), None


def _rate(pool: routed.RoutedPool, args) -> float:
    if args.load is not None:
        return v.number("load", args.load, lo=0.0, lo_open=True, hi=1e6) * pool.capacity_rate()
    return pool.serving.rate_of(args.rate)


def run(args, s: lat.Serving, traffic, head, table, progress) -> int:
    pool, fair = check(args, s)
    if args.slo_ttft is not None and (args.rate is not None or args.load is not None):
        v.fail("slo-ttft", args.slo_ttft, "searches for the pool's rate: leave out --rate and --load")
    slo.check_slo(1.0 if args.slo_ttft is None else args.slo_ttft, args.percentile, args.share, args.rel_tol)
    rate = pool.capacity_rate() if args.slo_ttft is not None else _rate(pool, args)
    pool.params(rate, percentile=args.percentile)
    reps = lat.check_replications(s, args.replications, default=100)
    engine.check_run_args(1, args.seed, args.chunk)
    kw = dict(seed=args.seed, percentile=args.percentile, chunk=args.chunk, progress=progress)
    note = pool.seats_note()  # a replication too short for the pool's seats: said, not refused
    if note is not None and not args.quiet:
        print(f"mc latency: warning: {note} (--requests, --warmup)", file=sys.stderr)
    found = None
    if args.slo_ttft is None:
        res = routed.simulate(pool, rate, reps, **kw)
    else:
        log = None if args.quiet or (args.json and not args.progress) else (lambda m: print(m, file=sys.stderr))
        got = slo.slo_rate(pool, args.slo_ttft, percentile=args.percentile, share=args.share, replications=reps,
                           seed=args.seed, rel_tol=args.rel_tol, chunk=args.chunk, progress=progress, log=log)
        res, rate = got.result, got.rate
        m = res.summary["pass"]["slo"]
        found = {"slo_ttft": got.slo_ttft, "percentile": got.percentile, "share": got.share,
                 "rate": engine.figure(got.rate, units="req/s"),
                 "load": engine.figure(got.rate / pool.capacity_rate(), units=""),
                 "share_meeting": engine.figure(m["rate"], m["lo"], m["hi"], "share"),
                 "slo_rated_tok_s": engine.figure(got.tok_s, units="tok/s"),
                 "slo_rated_tok_s_per_card": engine.figure(got.tok_s / (pool.cards * s.tp), units="tok/s"),
                 **({} if s.tp == 1 else
                    {"slo_rated_tok_s_per_replica": engine.figure(got.tok_s / pool.cards, units="tok/s")}),
                 "mean_answer": engine.figure(s.drawn_mean("answer"), units="tokens"),
                 "tried": got.tried}
    if not res.replications:
        raise KeyboardInterrupt
    tr = traffic(s, res.rate)
    tr["load"] = res.rate / pool.capacity_rate()
    tr["capacity_rate"] = pool.capacity_rate()
    out = {"serving": s.as_dict(), "pool": pool.as_dict(), "traffic": tr, "replications": res.replications,
           "seed": args.seed, "figures": res.figures(), "bands": res.bands(), "per_card": res.per_card(),
           "notes": [] if note is None else [note]}
    if found is not None:
        out["slo"] = found
    other = None
    if fair is not None and not res.summary.get("partial"):
        other = routed.simulate(fair, rate, reps, **kw)
        out["lemons_replaced"] = {"figures": other.figures(), "per_card": other.per_card(),
                                  "ttft_p95_cost": routed.paired(res, other)}
    if res.summary.get("partial") or (other is not None and other.summary.get("partial")):
        out["partial"] = True
    if args.json:
        print_json(out)
        return 130 if out.get("partial") else 0
    print(head(s))
    speeds = ("factors " + ",".join(f"{x:g}" for x in pool.speeds) if pool.speeds is not None else
              "factors all 1" if pool.lottery is None else f"factors drawn per replication: {pool.lottery!r}")
    units = "cards" if s.tp == 1 else f"replicas of {s.tp} cards ({pool.cards * s.tp} cards)"
    print(f"{pool.cards} {units} behind {pool.router}; {speeds}")
    print(f"at {res.rate:.4g} requests/s to the pool: offered load {tr['load']:.3g} of the pool's "
          f"{tr['capacity_rate']:.4g} req/s")
    runs = "one replay" if s.replay else f"{res.replications} replications"
    print(f"{runs} of {s.n:,} requests (after {s.warmup:,} warm-up){' (PARTIAL)' if out.get('partial') else ''}:")
    if found is not None:
        print(f"pool SLO p{found['percentile']:g} TTFT <= {found['slo_ttft']:g} s: {rate:.4g} requests/s "
              f"(offered load {found['load']['value']:.3g}); SLO-rated {found['slo_rated_tok_s']['value']:,.0f} "
              f"tok/s, " + ("" if s.tp == 1 else f"{found['slo_rated_tok_s_per_replica']['value']:,.0f} per replica, ")
              + f"{found['slo_rated_tok_s_per_card']['value']:,.0f} per card (the rate times the mean answer, "
              f"{found['mean_answer']['value']:,.1f} tokens)")
    print("\n".join(table(res)))
    f = out["figures"]["slow_tail_share"]
    u = sorted(out["per_card"]["utilisation"])
    unit = "card" if s.tp == 1 else "replica"
    print(f"  slowest tenth of {unit}s served {f['value']:.0%} of the p95 TTFT tail; {unit} utilisation "
          f"{u[0]:.3g} .. {u[len(u) // 2]:.3g} .. {u[-1]:.3g} (min, median, max)")
    if other is not None:
        c = out["lemons_replaced"]["ttft_p95_cost"]
        iv = f" (95% interval {c['lo']:.4g} .. {c['hi']:.4g})" if "lo" in c else ""
        print(f"lemons replaced by median cards, same draws: TTFT p95 {other.median('ttft_p95'):.4g} s against "
              f"{res.median('ttft_p95'):.4g} s as drawn; the lemons cost {c['value']:.4g} s of p95 on average{iv}")
    return 130 if out.get("partial") else 0


__all__ = ["add_args", "check", "run", "wanted"]
