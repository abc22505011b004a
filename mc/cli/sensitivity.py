"""``mc sensitivity``: which parameter drives each verdict (Sobol indices)."""

from __future__ import annotations

import time
from pathlib import Path

from .. import files
from ..studies import sensitivity as sens
from ._common import add_cluster, add_progress, cluster_of, executor_of, held, print_json, progress_of


def format_report(scenario: str, rep: dict) -> str:
    lines = [f"{scenario}: Sobol indices from {rep['points']:,} points ({rep['samples']} samples x "
             f"{len(rep['ranges']) + 2}) of {rep['months']:,} fleet-months each, seed {rep['seed']}",
             "first-order S1 and total ST, each with its 95% bootstrap half-width; "
             "noise = Monte Carlo variance / variance across points", ""]
    width = max(len(n) for n in rep["ranges"]) + 2
    for fig, d in rep["figures"].items():
        noise = "n/a" if d["noise_share"] is None else f"{d['noise_share']:.1%}"
        if not d["varies"]:
            lines.append(f"{fig}: the same at every point (no indices)")
            lines.append("")
            continue
        if d["noise_share"] is not None and d["noise_share"] > sens.NOISY:
            lines.append(f"{fig}: varies across points mostly by Monte Carlo noise ({noise}); its indices "
                         "say nothing (more --months would)")
            lines.append("")
            continue
        lines.append(f"{fig}  (noise {noise})")
        order = sorted(d["parameters"].items(), key=lambda kv: -(kv[1]["ST"] or 0.0))
        for name, p in order:
            lines.append(f"  {name:<{width}} S1 {p['S1']:6.3f} ± {p['S1_conf']:.3f}   "
                         f"ST {p['ST']:6.3f} ± {p['ST_conf']:.3f}")
        lines.append("")
    return "\n".join(lines).rstrip()


def run(args) -> int:
    cluster = cluster_of(args)
    base = files.scenario(args.scenario)
    ranges = sens.check_ranges(base, sens.load_ranges(args.ranges))
    sens.check_samples(args.samples, len(ranges))
    out = files.check_output_folder(args.out if args.out is not None
                                    else Path("results") / "sensitivity" / Path(args.scenario).stem)
    with held(out, "sensitivity study"):  # from before the first point to the last byte written
        with executor_of(cluster) as executor:
            t0 = time.perf_counter()
            result = sens.sensitivity(base, ranges, samples=args.samples, months=args.months, seed=args.seed,
                                      chunk=args.chunk, progress=progress_of(args), executor=executor)
            wall = time.perf_counter() - t0
            described = executor.describe()
        rep = result.report()
        sens.save(result, base, out, wall_s=wall, cluster=described)
    if args.json:
        print_json({"scenario": args.scenario, **rep, "out": str(out)})
    else:
        print(format_report(args.scenario, rep))
        print(f"\nindices in {out / 'sensitivity.parquet'}, manifest in {out / 'manifest.json'} ({wall:.0f} s)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("sensitivity", help="which parameter drives each verdict (Sobol indices)",
                       description="Global sensitivity of every figure (P(pass) of each check, mean bill, "
                       "mean convergence, mean shortfall) to the ranges of a FILE.toml [ranges] table of "
                       "dotted fields, e.g. \"window.hours\" = [1, 168]: Saltelli points, Sobol first-order "
                       "and total indices with bootstrap 95% intervals (SALib). Every point uses the same "
                       "fleet-months (common random numbers).")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    p.add_argument("--ranges", metavar="FILE.toml", required=True, help="a [ranges] table of field = [lo, hi]")
    p.add_argument("--samples", type=int, default=256,
                   help="Saltelli base samples N, a power of two >= 64: N x (ranges + 2) points (default 256)")
    p.add_argument("--months", type=int, default=1000, help="fleet-months per point (default 1,000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the months and of the Sobol' scrambling (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="output folder (default results/sensitivity/<scenario stem>)")
    p.add_argument("--json", action="store_true", help="print the indices as JSON")
    add_cluster(p, "points")
    add_progress(p)
    p.set_defaults(func=run)
