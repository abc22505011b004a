"""``mc run``: one scenario's distribution over N fleet-months.

Runs stream by default (memory bounded by the chunk, whatever ``--n``), with a
progress bar on a terminal; Ctrl-C stops after the chunk in hand and prints the
summary so far, marked partial. Several hosts run one simulation together when
each is started with ``--coordinator``, ``--num-processes`` and ``--process-id``.
"""

from __future__ import annotations

import sys

from ..simulate import simulate
from ._common import add_sampling, atomic_write, print_json, scenario_arg

STATS = ("mean", "std", "p5", "p50", "p95")


def format_summary(name: str, result) -> str:
    s = result.summary
    partial = "  (PARTIAL: stopped early)" if s.get("partial") else ""
    lines = [f"{name}: {s['n']:,} fleet-months, seed {result.seed}{partial}", ""]
    if not s["n"]:
        return lines[0]
    lines.append(f"{'output':<18}" + "".join(f"{k:>16}" for k in STATS))
    for col, st in s["stats"].items():
        lines.append(f"{col:<18}" + "".join(f"{st[k]:>16,.4g}" for k in STATS))
    lines.append("")
    for check, pr in s["pass"].items():
        lines.append(f"pass {check:<12} {pr['rate']:7.2%}   95% CI [{pr['lo']:.2%}, {pr['hi']:.2%}]")
    lines.append("")
    m = s["modes"]
    lines.append(f"modal bill ${m['bill']['value']:,.2f} in {m['bill']['share']:.1%} of months; "
                 f"modal run set {m['n_run']['value']} cards ({m['n_run']['share']:.1%}); "
                 f"modal evictions {m['n_evicted']['value']} ({m['n_evicted']['share']:.1%})")
    err = {c: e for c, e in s.get("quantile_error", {}).items() if e}
    if err:
        lines.append("")
        lines.append("binned quantiles (p5/p50/p95) are within: "
                     + ", ".join(f"{c} ±{e:.3g}" for c, e in err.items()))
    return "\n".join(lines)


def init_distributed(args) -> None:
    """Join a multi-process run (one process per host) before any device is used."""
    if args.coordinator is None:
        return
    import jax

    from .. import _validate as v

    v.count("num-processes", args.num_processes, lo=1)
    v.count("process-id", args.process_id, lo=0, hi=args.num_processes - 1)
    # CPU devices talk through gloo (GPUs use NCCL regardless of this setting).
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=args.coordinator, num_processes=args.num_processes,
                               process_id=args.process_id)


def run(args) -> int:
    scenario = scenario_arg(args.scenario)
    init_distributed(args)
    import jax

    lead = jax.process_index() == 0
    progress = False if args.quiet or not lead else (True if args.progress else None)
    result = simulate(scenario, args.n, seed=args.seed, chunk=args.chunk, keep_samples=bool(args.out),
                      devices=args.devices, progress=progress)
    if not lead:
        return 0
    if args.out and result.samples is not None:
        atomic_write(args.out, lambda tmp: result.samples.to_parquet(tmp, index=False))
    if args.json:
        print_json({"scenario": args.scenario, "seed": args.seed, **result.summary})
    else:
        print(format_summary(args.scenario, result))
        if args.out and result.samples is not None:
            print(f"\nsamples written to {args.out}")
    sys.stdout.flush()
    return 130 if result.summary.get("partial") else 0


def register(sub) -> None:
    p = sub.add_parser("run", help="simulate one scenario and print its summary",
                       description="Simulate a preset or a scenario TOML file for N fleet-months. "
                       "Ctrl-C stops early and prints the summary so far, marked partial (exit 130).")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    add_sampling(p, n=100_000)
    p.add_argument("--out", metavar="FILE.parquet", help="also write every fleet-month as a row "
                   "(keeps all samples in memory)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--devices", type=int, default=None,
                   help="use the first N local devices (default: all)")
    p.add_argument("--progress", action="store_true",
                   help="a progress bar even when stderr is not a terminal")
    g = p.add_argument_group("several hosts (jax.distributed)")
    g.add_argument("--coordinator", metavar="HOST:PORT", default=None,
                   help="address of process 0; every process passes the same one")
    g.add_argument("--num-processes", type=int, default=1)
    g.add_argument("--process-id", type=int, default=0)
    p.set_defaults(func=run)
