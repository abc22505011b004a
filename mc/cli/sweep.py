"""``mc sweep``: run a grid of scenarios from a sweep TOML into one tidy table."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import files
from ..studies import manifest
from ..studies import sweep as sweeps
from ._common import add_cluster, add_progress, cluster_of, executor_of, held, print_json, progress_of


def run(args) -> int:
    cluster = cluster_of(args)
    spec = sweeps.load(args.file)
    changes = {}
    if args.n is not None:
        changes["n"] = args.n
    if args.seed is not None:
        changes["seed"] = args.seed
    if changes:
        spec = sweeps.Sweep(**{**{f: getattr(spec, f) for f in ("base", "grid", "n", "seed", "derive")}, **changes})
    out = files.check_output_folder(args.out if args.out is not None else Path("results") / Path(args.file).stem)
    n_points = len(sweeps.points(spec))  # validates every grid point first
    talk = not (args.quiet or args.json)
    if talk:
        print(f"{n_points} grid points x {spec.n:,} fleet-months, seed {spec.seed} -> {out}")
    with held(out, "sweep"), executor_of(cluster) as executor:  # held before anything is written
        outcome = sweeps.run(spec, out, chunk=args.chunk, progress=progress_of(args), fresh=args.fresh,
                             reuse_stale=args.reuse_stale, desc=Path(args.file).stem, executor=executor,
                             warn=lambda msg: args.quiet or print(f"mc sweep: warning: {msg}", file=sys.stderr))
        described = executor.describe()
    if args.json:
        print_json({"sweep": args.file, "grid": list(spec.grid), "n": spec.n, "seed": spec.seed,
                    "points": sweeps.figures_by_point(outcome.table, list(spec.grid)),
                    "table": str(out / "sweep.parquet"), "manifest": str(out / "manifest.json"),
                    "provenance": manifest.provenance(scenario=spec.config(), seed=spec.seed, n=spec.n,
                                                      points=n_points, computed=outcome.computed,
                                                      reused=outcome.reused, stale_points=outcome.stale,
                                                      wall_s=round(outcome.wall_s, 3),
                                                      **({"cluster": described} if described else {}))})
    elif talk:
        print(sweeps.sweep_table(outcome.table, list(spec.grid)))
        print()
        stale = f" ({len(outcome.stale)} made by other arithmetic)" if outcome.stale else ""
        print(f"{outcome.computed} computed, {outcome.reused} reused{stale}, {outcome.wall_s:.1f} s; "
              f"{len(outcome.table):,} rows in {out / 'sweep.parquet'}, manifest in {out / 'manifest.json'}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("sweep", help="run a grid of scenarios into one tidy parquet table",
                       description="Run every grid point of a sweep TOML (a base preset or [scenario] "
                       "table and a [grid] of field = [values]) and write OUT/sweep.parquet and "
                       "OUT/manifest.json. Finished points are kept in OUT/points/, so an interrupted "
                       "sweep resumes where it stopped: Ctrl-C keeps the points already finished (never "
                       "the one in hand) and exits 130; a point file that is damaged or not this point's, "
                       "or that was made by other arithmetic (another version of mc, or a change to the "
                       "code of a model), is recomputed with a warning. The manifest is written last, "
                       "with the table's checksum and the arithmetic that made it.")
    p.add_argument("file", metavar="FILE.toml")
    p.add_argument("--n", type=int, default=None, help="fleet-months per grid point (default: the file's n, else 10,000)")
    p.add_argument("--seed", type=int, default=None, help="seed of every grid point (default: the file's seed, else 0)")
    p.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    p.add_argument("--out", metavar="DIR", default=None, help="output folder (default results/<file stem>)")
    keep = p.add_mutually_exclusive_group()
    keep.add_argument("--fresh", action="store_true", help="recompute points already on disk")
    keep.add_argument("--reuse-stale", action="store_true",
                      help="reuse points on disk made by other arithmetic (another version of mc, or changed "
                      "model code) instead of recomputing them; the manifest lists them as stale_points")
    p.add_argument("--json", action="store_true",
                   help="print each grid point's figures and the provenance as JSON (instead of the table)")
    add_cluster(p, "grid points")
    add_progress(p)
    p.set_defaults(func=run)
