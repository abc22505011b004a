"""``mc run``: one scenario's distribution over N fleet-months."""

from __future__ import annotations

from ..simulate import simulate
from ._common import add_sampling, atomic_write, print_json, scenario_arg

STATS = ("mean", "std", "p5", "p50", "p95")


def format_summary(name: str, result) -> str:
    s = result.summary
    lines = [f"{name}: {s['n']:,} fleet-months, seed {result.seed}", ""]
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
    return "\n".join(lines)


def run(args) -> int:
    scenario = scenario_arg(args.scenario)
    result = simulate(scenario, args.n, seed=args.seed, chunk=args.chunk, keep_samples=bool(args.out))
    if args.out:
        atomic_write(args.out, lambda tmp: result.samples.to_parquet(tmp, index=False))
    if args.json:
        print_json({"scenario": args.scenario, "seed": args.seed, **result.summary})
    else:
        print(format_summary(args.scenario, result))
        if args.out:
            print(f"\nsamples written to {args.out}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("run", help="simulate one scenario and print its summary",
                       description="Simulate a preset or a scenario TOML file for N fleet-months.")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    add_sampling(p, n=100_000)
    p.add_argument("--out", metavar="FILE.parquet", help="also write every fleet-month as a row")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)
